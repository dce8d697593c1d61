#pragma once
// Internal: the collective fast path (core/README.md). The master skips a collective's shape
// exchange for variables every rank is known to hold with the same shape. Learnt from an exchange
// (remember(), committed once the step succeeded) and forgotten as soon as any rank's shape
// generation (RankSlot::shape_generation: ModelTable::shapeGeneration(), sent with every step's
// status) moves.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/control_block.h"

namespace synk::detail {

class UniformShapes {
 public:
  // Master: whether every rank holds `shape` for this variable. `rank` and `generation` are the
  // master's own: its shapes also change outside steps (Variable::setValue on its copy).
  bool known(uint32_t model, uint32_t index, int rank, uint64_t generation, Shape& shape);
  // Master, during a step: every rank holds `shape` (learnt in this step's exchange).
  void remember(uint32_t model, uint32_t index, const Shape& shape);
  // Master, after every step's end barrier: reads each rank's generation and status.
  void noteStep(const ControlBlock& cb, int n_ranks);

 private:
  static uint64_t key(uint32_t model, uint32_t index) { return uint64_t{model} << 32 | index; }

  std::unordered_map<uint64_t, Shape> uniform_;
  std::vector<std::pair<uint64_t, Shape>> pending_;  // learnt in the current step
  std::vector<uint64_t> generations_;                // per rank, as last read
};

}  // namespace synk::detail
