// CudaDevice on one GPU, in this process (no fork): the kernels against core/host_kernels.h for
// every dtype, byte for byte; copies through pinned, registered and pageable memory; the
// allocator; the wait loop's deadline; the fork guard when CUDA really was initialised.
// Skips (exit 77) without a GPU.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "synk/collectives/cuda/device/cuda_device.h"
#include "synk/collectives/cuda/fork_guard.h"
#include "synk/collectives/cuda/gpu_enumeration.h"
#include "synk/core/control_block.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/waiter.h"

namespace synk {
namespace {

constexpr DType kDTypes[] = {DType::Float32, DType::Float64, DType::Int32,   DType::Int64,
                             DType::UInt8,   DType::Float16, DType::BFloat16};
constexpr ReduceOp kOps[] = {ReduceOp::Avg, ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                             ReduceOp::Min};

void requireGpu() {
  const GpuEnumeration gpus = enumerateCudaDevices();
  if (gpus.count < 1) {
    std::printf("SKIPPED: no usable GPU (%s)\n", gpus.why.c_str());
    std::fflush(nullptr);
    std::exit(SYNK_SKIP_RETURN_CODE);
  }
}

// A control block of its own (no session): Waiters check its abort flag and deadline only.
struct Control {
  std::unique_ptr<ControlBlock> block = std::make_unique<ControlBlock>();
  Waiter waiter(std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) {
    return Waiter(*block, nullptr, Clock::now() + timeout, "a device test");
  }
};

// Deterministic values that stay finite and exact in every dtype's arithmetic (no signed
// overflow: that is undefined on the host), with uint8 wrapping and float16 overflow included.
std::vector<std::byte> values(DType dtype, size_t count, int seed) {
  std::vector<std::byte> raw(count * dtypeSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    const int k = static_cast<int>((i * 7919 + static_cast<size_t>(seed) * 104729) % 2001) - 1000;
    double v = k / 8.0;
    if (dtype == DType::UInt8) v = static_cast<double>((k + 1000) % 256);
    if (dtype == DType::Int32 || dtype == DType::Int64) v = k;
    if (dtype == DType::Float16 && i % 97 == 0) v = 40000.0;  // sums past float16's max: inf
    if (isFloating(dtype) && i % 89 == 0) v = 1.0 / 3.0 + k;  // needs rounding
    host::storeFromDouble(raw.data() + i * dtypeSize(dtype), dtype, v);
  }
  return raw;
}

std::vector<std::byte> roundTrip(CudaDevice& device, Control& control,
                                 const std::vector<std::byte>& input,
                                 const std::function<void(void*)>& work) {
  void* buffer = device.allocate(input.size());
  device.copy(buffer, input.data(), input.size(), CopyKind::HostToDevice);
  work(buffer);
  std::vector<std::byte> output(input.size());
  device.copy(output.data(), buffer, output.size(), CopyKind::DeviceToHost);
  Waiter waiter = control.waiter();
  device.synchronize(waiter);
  device.release(buffer);
  return output;
}

TEST_CASE("cuda device identity and handles", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  CHECK(device.kind() == DeviceKind::Cuda);
  CHECK_FALSE(device.isHost());
  CHECK(device.ordinal() == 0);
  CHECK_THAT(device.describe(), Catch::Matchers::StartsWith("cuda:0 ("));
  const DeviceHandles handles = device.handles();
  CHECK(handles.stream != nullptr);
  CHECK(handles.blas != nullptr);
  CHECK(handles.comm == nullptr);
  CHECK_THROWS_AS(CudaDevice(1000, 0), InvalidArgument);
}

TEST_CASE("cuda allocations are unique and 256-byte aligned", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  std::set<void*> seen;
  for (size_t bytes : {0, 0, 1, 255, 256, 4097, 1 << 20}) {
    void* p = device.allocate(bytes);
    CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
    CHECK(seen.insert(p).second);
  }
  for (void* p : seen)
    device.release(p);
  device.release(nullptr);
}

TEST_CASE("cuda accumulate matches the host kernel for every dtype and op", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  Control control;
  for (const size_t count : {size_t{1}, size_t{1000}, size_t{1} << 20 | 3}) {
    for (DType dtype : kDTypes) {
      for (ReduceOp op : kOps) {
        INFO(dtypeName(dtype) << " " << reduceOpName(op) << " x" << count);
        const auto acc = values(dtype, count, 1);
        const auto x = values(dtype, count, 2);
        std::vector<std::byte> expected = acc;
        host::accumulate(expected.data(), x.data(), count, dtype, op);
        void* dx = device.allocate(x.size());
        device.copy(dx, x.data(), x.size(), CopyKind::HostToDevice);
        const auto got = roundTrip(device, control, acc,
                                   [&](void* p) { device.accumulate(p, dx, count, dtype, op); });
        device.release(dx);
        CHECK(std::memcmp(got.data(), expected.data(), got.size()) == 0);
      }
    }
  }
  CHECK_THROWS_AS(device.accumulate(nullptr, nullptr, 1, DType::Float32, ReduceOp::Gather),
                  InternalError);
}

TEST_CASE("cuda scale and fillIdentity match the host kernels", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  Control control;
  const size_t count = 4099;
  for (DType dtype : kDTypes) {
    // scale is for floating dtypes (a negative factor cast to uint8 is undefined behaviour).
    for (double factor : {0.25, 1.0 / 3.0, -2.0}) {
      if (!isFloating(dtype)) continue;
      INFO(dtypeName(dtype) << " scale by " << factor);
      const auto input = values(dtype, count, 3);
      std::vector<std::byte> expected(input.size());
      host::scaleCopy(expected.data(), input.data(), count, dtype, factor);
      const auto got = roundTrip(device, control, input,
                                 [&](void* p) { device.scale(p, count, dtype, factor); });
      CHECK(std::memcmp(got.data(), expected.data(), got.size()) == 0);
    }
    for (ReduceOp op : kOps) {
      INFO(dtypeName(dtype) << " identity of " << reduceOpName(op));
      std::vector<std::byte> expected(count * dtypeSize(dtype));
      host::fillIdentity(expected.data(), count, dtype, op);
      const auto got = roundTrip(device, control, values(dtype, count, 4),
                                 [&](void* p) { device.fillIdentity(p, count, dtype, op); });
      CHECK(std::memcmp(got.data(), expected.data(), got.size()) == 0);
    }
  }
}

TEST_CASE("cuda copies through pageable, registered and device memory", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  Control control;
  for (const size_t bytes : {size_t{0}, size_t{1}, size_t{257}, size_t{3} << 20}) {
    INFO(bytes << " bytes");
    std::vector<std::byte> source(bytes);
    for (size_t i = 0; i < bytes; ++i)
      source[i] = static_cast<std::byte>(i * 31 + 7);
    // Registered host memory: page-aligned, registered twice (the second is tolerated).
    const size_t host_bytes = (bytes + 4095) / 4096 * 4096 + 4096;
    void* pinned = std::aligned_alloc(4096, host_bytes);
    device.registerHostMemory(pinned, host_bytes);
    device.registerHostMemory(pinned, host_bytes);
    CHECK(device.isPinned(pinned, host_bytes));
    if (bytes > 0) CHECK_FALSE(device.isPinned(source.data(), bytes));
    void* a = device.allocate(bytes);
    void* b = device.allocate(bytes);
    device.copy(a, source.data(), bytes, CopyKind::HostToDevice);  // pageable: bounced
    device.copy(b, a, bytes, CopyKind::DeviceToDevice);
    device.copy(pinned, b, bytes, CopyKind::DeviceToHost);  // registered: direct
    std::vector<std::byte> back(bytes);
    device.copy(back.data(), b, bytes, CopyKind::DeviceToHost);  // pageable: bounced
    Waiter waiter = control.waiter();
    device.synchronize(waiter);
    CHECK(back == source);
    CHECK((bytes == 0 || std::memcmp(pinned, source.data(), bytes) == 0));
    device.release(a);
    device.release(b);
    device.unregisterHostMemory(pinned);
    device.unregisterHostMemory(pinned);  // not registered any more: ignored
    CHECK_FALSE(device.isPinned(pinned, host_bytes));
    std::free(pinned);
  }
}

TEST_CASE("cuda copies refuse GPU memory on the host side", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  void* a = device.allocate(64);
  void* b = device.allocate(64);
  CHECK_THROWS_AS(device.copy(a, b, 64, CopyKind::HostToDevice), InvalidArgument);
  CHECK_THROWS_AS(device.copy(a, b, 64, CopyKind::DeviceToHost), InvalidArgument);
  CHECK_THROWS_AS(device.copy(nullptr, b, 64, CopyKind::DeviceToDevice), InvalidArgument);
  device.release(a);
  device.release(b);
}

TEST_CASE("cuda gatherRows picks rows of any width", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  Control control;
  for (const size_t row_bytes : {size_t{1}, size_t{12}, size_t{16}, size_t{40}, size_t{4096}}) {
    INFO("rows of " << row_bytes << " bytes");
    const size_t n_rows = 300;
    std::vector<std::byte> table(n_rows * row_bytes);
    for (size_t i = 0; i < table.size(); ++i)
      table[i] = static_cast<std::byte>(i * 13 + 1);
    std::vector<int64_t> rows;
    for (size_t i = 0; i < 1000; ++i)
      rows.push_back(static_cast<int64_t>((i * 37) % n_rows));
    void* src = device.allocate(table.size());
    void* dst = device.allocate(rows.size() * row_bytes);
    device.copy(src, table.data(), table.size(), CopyKind::HostToDevice);
    device.gatherRows(dst, src, row_bytes, rows.data(), rows.size());
    std::vector<std::byte> got(rows.size() * row_bytes);
    device.copy(got.data(), dst, got.size(), CopyKind::DeviceToHost);
    Waiter waiter = control.waiter();
    device.synchronize(waiter);
    bool same = true;
    for (size_t i = 0; i < rows.size(); ++i) {
      same = same &&
             std::memcmp(got.data() + i * row_bytes,
                         table.data() + static_cast<size_t>(rows[i]) * row_bytes, row_bytes) == 0;
    }
    CHECK(same);
    device.release(src);
    device.release(dst);
  }
}

TEST_CASE("cuda synchronize ends at the deadline and when the session aborts", "[gpu]") {
  requireGpu();
  CudaDevice device(0, 0);
  const size_t bytes = size_t{512} << 20;
  void* a = device.allocate(bytes);
  void* b = device.allocate(bytes);
  const auto busy = [&] {  // ~50 GB of copies: tens of milliseconds on any recent GPU
    for (int i = 0; i < 50; ++i)
      device.copy(i % 2 ? a : b, i % 2 ? b : a, bytes, CopyKind::DeviceToDevice);
  };
  {
    Control control;
    busy();
    Waiter waiter = control.waiter(std::chrono::milliseconds(0));
    CHECK_THROWS_AS(device.synchronize(waiter), Timeout);
    CHECK(control.block->abort.load() == static_cast<uint32_t>(AbortReason::Timeout));
  }
  {
    Control control;
    busy();
    abortSession(*control.block, AbortReason::PeerDied, 1, "rank 1 was killed by a test");
    Waiter waiter = control.waiter();
    CHECK_THROWS_AS(device.synchronize(waiter), PeerFailure);
  }
  Control control;
  Waiter waiter = control.waiter();
  device.synchronize(waiter);  // the device itself is fine
  device.release(a);
  device.release(b);
}

TEST_CASE("the fork guard refuses a process that initialised CUDA", "[gpu]") {
  requireGpu();
  if (cudaInitStateOfThisProcess().state == CudaInitState::Initialised) {
    // Another case ran in this process first: the guard must fire right here.
    CHECK_THROWS_WITH(checkCudaNotInitialisedBeforeFork(),
                      Catch::Matchers::Contains("CUDA was initialised in this process"));
    return;
  }
  // A fresh process: initialise CUDA in a child (never here: this process may fork later).
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 1;
    try {
      const bool before = cudaInitStateOfThisProcess().state != CudaInitState::Initialised;
      CudaDevice device(0, 0);  // cudaSetDevice creates the context
      try {
        checkCudaNotInitialisedBeforeFork();
        code = 2;  // the guard did not fire
      } catch (const UsageError& e) {
        code =
            before && std::string(e.what()).find("fork before any CUDA call") != std::string::npos
                ? 0
                : 3;
      }
    } catch (...) {
      code = 4;
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 2: no throw, 3: wrong message, 4: CUDA failed
}

}  // namespace
}  // namespace synk
