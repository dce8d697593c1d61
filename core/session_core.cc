#include "core/session_core.h"

#include <sched.h>

#include <cstring>
#include <exception>
#include <thread>

#include "core/error.h"

namespace synk::detail {
namespace {

// The session open in this process: fork() refuses a second one, exit closes it.
SessionCore* g_open_session = nullptr;

void writeSlotStatus(RankSlot& slot, const Status& status, uint64_t shape_generation) {
  slot.status = static_cast<int32_t>(status.kind);
  slot.shape_generation = shape_generation;
  storeMessage(slot.message, status.message);
}

}  // namespace

SessionCore* openSession() {
  return g_open_session;
}

// CPUs for the ranks of a cpu-backend session: the r-th CPU this process may run on, when there
// are enough for every rank to have its own.
std::vector<int> rankCpus(const ForkOptions& options) {
  if (!options.bind_cpus || options.backend != "cpu") return {};
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < options.n_parallel;
       ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (static_cast<int>(cpus.size()) < options.n_parallel) return {};
  return cpus;
}

// The name of a step in messages, built once per opcode (a step must not pay for formatting).
const std::string& stepName(Opcode opcode) {
  static const std::string kNames[] = {"step 'unknown'",    "step 'quit'", "step 'barrier'",
                                       "step 'distribute'", "step 'call'", "step 'collective'"};
  const auto index = static_cast<size_t>(opcode);
  return kNames[index < std::size(kNames) ? index : 0];
}

SessionCore::SessionCore(const ForkOptions& options, BackendRegistry registry,
                         std::shared_ptr<ModelLoader> loader, BackendFactory& factory)
    : options_(options),
      registry_(std::move(registry)),
      loader_(std::move(loader)),
      factory_(&factory) {}

SessionCore::~SessionCore() {
  if (group_ && isMaster()) close();  // in a copy made by fork(), close() only lets go
}

void SessionCore::start() {
  ProcessGroupOptions pg;
  pg.n_ranks = options_.n_parallel;
  pg.master_rank = options_.master_rank;
  pg.timeout = options_.timeout;
  pg.spin = options_.spin;
  // More ranks than hardware threads: a spinning rank would hold the core its peer needs.
  pg.cpus = rankCpus(options_);
  pg.yield_while_spinning =
      options_.n_parallel > static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  owned_group_ = ProcessGroup::create(pg, [this](ProcessGroup& g) { return workerMain(g); });
  group_ = owned_group_.get();
  owner_pid_ = thisProcessId();
  g_open_session = this;
  try {
    startBackend();
  } catch (const std::exception& e) {
    abortAndClose(e.what());
    throw;
  }
}

void SessionCore::startBackend() {
  heap_ = std::make_unique<ShmHeap>(group_->shmPrefix(), group_->rank());
  const int ordinal = options_.devices.empty() ? -1 : options_.devices[group_->rank()];
  RankEnvironment env{*group_, *heap_, ordinal, options_.devices};
  backend_ = factory_->create(env);
  blobs_ = std::make_unique<BlobCache>(group_->shmPrefix(), &backend_->device());
  Waiter waiter = group_->commandWaiter("startup");
  group_->barrier().arrive(waiter, BarrierSite::Startup);
}

int SessionCore::workerMain(ProcessGroup& group) {
  // This process is a copy of the master at fork time: drop what belongs to the master.
  group_ = &group;
  try {
    return workerLoop();
  } catch (...) {
    // Fatal here, or the session aborted: release the communicators fast, then exit.
    if (backend_) backend_->abort();
    throw;
  }
}

int SessionCore::workerLoop() {
  startBackend();
  std::vector<std::byte> blob_copy;
  while (true) {
    Waiter idle = group_->idleWaiter();
    group_->barrier().arrive(idle, BarrierSite::CommandStart);
    group_->control().slot(rank()).started.store(group_->barrier().epoch(),
                                                 std::memory_order_relaxed);
    Opcode opcode;
    ByteReader payload = readCommand(opcode, blob_copy);
    if (opcode == Opcode::Quit) {
      releaseResources();
      return kExitOk;
    }
    Waiter waiter = group_->commandWaiter(stepName(opcode));
    const Status status = execute(opcode, payload, waiter);
    writeSlotStatus(group_->control().slot(group_->rank()), status, shape_generation_);
    group_->barrier().arrive(waiter, BarrierSite::CommandEnd);
  }
}

void SessionCore::ensureOpen() {
  if (!closed_ && owner_pid_ != thisProcessId()) throwCopy();
  if (!closed_ && group_ && isMaster() && group_->aborted()) {
    // A failure seen outside a step (a wait while loading or reading a variable), or one no
    // step has reported yet (a worker died while the master was idle): finish the abort now.
    // Unless a call already reported it, this one reports it as what it was (PeerFailure,
    // Timeout); later calls say "aborted".
    if (!abort_reason_.empty()) {
      abortAndClose(abort_reason_);
      throwClosed();
    }
    std::exception_ptr failure;
    try {
      throwAborted(group_->control());
    } catch (...) {
      failure = std::current_exception();
    }
    abortAndClose(abortMessage(group_->control()));
    std::rethrow_exception(failure);
  }
  if (!closed_) return;
  throwClosed();
}

void SessionCore::throwCopy() const {
  throw UsageError(str("this process (pid ", thisProcessId(),
                       ") is a copy of the session's master (pid ", owner_pid_,
                       ") made by fork(): only the master may use or close the session; ",
                       "the copy's handles do nothing when dropped"));
}

void SessionCore::throwClosed() const {
  if (!abort_reason_.empty()) {
    throw UsageError(str("the session was aborted and is closed: ", abort_reason_));
  }
  throw UsageError("the session is closed");
}

void SessionCore::writeCommand(Opcode opcode, const ByteWriter& payload) {
  ControlBlock& cb = group_->control();
  ByteWriter framed;
  framed.putVector(pending_releases_);
  framed.append(payload.data(), payload.size());
  PayloadHeader header;
  if (sizeof header + framed.size() <= kCommandBytes) {
    header.inline_bytes = framed.size();
    std::memcpy(cb.payload + sizeof header, framed.data(), framed.size());
  } else {
    // Too large for the control block (long index lists): ship it in a blob, which grows.
    if (!payload_blob_ || payload_blob_->size() < framed.size()) {
      if (payload_blob_) ShmSegment::remove(payload_blob_->name());
      if (!payload_blob_id_) payload_blob_id_ = nextBlobId();
      ++payload_blob_generation_;
      payload_blob_ = std::make_unique<ShmSegment>(
          ShmSegment::create(blobName(shmPrefix(), payload_blob_id_, payload_blob_generation_),
                             framed.size() * 2, "command arguments"));
    }
    std::memcpy(payload_blob_->data(), framed.data(), framed.size());
    header.blob_id = payload_blob_id_;
    header.blob_generation = payload_blob_generation_;
    header.blob_bytes = payload_blob_->size();
  }
  std::memcpy(cb.payload, &header, sizeof header);
  cb.opcode = static_cast<uint32_t>(opcode);
  pending_releases_.clear();  // only now: a failure above must not forget them
}

ByteReader SessionCore::readCommand(Opcode& opcode, std::vector<std::byte>& blob_copy) {
  ControlBlock& cb = group_->control();
  opcode = static_cast<Opcode>(cb.opcode);
  PayloadHeader header;
  std::memcpy(&header, cb.payload, sizeof header);
  ByteReader reader(cb.payload + sizeof header, header.inline_bytes);
  if (header.inline_bytes == 0 && header.blob_id != 0) {
    const std::byte* bytes =
        blobs_->attach({header.blob_id, header.blob_generation, header.blob_bytes});
    blob_copy.assign(bytes, bytes + header.blob_bytes);
    reader = ByteReader(blob_copy.data(), blob_copy.size());
  }
  if (opcode != Opcode::Quit) {
    for (uint64_t id : reader.getVector<uint64_t>())
      blobs_->release(id);
  }
  return reader;
}

void SessionCore::runCommand(Opcode opcode, const ByteWriter& payload, const std::string& what) {
  ensureOpen();
  writeCommand(opcode, payload);
  Waiter waiter = group_->commandWaiter(what);
  const uint64_t start_epoch = group_->barrier().epoch() + 1;  // of this step's CommandStart
  try {
    group_->barrier().arrive(waiter, BarrierSite::CommandStart);
    std::vector<std::byte> blob_copy;
    Opcode echoed;
    ByteReader reader = readCommand(echoed, blob_copy);
    const Status status = execute(opcode, reader, waiter);
    writeSlotStatus(group_->control().slot(rank()), status, shape_generation_);
    group_->barrier().arrive(waiter, BarrierSite::CommandEnd);
    noteShapeGenerations();
  } catch (const PeerFailure& e) {
    // A rank that never passed this step's start died before it, while the master was idle
    // (an idle rank has already arrived at the next start: its barrier epoch does not tell).
    const bool between = e.rank() >= 0 && e.rank() < size() && e.rank() != rank() &&
                         group_->control().slot(e.rank()).started.load() < start_epoch;
    abortAndClose(e.what());
    throw PeerFailure(e.rank(), between ? str(e.what(), " (between steps, before ", what, ")")
                                        : str(e.what(), " (during ", what, ")"));
  } catch (const std::exception& e) {
    abortAndClose(e.what());
    throw;
  }
  throwStatuses();
}

void SessionCore::noteShapeGenerations() {
  const ControlBlock& cb = group_->control();
  known_generations_.resize(static_cast<size_t>(size()), ~uint64_t{0});
  bool moved = false;
  bool failed = false;
  for (int r = 0; r < size(); ++r) {
    const RankSlot& slot = cb.ranks[r];
    failed |= slot.status != 0;
    if (slot.shape_generation != known_generations_[static_cast<size_t>(r)]) {
      known_generations_[static_cast<size_t>(r)] = slot.shape_generation;
      moved = true;
    }
  }
  if (moved) uniform_shapes_.clear();
  // Learnt in this step's exchange; no rank's shapes changed after it (a collective that
  // reshapes, all_gather, moved the generations above and is never remembered).
  if (!failed) {
    for (auto& [key, shape] : pending_uniform_)
      uniform_shapes_[key] = std::move(shape);
  }
  pending_uniform_.clear();
}

bool SessionCore::knownUniformShape(uint32_t model, uint32_t index, Shape& shape) {
  // The master's own shapes also change outside steps (Variable::setValue on its copy).
  const size_t me = static_cast<size_t>(rank());
  if (me >= known_generations_.size() || known_generations_[me] != shape_generation_) {
    uniform_shapes_.clear();
    return false;
  }
  const auto it = uniform_shapes_.find(uint64_t{model} << 32 | index);
  if (it == uniform_shapes_.end()) return false;
  shape = it->second;
  return true;
}

void SessionCore::rememberUniformShape(uint32_t model, uint32_t index, const Shape& shape) {
  if (isMaster()) pending_uniform_.emplace_back(uint64_t{model} << 32 | index, shape);
}

void SessionCore::throwStatuses() {
  ControlBlock& cb = group_->control();
  int first = -1;
  std::string others;
  for (int r = 0; r < size(); ++r) {
    if (cb.slot(r).status == 0) continue;
    if (first < 0) {
      first = r;
    } else {
      others += str(others.empty() ? "" : ", ", r);
    }
  }
  if (first < 0) return;
  const RankSlot& slot = cb.slot(first);
  std::string message = slot.message;
  if (!others.empty()) message += str(" (rank(s) ", others, " failed too)");
  switch (static_cast<ErrorKind>(slot.status)) {
    case ErrorKind::InvalidArgument:
      throw InvalidArgument(message);
    default:
      throw RankError(first, str("rank ", first, ": ", message));
  }
}

Status SessionCore::execute(Opcode opcode, ByteReader& payload, Waiter& waiter) {
  switch (opcode) {
    case Opcode::Barrier:
      return {};
    case Opcode::Distribute:
      return executeDistribute(payload, waiter);
    case Opcode::Call:
      return executeCall(payload, waiter);
    case Opcode::Collective:
      return executeCollective(payload, waiter);
    case Opcode::Quit:
      break;
  }
  throw InternalError(str("unknown opcode ", static_cast<uint32_t>(opcode)));
}

void SessionCore::synchronizeOutsideStep(const std::string& what) {
  Waiter waiter = group_->commandWaiter(what);
  try {
    device().synchronize(waiter);
  } catch (const std::exception& e) {
    // A peer died, the deadline passed, or the device failed. Record the abort and stop the
    // device, but leave the teardown (abortAndClose) to the next call or close(): the caller
    // still holds device memory and plugin instances that must not outlive the backend.
    if (!group_->aborted()) abortSession(group_->control(), AbortReason::Fatal, rank(), e.what());
    if (backend_) backend_->abort();
    abort_reason_ = e.what();  // reported now, by this throw
    throw;
  }
}

bool SessionCore::resolveNative(std::optional<bool> requested) {
  ensureOpen();
  const char* unavailable = backend_->nativeUnavailable();
  if (!requested.has_value()) return unavailable == nullptr;
  if (*requested && unavailable != nullptr) throw UsageError(unavailable);
  return *requested;
}

void SessionCore::barrierStep() {
  runCommand(Opcode::Barrier, ByteWriter(), "barrier");
}

void SessionCore::abortAndClose(const std::string& reason) noexcept {
  abort_reason_ = reason;
  if (group_ && !group_->aborted()) {
    abortSession(group_->control(), AbortReason::Fatal, rank(), reason);
  }
  if (backend_) backend_->abort();
  releaseResources();
  if (owned_group_) owned_group_->shutdown(std::chrono::milliseconds(3000));
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
}

void SessionCore::releaseResources() noexcept {
  // Device memory goes back to the device before the device itself goes away.
  scratch_.clear();
  collective_buffer_ = DeviceBuffer();
  for (ModelState& model : models_) {
    model.instance.reset();
    model.variables.clear();
  }
  models_.clear();
  blobs_.reset();
  backend_.reset();
  heap_.reset();
}

void SessionCore::abandonCopy() noexcept {
  if (g_open_session == this) g_open_session = nullptr;
  if (abandoned_) return;
  abandoned_ = true;
  // Freeing these would call into the device (a CUDA context does not survive fork) or plugin
  // code on the master's behalf: the copy leaks them, its memory is its own to lose.
  (void)new auto(std::move(scratch_));
  (void)new auto(std::move(collective_buffer_));
  (void)new auto(std::move(models_));
  (void)blobs_.release();
  (void)backend_.release();
  (void)heap_.release();
}

void SessionCore::close() {
  if (closed_ || !group_ || !isMaster()) return;
  if (!ownedHere()) {
    // A child forked by the master (a checkpoint writer) that exits or drops its handles: the
    // ranks, the segments and the device are the master's, which goes on using them.
    abandonCopy();
    return;
  }
  try {
    writeCommand(Opcode::Quit, ByteWriter());
    Waiter waiter = group_->commandWaiter("close");
    group_->barrier().arrive(waiter, BarrierSite::CommandStart);
  } catch (const std::exception&) {
    // A worker already gone: shutdown() below reaps and kills what is left.
  }
  releaseResources();
  owned_group_->shutdown(std::chrono::milliseconds(5000));
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
}

}  // namespace synk::detail
