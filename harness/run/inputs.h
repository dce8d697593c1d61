#pragma once
// Synthetic inputs for a step, from the config's [input.NAME] descriptions: the shape with
// `batch` resolved to the rows one step scatters, the dtype (the plugin's own when the config
// names none), values drawn uniformly from the range (floats: [-1, 1], integers: [0, 1] unless
// given), from a seed, so every repetition of a point computes on the same numbers.
#include <cstdint>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/model.h"
#include "synk/harness/config/config.h"

namespace synk::harness {

Shape resolveShape(const InputSpec& spec, int64_t rows);

// One array per input of `function`, in its declaration order. Throws BadInput when the config
// does not describe an input, or describes it with another dtype or number of dimensions.
std::vector<Array> makeInputs(const FunctionSpec& function, const std::vector<InputSpec>& specs,
                              int64_t rows, uint64_t seed);

// The input names of `function` the config marks broadcast.
// Whether the input named so stays in the GPUs' memory (InputSpec::resident).
bool residentInput(const std::vector<InputSpec>& specs, const std::string& name);
std::vector<std::string> broadcastInputs(const FunctionSpec& function,
                                         const std::vector<InputSpec>& specs);

}  // namespace synk::harness
