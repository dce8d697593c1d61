// ShmSegment's sparse segments (a node's copy of the rows it reads, core/step/ship_data.h): no
// page taken until reserved, exactly the reserved pages after, a clear error out of range.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "synk/core/error.h"
#include "synk/core/shm_segment.h"

namespace synk {
namespace {

// Bytes the segment takes in /dev/shm.
long long allocatedBytes(const std::string& name) {
  struct stat st {};
  REQUIRE(stat(("/dev/shm/" + name).c_str(), &st) == 0);
  return static_cast<long long>(st.st_blocks) * 512;
}

TEST_CASE("a sparse segment takes memory only where it was reserved", "[core]") {
  const std::string name = sessionShmPrefix(getpid(), randomToken()) + "sparse";
  const size_t bytes = size_t{1} << 20;
  {
    ShmSegment segment = ShmSegment::createSparse(name, bytes, "the test");
    CHECK(segment.size() == bytes);
    CHECK(allocatedBytes(name) == 0);
    segment.reserve({{256 << 10, 128 << 10}, {768 << 10, 64 << 10}}, "the test");
    CHECK(allocatedBytes(name) == (192 << 10));
    auto* at = static_cast<char*>(segment.data());
    std::memset(at + (256 << 10), 7, 128 << 10);  // where it was reserved: no SIGBUS, no growth
    CHECK(allocatedBytes(name) == (192 << 10));
    CHECK(at[0] == 0);  // an unreserved page reads as zeros
    CHECK_THROWS_AS(segment.reserve(bytes - 4096, 8192, "the test"), InternalError);
    ShmSegment whole = ShmSegment::create(name + "-whole", bytes, "the test");
    CHECK(allocatedBytes(name + "-whole") == static_cast<long long>(bytes));
  }
  ShmSegment::remove(name);
  ShmSegment::remove(name + "-whole");
}

}  // namespace
}  // namespace synk
