#pragma once
// The collective operations, named once: the `op` axis's text (config, the store's axes, the
// tables) is parsed into a Collective where it comes in (config, a stored point's axes) and
// compared as the enum everywhere else.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace synk::harness {

enum class Collective { AllReduce, Broadcast, Reduce, AllGather, Gather, ReduceScatter, Scatter };

// "all_reduce", "broadcast", "reduce", "all_gather", "gather", "reduce_scatter", "scatter".
std::string toString(Collective collective);
// The collective `name` names, or nullopt where it names none.
std::optional<Collective> parseCollective(std::string_view name);
// What `synk-bench collectives` runs (the op axis's valid values), in this order: all_reduce,
// broadcast, reduce, all_gather, gather, scatter.
const std::vector<Collective>& benchCollectives();

}  // namespace synk::harness
