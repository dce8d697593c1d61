#pragma once
// POSIX shared memory, through Boost.Interprocess.
//
// Every named segment of a session is called "synk-<pid namespace>-<master pid>-<token>-<what>":
// the random token keeps concurrent jobs apart, the pid (with its namespace, in which alone it
// means something) lets a later session sweep what a SIGKILLed master left behind. Segments are
// created O_EXCL with mode 0600 and their pages are reserved with posix_fallocate, so a full
// /dev/shm is a clear error at creation instead of a SIGBUS at first touch.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace synk {

// The prefix of every segment name of one session, and of every session a process (in this PID
// namespace) was the master of.
std::string sessionShmPrefix(pid_t master_pid, uint64_t token);
std::string processShmPrefix(pid_t pid);
uint64_t randomToken();

// A mapping of one named segment; unmapped on destruction (the name stays until remove()).
class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(ShmSegment&&) noexcept;
  ShmSegment& operator=(ShmSegment&&) noexcept;
  ~ShmSegment();

  // Creates and maps a new segment of `bytes` (> 0). `what` names its use in error messages.
  static ShmSegment create(const std::string& name, size_t bytes, const std::string& what);
  // The same with no page reserved: a copy that may only ever hold part of what it could (a
  // node's rows of a Data, core/step/ship_data.h) reserves what it writes with reserve() first.
  // Unwritten pages read as zeros and take no memory.
  static ShmSegment createSparse(const std::string& name, size_t bytes, const std::string& what);
  // Reserves the pages of [offset, offset + bytes) (of each span: {offset, bytes} pairs, one
  // open of the segment for all): a full /dev/shm is a clear error here instead of a SIGBUS at
  // the first write.
  void reserve(size_t offset, size_t bytes, const std::string& what) const;
  void reserve(const std::vector<std::pair<size_t, size_t>>& spans, const std::string& what) const;
  // Maps an existing segment; its size must be at least `bytes`.
  static ShmSegment open(const std::string& name, size_t bytes);
  // Unlinks a name; a missing name is not an error.
  static void remove(const std::string& name);

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  ShmSegment(std::string name, void* data, size_t size);
  static ShmSegment make(const std::string& name, size_t bytes, const std::string& what,
                         bool reserved);
  void unmap();

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Shared, anonymous memory inherited by forked children (the control block).
class SharedMapping {
 public:
  explicit SharedMapping(size_t bytes);
  SharedMapping(SharedMapping&&) noexcept;
  SharedMapping& operator=(SharedMapping&&) = delete;
  ~SharedMapping();
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Unlinks every /dev/shm entry whose name starts with `prefix`; returns how many.
int removeSegmentsWithPrefix(const std::string& prefix);
// Lists /dev/shm entries starting with `prefix` (for tests and diagnostics).
int countSegmentsWithPrefix(const std::string& prefix);
// Unlinks segments of this user, named by a master of this PID namespace that no longer exists:
// what a SIGKILLed master left behind. Returns how many.
int sweepStaleSegments();

}  // namespace synk
