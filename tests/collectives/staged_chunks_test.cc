// The host-staged all_reduce's chunking (collectives/cuda/staging/staged_pipeline.h): the
// square-root rule, a fixed count, and SYNK_STAGED_CHUNKS. Pure arithmetic and the environment:
// nothing here touches CUDA, so it runs in CI. SYNK_STAGED_CHUNKS is read once per process, so
// each setting is tried in a forked child.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "synk/collectives/cuda/staging/staged_pipeline.h"
#include "synk/core/error.h"

namespace synk {
namespace {

constexpr size_t MiB = size_t{1} << 20;

size_t chunksFor(size_t bytes, size_t fixed = 0) {
  const size_t chunk = StagedAllReduce::chunkBytes(bytes, fixed);
  return (bytes + chunk - 1) / chunk;
}

// In a child: SYNK_STAGED_CHUNKS = value, then chunkOverride(). Exit code: the count it read
// (0 = the rule; 256, the largest, as 199: an exit code is a byte), 200 for an InvalidArgument
// naming the variable and the value, 201 otherwise.
int overrideInChild(const char* value) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (value)
      setenv("SYNK_STAGED_CHUNKS", value, 1);
    else
      unsetenv("SYNK_STAGED_CHUNKS");
    try {
      const size_t chunks = StagedAllReduce::chunkOverride();
      _exit(chunks == 256 ? 199 : static_cast<int>(chunks));
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      const bool named = what.find("SYNK_STAGED_CHUNKS") != std::string::npos &&
                         what.find(std::string("'") + value + "'") != std::string::npos;
      _exit(named ? 200 : 201);
    } catch (...) {
      _exit(201);
    }
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("staged chunks: the square-root rule", "[staged]") {
  CHECK(StagedAllReduce::chunkBytes(32 * MiB) == 8 * MiB);    // 4 chunks
  CHECK(StagedAllReduce::chunkBytes(8 * MiB) == 4 * MiB);     // 2 chunks
  CHECK(StagedAllReduce::chunkBytes(128 * MiB) == 16 * MiB);  // 8 chunks
  // Larger chunks and (give or take one, from rounding) more of them as the buffer grows; every
  // chunk a whole number of cache lines.
  size_t last_chunks = 0, last_chunk = 0;
  for (size_t bytes = 4 * MiB; bytes <= (size_t{16} << 30); bytes = bytes * 3 / 2 + 4096) {
    const size_t chunk = StagedAllReduce::chunkBytes(bytes);
    CHECK(chunk % 64 == 0);
    CHECK(chunk >= last_chunk);
    CHECK(chunksFor(bytes) + 1 >= last_chunks);  // rounding may take one back
    last_chunk = chunk;
    last_chunks = chunksFor(bytes);
  }
  CHECK(StagedAllReduce::chunkBytes(size_t{16} << 30) == 64 * MiB);  // the largest chunk
}

TEST_CASE("staged chunks: a fixed count, within 1 to 64 MiB a chunk", "[staged]") {
  CHECK(StagedAllReduce::chunkBytes(32 * MiB, 4) == 8 * MiB);
  CHECK(StagedAllReduce::chunkBytes(32 * MiB, 16) == 2 * MiB);
  CHECK(StagedAllReduce::chunkBytes(4 * MiB, 256) == 1 * MiB);         // not below 1 MiB
  CHECK(StagedAllReduce::chunkBytes(size_t{8} << 30, 2) == 64 * MiB);  // nor above 64
  CHECK(StagedAllReduce::chunkBytes(10 * MiB + 3, 4) % 64 == 0);
}

TEST_CASE("staged chunks: SYNK_STAGED_CHUNKS sets the count, a bad value is named", "[staged]") {
  CHECK(overrideInChild(nullptr) == 0);
  CHECK(overrideInChild("") == 0);
  CHECK(overrideInChild("4") == 4);
  CHECK(overrideInChild("256") == 199);
  for (const char* bad : {"0", "257", "-3", "four", "4x", "1e2"})
    CHECK(overrideInChild(bad) == 200);
}

}  // namespace
}  // namespace synk
