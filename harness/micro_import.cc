#include "synk/harness/micro_import.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include "synk/core/error.h"

namespace synk::harness {
namespace {

namespace pt = boost::property_tree;

double secondsPer(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  throw InvalidArgument(str(where, ": unknown time_unit '", unit, "'"));
}

template <typename T>
T field(const pt::ptree& node, const std::string& key, const std::string& where) {
  const auto child = node.get_child_optional(key);
  if (!child) throw InvalidArgument(str(where, ": no field '", key, "'"));
  try {
    return child->get_value<T>();
  } catch (const pt::ptree_bad_data&) {
    throw InvalidArgument(str(where, ": field '", key, "' is '", child->data(), "'"));
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

MicroRepetition repetition(const pt::ptree& entry, const std::string& where) {
  MicroRepetition rep;
  rep.index = entry.get<int>("repetition_index", 0);
  rep.iterations = field<int64_t>(entry, "iterations", where);
  const double unit = secondsPer(field<std::string>(entry, "time_unit", where), where);
  rep.real_seconds = field<double>(entry, "real_time", where) * unit;
  rep.cpu_seconds = field<double>(entry, "cpu_time", where) * unit;
  for (const auto& [key, value] : entry) {
    if (isEntryField(key) || !value.empty()) continue;
    if (auto number = value.get_value_optional<double>()) rep.counters[key] = *number;
  }
  return rep;
}

}  // namespace

MicroResults readMicroResults(std::istream& json, const std::string& source) {
  pt::ptree root;
  try {
    pt::read_json(json, root);
  } catch (const pt::json_parser_error& e) {
    throw InvalidArgument(str(source, ":", e.line(), ": not JSON: ", e.message()));
  }
  const auto benchmarks = root.get_child_optional("benchmarks");
  if (!benchmarks) {
    throw InvalidArgument(str(source, ": no \"benchmarks\" array (not Google Benchmark JSON?)"));
  }
  MicroResults results;
  if (const auto context = root.get_child_optional("context")) {
    for (const auto& [key, value] : *context)
      if (value.empty()) results.context[key] = value.data();
  }
  std::map<std::string, size_t> index;  // run_name -> position in results.benchmarks
  std::set<std::string> aggregated;
  size_t entry_number = 0;
  for (const auto& [unused, entry] : *benchmarks) {
    const std::string where = str(source, ": benchmarks[", entry_number++, "]");
    const std::string name = entry.get("run_name", field<std::string>(entry, "name", where));
    if (entry.get<std::string>("run_type", "iteration") == "aggregate") {
      aggregated.insert(name);
      continue;
    }
    auto [at, added] = index.emplace(name, results.benchmarks.size());
    if (added) results.benchmarks.push_back({name, {}, {}});
    MicroBenchmark& bench = results.benchmarks[at->second];
    // Google Benchmark 1.7 writes error_occurred and error_message; 1.8 also writes the
    // message (with error_occurred false) for a benchmark skipped with SkipWithMessage.
    if (entry.get("error_occurred", false) || entry.get_child_optional("error_message")) {
      bench.error = entry.get("error_message", std::string("skipped"));
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
