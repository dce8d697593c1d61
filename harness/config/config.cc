#include "synk/harness/config/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/strings.h"
#include "synk/harness/config/axis.h"
#include "synk/harness/config/config_file.h"

namespace synk::harness {

const std::vector<std::string> kBackends = {"cpu", "cuda"};
const std::vector<std::string> kTrainCollectives = {"nccl", "host"};
const std::vector<std::string> kCollectiveBackends = {"cpu", "host", "nccl"};
const std::vector<std::string> kCollectiveOps = [] {
  std::vector<std::string> names;
  for (Collective op : benchCollectives())
    names.push_back(toString(op));
  return names;
}();
const std::vector<std::string> kDTypes = {"float32", "float64", "int32",   "int64",
                                          "uint8",   "float16", "bfloat16"};
const std::vector<std::string> kRedops = {"sum", "prod", "max", "min", "avg"};

namespace {

using Entries = std::map<std::string, ConfigEntry>;

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "" : separator) + item;
  return out;
}

// Levenshtein distance, for "did you mean".
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Converts and checks values; every error names the key, its value and where it came from.
class Reader {
 public:
  Reader(const std::string& key, const ConfigEntry& entry) : key_(key), entry_(entry) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw BadInput(entry_.where + ": " + key_ + " = '" + entry_.value + "': " + why);
  }
  const std::string& text() const { return entry_.value; }

  std::string name() const {
    const std::string_view v = trim(entry_.value);
    if (v.empty()) fail("needs a value");
    return std::string(v);
  }
  std::string oneOf(const std::vector<std::string>& allowed) const {
    const std::string v = name();
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      fail("must be one of " + joined(allowed));
    }
    return v;
  }
  int64_t integer(int64_t min, int64_t max) const {
    int64_t v = 0;
    try {
      v = parseCount(entry_.value);
    } catch (const BadInput& e) {
      fail(e.what());
    }
    if (v < min || v > max) {
      fail("must be between " + std::to_string(min) + " and " + std::to_string(max));
    }
    return v;
  }
  double number(double min) const {
    const std::string_view v = trim(entry_.value);
    double d = 0;
    auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (error != std::errc() || end != v.data() + v.size() || !std::isfinite(d)) {
      fail("not a number");
    }
    if (d < min) fail("must be at least " + std::to_string(min));
    return d;
  }
  bool boolean() const {
    const std::string v = name();
    if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
    if (v == "false" || v == "no" || v == "off" || v == "0") return false;
    fail("must be true or false");
  }
  std::vector<int64_t> intAxis(int64_t min, Unit unit = Unit::Count) const {
    if (trim(entry_.value).empty()) fail("an axis needs at least one value");
    try {
      return parseIntAxis(entry_.value, min, unit);
    } catch (const BadInput& e) {
      fail(e.what());
    }
  }
  // A list of names from `allowed`; "all" selects every one when all_ok.
  std::vector<std::string> nameAxis(const std::vector<std::string>& allowed,
                                    bool all_ok = false) const {
    if (trim(entry_.value).empty()) fail("an axis needs at least one value");
    std::vector<std::string> names;
    try {
      names = parseNameList(entry_.value);
    } catch (const BadInput& e) {
      fail(e.what());
    }
    if (all_ok && names == std::vector<std::string>{"all"}) return allowed;
    for (const std::string& n : names) {
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
        fail("'" + n + "' is not one of " + joined(allowed) + (all_ok ? ", all" : ""));
      }
    }
    return names;
  }

 private:
  const std::string& key_;
  const ConfigEntry& entry_;
};

// nccl-tests' and numpy's spellings of the types, to synk's names.
std::string canonicalDType(const std::string& name) {
  static const std::map<std::string, std::string> aliases = {
      {"float", "float32"}, {"double", "float64"}, {"half", "float16"}, {"int", "int32"},
      {"bf16", "bfloat16"}, {"fp32", "float32"},   {"fp16", "float16"}, {"uint8_t", "uint8"}};
  const auto found = aliases.find(name);
  return found == aliases.end() ? name : found->second;
}

std::vector<Dim> parseShape(const Reader& r) {
  std::vector<Dim> shape;
  if (trim(r.text()).empty()) return shape;  // a scalar
  for (std::string_view item : splitOn(r.text(), ',')) {
    if (item == "batch") {
      shape.push_back({true, 0});
      continue;
    }
    try {
      const int64_t v = parseCount(item);
      if (v < 0) r.fail("a dimension cannot be negative");
      shape.push_back({false, v});
    } catch (const BadInput& e) {
      r.fail(std::string(e.what()) + " (dimensions are integers or the symbol batch)");
    }
  }
  return shape;
}

std::pair<double, double> parseRange(const Reader& r) {
  const std::vector<std::string_view> parts = splitOn(r.text(), ':');
  if (parts.size() != 2) r.fail("expected low:high");
  double bounds[2];
  for (int i = 0; i < 2; ++i) {
    auto [end, error] =
        std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), bounds[i]);
    if (parts[i].empty() || error != std::errc() || end != parts[i].data() + parts[i].size() ||
        !std::isfinite(bounds[i])) {
      r.fail("'" + std::string(parts[i]) + "' is not a number");
    }
  }
  if (bounds[1] < bounds[0]) r.fail("the range ends before it starts");
  return {bounds[0], bounds[1]};
}

std::vector<StepAction> parseStep(const Reader& r) {
  std::vector<StepAction> step;
  const std::string text = r.name();
  for (std::string_view item : splitOn(text, ',')) {
    if (item.empty()) r.fail("an empty action");
    StepAction action;
    if (item.substr(0, 11) == "all_reduce(" && item.back() == ')') {
      action.kind = StepAction::Kind::AllReduce;
      action.name = std::string(trim(item.substr(11, item.size() - 12)));
      if (action.name.empty()) r.fail("all_reduce() names no variable");
    } else {
      if (item.find_first_of("() ") != std::string_view::npos) {
        r.fail("'" + std::string(item) + "' is neither a function name nor all_reduce(VARIABLE)");
      }
      action.name = std::string(item);
    }
    step.push_back(action);
  }
  return step;
}

using Handler = std::function<void(Experiment&, const Reader&)>;

// Keys both kinds accept.
std::map<std::string, Handler> commonKeys() {
  return {
      {"experiment.name", [](Experiment& e, const Reader& r) { e.name = r.name(); }},
      {"experiment.description", [](Experiment& e, const Reader& r) { e.description = r.text(); }},
      {"experiment.kind", [](Experiment&, const Reader&) {}},  // read first, see below
      {"experiment.repetitions",
       [](Experiment& e, const Reader& r) { e.repetitions = int(r.integer(1, 10000)); }},
      {"experiment.warmup",
       [](Experiment& e, const Reader& r) { e.warmup = int(r.integer(0, 1000000)); }},
      {"experiment.warmup_time",
       [](Experiment& e, const Reader& r) { e.warmup_time = r.number(0); }},
      {"experiment.steps",
       [](Experiment& e, const Reader& r) { e.steps = int(r.integer(1, 100000000)); }},
      {"experiment.min_time", [](Experiment& e, const Reader& r) { e.min_time = r.number(0); }},
      {"experiment.max_steps",
       [](Experiment& e, const Reader& r) { e.max_steps = int(r.integer(1, 100000000)); }},
      {"experiment.timeout", [](Experiment& e, const Reader& r) { e.timeout = r.number(0.001); }},
      {"experiment.repetition_timeout",
       [](Experiment& e, const Reader& r) { e.repetition_timeout = r.number(0.001); }},
      {"experiment.seed",
       [](Experiment& e, const Reader& r) { e.seed = uint64_t(r.integer(0, INT64_MAX)); }},
      {"experiment.oversubscribe",
       [](Experiment& e, const Reader& r) { e.oversubscribe = r.boolean(); }},
      {"experiment.gpu_telemetry",
       [](Experiment& e, const Reader& r) {
         e.gpu_telemetry = r.oneOf({"used", "all", "none"});
       }},
      {"experiment.step_times", [](Experiment& e, const Reader& r) { e.step_times = r.boolean(); }},
      {"axes.ranks", [](Experiment& e, const Reader& r) { e.axes.ranks = r.intAxis(1); }},
      {"compare.min_change",
       [](Experiment& e, const Reader& r) { e.compare.min_change = r.number(0); }},
      {"compare.noise_factor",
       [](Experiment& e, const Reader& r) { e.compare.noise_factor = r.number(0); }},
      {"compare.q",
       [](Experiment& e, const Reader& r) {
         e.compare.q = r.number(0);
         if (e.compare.q <= 0 || e.compare.q >= 1) r.fail("must lie between 0 and 1");
       }},
      {"compare.min_repetitions",
       [](Experiment& e, const Reader& r) {
         e.compare.min_repetitions = int(r.integer(2, 10000));
       }},
  };
}

std::map<std::string, Handler> trainKeys() {
  std::map<std::string, Handler> keys = commonKeys();
  keys.insert({
      {"experiment.plugin", [](Experiment& e, const Reader& r) { e.plugin = r.name(); }},
      {"experiment.function",
       [](Experiment& e, const Reader& r) {
         if (!e.step.empty()) r.fail("give either experiment.function or experiment.step");
         e.step = {{StepAction::Kind::Call, r.name()}};
       }},
      {"experiment.step",
       [](Experiment& e, const Reader& r) {
         if (!e.step.empty()) r.fail("give either experiment.function or experiment.step");
         e.step = parseStep(r);
       }},
      {"experiment.check", [](Experiment& e, const Reader& r) { e.check = r.nameAxis({}); }},
      {"experiment.scaling",
       [](Experiment& e, const Reader& r) {
         e.scaling = r.oneOf({"weak", "strong"}) == "weak" ? Scaling::Weak : Scaling::Strong;
       }},
      {"axes.backend",
       [](Experiment& e, const Reader& r) { e.axes.backend = r.nameAxis(kBackends); }},
      {"axes.batch", [](Experiment& e, const Reader& r) { e.axes.batch = r.intAxis(1); }},
      {"axes.collectives",
       [](Experiment& e, const Reader& r) { e.axes.collectives = r.nameAxis(kTrainCollectives); }},
      {"axes.precision",
       [](Experiment& e, const Reader& r) { e.axes.model["precision"] = r.nameAxis({}); }},
      {"experiment.launch",
       [](Experiment& e, const Reader& r) {
         try {
           LaunchLine::parse(r.text());
         } catch (const BadInput& error) {
           r.fail(error.what());
         }
         e.launch = std::string(trim(r.text()));
       }},
      {"axes.nodes", [](Experiment& e, const Reader& r) { e.axes.nodes = r.intAxis(1); }},
  });
  return keys;
}

std::map<std::string, Handler> collectiveKeys() {
  std::map<std::string, Handler> keys = commonKeys();
  keys.insert({
      {"experiment.check",
       [](Experiment& e, const Reader& r) { e.check_iterations = int(r.integer(0, 1000)); }},
      {"experiment.blocking", [](Experiment& e, const Reader& r) { e.blocking = r.boolean(); }},
      {"experiment.timing",
       [](Experiment& e, const Reader& r) {
         e.timing = r.oneOf({"batch", "iteration"}) == "batch" ? CollectiveTiming::Batch
                                                               : CollectiveTiming::Iteration;
       }},
      {"axes.backend",
       [](Experiment& e, const Reader& r) {
         e.axes.backend = r.nameAxis(kCollectiveBackends, true);
       }},
      {"axes.op",
       [](Experiment& e, const Reader& r) {
         e.axes.op.clear();
         for (const std::string& name : r.nameAxis(kCollectiveOps, true))
           e.axes.op.push_back(*parseCollective(name));  // nameAxis refused any other name
       }},
      {"axes.bytes",
       [](Experiment& e, const Reader& r) { e.axes.bytes = r.intAxis(0, Unit::Bytes); }},
      {"axes.dtype",
       [](Experiment& e, const Reader& r) {
         std::vector<std::string> names;
         for (const std::string& n : r.nameAxis({}))
           names.push_back(canonicalDType(n));
         if (names == std::vector<std::string>{"all"}) names = kDTypes;
         for (const std::string& n : names) {
           if (std::find(kDTypes.begin(), kDTypes.end(), n) == kDTypes.end()) {
             r.fail("'" + n + "' is not one of " + joined(kDTypes) + ", all");
           }
         }
         e.axes.dtype = names;
       }},
      {"axes.redop",
       [](Experiment& e, const Reader& r) { e.axes.redop = r.nameAxis(kRedops, true); }},
      {"axes.root", [](Experiment& e, const Reader& r) { e.axes.root = r.intAxis(0); }},
  });
  // Named, not unknown: a collectives job is one session in a forked child so far.
  for (const char* key : {"experiment.launch", "axes.nodes"}) {
    keys[key] = [](Experiment&, const Reader& r) {
      r.fail(
          "collectives over several nodes are not built in synk-bench yet (train experiments "
          "take experiment.launch and axes.nodes)");
    };
  }
  return keys;
}

InputSpec& inputNamed(Experiment& e, const std::string& name) {
  for (InputSpec& input : e.inputs) {
    if (input.name == name) return input;
  }
  e.inputs.push_back({});
  e.inputs.back().name = name;
  return e.inputs.back();
}

// Keys with a name inside: model.OPTION, input.NAME.FIELD, axes.model.OPTION, axes.BACKEND.AXIS.
// Returns false when `key` is none of them.
bool patternKey(Experiment& e, const std::string& key, const Reader& r) {
  auto starts = [&](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  if (e.kind != ExperimentKind::Train) return false;
  if (starts("model.") && key.size() > 6) {
    e.model[key.substr(6)] = std::string(trim(r.text()));
    return true;
  }
  if (starts("axes.model.") && key.size() > 11) {
    e.axes.model[key.substr(11)] = r.nameAxis({});
    return true;
  }
  if (starts("input.")) {
    const size_t dot = key.rfind('.');
    const std::string name = key.substr(6, dot - 6), field = key.substr(dot + 1);
    if (dot <= 6 || name.empty()) return false;
    if (field == "shape") {
      inputNamed(e, name).shape = parseShape(r);
    } else if (field == "dtype") {
      inputNamed(e, name).dtype = canonicalDType(r.name());
      if (std::find(kDTypes.begin(), kDTypes.end(), inputNamed(e, name).dtype) == kDTypes.end()) {
        r.fail("must be one of " + joined(kDTypes));
      }
    } else if (field == "range") {
      inputNamed(e, name).range = parseRange(r);
    } else if (field == "broadcast") {
      inputNamed(e, name).broadcast = r.boolean();
    } else if (field == "resident") {
      inputNamed(e, name).resident = r.boolean();
    } else {
      return false;
    }
    return true;
  }
  if (starts("axes.")) {
    for (const std::string& backend : kBackends) {
      if (key == "axes." + backend + ".ranks") {
        e.axes.ranks_for[backend] = r.intAxis(1);
        return true;
      }
      if (key == "axes." + backend + ".batch") {
        e.axes.batch_for[backend] = r.intAxis(1);
        return true;
      }
    }
  }
  return false;
}

[[noreturn]] void unknownKey(const std::string& key, const ConfigEntry& entry, ExperimentKind kind,
                             const std::map<std::string, Handler>& keys) {
  std::vector<std::string> valid;
  std::string closest;
  size_t best = 4;  // suggest only near misses
  for (const auto& [name, handler] : keys) {
    valid.push_back(name);
    const size_t d = editDistance(key, name);
    if (d < best) best = d, closest = name;
  }
  if (kind == ExperimentKind::Train) {
    valid.insert(valid.end(), {"model.OPTION", "input.NAME.shape", "input.NAME.dtype",
                               "input.NAME.range", "input.NAME.broadcast", "input.NAME.resident",
                               "axes.model.OPTION", "axes.BACKEND.ranks", "axes.BACKEND.batch"});
  }
  throw BadInput(entry.where + ": unknown key '" + key + "' in a " + kindName(kind) +
                 " experiment" + (closest.empty() ? "" : " (did you mean '" + closest + "'?)") +
                 "; valid keys: " + joined(valid));
}

void validate(const Experiment& e, const std::string& origin) {
  if (e.kind == ExperimentKind::Train) {
    if (e.plugin.empty())
      throw BadInput(origin +
                     ": experiment.plugin is missing (a train experiment names its model plugin)");
    if (e.step.empty())
      throw BadInput(
          origin +
          ": experiment.function (or experiment.step) is missing: which function is one step");
    for (const InputSpec& input : e.inputs) {
      if (input.broadcast) continue;
      if (input.shape.empty() || !input.shape[0].is_batch) {
        throw BadInput(origin + ": input '" + input.name +
                       "' is scattered, so its shape must start with batch (or set input." +
                       input.name + ".broadcast = true)");
      }
    }
    // A nodes axis means nothing without the line that starts a point on that many nodes.
    const auto nodes = e.origin.find("axes.nodes");
    if (nodes != e.origin.end() && e.launch.empty()) {
      throw BadInput(nodes->second +
                     ": axes.nodes needs experiment.launch, the launcher's line that starts a "
                     "point on {nodes} nodes (e.g. launch = mpirun -np {nodes} --map-by "
                     "ppr:1:node)");
    }
    for (const auto& [backend, values] : e.axes.ranks_for) {
      if (std::find(e.axes.backend.begin(), e.axes.backend.end(), backend) ==
          e.axes.backend.end()) {
        throw BadInput(origin + ": axes." + backend +
                       ".ranks is given but axes.backend does not list " + backend);
      }
    }
  }
}

ExperimentKind readKind(const Entries& entries) {
  const auto found = entries.find("experiment.kind");
  if (found == entries.end()) return ExperimentKind::Train;
  return Reader("experiment.kind", found->second).oneOf({"train", "collectives"}) == "train"
             ? ExperimentKind::Train
             : ExperimentKind::Collectives;
}

}  // namespace

const char* kindName(ExperimentKind kind) {
  return kind == ExperimentKind::Train ? "train" : "collectives";
}

const char* timingName(CollectiveTiming timing) {
  return timing == CollectiveTiming::Batch ? "batch" : "iteration";
}

const char* scalingName(Scaling scaling) {
  return scaling == Scaling::Weak ? "weak" : "strong";
}

Experiment parseExperiment(const std::string& text, const std::string& origin,
                           const std::vector<std::string>& overrides, const Entries& flags) {
  Entries entries = readConfigEntries(text, origin);
  for (const auto& [key, entry] : flags)
    entries[key] = entry;
  applyOverrides(entries, overrides);
  // A step given on the command line replaces the file's, whichever of the two keys each used.
  const auto function = entries.find("experiment.function"), step = entries.find("experiment.step");
  if (function != entries.end() && step != entries.end()) {
    const bool function_set = function->second.where.rfind("--set", 0) == 0;
    const bool step_set = step->second.where.rfind("--set", 0) == 0;
    if (function_set != step_set) entries.erase(function_set ? step : function);
  }
  Experiment e;
  e.file = origin;
  e.text = text;
  e.overrides = overrides;
  e.kind = readKind(entries);
  if (e.kind == ExperimentKind::Collectives) {
    e.repetitions = 1;
    e.steps = 20;  // nccl-tests' -n
    e.axes.backend = {"cpu"};
  }
  const std::map<std::string, Handler> keys =
      e.kind == ExperimentKind::Train ? trainKeys() : collectiveKeys();
  for (const auto& [key, entry] : entries) {
    e.origin[key] = entry.where;
    const Reader reader(key, entry);
    const auto handler = keys.find(key);
    if (handler != keys.end()) {
      handler->second(e, reader);
    } else if (!patternKey(e, key, reader)) {
      unknownKey(key, entry, e.kind, keys);
    }
  }
  if (e.name.empty()) {
    const std::string base = origin.substr(origin.rfind('/') + 1);
    e.name = base.substr(0, base.rfind(".ini"));
  }
  validate(e, origin);
  return e;
}

Experiment loadExperiment(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read experiment file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parseExperiment(text.str(), path, overrides);
}

std::string describeSetting(const Experiment& e, const std::string& key, const std::string& value) {
  const auto found = e.origin.find(key);
  const std::string where = found != e.origin.end() ? found->second : e.file;
  return (where.empty() ? "" : where + ": ") + key + " = '" + value + "'";
}

std::string Experiment::stepText() const {
  std::string out;
  for (const StepAction& a : step) {
    if (!out.empty()) out += ", ";
    out += a.kind == StepAction::Kind::AllReduce ? "all_reduce(" + a.name + ")" : a.name;
  }
  return out;
}

}  // namespace synk::harness
