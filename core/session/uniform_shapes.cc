#include "synk/core/session/uniform_shapes.h"

namespace synk::detail {

bool UniformShapes::known(uint32_t model, uint32_t index, int rank, uint64_t generation,
                          Shape& shape) {
  const auto me = static_cast<size_t>(rank);
  if (me >= generations_.size() || generations_[me] != generation) {
    uniform_.clear();
    return false;
  }
  const auto it = uniform_.find(key(model, index));
  if (it == uniform_.end()) return false;
  shape = it->second;
  return true;
}

void UniformShapes::remember(uint32_t model, uint32_t index, const Shape& shape) {
  pending_.emplace_back(key(model, index), shape);
}

void UniformShapes::noteStep(const ControlBlock& cb, int n_ranks) {
  generations_.resize(static_cast<size_t>(n_ranks), ~uint64_t{0});
  bool moved = false;
  bool failed = false;
  for (int r = 0; r < n_ranks; ++r) {
    const RankSlot& slot = cb.ranks[r];
    failed |= slot.status != 0;
    if (slot.shape_generation != generations_[static_cast<size_t>(r)]) {
      generations_[static_cast<size_t>(r)] = slot.shape_generation;
      moved = true;
    }
  }
  if (moved) uniform_.clear();
  // Learnt in this step's exchange; no rank's shapes changed after it (a collective that
  // reshapes, all_gather, moved the generations above and is never remembered).
  if (!failed) {
    for (auto& [k, shape] : pending_)
      uniform_[k] = std::move(shape);
  }
  pending_.clear();
}

}  // namespace synk::detail
