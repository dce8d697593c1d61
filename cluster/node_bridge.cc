#include "synk/cluster/node_bridge.h"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "synk/cluster/launcher_watch.h"
#include "synk/cluster/mpi_world.h"
#include "synk/core/barrier.h"
#include "synk/core/error.h"
#include "synk/core/waiter.h"

namespace synk::cluster {
namespace {

using detail::checkMpi;

// One node's packet for one barrier: this header, the command (from the master's node at a
// command's start), then a RankRecord per rank of the node, each followed by its message and its
// exchange bytes.
struct PacketHeader {
  uint32_t bytes;          // the whole packet
  uint32_t command_bytes;  // 0: no command in this packet
  uint32_t opcode;
  uint32_t ranks;
};
struct RankRecord {
  uint32_t ok;
  uint32_t site;
  int32_t status;
  uint32_t message_bytes;
  uint64_t shape_generation;
  uint32_t exchange_bytes;
  uint32_t pad;
};

// A node's packet goes to every other node as it is ready (MPI_Isend), and each node's packet is
// applied as it comes (MPI_Improbe, then MPI_Mrecv of whatever size it has): the ranks of a node
// that has arrived are known to have arrived even while another node is late, so a deadline
// names only the late node's ranks.
constexpr int kPacketTag = 25;

// An abort sent to the other nodes. Small enough for MPI's eager protocol (shared memory's limit
// is 4 KiB), so a send completes without the receiver, which may already have left.
constexpr int kAbortTag = 26;
constexpr size_t kNoteMessageBytes = 2048;
struct AbortNote {
  uint32_t reason;
  int32_t rank;
  char message[kNoteMessageBytes];
};
// How long a stopped bridge goes on carrying the barrier its node's ranks reached last.
constexpr auto kStopGrace = std::chrono::seconds(5);
// How long the sender of an abort waits for its sends to complete.
constexpr auto kAbortSendWait = std::chrono::seconds(1);

// How a wait paces its polls: spin (yielding the core: ranks may outnumber cores) for `spin`,
// then sleep 50 us at a time for 10 ms, then 1 ms at a time.
class Pacer {
 public:
  explicit Pacer(std::chrono::microseconds spin) : spin_(spin) {}
  // Zero while spinning, else how long to sleep before the next poll.
  std::chrono::microseconds next() const {
    const auto waited = Clock::now() - start_;
    if (waited < spin_) return std::chrono::microseconds(0);
    if (waited < std::chrono::milliseconds(10)) return std::chrono::microseconds(50);
    return std::chrono::milliseconds(1);
  }

 private:
  std::chrono::microseconds spin_;
  Clock::time_point start_ = Clock::now();
};

template <typename T>
void append(std::vector<std::byte>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void appendBytes(std::vector<std::byte>& out, const void* data, size_t bytes) {
  const auto* from = static_cast<const std::byte*>(data);
  out.insert(out.end(), from, from + bytes);
}

}  // namespace

struct NodeBridge::Thread {
  Thread(ControlBlock& control, const NodeLayout& node_layout, BridgeOptions bridge_options)
      : cb(control), layout(node_layout), options(bridge_options) {}

  ControlBlock& cb;
  NodeLayout layout;
  BridgeOptions options;
  std::atomic<bool> stopping{false};
  Clock::time_point stop_deadline;  // set before `stopping`
  std::atomic<uint64_t> bridged{0};
  std::chrono::nanoseconds barrier_median{0};
  // The session ended in an abort (or the bridge left mid-exchange): MPI is not finalised, as
  // another node may never come to MPI_Finalize.
  bool abandoned = false;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request abort_request = MPI_REQUEST_NULL;
  AbortNote incoming{};
  AbortNote outgoing{};
  // Sees another node's launcher die (launcher_watch.h); null when the watch is off.
  std::unique_ptr<LauncherWatch> watch;
  // This node's packets, by epoch parity: a buffer is reused two barriers later, when every node
  // has received what it held (each sent its next packet only after that).
  std::vector<std::byte> out[2];
  std::vector<MPI_Request> sends[2];
  std::vector<std::byte> in;  // a packet received
  std::vector<bool> applied;  // per node: its packet of the current barrier applied
  // Work posted by this process's rank (onMpiThread), run between polls.
  struct Job {
    std::function<void()> work;
    std::exception_ptr error;
    std::atomic<bool> done{false};
  };
  std::mutex jobs_mutex;
  std::deque<std::shared_ptr<Job>> jobs;
  std::atomic<int> jobs_posted{0};
  std::atomic<bool> ended{false};     // the loop is over: no job runs any more
  std::atomic<bool> stuck{false};     // a started job outlived its caller's wait
  std::atomic<bool> orphaned{false};  // the bridge was let go: never touch `cb` again
  std::atomic<bool> exited{false};    // the thread is past its last use of anything
  std::promise<void> started;         // MPI up and the launch checked, or why not
  std::thread thread;

  void main();
  void calibrate();
  void loop();
  // One barrier: false when the bridge stops or the session is aborted first.
  bool bridge(uint64_t epoch);
  // Runs the posted jobs (true if any ran), each after this node's packet of barrier `epoch` if
  // its ranks have arrived there (`sent`); after the loop, fails those left.
  bool runJobs(uint64_t epoch, bool& sent);
  void failJobs();
  bool localArrived(uint64_t epoch) const;
  void pack(uint64_t epoch, std::vector<std::byte>& packet);
  void send(uint64_t epoch);
  // Applies node `node`'s packet if it has come (true).
  bool receive(int node, uint64_t epoch);
  void apply(int node, uint64_t epoch);
  // Between polls: yield while spinning, else sleep a slice (on the wake word while this
  // node's ranks are still to arrive: an arrival wakes it).
  void pause(const Pacer& pacer, bool sent);
  // True once the session is aborted, here (then sent to the other nodes) or on another node
  // (then aborted here with its reason, rank and message).
  bool aborted();
  void sendAbort();
};

void NodeBridge::Thread::main() {
  try {
    detail::startMpi(layout);
    checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
    checkMpi(MPI_Irecv(&incoming, sizeof incoming, MPI_BYTE, MPI_ANY_SOURCE, kAbortTag, comm,
                       &abort_request),
             "MPI_Irecv (aborts)");
    watch = LauncherWatch::start(cb, layout,
                                 {[this](void* bytes, size_t size) {
                                    checkMpi(
                                        MPI_Bcast(bytes, static_cast<int>(size), MPI_BYTE, 0, comm),
                                        "MPI_Bcast (the launcher watch)");
                                  },
                                  [this](bool mine) {
                                    int yes = mine ? 1 : 0, all = 0;
                                    checkMpi(MPI_Allreduce(&yes, &all, 1, MPI_INT, MPI_MIN, comm),
                                             "MPI_Allreduce (the launcher watch)");
                                    return all == 1;
                                  }});
    calibrate();
  } catch (...) {
    exited.store(true, std::memory_order_release);
    started.set_exception(std::current_exception());
    return;
  }
  started.set_value();
  try {
    loop();
    failJobs();
  } catch (const std::exception& e) {
    failJobs();
    if (!orphaned.load(std::memory_order_acquire)) {
      abortSession(cb, AbortReason::Fatal, layout.firstRank(),
                   str("node ", layout.node, "'s bridge to the other nodes failed: ", e.what()));
      if (!abandoned) sendAbort();
    }
    abandoned = true;
  }
  if (!abandoned && !orphaned.load(std::memory_order_acquire)) {
    // Every packet sent was received (each node applied them before its last barrier), so these
    // complete; bounded all the same.
    for (std::vector<MPI_Request>& requests : sends) {
      int done = 0;
      const auto give_up = Clock::now() + kAbortSendWait;
      while (!done && Clock::now() < give_up) {
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
      }
    }
    MPI_Cancel(&abort_request);
    MPI_Wait(&abort_request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
    MPI_Finalize();
  }
  exited.store(true, std::memory_order_release);
}

void NodeBridge::Thread::calibrate() {
  if (options.calibrate <= 0) return;
  std::vector<std::chrono::nanoseconds> times;
  for (int i = 0; i < options.calibrate; ++i) {
    const auto start = Clock::now();
    checkMpi(MPI_Barrier(comm), "MPI_Barrier (calibration)");
    times.push_back(Clock::now() - start);
  }
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  barrier_median = times[times.size() / 2];
}

void NodeBridge::Thread::loop() {
  applied.assign(static_cast<size_t>(layout.nodes), false);
  for (uint64_t epoch = 1;; ++epoch) {
    if (!bridge(epoch)) return;
    bridged.store(epoch, std::memory_order_relaxed);
  }
}

bool NodeBridge::Thread::bridge(uint64_t epoch) {
  bool sent = false;
  int waiting = layout.nodes - 1;  // nodes whose packet has not come
  std::fill(applied.begin(), applied.end(), false);
  Pacer pacer(options.spin);
  while (!sent || waiting > 0) {
    bool progress = false;
    if (!sent && localArrived(epoch)) {
      send(epoch);
      sent = progress = true;
    }
    progress = runJobs(epoch, sent) || progress;
    if (orphaned.load(std::memory_order_acquire)) return false;
    for (int k = 0; k < layout.nodes; ++k) {
      if (k == layout.node || applied[k] || !receive(k, epoch)) continue;
      applied[k] = true;
      --waiting;
      progress = true;
    }
    if (progress) {
      pacer = Pacer(options.spin);
      continue;
    }
    // The abort first: a stop right after one (the node's ranks left) must still send it.
    if (aborted()) {
      // Mid-barrier, sends or receives stay open: MPI cannot be finalised.
      if (sent || waiting < layout.nodes - 1) abandoned = true;
      return false;
    }
    if (stopping.load(std::memory_order_acquire)) {
      // A stop ends the bridge between barriers. One this node's ranks reached before the stop
      // (the last, that ended the session) is carried through first, for a while.
      if (!sent && waiting == layout.nodes - 1 && !localArrived(epoch)) return false;
      if (Clock::now() >= stop_deadline) {
        abandoned = true;
        return false;
      }
    }
    pause(pacer, sent);
  }
  return true;
}

bool NodeBridge::Thread::runJobs(uint64_t epoch, bool& sent) {
  if (jobs_posted.load(std::memory_order_acquire) == 0) return false;
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(jobs_mutex);
      if (jobs.empty()) return true;
      // A job is posted by a rank that passed its last barrier, maybe before this bridge saw it
      // arrive there; its MPI calls wait for the other nodes, which wait for that packet.
      if (!sent && localArrived(epoch)) {
        send(epoch);
        sent = true;
      }
      job = std::move(jobs.front());
      jobs.pop_front();
      jobs_posted.fetch_sub(1, std::memory_order_acq_rel);
    }
    try {
      // An aborted session's other nodes would never join the job's collectives.
      if (cb.abort.load(std::memory_order_acquire) != 0) {
        throw UsageError("the session was aborted: no more work between nodes");
      }
      job->work();
    } catch (...) {
      job->error = std::current_exception();
    }
    // What the work holds (the caller's staging buffer) goes before the caller wakes, so that
    // its next call finds the buffer free to reuse.
    job->work = nullptr;
    job->done.store(true, std::memory_order_release);
    // Let go while the job was inside MPI: the control block may be gone.
    if (orphaned.load(std::memory_order_acquire)) return true;
  }
}

void NodeBridge::Thread::failJobs() {
  std::lock_guard lock(jobs_mutex);
  ended.store(true, std::memory_order_release);
  for (const std::shared_ptr<Job>& job : jobs) {
    job->error = std::make_exception_ptr(
        UsageError("the link between nodes ended (the session stopped or was aborted)"));
    job->done.store(true, std::memory_order_release);
  }
  jobs.clear();
}

bool NodeBridge::Thread::localArrived(uint64_t epoch) const {
  for (int r = layout.firstRank(); r < layout.firstRank() + layout.ranks_per_node; ++r) {
    if (cb.slot(r).arrived.load(std::memory_order_acquire) < epoch) return false;
  }
  return true;
}

void NodeBridge::Thread::pause(const Pacer& pacer, bool sent) {
  const auto slice = pacer.next();
  if (slice.count() == 0) {
    sched_yield();
    return;
  }
  // As a waiting rank does (core/barrier.cc): announce a sleeper, re-check, sleep until an
  // arrival or a posted job wakes it or the slice ends (then poll MPI again).
  cb.sleepers.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t word = cb.wake_word.load(std::memory_order_seq_cst);
  const bool due = !sent && localArrived(bridged.load(std::memory_order_relaxed) + 1);
  if (!due && jobs_posted.load(std::memory_order_seq_cst) == 0) {
    futexWait(cb.wake_word, word, slice);
  }
  cb.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void NodeBridge::Thread::pack(uint64_t epoch, std::vector<std::byte>& packet) {
  const size_t half = epoch & 1;
  packet.clear();
  PacketHeader header{};
  header.ranks = static_cast<uint32_t>(layout.ranks_per_node);
  append(packet, header);
  const int master = cb.master_rank;
  if (layout.nodeOf(master) == layout.node &&
      cb.slot(master).site[half] == static_cast<uint32_t>(BarrierSite::CommandStart)) {
    header.opcode = cb.opcode[half];
    header.command_bytes = std::min<uint32_t>(cb.payload_bytes[half], kCommandBytes);
    appendBytes(packet, cb.payload[half], header.command_bytes);
  }
  for (int r = layout.firstRank(); r < layout.firstRank() + layout.ranks_per_node; ++r) {
    const RankSlot& slot = cb.slot(r);
    RankRecord record{};
    record.ok = slot.ok[half];
    record.site = slot.site[half];
    record.status = slot.status;
    record.message_bytes =
        slot.status != 0 ? static_cast<uint32_t>(strnlen(slot.message, kMessageBytes - 1)) : 0;
    record.shape_generation = slot.shape_generation;
    record.exchange_bytes = std::min<uint32_t>(slot.exchange_bytes[half], kExchangeBytes);
    append(packet, record);
    appendBytes(packet, slot.message, record.message_bytes);
    appendBytes(packet, slot.exchange[half], record.exchange_bytes);
  }
  header.bytes = static_cast<uint32_t>(packet.size());
  std::memcpy(packet.data(), &header, sizeof header);
}

void NodeBridge::Thread::send(uint64_t epoch) {
  const size_t half = epoch & 1;
  std::vector<MPI_Request>& requests = sends[half];
  // Done already (every node received this buffer's packet before sending the one this node
  // just applied); waiting frees the requests.
  checkMpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
           "MPI_Waitall (barrier packets)");
  requests.clear();
  std::vector<std::byte>& packet = out[half];
  pack(epoch, packet);
  for (int k = 0; k < layout.nodes; ++k) {
    if (k == layout.node) continue;
    requests.push_back(MPI_REQUEST_NULL);
    checkMpi(MPI_Isend(packet.data(), static_cast<int>(packet.size()), MPI_BYTE, k, kPacketTag,
                       comm, &requests.back()),
             "MPI_Isend (barrier packet)");
  }
}

bool NodeBridge::Thread::receive(int node, uint64_t epoch) {
  int found = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  checkMpi(MPI_Improbe(node, kPacketTag, comm, &found, &message, &status),
           "MPI_Improbe (barrier packet)");
  if (!found) return false;
  int bytes = 0;
  checkMpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count (barrier packet)");
  in.resize(static_cast<size_t>(bytes));
  checkMpi(MPI_Mrecv(in.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE),
           "MPI_Mrecv (barrier packet)");
  apply(node, epoch);
  return true;
}

// Node `node`'s packet (in `in`) into its ranks' slots, then their arrival. Packets of one node
// come in order (MPI does not overtake), and a node sends barrier e + 1's only after applying
// every node's of e: this one is barrier `epoch`'s. Every rank of this node arrived at barrier
// epoch - 1 (the bridge sent its packet), after which none reads the fields of this parity
// (published for epoch - 2) any more.
void NodeBridge::Thread::apply(int node, uint64_t epoch) {
  const size_t half = epoch & 1;
  const std::byte* packet = in.data();
  PacketHeader header;
  std::memcpy(&header, packet, sizeof header);
  SYNK_CHECK(
      header.bytes == in.size() && header.ranks == static_cast<uint32_t>(layout.ranks_per_node),
      "node ", node, "'s barrier packet of ", in.size(), " bytes says ", header.bytes,
      " bytes and ", header.ranks, " ranks");
  size_t at = sizeof header;
  if (header.command_bytes > 0) {
    cb.opcode[half] = header.opcode;
    cb.payload_bytes[half] = header.command_bytes;
    std::memcpy(cb.payload[half], packet + at, header.command_bytes);
    at += header.command_bytes;
  }
  const int first = node * layout.ranks_per_node;
  for (int r = first; r < first + layout.ranks_per_node; ++r) {
    RankRecord record;
    std::memcpy(&record, packet + at, sizeof record);
    at += sizeof record;
    RankSlot& slot = cb.slot(r);
    slot.ok[half] = record.ok;
    slot.site[half] = record.site;
    slot.status = record.status;
    slot.shape_generation = record.shape_generation;
    std::memcpy(slot.message, packet + at, record.message_bytes);
    slot.message[record.message_bytes] = '\0';
    at += record.message_bytes;
    slot.exchange_bytes[half] = record.exchange_bytes;
    std::memcpy(slot.exchange[half], packet + at, record.exchange_bytes);
    at += record.exchange_bytes;
    if (record.site == static_cast<uint32_t>(BarrierSite::CommandStart)) {
      slot.started.store(epoch, std::memory_order_relaxed);
    }
  }
  // Then the arrivals, which this node's ranks read everything else after, and a wake for
  // sleepers, ordered as Barrier::arrive orders its own.
  for (int r = first; r < first + layout.ranks_per_node; ++r)
    cb.slot(r).arrived.store(epoch, std::memory_order_seq_cst);
  if (cb.sleepers.load(std::memory_order_seq_cst) > 0) wakeSleepers(cb);
}

bool NodeBridge::Thread::aborted() {
  if (abandoned) return true;
  int got = 0;
  checkMpi(MPI_Test(&abort_request, &got, MPI_STATUS_IGNORE), "MPI_Test (aborts)");
  if (got) {
    abandoned = true;
    incoming.message[kNoteMessageBytes - 1] = '\0';
    abortSession(cb, static_cast<AbortReason>(incoming.reason), incoming.rank, incoming.message);
    return true;
  }
  const uint32_t reason = cb.abort.load(std::memory_order_acquire);
  if (reason == 0) return false;
  // The record is being written (abortSession stores a placeholder first): not yet its reason.
  if (reason > static_cast<uint32_t>(AbortReason::Shutdown)) return false;
  // The session closed on this node after its last command: every node ends its own.
  if (reason == static_cast<uint32_t>(AbortReason::Shutdown) &&
      stopping.load(std::memory_order_acquire)) {
    return false;
  }
  abandoned = true;
  sendAbort();
  return true;
}

void NodeBridge::Thread::sendAbort() {
  AbortNote& note = outgoing;  // a member: a send may outlive this call
  note = AbortNote{};
  const std::string message = abortMessage(cb);  // waits for the record to be complete
  note.reason = cb.abort.load(std::memory_order_acquire);
  note.rank = cb.abort_rank;
  std::memcpy(note.message, message.data(), std::min(message.size(), kNoteMessageBytes - 1));
  std::vector<MPI_Request> sends;
  for (int k = 0; k < layout.nodes; ++k) {
    if (k == layout.node) continue;
    sends.push_back(MPI_REQUEST_NULL);
    MPI_Isend(&note, sizeof note, MPI_BYTE, k, kAbortTag, comm, &sends.back());
  }
  const auto give_up = Clock::now() + kAbortSendWait;
  int done = 0;
  while (!done && Clock::now() < give_up) {
    MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

NodeBridge::NodeBridge(ControlBlock& cb, const NodeLayout& layout, BridgeOptions options)
    : thread_(std::make_unique<Thread>(cb, layout, options)) {
  if (cb.n_ranks != layout.worldRanks()) {
    throw InvalidArgument(str("the node bridge: the control block has ", cb.n_ranks,
                              " ranks, the layout ", layout.worldRanks()));
  }
  std::future<void> up = thread_->started.get_future();
  thread_->thread = std::thread([this] { thread_->main(); });
  try {
    up.get();
  } catch (...) {
    thread_->thread.join();
    throw;
  }
}

NodeBridge::~NodeBridge() {
  end();
}

void NodeBridge::end() {
  if (!thread_) return;  // ended before
  stop();
  if (!thread_->thread.joinable()) return;
  if (thread_->stuck.load(std::memory_order_acquire)) {
    // A job may be inside MPI for good: the thread is told never to touch the control block
    // again (which its owner is about to unmap), given a moment to end, else left to the
    // process's end with its state.
    thread_->orphaned.store(true, std::memory_order_release);
    const auto give_up = Clock::now() + std::chrono::milliseconds(200);
    while (!thread_->exited.load(std::memory_order_acquire) && Clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!thread_->exited.load(std::memory_order_acquire)) {
      final_barriers_ = thread_->bridged.load(std::memory_order_relaxed);
      if (thread_->watch) thread_->watch->leave();
      thread_->thread.detach();
      (void)thread_.release();
      return;
    }
  }
  thread_->thread.join();
  final_barriers_ = thread_->bridged.load(std::memory_order_relaxed);
  // This node is done: its peers may now see its launcher end (launcher_watch.h).
  if (thread_->watch) thread_->watch->leave();
}

void NodeBridge::stop() {
  if (!thread_ || thread_->stopping.load(std::memory_order_acquire)) return;
  thread_->stop_deadline = Clock::now() + kStopGrace;
  thread_->stopping.store(true, std::memory_order_release);
}

void NodeBridge::onMpiThread(const std::string& what, std::function<void()> work, Waiter& waiter) {
  onMpiThread(what, std::move(work), waiter, {});
}

void NodeBridge::onMpiThread(const std::string& what, std::function<void()> work, Waiter& waiter,
                             const std::function<bool()>& meanwhile) {
  if (!thread_) throw UsageError(what + ": the link between nodes was let go");
  Thread& t = *thread_;
  if (t.stuck.load(std::memory_order_acquire)) {
    throw UsageError(what + ": the link between nodes timed out before");
  }
  auto job = std::make_shared<Thread::Job>();
  job->work = std::move(work);
  {
    std::lock_guard lock(t.jobs_mutex);
    if (t.ended.load(std::memory_order_acquire)) {
      throw UsageError(what +
                       ": the link between nodes ended (the session stopped or was aborted)");
    }
    t.jobs.push_back(job);
    t.jobs_posted.fetch_add(1, std::memory_order_seq_cst);
  }
  if (t.cb.sleepers.load(std::memory_order_seq_cst) > 0) wakeSleepers(t.cb);
  Pacer pacer(t.options.spin);
  while (!job->done.load(std::memory_order_acquire)) {
    std::exception_ptr failure;
    try {
      waiter.check();  // the session's abort, a peer's death
      if (Clock::now() >= waiter.deadline()) {
        throw Timeout(str(what, ": not done by the deadline on node ", t.layout.node, " of ",
                          t.layout.nodes, " (a node's leader late, stopped or gone)"));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      // Not started: taken back. Started: it may be inside MPI for good, so the link is not the
      // session's any more (its end does not join it; its data is the job's own).
      std::lock_guard lock(t.jobs_mutex);
      auto queued = std::find(t.jobs.begin(), t.jobs.end(), job);
      if (queued != t.jobs.end()) {
        t.jobs.erase(queued);
        t.jobs_posted.fetch_sub(1, std::memory_order_acq_rel);
      } else if (!job->done.load(std::memory_order_acquire)) {
        t.stuck.store(true, std::memory_order_release);
      }
      std::rethrow_exception(failure);
    }
    if (meanwhile && meanwhile()) {
      pacer = Pacer(t.options.spin);
      continue;
    }
    const auto slice = pacer.next();
    if (slice.count() == 0) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::min<Clock::duration>(slice, std::chrono::microseconds(50)));
    }
  }
  if (job->error) std::rethrow_exception(job->error);
}

uint64_t NodeBridge::barriers() const {
  return thread_ && thread_->thread.joinable() ? thread_->bridged.load(std::memory_order_relaxed)
                                               : final_barriers_;
}

std::chrono::nanoseconds NodeBridge::mpiBarrierMedian() const {
  return thread_ ? thread_->barrier_median : std::chrono::nanoseconds(0);
}

}  // namespace synk::cluster
