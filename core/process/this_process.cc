#include "synk/core/process/this_process.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace synk {
namespace {

std::atomic<pid_t> g_pid{0};

void refreshPid() {
  g_pid.store(getpid(), std::memory_order_relaxed);
}

bool registerRefresh() {
  refreshPid();
  pthread_atfork(nullptr, nullptr, refreshPid);
  return true;
}

}  // namespace

pid_t thisProcessId() {
  static const bool registered = registerRefresh();
  (void)registered;
  return g_pid.load(std::memory_order_relaxed);
}

}  // namespace synk
