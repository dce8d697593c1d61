#include "synk/harness/records/collective.h"

#include <array>
#include <utility>

namespace synk::harness {
namespace {

constexpr std::array<std::pair<Collective, std::string_view>, 7> kNames{{
    {Collective::AllReduce, "all_reduce"},
    {Collective::Broadcast, "broadcast"},
    {Collective::Reduce, "reduce"},
    {Collective::AllGather, "all_gather"},
    {Collective::Gather, "gather"},
    {Collective::ReduceScatter, "reduce_scatter"},
    {Collective::Scatter, "scatter"},
}};

}  // namespace

std::string toString(Collective collective) {
  for (const auto& [value, name] : kNames) {
    if (value == collective) return std::string(name);
  }
  return "collective " + std::to_string(static_cast<int>(collective));
}

std::optional<Collective> parseCollective(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

const std::vector<Collective>& benchCollectives() {
  static const std::vector<Collective> ops = {Collective::AllReduce, Collective::Broadcast,
                                              Collective::Reduce,    Collective::AllGather,
                                              Collective::Gather,    Collective::Scatter};
  return ops;
}

}  // namespace synk::harness
