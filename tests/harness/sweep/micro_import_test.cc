// Google Benchmark JSON into one value per repetition: a recorded synk-micro output
// (data/synk_micro_cpu.json, trimmed), the format's variants, bad files, and synk-micro's own
// output when it is built.
#include "synk/harness/sweep/micro_import.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>

#include "synk/core/error.h"

using namespace synk::harness;

namespace {

MicroResults parse(const std::string& json) {
  std::istringstream in(json);
  return readMicroResults(in, "test.json");
}

std::string entry(const std::string& fields) {
  return "{\"benchmarks\": [" + fields + "]}";
}

}  // namespace

TEST_CASE("a recorded synk-micro run: repetitions in order, aggregates dropped", "[harness]") {
  const MicroResults r = readMicroResultsFile(SYNK_HARNESS_TEST_DATA "/synk_micro_cpu.json");
  CHECK(r.context.at("synk.backend") == "cpu");
  CHECK(r.context.at("synk.ranks") == "2");
  CHECK(r.context.at("library_build_type") == "debug");
  CHECK(r.context.count("caches") == 0);  // arrays are not context values
  REQUIRE(r.benchmarks.size() == 2);
  const MicroBenchmark& barrier = r.benchmarks[0];
  CHECK(barrier.name == "barrier_round_trip/real_time");
  CHECK(barrier.error.empty());
  REQUIRE(barrier.repetitions.size() == 3);
  CHECK(barrier.repetitions[0].index == 0);
  CHECK(barrier.repetitions[2].index == 2);
  CHECK(barrier.repetitions[0].iterations == 13);
  CHECK(barrier.repetitions[0].real_seconds == Approx(1004984.8461466563e-9));
  CHECK(barrier.repetitions[0].counters.empty());
  const MicroBenchmark& all_reduce = r.benchmarks[1];
  CHECK(all_reduce.name == "all_reduce/4096/manual_time");
  REQUIRE(all_reduce.repetitions.size() == 3);
  CHECK(all_reduce.repetitions[1].real_seconds == Approx(6219231.0e-9));
  CHECK(all_reduce.repetitions[0].counters.at("busbw_GBps") == Approx(0.00023728165135053004));
  CHECK(all_reduce.repetitions[0].counters.count("bytes_per_second") == 1);
}

TEST_CASE("Google Benchmark's variants: units, no run_name, errors, skips", "[harness]") {
  const MicroResults r = parse(entry(
      R"({"name": "a", "repetition_index": 1, "iterations": 5, "real_time": 2.5,
          "cpu_time": 1, "time_unit": "ms", "items": 7},
         {"name": "a", "repetition_index": 0, "iterations": 5, "real_time": 3,
          "cpu_time": 1, "time_unit": "us", "label": "x"},
         {"name": "b", "run_name": "b", "run_type": "iteration", "error_occurred": true,
          "error_message": "rank 1 died", "iterations": 0, "real_time": 0, "cpu_time": 0,
          "time_unit": "ns"},
         {"name": "c", "error_occurred": false, "error_message": "no GPU",
          "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "s"})"));
  REQUIRE(r.benchmarks.size() == 3);
  const MicroBenchmark& a = r.benchmarks[0];
  REQUIRE(a.repetitions.size() == 2);
  CHECK(a.repetitions[0].real_seconds == Approx(3e-6));  // sorted by repetition_index
  CHECK(a.repetitions[1].real_seconds == Approx(2.5e-3));
  CHECK(a.repetitions[1].counters.at("items") == 7);
  CHECK(a.repetitions[0].counters.empty());  // a label is text, not a counter
  CHECK(r.benchmarks[1].error == "rank 1 died");
  CHECK(r.benchmarks[1].repetitions.empty());
  CHECK(r.benchmarks[2].error == "no GPU");
}

TEST_CASE("what is not Google Benchmark JSON is refused with the place named", "[harness]") {
  // Malformed JSON names the file, the line and the column where it breaks.
  CHECK_THROWS_WITH(parse("{\"benchmarks\": [ {"),
                    Catch::Contains("test.json:1:19: not JSON: syntax error"));
  CHECK_THROWS_WITH(parse("{\"context\": {},\n \"benchmarks\": [\n  {\"name\": \"a\",, }]}"),
                    Catch::Contains("test.json:3:16: not JSON: syntax error"));
  CHECK_THROWS_WITH(parse("{\"context\": {}}"), Catch::Contains("no \"benchmarks\" array"));
  CHECK_THROWS_WITH(parse(entry(R"({"name": "a", "iterations": 1, "real_time": 1,
                                   "cpu_time": 1, "time_unit": "fortnights"})")),
                    Catch::Contains("benchmarks[0]: unknown time_unit 'fortnights'"));
  CHECK_THROWS_WITH(parse(entry(R"({"name": "a", "iterations": 1, "cpu_time": 1,
                                   "time_unit": "ns"})")),
                    Catch::Contains("benchmarks[0]: no field 'real_time'"));
  CHECK_THROWS_WITH(parse(entry(R"({"name": "a", "iterations": "many", "real_time": 1,
                                   "cpu_time": 1, "time_unit": "ns"})")),
                    Catch::Contains("field 'iterations' is 'many'"));
  CHECK_THROWS_WITH(parse(entry(R"({"name": "a_mean", "run_name": "a", "run_type": "aggregate",
                                   "aggregate_name": "mean", "iterations": 3, "real_time": 1,
                                   "cpu_time": 1, "time_unit": "ns"})")),
                    Catch::Contains("benchmark a has aggregates only"));
  CHECK_THROWS_WITH(readMicroResultsFile("/nonexistent/micro.json"),
                    Catch::Contains("/nonexistent/micro.json: cannot open"));
}

#ifdef SYNK_MICRO_BIN
TEST_CASE("synk-micro's own JSON imports: every benchmark, every repetition", "[harness]") {
  char dir_template[] = "/tmp/synk_micro_test_XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string out = std::string(dir_template) + "/micro.json";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string out_flag = "--benchmark_out=" + out;
    execl(SYNK_MICRO_BIN, SYNK_MICRO_BIN, "--ranks=2", "--benchmark_filter=barrier|trivial",
          "--benchmark_min_time=0.01", "--benchmark_repetitions=2", out_flag.c_str(),
          "--benchmark_out_format=json", "--benchmark_format=csv", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const MicroResults r = readMicroResultsFile(out);
  std::remove(out.c_str());
  rmdir(dir_template);
  CHECK(r.context.at("synk.ranks") == "2");
  REQUIRE(r.benchmarks.size() == 2);
  for (const MicroBenchmark& b : r.benchmarks) {
    INFO(b.name);
    CHECK(b.error.empty());
    REQUIRE(b.repetitions.size() == 2);
    CHECK(b.repetitions[0].real_seconds > 0);
    CHECK(b.repetitions[1].iterations > 0);
  }
}
#endif
