// GPU telemetry (harness/gpu_telemetry.h) without a GPU: NVML absent (the path every CI machine
// takes), and present through a fake NVML library (tests/harness/fake_nvml.cc) that reports
// known energy, clocks and throttle reasons.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <utility>

#include "synk/harness/run/gpu_telemetry.h"
#include "synk/harness/run/runner.h"

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

TEST_CASE("GPU telemetry of a training repetition covers exactly its timed steps", "[harness]") {
  Env env{{"SYNK_NVML_LIBRARY", SYNK_FAKE_NVML}, {"FAKE_NVML_GPUS", "2"},
          {"FAKE_NVML_MJ_PER_READ", "0"},        {"FAKE_NVML_THROTTLE", "0"},
          {"FAKE_NVML_FAIL_INIT", nullptr},      {"CUDA_VISIBLE_DEVICES", nullptr}};
  // The test's own handle on the fake is the one the telemetry loads: every step, warm-up and
  // timed alike, adds 1 J to each GPU's counter, and the counter's reads are counted.
  void* fake = dlopen(SYNK_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(fake);
  const auto work = reinterpret_cast<void (*)(unsigned long long)>(dlsym(fake, "fakeNvmlWork"));
  const auto reads = reinterpret_cast<unsigned long long (*)()>(dlsym(fake, "fakeNvmlEnergyReads"));
  REQUIRE(work);
  REQUIRE(reads);
  const unsigned long long reads_before = reads();
  // A warm-up long enough for NVML to load on its thread while it runs, so that a read taken
  // there as soon as NVML is loaded would land between warm-up steps.
  TimingPlan plan;
  plan.warmup = 1;
  plan.warmup_time = 0.05;
  plan.steps = 5;
  int64_t calls = 0;
  std::vector<std::pair<int64_t, unsigned long long>> changes;  // (step call, reads seen there)
  auto step = [&](SampleRecord&, std::chrono::steady_clock::time_point) {
    const unsigned long long seen = reads() - reads_before;
    if (seen != (changes.empty() ? 0 : changes.back().second)) changes.push_back({calls, seen});
    ++calls;
    work(1000);
  };
  StopWord stop;
  std::vector<SampleRecord> samples;
  std::vector<GpuReading> gpus;
  timeStepsWithTelemetry(step, plan, stop, {0, 1}, samples, gpus);
  work(7000);  // what follows the timed steps (the correctness check) is not in the readings
  REQUIRE(samples.size() == 5);
  REQUIRE(gpus.size() == 2);
  for (const GpuReading& g : gpus) {
    REQUIRE(g.energy_j);
    CHECK(*g.energy_j == Approx(5.0));  // the 5 timed steps' joules, not the warm-up's
    CHECK(g.seconds > 0);
  }
  // The first read (one per GPU) came between the last warm-up step and the first timed step,
  // the last after the timed steps: none between two steps of either phase.
  const std::vector<std::pair<int64_t, unsigned long long>> expected{{calls - 5, 2}};
  CHECK(changes == expected);
  CHECK(reads() - reads_before == 4);
  dlclose(fake);
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
