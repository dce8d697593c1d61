#pragma once
// What the kernel says about a rank's process, for messages: a rank that misses a deadline may
// be busy, or stopped (SIGSTOP, a debugger), which the user wants to hear about by name.
#include <sys/types.h>

#include <string>

namespace synk {

// " (pid 1234 is stopped: SIGSTOP, SIGTSTP or a debugger)" for a stopped or traced process, ""
// otherwise (running, sleeping, gone, or unreadable).
std::string stoppedNote(pid_t pid);

}  // namespace synk
