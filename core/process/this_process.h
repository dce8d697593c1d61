#pragma once
// Which process this is, cheaply: a session belongs to the process that forked its ranks, and a
// copy of that process made by fork() without exec (a checkpoint writer forked copy-on-write)
// must neither use nor close it. getpid() is a system call; the step path reads a cached pid
// instead, refreshed in every child by a pthread_atfork handler.
#include <sys/types.h>

namespace synk {

// This process's pid (cached; exact for children made by fork(), which runs the atfork handlers).
pid_t thisProcessId();

}  // namespace synk
