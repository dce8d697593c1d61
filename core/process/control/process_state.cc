#include "synk/core/process/control/process_state.h"

#include <cstdio>

#include "synk/core/error.h"

namespace synk {

std::string stoppedNote(pid_t pid) {
  if (pid <= 0) return "";
  FILE* stat = std::fopen(str("/proc/", pid, "/stat").c_str(), "r");
  if (!stat) return "";
  char state = '?';
  // The command name may hold spaces and parentheses: the state follows the last ')'.
  char line[512] = {};
  const size_t n = std::fread(line, 1, sizeof line - 1, stat);
  std::fclose(stat);
  for (size_t i = n; i-- > 0;) {
    if (line[i] == ')') {
      if (i + 2 < n) state = line[i + 2];
      break;
    }
  }
  if (state == 'T') return str(" (pid ", pid, " is stopped: SIGSTOP, SIGTSTP or a debugger)");
  if (state == 't') return str(" (pid ", pid, " is stopped by a debugger)");
  return "";
}

}  // namespace synk
