#include "synk/cluster/leader_link.h"

#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "synk/core/error.h"

namespace synk::cluster {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw Error(what + ": " + mpiError(code));
}

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

// MPI counts are ints: a larger vector goes in pieces, each its own collective.
constexpr size_t kMaxPiece = size_t{1} << 30;

// From three nodes the grouping of the additions matters, and MPI's all-reduce may group them
// its own way (a non-commutative op only keeps the operands' order). So: node k owns slice k,
// receives every node's slice k (MPI_Alltoallv), sums them in node order, and every node gathers
// the summed slices (MPI_Allgatherv) — the bytes a ring all-reduce moves, the same bits
// everywhere, in one machine's order.
void sumSlicesInNodeOrder(float* data, int count, int nodes, const std::string& what) {
  std::vector<int> sizes(nodes), offsets(nodes);
  for (int k = 0; k < nodes; ++k) {
    offsets[k] = static_cast<int>(int64_t{count} * k / nodes);
    sizes[k] = static_cast<int>(int64_t{count} * (k + 1) / nodes) - offsets[k];
  }
  int node = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &node), "MPI_Comm_rank");
  const int mine = sizes[node];
  std::vector<float> parts(static_cast<size_t>(mine) * nodes);
  std::vector<int> from_sizes(nodes, mine), from_offsets(nodes);
  for (int k = 0; k < nodes; ++k)
    from_offsets[k] = k * mine;
  check(MPI_Alltoallv(data, sizes.data(), offsets.data(), MPI_FLOAT, parts.data(),
                      from_sizes.data(), from_offsets.data(), MPI_FLOAT, MPI_COMM_WORLD),
        what + " (MPI_Alltoallv)");
  float* out = data + offsets[node];
  for (int i = 0; i < mine; ++i) {
    float sum = parts[i];
    for (int k = 1; k < nodes; ++k)
      sum += parts[static_cast<size_t>(k) * mine + i];
    out[i] = sum;
  }
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, data, sizes.data(), offsets.data(), MPI_FLOAT,
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
    onMpiThread("starting MPI", [layout] {
      int initialised = 0;
      check(MPI_Initialized(&initialised), "MPI_Initialized");
      if (initialised) throw UsageError("MPI was initialised before the node leaders' link");
      int provided = MPI_THREAD_SINGLE;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      int size = 0, rank = 0;
      check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
      check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
      if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        throw InvalidArgument(str("the MPI library gives ", threadLevelName(provided),
                                  "; synk's node leaders need MPI_THREAD_FUNNELED (one thread "
                                  "calls MPI): use an MPI built with thread support"));
      }
      if (size != layout.nodes || rank != layout.node) {
        MPI_Finalize();
        throw InvalidArgument(str("MPI's world has ", size, " processes and this is process ", rank,
                                  ", but the session's layout has ", layout.nodes,
                                  " nodes and this is node ", layout.node,
                                  ": start one launcher process per node (mpirun -np NODES "
                                  "--map-by ppr:1:node, or srun --ntasks-per-node=1)"));
      }
    });
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
  onMpiThread(what, [&what] { check(MPI_Barrier(MPI_COMM_WORLD), what + " (MPI_Barrier)"); });
}

void LeaderLink::broadcast(std::vector<std::byte>& bytes, int root, const std::string& what) {
  if (root < 0 || root >= layout_.nodes) {
    throw InvalidArgument(str(what, ": root node ", root, " is not one of the ", layout_.nodes));
  }
  onMpiThread(what, [&bytes, root, &what] {
    uint64_t size = bytes.size();
    check(MPI_Bcast(&size, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), what + " (MPI_Bcast size)");
    bytes.resize(size);
    for (size_t at = 0; at < bytes.size(); at += kMaxPiece) {
      const int piece = static_cast<int>(std::min(kMaxPiece, bytes.size() - at));
      check(MPI_Bcast(bytes.data() + at, piece, MPI_BYTE, root, MPI_COMM_WORLD),
            what + " (MPI_Bcast)");
    }
  });
}

void LeaderLink::allReduceSum(float* data, size_t count, const std::string& what) {
  const int nodes = layout_.nodes;
  onMpiThread(what, [data, count, nodes, &what] {
    for (size_t at = 0; at < count; at += kMaxPiece / sizeof(float)) {
      const int piece = static_cast<int>(std::min(kMaxPiece / sizeof(float), count - at));
      if (nodes <= 2) {
        // One addition of two values per element, and a + b == b + a in IEEE arithmetic: MPI's
        // own sum (its fastest) gives the node-order bits.
        check(MPI_Allreduce(MPI_IN_PLACE, data + at, piece, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              what + " (MPI_Allreduce)");
      } else {
        sumSlicesInNodeOrder(data + at, piece, nodes, what);
      }
    }
  });
}

}  // namespace synk::cluster
