// Host-to-device bandwidth by where the host memory comes from, in one process on one GPU:
// cudaMallocHost, private memory pinned with cudaHostRegister, a POSIX shared-memory segment
// (what a synk Data is) pinned the same way, and that segment asking for transparent huge pages
// first. Tells apart "synk's scatter path is slow" from "this host's DMA from shared memory is".
//   bench_h2d_sources [MiB=512] [reps=7]        prints GB/s medians, one line per source
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "bench_h2d_sources: %s: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
  }
}

double medianGBps(void* device, const void* host, size_t bytes, int reps, cudaStream_t stream) {
  std::vector<double> rates;
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "warm-up");
  check(cudaStreamSynchronize(stream), "warm-up");
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "copy");
    check(cudaStreamSynchronize(stream), "copy");
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(double(bytes) / s * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// A /dev/shm segment mapped shared, as core/memory/shm_segment.cc maps a Data's.
void* sharedSegment(size_t bytes, bool huge) {
  const std::string name = "/synk-h2d-probe-" + std::to_string(getpid());
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, off_t(bytes)) != 0) {
    std::perror("shm_open/ftruncate");
    std::exit(1);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  shm_unlink(name.c_str());
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  if (huge && madvise(p, bytes, MADV_HUGEPAGE) != 0) std::perror("madvise(MADV_HUGEPAGE)");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = size_t(argc > 1 ? std::atoi(argv[1]) : 512) << 20;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  void* device = nullptr;
  check(cudaMalloc(&device, bytes), "cudaMalloc");
  std::printf("# host-to-device, %zu MiB, median of %d\n", bytes >> 20, reps);

  void* pinned = nullptr;
  check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  std::memset(pinned, 1, bytes);
  std::printf("%-36s %6.1f GB/s\n", "cudaMallocHost",
              medianGBps(device, pinned, bytes, reps, stream));
  check(cudaFreeHost(pinned), "cudaFreeHost");

  struct Source {
    const char* name;
    std::function<void*()> make;
  };
  const std::vector<Source> sources = {
      {"malloc + cudaHostRegister", [&] { return std::aligned_alloc(4096, bytes); }},
      {"shm + cudaHostRegister", [&] { return sharedSegment(bytes, false); }},
      {"shm + MADV_HUGEPAGE + cudaHostRegister", [&] { return sharedSegment(bytes, true); }},
  };
  for (const Source& source : sources) {
    void* host = source.make();
    std::memset(host, 1, bytes);  // fault every page in first
    check(cudaHostRegister(host, bytes, cudaHostRegisterPortable), "cudaHostRegister");
    std::printf("%-36s %6.1f GB/s\n", source.name, medianGBps(device, host, bytes, reps, stream));
    check(cudaHostUnregister(host), "cudaHostUnregister");
  }
  void* pageable = std::malloc(bytes);
  std::memset(pageable, 1, bytes);
  std::printf("%-36s %6.1f GB/s\n", "pageable malloc",
              medianGBps(device, pageable, bytes, reps, stream));
  return 0;
}
