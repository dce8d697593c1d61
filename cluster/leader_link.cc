#include "synk/cluster/leader_link.h"

#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "synk/cluster/mpi_world.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"

namespace synk::cluster {
namespace {

using detail::checkMpi;

// MPI counts are ints: a larger vector goes in pieces, each its own collective.
constexpr size_t kMaxPiece = size_t{1} << 30;

// MPI's all-reduce on two nodes where its one operation per element gives the node-order bits
// whichever operand it puts first: a + b == b + a and a * b == b * a for floats (a NaN's payload
// aside), and int32/int64 wrap and compare exactly. Not float max/min: core's std::max(acc, x)
// keeps acc of -0 and +0, or of a NaN, where MPI's max picks its own; nor float16/bfloat16, which
// MPI has no type for; nor uint8, whose sum Open MPI 4.1's AVX kernels saturate (255 where core
// wraps: the test saw it; open-mpi/ompi#8045, "wontfix"). False where the ordered slices go.
bool orderFreeOnTwo(DType dtype, ReduceOp op, MPI_Datatype& mpi_type, MPI_Op& mpi_op) {
  const bool floating = dtype == DType::Float32 || dtype == DType::Float64;
  switch (dtype) {
    case DType::Float32:
      mpi_type = MPI_FLOAT;
      break;
    case DType::Float64:
      mpi_type = MPI_DOUBLE;
      break;
    case DType::Int32:
      mpi_type = MPI_INT32_T;
      break;
    case DType::Int64:
      mpi_type = MPI_INT64_T;
      break;
    default:
      return false;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      mpi_op = MPI_SUM;
      return true;
    case ReduceOp::Prod:
      mpi_op = MPI_PROD;
      return true;
    case ReduceOp::Max:
      mpi_op = MPI_MAX;
      return !floating;
    case ReduceOp::Min:
      mpi_op = MPI_MIN;
      return !floating;
    default:
      return false;
  }
}

// Combines in blocks that stay in L1, as the shared-memory reduction does (kBlockBytes there).
constexpr size_t kBlockBytes = 4096;

// Otherwise the grouping and order of the operations matter, and MPI's all-reduce may choose its
// own (a non-commutative op only keeps the operands' order). So: node k owns slice k, receives
// every node's slice k (MPI_Alltoallv, bytes), combines them in node order with core's host
// kernels (avg: the sum times 1/nodes), and every node gathers the combined slices
// (MPI_Allgatherv) — the bytes a ring all-reduce moves, the same bits everywhere, in one
// machine's order.
void combineSlicesInNodeOrder(std::byte* data, int count, DType dtype, ReduceOp op, int nodes,
                              int node, const std::string& what) {
  const int elem = static_cast<int>(dtypeSize(dtype));
  std::vector<int> sizes(nodes), offsets(nodes);  // bytes
  for (int k = 0; k < nodes; ++k) {
    const int first = static_cast<int>(int64_t{count} * k / nodes);
    const int end = static_cast<int>(int64_t{count} * (k + 1) / nodes);
    offsets[k] = first * elem;
    sizes[k] = (end - first) * elem;
  }
  const int mine = sizes[node];
  std::vector<std::byte> parts(static_cast<size_t>(mine) * nodes);
  std::vector<int> from_sizes(nodes, mine), from_offsets(nodes);
  for (int k = 0; k < nodes; ++k)
    from_offsets[k] = k * mine;
  checkMpi(MPI_Alltoallv(data, sizes.data(), offsets.data(), MPI_BYTE, parts.data(),
                         from_sizes.data(), from_offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
           what + " (MPI_Alltoallv)");
  std::byte* out = data + offsets[node];
  for (size_t at = 0; at < static_cast<size_t>(mine); at += kBlockBytes) {
    const size_t bytes = std::min(kBlockBytes, static_cast<size_t>(mine) - at);
    const size_t len = bytes / static_cast<size_t>(elem);
    std::memcpy(out + at, parts.data() + at, bytes);
    for (int k = 1; k < nodes; ++k)
      host::accumulate(out + at, parts.data() + static_cast<size_t>(k) * mine + at, len, dtype, op);
    if (op == ReduceOp::Avg) host::scaleCopy(out + at, out + at, len, dtype, 1.0 / nodes);
  }
  checkMpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, data, sizes.data(), offsets.data(), MPI_BYTE,
                          MPI_COMM_WORLD),
           what + " (MPI_Allgatherv)");
}

}  // namespace

// The MPI thread: runs posted work in order until told to finish.
struct LeaderLink::Thread {
  std::mutex mutex;
  std::condition_variable posted;
  std::deque<std::packaged_task<void()>> queue;
  bool finish = false;
  std::thread thread;

  Thread() : thread([this] { loop(); }) {}
  void loop() {
    while (true) {
      std::packaged_task<void()> task;
      {
        std::unique_lock lock(mutex);
        posted.wait(lock, [this] { return finish || !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task();
    }
  }
  std::future<void> post(std::function<void()> work) {
    std::packaged_task<void()> task(std::move(work));
    std::future<void> done = task.get_future();
    {
      std::lock_guard lock(mutex);
      queue.push_back(std::move(task));
    }
    posted.notify_one();
    return done;
  }
  void stop() {
    {
      std::lock_guard lock(mutex);
      finish = true;
    }
    posted.notify_one();
  }
};

void LeaderLink::endThread() {
  if (!timed_out_) {
    thread_->stop();
    thread_->thread.join();
    return;
  }
  // The MPI thread may wait inside MPI for a node that never comes: it cannot be joined, and its
  // state must outlive it.
  thread_->thread.detach();
  (void)thread_.release();
}

void LeaderLink::onMpiThread(const std::string& what, std::function<void()> work) {
  if (timed_out_) throw UsageError(what + ": the node leaders' link timed out before");
  std::future<void> done = thread_->post(std::move(work));
  if (done.wait_for(timeout_) != std::future_status::ready) {
    timed_out_ = true;
    throw Timeout(str(what, ": not done within ", timeout_.count(), " ms on node ", layout_.node,
                      " of ", layout_.nodes, " (a node's leader late, stopped or gone)"));
  }
  done.get();
}

LeaderLink::LeaderLink(const NodeLayout& layout, std::chrono::milliseconds timeout)
    : layout_(layout), timeout_(timeout), thread_(std::make_unique<Thread>()) {
  try {
    onMpiThread("starting MPI", [layout] { detail::startMpi(layout); });
  } catch (...) {
    endThread();
    throw;
  }
}

LeaderLink::~LeaderLink() {
  if (!timed_out_) {
    try {
      onMpiThread("finishing MPI", [] { MPI_Finalize(); });
    } catch (...) {  // a destructor does not throw: a late node only leaves MPI unfinished
    }
  }
  endThread();
}

void LeaderLink::barrier(const std::string& what) {
  onMpiThread(what, [&what] { checkMpi(MPI_Barrier(MPI_COMM_WORLD), what + " (MPI_Barrier)"); });
}

void LeaderLink::broadcast(std::vector<std::byte>& bytes, int root, const std::string& what) {
  if (root < 0 || root >= layout_.nodes) {
    throw InvalidArgument(str(what, ": root node ", root, " is not one of the ", layout_.nodes));
  }
  onMpiThread(what, [&bytes, root, &what] {
    uint64_t size = bytes.size();
    checkMpi(MPI_Bcast(&size, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), what + " (MPI_Bcast size)");
    bytes.resize(size);
    for (size_t at = 0; at < bytes.size(); at += kMaxPiece) {
      const int piece = static_cast<int>(std::min(kMaxPiece, bytes.size() - at));
      checkMpi(MPI_Bcast(bytes.data() + at, piece, MPI_BYTE, root, MPI_COMM_WORLD),
               what + " (MPI_Bcast)");
    }
  });
}

void LeaderLink::allReduce(void* data, size_t count, DType dtype, ReduceOp op,
                           const std::string& what) {
  if (!isValidDType(static_cast<int32_t>(dtype))) {
    throw InvalidArgument(str(what, ": dtype ", static_cast<int32_t>(dtype), " is not one"));
  }
  if (!isCollectiveOp(op, dtype)) {  // core's refusal, which says what would do
    checkCollectiveOp(op, dtype,
                      str(what, ": the node leaders' all-reduce of ", dtypeName(dtype), " with '",
                          reduceOpName(op), "'"));
  }
  const int nodes = layout_.nodes, node = layout_.node;
  if (nodes == 1 || count == 0) return;  // one node: its array is the result (avg scales by 1)
  onMpiThread(what, [data, count, dtype, op, nodes, node, &what] {
    const size_t elem = dtypeSize(dtype);
    MPI_Datatype mpi_type{};
    MPI_Op mpi_op{};
    const bool mpi_own = nodes == 2 && orderFreeOnTwo(dtype, op, mpi_type, mpi_op);
    auto* bytes = static_cast<std::byte*>(data);
    for (size_t at = 0; at < count; at += kMaxPiece / elem) {
      const size_t piece = std::min(kMaxPiece / elem, count - at);
      std::byte* start = bytes + at * elem;
      if (!mpi_own) {
        combineSlicesInNodeOrder(start, static_cast<int>(piece), dtype, op, nodes, node, what);
        continue;
      }
      checkMpi(MPI_Allreduce(MPI_IN_PLACE, start, static_cast<int>(piece), mpi_type, mpi_op,
                             MPI_COMM_WORLD),
               what + " (MPI_Allreduce)");
      if (op == ReduceOp::Avg) host::scaleCopy(start, start, piece, dtype, 1.0 / nodes);
    }
  });
}

}  // namespace synk::cluster
