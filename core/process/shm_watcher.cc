#include "synk/core/shm_watcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "synk/core/error.h"

namespace synk {
namespace {

constexpr char kReleased = 'c';
constexpr int kWatchFd = 3;

void onParentDeath(int) {}  // interrupts poll(); the loop then sees the new parent

// Unlinks every /dev/shm name starting with prefix. getdents64 and unlinkat only: no malloc.
void removeAll(const char* prefix, size_t prefix_len) {
  const int dir = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  alignas(8) char buffer[16384];
  for (;;) {
    const long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      auto* entry = reinterpret_cast<dirent64*>(buffer + at);
      if (std::strncmp(entry->d_name, prefix, prefix_len) == 0) unlinkat(dir, entry->d_name, 0);
      at += entry->d_reclen;
    }
  }
  close(dir);
}

[[noreturn]] void cleanUpAndExit(const char* prefix, size_t prefix_len) {
  removeAll(prefix, prefix_len);
  // A worker killed with the master may have been creating a segment as the master died: look
  // once more after it is surely gone.
  const timespec pause{0, 100 * 1000 * 1000};
  nanosleep(&pause, nullptr);
  removeAll(prefix, prefix_len);
  _exit(0);
}

[[noreturn]] void watch(int read_fd, pid_t master, const char* prefix, size_t prefix_len) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGPIPE})
    sigaction(sig, &ignore, nullptr);
  struct sigaction wake {};
  wake.sa_handler = onParentDeath;  // no SA_RESTART: poll returns EINTR
  sigaction(SIGUSR1, &wake, nullptr);
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  prctl(PR_SET_NAME, "synk-watcher");
  // Keep nothing of the master's open (its sockets, the test harness's pipes): only the pipe.
  if (read_fd != kWatchFd) {
    dup2(read_fd, kWatchFd);
    close(read_fd);
  }
  const int null_fd = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd)
    dup2(null_fd, fd);
  if (syscall(SYS_close_range, kWatchFd + 1, ~0u, 0) != 0) {
    for (int fd = kWatchFd + 1; fd < 4096; ++fd)
      close(fd);
  }
  for (;;) {
    if (getppid() != master) cleanUpAndExit(prefix, prefix_len);
    pollfd wait_for{kWatchFd, POLLIN, 0};
    if (poll(&wait_for, 1, -1) < 0) {
      if (errno == EINTR) continue;
      cleanUpAndExit(prefix, prefix_len);
    }
    char message = 0;
    const ssize_t n = read(kWatchFd, &message, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n == 1 && message == kReleased) _exit(0);
    cleanUpAndExit(prefix, prefix_len);  // end of file: the master is gone without a word
  }
}

}  // namespace

ShmWatcher::ShmWatcher(ShmWatcher&& other) noexcept : fd_(other.fd_), pid_(other.pid_) {
  other.fd_ = -1;
  other.pid_ = 0;
}

ShmWatcher& ShmWatcher::operator=(ShmWatcher&& other) noexcept {
  if (this != &other) {
    forget();
    fd_ = other.fd_;
    pid_ = other.pid_;
    other.fd_ = -1;
    other.pid_ = 0;
  }
  return *this;
}

ShmWatcher::~ShmWatcher() {
  forget();
}

ShmWatcher ShmWatcher::start(const std::string& prefix) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw SystemError("pipe for the shared-memory watcher", errno);
  const pid_t master = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw SystemError("fork of the shared-memory watcher", err);
  }
  if (pid == 0) {
    close(fds[1]);
    watch(fds[0], master, prefix.c_str(), prefix.size());
  }
  close(fds[0]);
  ShmWatcher watcher;
  watcher.fd_ = fds[1];
  watcher.pid_ = pid;
  return watcher;
}

void ShmWatcher::release() noexcept {
  if (fd_ < 0) return;
  // A watcher that is gone (killed) leaves a pipe without reader, and writing to one raises
  // SIGPIPE, which would end the master at close: blocked around the write, and taken if raised.
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  const char message = kReleased;
  if (write(fd_, &message, 1) < 0 && errno == EPIPE) {
    const timespec now{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  forget();
  // It leaves at once; reap it so it is no zombie of the master's (bounded: never hang here).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (pid_ > 0) {
    const pid_t got = waitpid(pid_, nullptr, WNOHANG);
    if (got == pid_ || (got < 0 && errno == ECHILD)) break;  // reaped (here or elsewhere)
    if (std::chrono::steady_clock::now() >= give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  pid_ = 0;
}

void ShmWatcher::forget() noexcept {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace synk
