#include "synk/harness/base/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "synk/core/shm_segment.h"

namespace synk::harness {
namespace {

// Signal handlers can reach only globals. Parent: the stop word its Ctrl-C handler writes.
// Child: a flag its SIGTERM handler sets (its parent died, or someone asked it to end).
StopWord* g_parent_stop = nullptr;
volatile sig_atomic_t g_child_signalled = 0;

void onParentSignal(int) {
  if (g_parent_stop) g_parent_stop->request();
}

void onChildSignal(int) {
  g_child_signalled = 1;
}

std::atomic_ref<uint32_t> atomicWord(uint32_t* word) {
  return std::atomic_ref<uint32_t>(*word);
}

const char* signalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? name : "?";
}

// In the child, right after fork.
void becomeChild(pid_t parent) {
  setpgid(0, 0);  // terminal signals go to synk-bench's group, not this one
  struct sigaction action {};
  action.sa_handler = onChildSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) g_child_signalled = 1;  // the parent died before prctl
}

// Whether a live (not zombie) process is left in process group `group`, by /proc.
bool groupHasLiveMember(pid_t group) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == group && state != 'Z' && state != 'X') return true;
  }
  return false;
}

// A child's process group was killed with SIGKILL: the session's shared-memory watcher (in that
// group, core/shm_watcher.h) died with it, so nobody else removes the session's segments. Once
// every process of the group is dead (none can create a segment any more; bounded), remove
// every segment named after the child, the session's master. Called before the child is reaped,
// so its pid, which names the segments, cannot have been reused.
void removeSegmentsOfKilledGroup(pid_t child) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (groupHasLiveMember(child) && std::chrono::steady_clock::now() < give_up)
    usleep(1000);
  removeSegmentsWithPrefix(processShmPrefix(child));
}

// Kills the child's process group and waits until the child is dead (not reaped).
void killGroup(pid_t child) {
  kill(-child, SIGKILL);
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  removeSegmentsOfKilledGroup(child);
}

}  // namespace

StopWord::StopWord() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + strerror(errno));
  word_ = static_cast<uint32_t*>(page);
  *word_ = 0;
}

StopWord::~StopWord() {
  munmap(word_, 4096);
}

void StopWord::request() noexcept {
  auto word = atomicWord(word_);
  uint32_t level = word.load();
  while (level < 2 && !word.compare_exchange_weak(level, level + 1)) {
  }
}

int StopWord::level() const noexcept {
  return static_cast<int>(atomicWord(word_).load(std::memory_order_relaxed));
}

SharedCounter::SharedCounter() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + strerror(errno));
  word_ = static_cast<uint32_t*>(page);
  *word_ = 0;
}

SharedCounter::~SharedCounter() {
  munmap(word_, 4096);
}

void SharedCounter::reset() noexcept {
  atomicWord(word_).store(0);
}

void SharedCounter::add(uint32_t n) noexcept {
  atomicWord(word_).fetch_add(n);
}

uint32_t SharedCounter::value() const noexcept {
  return atomicWord(word_).load(std::memory_order_relaxed);
}

bool childShouldStop(const StopWord& stop) noexcept {
  return g_child_signalled != 0 || stop.requested();
}

std::string ChildResult::describe() const {
  if (timed_out) return "did not finish before its deadline and was killed";
  if (killed) return "was stopped (Ctrl-C twice)";
  if (exited) return "exited with code " + std::to_string(exit_code);
  return "was killed by signal " + std::to_string(signal) + " (SIG" + signalName(signal) + ")";
}

bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

ChildResult runChild(const std::function<int(int report_fd)>& body, const StopWord& stop,
                     std::chrono::milliseconds deadline, const std::function<void()>& tick) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  std::fflush(nullptr);  // nothing buffered twice
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    becomeChild(parent);
    int code = 70;
    try {
      code = body(fds[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "synk-bench: repetition process: %s\n", e.what());
    }
    std::fflush(nullptr);
    _exit(code);
  }
  setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  close(fds[1]);
  ChildResult result;
  const auto end = std::chrono::steady_clock::now() + deadline;
  bool open = true;
  while (open) {
    if (stop.level() >= 2) {
      result.killed = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= end) {
      result.timed_out = true;
      break;
    }
    pollfd watch{fds[0], POLLIN, 0};
    if (tick) tick();
    if (poll(&watch, 1, 50) <= 0) continue;  // 50 ms: how soon a hard stop or deadline acts
    char buf[1 << 16];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
    } else {
      result.output.append(buf, static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  if (result.killed || result.timed_out) killGroup(pid);
  // After EOF the child is exiting; its ranks die with it (PR_SET_PDEATHSIG) but it waits for
  // them first, so this wait is bounded by its own shutdown. Past the deadline it is killed.
  int status = 0;
  while (true) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= end || stop.level() >= 2) {
      result.timed_out = result.timed_out || stop.level() < 2;
      result.killed = result.killed || stop.level() >= 2;
      killGroup(pid);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(1000);
  }
  result.exited = WIFEXITED(status);
  result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return result;
}

void ignoreStopSignals() {
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  g_parent_stop = nullptr;
}

void installStopHandlers(StopWord* stop) {
  g_parent_stop = stop;
  struct sigaction action {};
  action.sa_handler = stop ? onParentSignal : SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::optional<std::string> captureOutput(const std::vector<std::string>& argv,
                                         std::chrono::milliseconds deadline) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  const auto end = std::chrono::steady_clock::now() + deadline;
  bool finished = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd watch{fds[0], POLLIN, 0};
    if (poll(&watch, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) {
      finished = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace synk::harness
