#pragma once
// Private to the collectives runner: one rank's side of measuring one collective point, on the
// rank's Device and Communicator (the level nccl-tests measures NCCL at: no session step
// around each call). Counts, sizes and busbw follow nccl-tests (collectives_table.h).
//
// Out of place (nccl-tests' first column group) every op reads a send buffer and writes a
// receive buffer; in place all_reduce and broadcast work on one buffer, and reduce's root
// receives into its send buffer. The gathers and scatter have only the out-of-place form.
//
// Scatter has no communicator operation in synk: Session::scatter lets every rank copy its rows
// out of shared memory. It is measured that way: the root's source lies in its shared-memory
// heap, every rank copies its part to its device, and a barrier ends the operation.
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/backend.h"
#include "synk/core/dtype.h"
#include "synk/core/process_group.h"
#include "synk/core/reduce_op.h"
#include "synk/core/shm_heap.h"
#include "synk/harness/records/collective.h"
#include "synk/harness/run/gpu_telemetry.h"

namespace synk::harness {

struct CollectiveParams {
  Collective op = Collective::AllReduce;
  DType dtype = DType::Float32;
  ReduceOp redop = ReduceOp::Sum;
  int root = 0;
  int64_t bytes = 0;
  bool in_place = false;
  int warmup = 5, iterations = 20, checks = 1;
  bool blocking = false;  // a barrier and a synchronisation around every iteration (-z 1)
  // Back to back (nccl-tests' method): `iterations` calls, one synchronisation, one time: the
  // mean per iteration. Otherwise every iteration is synchronised and timed on its own.
  bool back_to_back = true;
};
// Times one rank writes per point: 1 back to back, else one per iteration.
int timesPerRank(const CollectiveParams& params);

struct RankSide {
  ProcessGroup& group;
  ShmHeap& heap;
  Backend& backend;
  bool native;  // NCCL (cuda) rather than host-staged
  // The master's GPU telemetry (null elsewhere or without): read around the timed iterations,
  // while the other ranks wait at the barrier that starts them.
  const GpuTelemetry* telemetry = nullptr;
};

// Every rank calls it with the same params, in step. Writes timesPerRank(params) times (ns per
// iteration) into `times` and the number of wrong result elements this rank holds after the
// checks into `wrong`. Throws
// on failure; `agree` ranks first agree (a barrier) that every rank could allocate its buffers.
// Returns false when some rank could not (the point fails on every rank alike).
// With side.telemetry, `gpus` receives one reading per GPU over the timed iterations.
bool measureCollective(RankSide& side, const CollectiveParams& params, int64_t* times,
                       int64_t& wrong, std::string& failure,
                       std::vector<GpuReading>* gpus = nullptr);

// nccl-tests' warm-up pass: before its first timed size, `-w` calls of every size. A job runs
// this for each of its points, in order, before measuring the first (every rank, in step):
// without it the first point was timed on GPUs idle since the process started, 1.6-5.7 us an op
// slower than nccl-tests' same row, in every op
// (results/device/2026-11-27-h200x2-collectives-vs-mpi-nccl-tests-8c9da89.md). Buffers are
// allocated but not filled; a point whose buffers do not fit is skipped (its measurement says
// so); anything else a point throws is the caller's (the runner: the point's measurement reports
// what does not end the group; it skips the pass at -w 0).
void warmCollective(RankSide& side, const CollectiveParams& params);

}  // namespace synk::harness
