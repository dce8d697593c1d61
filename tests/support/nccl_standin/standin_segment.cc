#include "tests/support/nccl_standin/standin_segment.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "synk/core/error.h"

namespace synk::standin {
namespace {

constexpr char kMagic[16] = "nccl-standin-1";

std::mutex g_created_mutex;
std::vector<std::string>& created() {
  static auto* names = new std::vector<std::string>();
  return *names;
}

// The id carries the magic, then the segment's name (NUL-terminated).
std::string nameOf(const ncclUniqueId& id, std::string* error) {
  if (std::memcmp(id.internal, kMagic, sizeof(kMagic)) != 0) {
    *error = "the ncclUniqueId was not made by the stand-in's ncclGetUniqueId";
    return {};
  }
  const char* name = id.internal + sizeof(kMagic);
  const size_t room = sizeof(id.internal) - sizeof(kMagic);
  if (strnlen(name, room) == room) {
    *error = "the ncclUniqueId holds no segment name";
    return {};
  }
  return name;
}

}  // namespace

std::string Segment::namePrefix(int pid) {
  return processShmPrefix(pid) + "ncclstandin-";
}

void Segment::create(ncclUniqueId* id) {
  static std::atomic<int> counter{0};
  const std::string name =
      str(namePrefix(getpid()), counter.fetch_add(1), "-", randomToken() % 1000000007);
  SYNK_CHECK(name.size() + 1 + sizeof(kMagic) <= sizeof(id->internal), "id name too long");
  ShmSegment mapping = ShmSegment::create(name, sizeof(Layout), "an NCCL stand-in unique id");
  // ftruncate zeroed the pages: every counter starts at 0.
  std::memcpy(static_cast<Layout*>(mapping.data())->magic, kMagic, sizeof(kMagic));
  {
    std::lock_guard<std::mutex> lock(g_created_mutex);
    created().push_back(name);
  }
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, kMagic, sizeof(kMagic));
  std::memcpy(id->internal + sizeof(kMagic), name.c_str(), name.size() + 1);
}

std::shared_ptr<Segment> Segment::attach(const ncclUniqueId& id, int n_ranks, std::string* error) {
  const std::string name = nameOf(id, error);
  if (name.empty()) return nullptr;
  ShmSegment mapping;
  try {
    mapping = ShmSegment::open(name, sizeof(Layout));
  } catch (const std::exception& e) {
    // Removed already: a rank aborted before everybody arrived, which ends the rendezvous.
    *error = str("the communicator's rendezvous is gone (", e.what(), ")");
    return nullptr;
  }
  std::shared_ptr<Segment> segment(new Segment(std::move(mapping)));
  Layout& layout = segment->layout();
  if (std::memcmp(layout.magic, kMagic, sizeof(kMagic)) != 0) {
    *error = str("shared memory '", name, "' is not a stand-in segment");
    return nullptr;
  }
  int32_t expected = 0;
  if (!layout.n_ranks.compare_exchange_strong(expected, n_ranks) && expected != n_ranks) {
    *error = str("ranks disagree on the communicator's size: ", expected, " and ", n_ranks);
    return nullptr;
  }
  layout.contexts[0].size.store(n_ranks);
  // Everybody has it mapped: the name has done its job.
  if (layout.attached.fetch_add(1) + 1 == n_ranks) ShmSegment::remove(name);
  return segment;
}

void Segment::removeCreatedIds() {
  std::lock_guard<std::mutex> lock(g_created_mutex);
  for (const std::string& name : created())
    ShmSegment::remove(name);
  created().clear();
}

Segment::~Segment() {
  // The first rank to let go ends the rendezvous: a rank that arrives later fails instead of
  // waiting for a peer that left.
  ShmSegment::remove(mapping_.name());
}

void Segment::wake() {
  layout().wake.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&layout().wake), FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
}

void Segment::sleep(uint32_t seen) {
  // Bounded: process-local stop conditions (an abort flag, a stopping stream) bump no word.
  timespec timeout{0, 1'000'000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&layout().wake), FUTEX_WAIT, seen, &timeout,
          nullptr, 0);
}

}  // namespace synk::standin
