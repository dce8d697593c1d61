// What only the shared-memory communicator promises (collectives/README.md, "Failure contract"):
// a failure on one rank makes every rank throw, naming that rank, and the ranks stay in step.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/error.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

void expectSum(RankContext& ctx, Communicator& comm) {
  std::vector<float> values(1000, static_cast<float>(ctx.rank() + 1));
  void* buffer = ctx.device().allocate(values.size() * sizeof(float));
  ctx.device().copy(buffer, values.data(), values.size() * sizeof(float), CopyKind::HostToDevice);
  Waiter waiter = ctx.waiter("allReduce after a failure");
  comm.allReduce({buffer, values.size(), DType::Float32, ReduceOp::Sum}, waiter);
  const float want = static_cast<float>(ctx.size() * (ctx.size() + 1) / 2);
  if (static_cast<float*>(buffer)[999] != want) throw std::runtime_error("wrong sum after failure");
  ctx.device().release(buffer);
}

TEST_CASE("shm: a rank's bad buffer fails the collective on every rank", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(2, 3);
  runOnRanks(*factory, n, [](RankContext& ctx) {
    Communicator& comm = ctx.backend.communicator(true);
    void* buffer = ctx.device().allocate(4096);
    void* mine = ctx.rank() == 1 ? nullptr : buffer;
    Waiter waiter = ctx.waiter("allReduce with a null buffer on rank 1");
    try {
      comm.allReduce({mine, 1024, DType::Float32, ReduceOp::Sum}, waiter);
      throw std::runtime_error("allReduce with a null buffer on rank 1 did not throw");
    } catch (const InvalidArgument& e) {
      if (ctx.rank() != 1) throw std::runtime_error(str("rank ", ctx.rank(), ": ", e.what()));
    } catch (const RankError& e) {
      const std::string what = e.what();
      if (ctx.rank() == 1 || e.rank() != 1 || what.find("null") == std::string::npos) {
        throw std::runtime_error(str("rank ", ctx.rank(), " got RankError: ", what));
      }
    }
    ctx.device().release(buffer);
    expectSum(ctx, comm);
  });
}

TEST_CASE("shm: a wrapper that fails before its collective fails it on every rank", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(2, 3);
  runOnRanks(*factory, n, [](RankContext& ctx) {
    auto& comm = dynamic_cast<ShmCommunicator&>(ctx.backend.communicator(true));
    void* buffer = ctx.device().allocate(4096);
    Waiter waiter = ctx.waiter("gather while rank 1 fails to stage");
    try {
      if (ctx.rank() == 1) {
        comm.failOnThisRank(waiter,
                            std::make_exception_ptr(std::runtime_error("staging copy failed")));
      }
      const std::vector<size_t> counts(ctx.size(), 16);
      comm.gather({buffer, buffer, counts, DType::Float32, 0}, waiter);
      throw std::runtime_error("the gather did not fail");
    } catch (const RankError& e) {
      const std::string what = e.what();
      if (ctx.rank() == 1 || e.rank() != 1 ||
          what.find("staging copy failed") == std::string::npos) {
        throw std::runtime_error(str("rank ", ctx.rank(), " got RankError: ", what));
      }
    } catch (const std::runtime_error& e) {
      if (ctx.rank() != 1 || std::string(e.what()) != "staging copy failed") throw;
    }
    ctx.device().release(buffer);
    expectSum(ctx, comm);  // still in step
  });
}

TEST_CASE("shm: a list of k buffers is one collective: two barriers, however long", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(2, 3);
  runOnRanks(*factory, n, [](RankContext& ctx) {
    Communicator& comm = ctx.backend.communicator(true);
    constexpr size_t kBuffers = 64;
    std::vector<float*> buffers;
    std::vector<AllReduceArgs> list;
    for (size_t k = 0; k < kBuffers; ++k) {
      buffers.push_back(static_cast<float*>(ctx.device().allocate(4 * sizeof(float))));
      for (int i = 0; i < 4; ++i)
        buffers.back()[i] = static_cast<float>(ctx.rank() + 1) * static_cast<float>(k + 1);
      list.push_back({buffers.back(), 4, DType::Float32, ReduceOp::Sum});
    }
    Waiter waiter = ctx.waiter("a list of 64 all_reduces");
    const uint64_t before = ctx.group.barrier().epoch();
    comm.allReduceList(list, waiter);
    const uint64_t barriers = ctx.group.barrier().epoch() - before;
    if (barriers != 2) throw std::runtime_error(str("the list took ", barriers, " barriers"));
    const int ranks_sum = ctx.size() * (ctx.size() + 1) / 2;
    for (size_t k = 0; k < kBuffers; ++k) {
      const float want = static_cast<float>(ranks_sum) * static_cast<float>(k + 1);
      if (buffers[k][3] != want) {
        throw std::runtime_error(str("buffer ", k, " holds ", buffers[k][3], ", not ", want));
      }
      ctx.device().release(buffers[k]);
    }
  });
}

}  // namespace
}  // namespace synk::test
