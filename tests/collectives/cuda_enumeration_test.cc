// The parts of the cuda backend that run without a GPU: counting devices the way CUDA would
// (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus), the probe child, the fork guard in a fresh
// process, the factory's answers, and the dtype/op mapping to NCCL. None of them may initialise
// CUDA in this process: each case checks that it did not.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "synk/collectives/cuda/fork_guard.h"
#include "synk/collectives/cuda/gpu_enumeration.h"
#include "synk/collectives/cuda/nccl/nccl_types.h"
#include "synk/collectives/cuda_factory.h"
#include "synk/core/error.h"

namespace synk {
namespace {

using Catch::Matchers::Contains;

std::vector<PhysicalGpu> fourGpus() {
  return {{"0000:19:00.0", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},
          {"0000:3b:00.0", "GPU-1a2b3c4d-0000-1111-2222-333344445555"},
          {"0000:4c:00.0", "GPU-1a2b9999-0000-1111-2222-333344445555"},
          {"0000:5d:00.0", "GPU-ffee0011-0000-1111-2222-333344445555"}};
}

bool cudaUntouched() {
  return cudaInitStateOfThisProcess().state != CudaInitState::Initialised;
}

TEST_CASE("CUDA_VISIBLE_DEVICES is applied as the CUDA driver does", "[coll]") {
  const auto gpus = fourGpus();
  struct Case {
    const char* cvd;
    int count;
    bool exact;
  };
  const Case cases[] = {
      {nullptr, 4, true},  // unset: every GPU
      {"", 0, true},       // empty: none
      {"-1", 0, true},     // the usual way to hide every GPU
      {"0", 1, true},
      {"3,1", 2, true},       // any order
      {"0,2,-1,1", 2, true},  // the first invalid entry ends the list
      {"0,7,1", 1, true},     // an index out of range too
      {" 1 , 2 ", 2, true},   // blanks around entries
      {"0,1,", 2, true},      // a trailing comma is an empty, invalid entry
      {"abc", 0, true},
      {"GPU-8932f937", 1, true},                                 // a unique UUID prefix
      {"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,0", 1, false},  // names GPU 0 twice
      {"GPU-1a2b", 0, true},                                     // ambiguous prefix: invalid
      {"1,GPU-ffee0011", 2, true},
      {"GPU-00000000", 0, true},  // no such GPU
      {"MIG-5f2bd0a1-0000-1111-2222-333344445555", 0, false},
      {"0,0", 1, false},
  };
  for (const Case& c : cases) {
    INFO("CUDA_VISIBLE_DEVICES=" << (c.cvd ? std::string("'") + c.cvd + "'" : "(unset)"));
    const VisibleDevices visible = applyCudaVisibleDevices(c.cvd, gpus);
    CHECK(visible.exact == c.exact);
    if (c.exact) CHECK(visible.count == c.count);
  }
  CHECK_THAT(applyCudaVisibleDevices("", gpus).note, Contains("hides every GPU"));
  CHECK_THAT(applyCudaVisibleDevices("-1", gpus).note, Contains("hides every GPU"));
}

TEST_CASE("UUIDs the driver does not show make the count a question for the probe", "[coll]") {
  std::vector<PhysicalGpu> gpus = fourGpus();
  gpus[2].uuid.clear();
  CHECK_FALSE(applyCudaVisibleDevices("GPU-8932f937", gpus).exact);
  CHECK(applyCudaVisibleDevices("0,1", gpus).exact);  // indices do not need UUIDs
  CHECK(applyCudaVisibleDevices("0,1", gpus).count == 2);
}

TEST_CASE("/proc/driver/nvidia/gpus is read without loading any library", "[coll]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("synk-proc-" + std::to_string(getpid()));
  fs::remove_all(root);
  const auto add = [&](const std::string& bus, const std::string& information) {
    fs::create_directories(root / bus);
    std::ofstream(root / bus / "information") << information;
  };
  add("0000:3b:00.0",
      "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-1a2b3c4d-0000\nBus Location: \t 0000:3b:00.0\n"
      "GPU Excluded:\t No\n");
  add("0000:19:00.0", "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-8932f937-d72c\n");
  add("0000:5d:00.0", "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-ffee\nGPU Excluded:\t Yes\n");
  add("0000:7e:00.0", "Model: \t\t NVIDIA H200\nGPU UUID: \t ??\n");  // hidden UUID
  const auto gpus = readProcNvidiaGpus(root.string());
  fs::remove_all(root);
  REQUIRE(gpus.has_value());
  REQUIRE(gpus->size() == 3);  // the excluded GPU is not usable
  CHECK((*gpus)[0].bus_id == "0000:19:00.0");
  CHECK((*gpus)[0].uuid == "GPU-8932f937-d72c");
  CHECK((*gpus)[1].uuid == "GPU-1a2b3c4d-0000");
  CHECK((*gpus)[2].uuid.empty());
  CHECK_FALSE(readProcNvidiaGpus((root / "missing").string()).has_value());
  CHECK(cudaUntouched());
}

TEST_CASE("the fork guard finds CUDA uninitialised in a fresh process", "[coll]") {
  const CudaInitReport report = cudaInitStateOfThisProcess();
  INFO(report.detail);
  CHECK(report.state != CudaInitState::Initialised);
  CHECK_NOTHROW(checkCudaNotInitialisedBeforeFork());
}

TEST_CASE("the driver probe runs in a child and leaves this process untouched", "[coll]") {
  const auto start = std::chrono::steady_clock::now();
  const DriverProbe probe = probeCudaDriverInChild(true, kDriverProbeDeadline);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("probe: loadable=" << probe.loadable << " version=" << probe.driver_version
                          << " init=" << probe.init_result << " count=" << probe.device_count
                          << " error='" << probe.error << "' in " << seconds << " s");
  CHECK(probe.finished);
  if (!probe.loadable) CHECK_FALSE(probe.error.empty());  // dlerror's text, for the message
  if (probe.loadable && probe.init_result == 0) CHECK(probe.device_count >= 0);
  CHECK(cudaUntouched());
}

TEST_CASE("the cuda factory answers without initialising CUDA here", "[coll]") {
  const auto factory = makeCudaBackendFactory();
  CHECK(factory->name() == "cuda");
  std::string why;
  const bool viable = factory->isViable(&why);
  const int count = factory->deviceCount();
  INFO("viable=" << viable << " devices=" << count << " why='" << why << "'");
  if (viable) {
    CHECK(count >= 1);
  } else {
    CHECK_FALSE(why.empty());
  }
  CHECK(cudaUntouched());
  CHECK_NOTHROW(factory->checkBeforeFork());
}

TEST_CASE("CUDA_VISIBLE_DEVICES='' leaves the cuda backend without devices", "[coll]") {
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string before = saved ? saved : "";
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  const auto factory = makeCudaBackendFactory();
  std::string why;
  const bool viable = factory->isViable(&why);
  const int count = factory->deviceCount();
  if (saved) {
    setenv("CUDA_VISIBLE_DEVICES", before.c_str(), 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
  CHECK_FALSE(viable);
  CHECK(count == 0);
  CHECK_FALSE(why.empty());
  CHECK(cudaUntouched());
}

TEST_CASE("dtypes and reduce ops map to NCCL's", "[coll]") {
  CHECK(ncclTypeOf(DType::Float32) == ncclFloat32);
  CHECK(ncclTypeOf(DType::Float64) == ncclFloat64);
  CHECK(ncclTypeOf(DType::Int32) == ncclInt32);
  CHECK(ncclTypeOf(DType::Int64) == ncclInt64);
  CHECK(ncclTypeOf(DType::UInt8) == ncclUint8);
  CHECK(ncclTypeOf(DType::Float16) == ncclHalf);
  CHECK(ncclTypeOf(DType::BFloat16) == ncclBfloat16);
  CHECK_THROWS_AS(ncclTypeOf(static_cast<DType>(99)), InvalidArgument);
  CHECK(ncclOpOf(ReduceOp::Sum) == ncclSum);
  CHECK(ncclOpOf(ReduceOp::Prod) == ncclProd);
  CHECK(ncclOpOf(ReduceOp::Max) == ncclMax);
  CHECK(ncclOpOf(ReduceOp::Min) == ncclMin);
  CHECK(ncclOpOf(ReduceOp::Avg) == ncclAvg);
  CHECK_THROWS_AS(ncclOpOf(ReduceOp::Gather), InvalidArgument);
  CHECK_THROWS_AS(ncclOpOf(ReduceOp::None), InvalidArgument);
}

}  // namespace
}  // namespace synk
