// Experiment::canonical(): every effective setting as sorted "key = value" lines.
#include <map>
#include <sstream>

#include "synk/harness/config/config.h"

namespace synk::harness {
namespace {

std::string numberText(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

template <typename T>
std::string listText(const std::vector<T>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i)
    out << (i ? "," : "") << values[i];
  return out.str();
}

std::string shapeText(const std::vector<Dim>& shape) {
  std::string out;
  for (const Dim& d : shape)
    out += (out.empty() ? "" : ",") + (d.is_batch ? std::string("batch") : std::to_string(d.value));
  return out;
}

}  // namespace

std::string Experiment::canonical() const {
  std::map<std::string, std::string> lines = {
      {"experiment.name", name},
      {"experiment.kind", kindName(kind)},
      {"experiment.repetitions", std::to_string(repetitions)},
      {"experiment.warmup", std::to_string(warmup)},
      {"experiment.warmup_time", numberText(warmup_time)},
      {"experiment.steps", std::to_string(steps)},
      {"experiment.min_time", numberText(min_time)},
      {"experiment.max_steps", std::to_string(max_steps)},
      {"experiment.timeout", numberText(timeout)},
      {"experiment.repetition_timeout", numberText(repetition_timeout)},
      {"experiment.seed", std::to_string(seed)},
      {"experiment.oversubscribe", oversubscribe ? "true" : "false"},
      {"experiment.gpu_telemetry", gpu_telemetry},
      {"axes.ranks", listText(axes.ranks)},
      {"axes.backend", listText(axes.backend)},
      {"compare.min_change", numberText(compare.min_change)},
      {"compare.noise_factor", numberText(compare.noise_factor)},
      {"compare.q", numberText(compare.q)},
      {"compare.min_repetitions", std::to_string(compare.min_repetitions)},
  };
  if (kind == ExperimentKind::Train) {
    // Only when off: runs recorded before the option (on by default) keep their configuration.
    if (!step_times) lines["experiment.step_times"] = "false";
    lines["experiment.plugin"] = plugin;
    lines["experiment.step"] = stepText();
    lines["experiment.check"] = listText(check);
    lines["experiment.scaling"] = scalingName(scaling);
    lines["axes.batch"] = listText(axes.batch);
    lines["axes.collectives"] = listText(axes.collectives);
    // Only with a launch line: runs recorded before it keep their configuration.
    if (!launch.empty()) {
      lines["experiment.launch"] = launch;
      lines["axes.nodes"] = listText(axes.nodes);
    }
    for (const auto& [option, values] : axes.model)
      lines["axes.model." + option] = listText(values);
    for (const auto& [backend, values] : axes.ranks_for)
      lines["axes." + backend + ".ranks"] = listText(values);
    for (const auto& [backend, values] : axes.batch_for)
      lines["axes." + backend + ".batch"] = listText(values);
    for (const auto& [option, value] : model)
      lines["model." + option] = value;
    for (const InputSpec& input : inputs) {
      const std::string prefix = "input." + input.name + ".";
      lines[prefix + "shape"] = shapeText(input.shape);
      lines[prefix + "dtype"] = input.dtype.empty() ? "(declared)" : input.dtype;
      if (input.range) {
        lines[prefix + "range"] =
            numberText(input.range->first) + ":" + numberText(input.range->second);
      }
      lines[prefix + "broadcast"] = input.broadcast ? "true" : "false";
      // Only when on: it changes what a step copies, so it is part of the comparability key,
      // and inputs described before it existed keep theirs.
      if (input.resident) lines[prefix + "resident"] = "true";
    }
  } else {
    lines["experiment.check"] = std::to_string(check_iterations);
    lines["experiment.blocking"] = blocking ? "true" : "false";
    lines["experiment.timing"] = timingName(timing);
    std::vector<std::string> ops;
    for (Collective op : axes.op)
      ops.push_back(toString(op));
    lines["axes.op"] = listText(ops);
    lines["axes.bytes"] = listText(axes.bytes);
    lines["axes.dtype"] = listText(axes.dtype);
    lines["axes.redop"] = listText(axes.redop);
    lines["axes.root"] = listText(axes.root);
  }
  std::string out;
  for (const auto& [key, value] : lines)
    out += key + " = " + value + "\n";
  return out;
}

}  // namespace synk::harness
