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

#include "synk/cluster/leader_ops.h"
#include "synk/cluster/mpi_world.h"
#include "synk/core/error.h"

namespace synk::cluster {

using detail::checkMpi;

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

void LeaderLink::onMpiThread(const std::string& what, std::function<void()> work,
                             std::chrono::milliseconds bound) {
  if (timed_out_) throw UsageError(what + ": the node leaders' link timed out before");
  if (bound.count() == 0) bound = timeout_;
  std::future<void> done = thread_->post(std::move(work));
  if (done.wait_for(bound) != std::future_status::ready) {
    timed_out_ = true;
    throw Timeout(str(what, ": not done within ", bound.count(), " ms on node ", layout_.node,
                      " of ", layout_.nodes, " (a node's leader late, stopped or gone)"));
  }
  done.get();
}

LeaderLink::LeaderLink(const NodeLayout& layout, std::chrono::milliseconds timeout)
    : layout_(layout), timeout_(timeout), thread_(std::make_unique<Thread>()) {
  try {
    onMpiThread(
        "starting MPI", [layout] { detail::startMpi(layout); }, std::max(timeout_, kStartBound));
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
    detail::broadcastBytes(bytes.data(), bytes.size(), root, what);
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
    detail::allReduceInNodeOrder(data, count, dtype, op, nodes, node, what);
  });
}

}  // namespace synk::cluster
