#pragma once
// How many processes map a shared-memory segment whose name starts with `prefix`: read from
// /proc/PID/maps, which names a mapped file "/dev/shm/NAME" ("(deleted)" once unlinked). For the
// watcher's test and its benchmark: a segment is freed only once it is unlinked and unmapped.
#include <filesystem>
#include <fstream>
#include <string>

namespace synk::test {

inline int processesMapping(const std::string& prefix) {
  int n = 0;
  const std::string needle = "/dev/shm/" + prefix;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream maps(entry.path() / "maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.find(needle) != std::string::npos) {
        ++n;
        break;
      }
    }
  }
  return n;
}

}  // namespace synk::test
