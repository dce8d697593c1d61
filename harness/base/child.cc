#include "synk/harness/base/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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
  if (timed_out) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", deadline.count() / 1000.0);
    return std::string("did not finish within its deadline (") + seconds + " s) and was killed";
  }
  if (killed) return "was stopped (Ctrl-C twice)";
  if (lost) return "ended, but its exit status was collected elsewhere (is SIGCHLD ignored?)";
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

namespace {

// In the child of spawn(): its output where the request says, then the body or the command.
[[noreturn]] void childSide(const SpawnRequest& request, pid_t parent, int write_fd) {
  becomeChild(parent);
  if (!request.body) {
    if (request.output_file.empty()) {
      dup2(write_fd, STDOUT_FILENO);
      const int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, STDERR_FILENO);
    } else {
      const int fd =
          open(request.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
    }
    // The handlers becomeChild installed do not survive exec: the command's own (or the
    // default) take over, with SIGTERM from PR_SET_PDEATHSIG still asked for.
    std::vector<char*> args;
    for (const std::string& a : request.argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int code = 70;
  try {
    code = request.body(write_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synk-bench: child process: %s\n", e.what());
  }
  std::fflush(nullptr);
  _exit(code);
}

// Appends what the pipe holds now; false at its end (or an error).
bool drain(int fd, std::string& into) {
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;  // EAGAIN: open but empty for now
  }
}

}  // namespace

ChildResult spawn(const SpawnRequest& request) {
  if (!request.body && request.argv.empty()) throw std::invalid_argument("spawn: nothing to run");
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
    childSide(request, parent, fds[1]);
  }
  setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  // The child's exit wakes the poll (Linux 5.3+); without a pidfd the loop looks every 50 ms.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  ChildResult result;
  result.deadline = request.deadline;
  const auto end = std::chrono::steady_clock::now() + request.deadline;
  bool pipe_open = true, interrupted = false, reaped = false;
  int status = 0;
  while (true) {
    const int level = request.stop ? request.stop->level() : 0;
    if (level >= 2) {
      result.killed = true;
      break;
    }
    if (level == 1 && request.interrupt_on_stop && !interrupted) {
      kill(pid, request.interrupt_signal);
      interrupted = true;
    }
    if (std::chrono::steady_clock::now() >= end) {
      result.timed_out = true;
      break;
    }
    if (request.tick) request.tick();
    pollfd watch[2] = {{pipe_open ? fds[0] : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    poll(watch, 2, 50);  // 50 ms: how soon a stop or the deadline acts
    if (pipe_open) pipe_open = drain(fds[0], result.output);
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) {
      reaped = got == pid;
      result.lost = got < 0;  // reaped elsewhere (SIGCHLD ignored?): its status is unknown
      if (pipe_open) drain(fds[0], result.output);  // what it wrote before it exited
      break;
    }
  }
  close(fds[0]);
  if (pidfd >= 0) close(pidfd);
  if (!reaped && (result.killed || result.timed_out)) {
    killGroup(pid);
    waitpid(pid, &status, 0);
  }
  result.exited = !result.lost && WIFEXITED(status);
  result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return result;
}

ChildResult runChild(const std::function<int(int report_fd)>& body, const StopWord& stop,
                     std::chrono::milliseconds deadline, const std::function<void()>& tick) {
  SpawnRequest request;
  request.body = body;
  request.deadline = deadline;
  request.stop = &stop;
  request.tick = tick;
  return spawn(request);
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
  SpawnRequest request;
  request.argv = argv;
  request.deadline = deadline;
  ChildResult result;
  try {
    result = spawn(request);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!result.exited || result.exit_code != 0) return std::nullopt;
  return result.output;
}

}  // namespace synk::harness
