// GPU telemetry (harness/gpu_telemetry.h) without a GPU: NVML absent (the path every CI machine
// takes), and present through a fake NVML library (tests/harness/fake_nvml.cc) that reports
// known energy, clocks and throttle reasons.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "synk/harness/run/gpu_telemetry.h"

using namespace synk::harness;

namespace {

// Sets the environment for one case and restores it after.
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) {
        setenv(name, value, 1);
      } else {
        unsetenv(name);
      }
    }
  }
  ~Env() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace

TEST_CASE("GPU telemetry without NVML is absent and says why", "[harness]") {
  Env env{{"SYNK_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};
  const GpuTelemetry t = GpuTelemetry::open({0});
  CHECK_FALSE(t.available());
  CHECK_THAT(t.status(),
             Catch::StartsWith("no NVML: ") && Catch::Contains("/nonexistent/libnvidia-ml.so.1"));
  CHECK(t.since(t.mark()).empty());  // reads nothing, and does not fail
  CHECK_THAT(probeGpuTelemetry(), Catch::StartsWith("no NVML: "));
}

TEST_CASE("GPU telemetry through a fake NVML: energy, clocks, temperature per GPU", "[harness]") {
  Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML}, {"FAKE_NVML_GPUS", "2"},
          {"FAKE_NVML_MJ_PER_READ", "500"},      {"FAKE_NVML_THROTTLE", "0"},
          {"FAKE_NVML_FAIL_INIT", nullptr},      {"CUDA_VISIBLE_DEVICES", nullptr}};
  const GpuTelemetry t = GpuTelemetry::open({0, 1});
  REQUIRE(t.available());
  CHECK(t.status() == "nvml 999.99 (fake)");
  const std::vector<GpuReading> readings = t.since(t.mark());
  REQUIRE(readings.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const GpuReading& g = readings[i];
    CHECK(g.gpu == static_cast<int>(i));
    REQUIRE(g.energy_j);
    CHECK(*g.energy_j == Approx(0.5));  // one read at each end: 500 mJ apart
    CHECK(g.sm_mhz == 1980);
    CHECK(g.memory_mhz == 2619);
    CHECK(g.temperature_c == 61);
    CHECK(g.throttle_reasons == 0);
    CHECK_FALSE(g.throttled_s);  // the fake does not count violations, as many GPUs
    CHECK_FALSE(g.throttled());
  }
  // The probe loads it in a child process, as a run does.
  CHECK(probeGpuTelemetry() == "nvml 999.99 (fake)");
}

TEST_CASE("GPU telemetry: a throttling GPU is flagged", "[harness]") {
  Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML},
          {"FAKE_NVML_THROTTLE", "0x4"},
          {"FAKE_NVML_FAIL_INIT", nullptr},
          {"CUDA_VISIBLE_DEVICES", nullptr}};
  const GpuTelemetry t = GpuTelemetry::open({0});
  const std::vector<GpuReading> readings = t.since(t.mark());
  REQUIRE(readings.size() == 1);
  CHECK(readings[0].throttle_reasons == 0x4);  // software power cap
  CHECK(readings[0].throttled());
}

TEST_CASE("GPU telemetry: CUDA_VISIBLE_DEVICES maps ordinals, a missing device or driver is said",
          "[harness]") {
  {
    Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML},
            {"FAKE_NVML_GPUS", "4"},
            {"FAKE_NVML_FAIL_INIT", nullptr},
            {"CUDA_VISIBLE_DEVICES", "3,1"}};
    const GpuTelemetry t = GpuTelemetry::open({0, 1});
    const std::vector<GpuReading> readings = t.since(t.mark());
    REQUIRE(readings.size() == 2);
    CHECK(readings[0].gpu == 3);
    CHECK(readings[1].gpu == 1);
    const GpuTelemetry all = GpuTelemetry::open({kAllGpus});
    CHECK(all.since(all.mark()).size() == 4);  // every device NVML sees, in its order
  }
  {
    Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML},
            {"FAKE_NVML_GPUS", "2"},
            {"FAKE_NVML_FAIL_INIT", nullptr},
            {"CUDA_VISIBLE_DEVICES", nullptr}};
    const GpuTelemetry t = GpuTelemetry::open({5});
    CHECK_FALSE(t.available());
    CHECK(t.status() == "no NVML device for CUDA ordinal 5 (NVML sees 2 GPU(s))");
  }
  {
    Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML}, {"FAKE_NVML_FAIL_INIT", "1"}};
    const GpuTelemetry t = GpuTelemetry::open({0});
    CHECK_FALSE(t.available());
    CHECK(t.status() == "no NVML: nvmlInit failed: Driver Not Loaded");
  }
}

TEST_CASE("GPU telemetry: the GPUs a point uses", "[harness]") {
  using V = std::vector<int>;
  CHECK(telemetryGpus("cpu", 2, 4, "used").empty());
  CHECK(telemetryGpus("cuda", 2, 4, "used") == V{0, 1});
  CHECK(telemetryGpus("nccl", 4, 4, "used") == V{0, 1, 2, 3});
  CHECK(telemetryGpus("host", 4, 2, "used") == V{0, 1});  // ranks share the GPUs
  CHECK(telemetryGpus("cuda", 2, 4, "none").empty());
  CHECK(telemetryGpus("cpu", 2, 0, "all") == V{kAllGpus});
}
