#pragma once
// A small process that outlives the master to remove the session's shared memory when the
// master dies without cleaning up (SIGKILL, a crash), as Python's multiprocessing resource
// tracker does: the segments (up to hundreds of MiB) go within milliseconds instead of waiting
// for the same user's next fork() to sweep them.
//
// The watcher is forked by the master before the workers, holds the read end of a pipe whose
// write end only the master keeps (workers close their copy), and waits. A one-byte message says
// the master cleaned up itself; end of file (every holder of the write end is gone) or the
// master's death (PR_SET_PDEATHSIG) makes it unlink every /dev/shm name with the session's
// prefix. It runs only async-signal-safe calls (the master may have had threads), ignores the
// terminal's SIGINT, SIGHUP and SIGTERM (meant for the program, whose segments it must still
// remove), and keeps no other file descriptor open.
#include <sys/types.h>

#include <string>

namespace synk {

class ShmWatcher {
 public:
  ShmWatcher() = default;
  ShmWatcher(ShmWatcher&& other) noexcept;
  ShmWatcher& operator=(ShmWatcher&& other) noexcept;
  ShmWatcher(const ShmWatcher&) = delete;
  ShmWatcher& operator=(const ShmWatcher&) = delete;
  // Closes this process's end without a message (a worker's copy, a copy made by fork()).
  ~ShmWatcher();

  // Master: forks the watcher of every segment named `prefix`*. Throws SystemError.
  static ShmWatcher start(const std::string& prefix);
  // Master, after removing the segments itself: tells the watcher to leave and reaps it.
  void release() noexcept;
  // A process that must not keep the master's end open (a worker): closes it.
  void forget() noexcept;
  pid_t pid() const { return pid_; }

 private:
  int fd_ = -1;  // write end of the pipe (master)
  pid_t pid_ = 0;
};

}  // namespace synk
