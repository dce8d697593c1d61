#include "synk/core/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>

#include "synk/core/error.h"

namespace bip = boost::interprocess;

namespace synk {
namespace {

constexpr const char* kShmDir = "/dev/shm";

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

[[noreturn]] void throwNoSpace(const std::string& what, size_t bytes, int err) {
  struct statvfs fs {};
  std::string room = "unknown free space";
  if (statvfs(kShmDir, &fs) == 0) {
    room = str(mib(double(fs.f_bavail) * fs.f_frsize), " free of ",
               mib(double(fs.f_blocks) * fs.f_frsize));
  }
  throw SystemError(str("cannot reserve ", mib(double(bytes)), " of shared memory for ", what, ": ",
                        kShmDir, " has ", room, " (raise its size; in Docker pass --shm-size)"),
                    err);
}

void* mapFd(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw SystemError(str("mmap of shared memory '", name, "'"), errno);
  return p;
}

// The inode of this process's PID namespace: a pid means something only inside its namespace.
unsigned long pidNamespace() {
  struct stat st {};
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<unsigned long>(st.st_ino) : 0;
}

}  // namespace

std::string processShmPrefix(pid_t pid) {
  return str("synk-", pidNamespace(), "-", static_cast<int>(pid), "-");
}

std::string sessionShmPrefix(pid_t master_pid, uint64_t token) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "-", token);
  return processShmPrefix(master_pid) + buf;
}

uint64_t randomToken() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

ShmSegment::ShmSegment(std::string name, void* data, size_t size)
    : name_(std::move(name)), data_(data), size_(size) {}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)), data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    unmap();
    name_ = std::move(other.name_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  unmap();
}

void ShmSegment::unmap() {
  if (data_) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

ShmSegment ShmSegment::create(const std::string& name, size_t bytes, const std::string& what) {
  return make(name, bytes, what, true);
}

ShmSegment ShmSegment::createSparse(const std::string& name, size_t bytes,
                                    const std::string& what) {
  return make(name, bytes, what, false);
}

void ShmSegment::reserve(size_t offset, size_t bytes, const std::string& what) const {
  reserve({{offset, bytes}}, what);
}

void ShmSegment::reserve(const std::vector<std::pair<size_t, size_t>>& spans,
                         const std::string& what) const {
  if (spans.empty()) return;
  try {
    bip::shared_memory_object shm(bip::open_only, name_.c_str(), bip::read_write);
    const int fd = shm.get_mapping_handle().handle;
    for (const auto& [offset, bytes] : spans) {
      SYNK_CHECK(offset + bytes <= size_, "reserving bytes ", offset, "-", offset + bytes,
                 " of segment ", name_, " of ", size_);
      if (bytes == 0) continue;
      if (int err = posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes));
          err != 0) {
        if (err == ENOSPC) throwNoSpace(what, bytes, err);
        throw SystemError(str("reserving shared memory '", name_, "' for ", what), err);
      }
    }
  } catch (const bip::interprocess_exception& e) {
    throw SystemError(str("opening shared memory '", name_, "' for ", what), e.get_native_error());
  }
}

ShmSegment ShmSegment::make(const std::string& name, size_t bytes, const std::string& what,
                            bool reserved) {
  SYNK_CHECK(bytes > 0, "segment ", name, " of 0 bytes");
  bip::permissions owner_only(0600);
  std::unique_ptr<bip::shared_memory_object> shm;
  try {
    shm = std::make_unique<bip::shared_memory_object>(bip::create_only, name.c_str(),
                                                      bip::read_write, owner_only);
  } catch (const bip::interprocess_exception& e) {
    // Not ours (O_EXCL refused an existing name): never remove it.
    throw SystemError(str("creating shared memory '", name, "' for ", what), e.get_native_error());
  }
  try {
    shm->truncate(static_cast<bip::offset_t>(bytes));
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SystemError(str("sizing shared memory '", name, "' for ", what), e.get_native_error());
  }
  const int fd = shm->get_mapping_handle().handle;
  // ftruncate does not reserve tmpfs pages; a full /dev/shm would SIGBUS at first touch.
  if (int err = reserved ? posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : 0; err != 0) {
    bip::shared_memory_object::remove(name.c_str());
    if (err == ENOSPC) throwNoSpace(what, bytes, err);
    throw SystemError(str("reserving shared memory '", name, "' for ", what), err);
  }
  void* data = nullptr;
  try {
    data = mapFd(fd, bytes, name);
  } catch (...) {
    bip::shared_memory_object::remove(name.c_str());
    throw;
  }
  return ShmSegment(name, data, bytes);
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t actual = 0;
    shm.get_size(actual);
    if (static_cast<size_t>(actual) < bytes) {
      throw InternalError(
          str("shared memory '", name, "' holds ", actual, " bytes, expected ", bytes));
    }
    return ShmSegment(name, mapFd(shm.get_mapping_handle().handle, bytes, name), bytes);
  } catch (const bip::interprocess_exception& e) {
    throw SystemError(str("opening shared memory '", name, "'"), e.get_native_error());
  }
}

void ShmSegment::remove(const std::string& name) {
  bip::shared_memory_object::remove(name.c_str());
}

SharedMapping::SharedMapping(size_t bytes) : size_(bytes) {
  data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    throw SystemError(str("mmap of ", bytes, " bytes of anonymous shared memory"), errno);
  }
}

SharedMapping::SharedMapping(SharedMapping&& other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
}

SharedMapping::~SharedMapping() {
  if (data_) munmap(data_, size_);
}

namespace {
template <typename Fn>
int forEachShmEntry(const std::string& prefix, Fn&& fn) {
  DIR* dir = opendir(kShmDir);
  if (!dir) return 0;
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) == 0 && fn(name)) ++n;
  }
  closedir(dir);
  return n;
}
}  // namespace

int removeSegmentsWithPrefix(const std::string& prefix) {
  return forEachShmEntry(
      prefix, [](const std::string& name) { return shm_unlink(("/" + name).c_str()) == 0; });
}

int countSegmentsWithPrefix(const std::string& prefix) {
  return forEachShmEntry(prefix, [](const std::string&) { return true; });
}

int sweepStaleSegments() {
  const uid_t me = getuid();
  if (pidNamespace() == 0) return 0;  // unknown namespace: no pid can be judged dead
  // Only masters of this PID namespace can be judged dead by their pid: a job in another
  // namespace sharing /dev/shm (docker --ipc=host) has pids that mean nothing here.
  return forEachShmEntry(str("synk-", pidNamespace(), "-"), [me](const std::string& name) {
    unsigned long ns = 0;
    int pid = 0;
    if (std::sscanf(name.c_str(), "synk-%lu-%d-", &ns, &pid) != 2 || pid <= 0) return false;
    struct stat st {};
    if (stat((std::string(kShmDir) + "/" + name).c_str(), &st) != 0 || st.st_uid != me) {
      return false;
    }
    if (kill(pid, 0) == 0 || errno != ESRCH) return false;  // master alive (or not ours)
    return shm_unlink(("/" + name).c_str()) == 0;
  });
}

}  // namespace synk
