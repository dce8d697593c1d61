#pragma once
// The wait loop of every step of the CUDA backend (close has its own bounded loops). CUDA and
// NCCL never learn that an intra-node peer died (NVIDIA/nccl #279, experiment E1 in
// ../shared/notes/research-reliability.md section 1.1): a collective whose peer is gone simply
// never completes. So no wait here blocks inside CUDA or NCCL (cudaStreamSynchronize, a
// communicator call that waits): every wait polls its condition and, between polls, the Waiter,
// which throws as soon as the master has marked the session aborted or a peer is found dead, and
// aborts the session with Timeout once the deadline has passed.
#include <chrono>
#include <string>
#include <thread>

#include "synk/core/error.h"
#include "synk/core/waiter.h"

namespace synk {

// Polls back to back for this long: most waits of a short step end within it (a trivial call's
// copies, a small collective), and a sched_yield between polls would add its own ~0.5 us to when
// the end is seen.
inline constexpr std::chrono::microseconds kGpuBusyFor{50};
// Then polls with sched_yield for this long: a short collective completes in ~10 us, a 512 MiB
// all_reduce in ~2.3 ms, and any sleep would add its timer slack (~50 us on Linux) to the wait,
// 2-3 % of the larger one. Past that the wait is long anyway (compute, a stuck peer) and it
// sleeps between polls: at most ~0.5 % of the wait, and the core goes back to NCCL's threads.
inline constexpr std::chrono::milliseconds kGpuSpinFor{20};
inline constexpr std::chrono::microseconds kGpuPollSleep{50};

// Aborts the session with Timeout, naming this rank and the wait, and throws it.
[[noreturn]] inline void gpuWaitTimedOut(Waiter& waiter, int rank, const std::string& what) {
  abortSession(waiter.control(), AbortReason::Timeout, rank,
               str("rank ", rank, " timed out waiting for ", what, " during ", waiter.what(),
                   " (the GPU work did not complete before the deadline)"));
  throwAborted(waiter.control());
}

// A CUDA or NCCL error seen just after a peer died is almost always a consequence of the death
// (its memory or its end of a connection went away). Before reporting the error, give the
// liveness probe a moment: if the session is aborted or a peer is found dead meanwhile,
// waiter.check() throws that instead, and the report names the rank that died.
inline constexpr std::chrono::milliseconds kErrorGrace{50};

inline void preferPeerFailure(Waiter& waiter) {
  const auto until = Clock::now() + kErrorGrace;
  while (Clock::now() < until) {
    waiter.check();
    std::this_thread::sleep_for(Waiter::kProbeInterval);
  }
}

// Calls done() until it returns true. done() throws CudaError or NcclError on a definite
// failure; the Waiter throws PeerFailure or Timeout.
template <typename Done>
void pollUntil(Waiter& waiter, int rank, const char* what, Done&& done) {
  try {
    // Checked once even when the work is already done: a wait outside a step (loading a model)
    // must meet a peer that died meanwhile, however fast the GPU is. Cheap: a flag and at most
    // one waitpid per Waiter::kProbeInterval.
    waiter.check();
    if (done()) return;
    const auto began = Clock::now();
    const auto busy_until = began + kGpuBusyFor;
    const auto spin_until = began + kGpuSpinFor;
    while (true) {
      waiter.check();
      if (done()) return;
      const auto now = Clock::now();
      if (now >= waiter.deadline()) gpuWaitTimedOut(waiter, rank, what);
      if (now < busy_until) continue;
      if (now < spin_until) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(kGpuPollSleep);
      }
    }
  } catch (const CudaError&) {
    preferPeerFailure(waiter);
    throw;
  } catch (const NcclError&) {
    preferPeerFailure(waiter);
    throw;
  }
}

}  // namespace synk
