#include "synk/harness/sweep/micro_import.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "synk/core/error.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/base/json.h"

namespace synk::harness {
namespace {

double secondsPer(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  throw InvalidArgument(str(where, ": unknown time_unit '", unit, "'"));
}

// A field of a benchmark entry, of type T: a number or a string as Google Benchmark writes it.
template <typename T>
T field(const Json& node, const std::string& key, const std::string& where) {
  const auto found = node.find(key);
  if (found == node.end()) throw InvalidArgument(str(where, ": no field '", key, "'"));
  const bool fits = std::is_same_v<T, std::string> ? found->is_string() : found->is_number();
  if (!fits) {
    const std::string text = found->is_string() ? found->get<std::string>() : found->dump();
    throw InvalidArgument(str(where, ": field '", key, "' is '", text, "'"));
  }
  return found->get<T>();
}

template <typename T>
T optionalField(const Json& node, const std::string& key, T fallback) {
  const auto found = node.find(key);
  if (found == node.end() || found->is_null()) return fallback;
  try {
    return found->get<T>();
  } catch (const Json::exception&) {
    return fallback;
  }
}

// Fields of a benchmark entry that are not counters.
bool isEntryField(const std::string& key) {
  // Space-separated with a space at both ends, so " key " matches whole names only.
  static const std::string fields =
      " name family_index per_family_instance_index run_name run_type repetitions"
      " repetition_index threads iterations real_time cpu_time time_unit aggregate_name"
      " aggregate_unit error_occurred error_message skipped skip_message label big_o rms ";
  return fields.find(" " + key + " ") != std::string::npos;
}

MicroRepetition repetition(const Json& entry, const std::string& where) {
  MicroRepetition rep;
  rep.index = optionalField(entry, "repetition_index", 0);
  rep.iterations = field<int64_t>(entry, "iterations", where);
  const double unit = secondsPer(field<std::string>(entry, "time_unit", where), where);
  rep.real_seconds = field<double>(entry, "real_time", where) * unit;
  rep.cpu_seconds = field<double>(entry, "cpu_time", where) * unit;
  for (const auto& [key, value] : entry.items()) {
    if (isEntryField(key) || !value.is_number()) continue;
    rep.counters[key] = value.get<double>();
  }
  return rep;
}

}  // namespace

MicroResults readMicroResults(std::istream& json, const std::string& source) {
  std::ostringstream text;
  text << json.rdbuf();
  Json root;
  try {
    root = parseJsonText(text.str(), source);
  } catch (const BadInput& e) {
    throw InvalidArgument(e.what());  // "SOURCE:LINE:COLUMN: not JSON: ..."
  }
  const auto benchmarks = root.is_object() ? root.find("benchmarks") : root.end();
  if (!root.is_object() || benchmarks == root.end() || !benchmarks->is_array()) {
    throw InvalidArgument(str(source, ": no \"benchmarks\" array (not Google Benchmark JSON?)"));
  }
  MicroResults results;
  if (const auto context = root.find("context"); context != root.end() && context->is_object()) {
    for (const auto& [key, value] : context->items()) {
      if (value.is_string()) {
        results.context[key] = value.get<std::string>();
      } else if (value.is_primitive() && !value.is_null()) {
        results.context[key] = value.dump();  // numbers and booleans as text
      }
    }
  }
  std::map<std::string, size_t> index;  // run_name -> position in results.benchmarks
  std::set<std::string> aggregated;
  size_t entry_number = 0;
  for (const Json& entry : *benchmarks) {
    const std::string where = str(source, ": benchmarks[", entry_number++, "]");
    if (!entry.is_object()) throw InvalidArgument(str(where, ": not an object"));
    const std::string name =
        optionalField(entry, "run_name", field<std::string>(entry, "name", where));
    if (optionalField<std::string>(entry, "run_type", "iteration") == "aggregate") {
      aggregated.insert(name);
      continue;
    }
    auto [at, added] = index.emplace(name, results.benchmarks.size());
    if (added) results.benchmarks.push_back({name, {}, {}});
    MicroBenchmark& bench = results.benchmarks[at->second];
    // Google Benchmark 1.7 writes error_occurred and error_message; 1.8 also writes the
    // message (with error_occurred false) for a benchmark skipped with SkipWithMessage.
    if (optionalField(entry, "error_occurred", false) || entry.contains("error_message")) {
      bench.error = optionalField<std::string>(entry, "error_message", "skipped");
      continue;
    }
    bench.repetitions.push_back(repetition(entry, where));
  }
  for (const std::string& name : aggregated) {
    if (!index.count(name)) {
      throw InvalidArgument(str(source, ": benchmark ", name,
                                " has aggregates only (run without "
                                "--benchmark_report_aggregates_only to keep its repetitions)"));
    }
  }
  for (MicroBenchmark& bench : results.benchmarks) {
    std::stable_sort(bench.repetitions.begin(), bench.repetitions.end(),
                     [](const auto& x, const auto& y) { return x.index < y.index; });
  }
  return results;
}

MicroResults readMicroResultsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument(str(path, ": cannot open"));
  return readMicroResults(in, path);
}

}  // namespace synk::harness
