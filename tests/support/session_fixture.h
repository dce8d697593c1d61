#pragma once
// Session tests run on the backend named by SYNK_TEST_BACKEND (default "cpu"): CTest registers
// the core suite twice, once as is and once (label gpu) with SYNK_TEST_BACKEND=cuda. A case
// needing more devices than the backend has is skipped (CTest SKIP_RETURN_CODE).
#include <string>

#include "synk/core/session.h"

namespace synk::test {

std::string testBackend();
// Whether forkForTest(n_ranks) makes ranks share devices (so NCCL is not available there).
bool sharesDevices(int n_ranks);

// Whether a call's window all-reduces (RankStepTimes::window_all_reduces) must run here on
// n_ranks: on the cuda backend, one GPU per rank, with SYNK_TEST_EXPECT_WINDOWS=1 (which
// scripts/gpu-check sets where NVLink joins the GPUs: NCCL has symmetric memory there); on cpu
// ranks with shared memory's window test mode (SYNK_SHM_WINDOWS=1), and there only. False
// elsewhere on cuda, where windows may or may not come (PCIe GPUs, an NCCL before 2.27).
bool windowsExpected(int n_ranks);

// One rank per visible device of the test backend, at least `minimum` (on backends that bind no
// devices, `minimum`): tests that must hold on every GPU of the machine, e.g. a fault mid-NCCL.
int ranksForEveryDevice(int minimum);
// A session of n ranks on the test backend with a short deadline (tests must not hang). With
// fewer GPUs than ranks, ranks share the GPUs round-robin (host-staged collectives).
Session forkForTest(int n_ranks, ForkOptions options = {});
// Path of a plugin built into the build's lib/ dir ("synk_testkit" -> .../libsynk_testkit.so).
std::string pluginFile(const std::string& name);
// A session on the test backend with the runtime's test model (tests/core/testkit) loaded.
struct Kit {
  Session session;
  Model model;
  explicit Kit(int n_ranks, ForkOptions options = {});
};

// /dev/shm entries of every session this process started (processShmPrefix).
int segmentsOfThisProcess();
// True while a process with this pid exists (and is not a zombie we could reap).
bool processAlive(int pid);

}  // namespace synk::test
