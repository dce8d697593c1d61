#pragma once
// A backend is what a rank computes and communicates with: a Device plus Communicators.
// BackendFactory objects are registered on a BackendRegistry that the session owns (no static
// registration); fork() picks one by name. Adding a backend: collectives/README.md.
#include <memory>
#include <string>
#include <vector>

#include "synk/core/communicator.h"
#include "synk/core/device.h"

struct SynkHostLink;  // core/host_link.h: plain C, what a backend module links its logs through

namespace synk {

class ProcessGroup;
class ShmHeap;

// What a backend gets to set up one rank, in that rank's process, after fork.
struct RankEnvironment {
  ProcessGroup& group;  // rank, size, barrier and waiters of the session
  ShmHeap& heap;        // this rank's shared-memory heap
  int device_ordinal;   // the device this rank binds (-1 for the host backend)
  // Every rank's device, in rank order (empty for the host backend). Ranks may share a device:
  // a backend whose native collectives need one device per rank then runs without them.
  std::vector<int> devices{};
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device& device() = 0;
  // The communicator collectives use. native = true selects the device's own library where the
  // backend has one (NCCL for cuda); false selects host staging through shared memory. The cpu
  // backend has only shared memory and returns it for both.
  virtual Communicator& communicator(bool native) = 0;
  // Why this session has no native collectives (ranks sharing a GPU: NCCL needs one per rank),
  // naming the alternative; nullptr when it has them. communicator(true) then throws UsageError
  // with this reason, and the runtime's own collectives use communicator(false).
  virtual const char* nativeUnavailable() const noexcept { return nullptr; }
  // Releases communicators quickly after a failure (ncclCommAbort); the process exits next.
  virtual void abort() noexcept {}
};

class BackendFactory {
 public:
  virtual ~BackendFactory() = default;
  virtual std::string name() const = 0;
  // Whether the backend can run on this machine; if not, `why` says why. Never initialises CUDA.
  virtual bool isViable(std::string* why) const = 0;
  // Devices usable by ranks, counted without initialising CUDA in this process.
  virtual int deviceCount() const = 0;
  // Whether each rank binds a device of its own (RankEnvironment::device_ordinal: a GPU). A
  // backend on host memory (cpu) binds none: its ranks get no ordinals, may outnumber
  // deviceCount(), and may be pinned to CPUs (ForkOptions::bind_cpus).
  virtual bool bindsDevices() const = 0;
  // Called in the master before forking: throws UsageError if this process may not fork for this
  // backend (CUDA already initialised here).
  virtual void checkBeforeFork() const {}
  // Called by every rank at once after fork, inside the startup step (it may use barriers, e.g.
  // to pass the NCCL unique id). Throws on failure; the master reports the rank and message.
  virtual std::unique_ptr<Backend> create(RankEnvironment& env) = 0;
  // Called by every rank before create() with the program's link (core/host_link.h). A backend
  // whose code carries its own copy of synk (a module: libsynk_cuda_backend.so) hands it to that
  // copy (useHostLink), so that the copy's log messages and phase times reach the program's; a
  // factory that wraps another passes it on; one built into the program has nothing to do. Pure:
  // a wrapper that forgot it would drop the module's phases without a sound.
  virtual void linkHost(const SynkHostLink& link) = 0;
};

// What every rank does to make its backend: hands the factory the program's link
// (BackendFactory::linkHost, core/host_link.h), then creates it. Sessions, synk-bench's collectives
// and the test fixtures all start ranks this way, so a backend module's logs and phases reach the
// program in each of them.
std::unique_ptr<Backend> createBackend(BackendFactory& factory, RankEnvironment& env);

class BackendRegistry {
 public:
  void add(std::unique_ptr<BackendFactory> factory);
  // nullptr if none has that name.
  BackendFactory* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<BackendFactory>> factories_;
};

}  // namespace synk
