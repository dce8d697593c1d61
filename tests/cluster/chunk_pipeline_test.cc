// The chunk pipeline between a collective's caller and the MPI thread (cluster/chunk_pipeline.h),
// without MPI: a thread of the test stands for the bridge's, each chunk's work a byte-wise
// function. Every size against the chunk (none, under one, a multiple, a remainder), in place,
// nothing in or nothing out; and a caller that gives up mid-pipeline, ordered by the counters
// (no sleeps): the job stops before its next chunk and never touches the caller's memory.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "synk/cluster/chunk_pipeline.h"
#include "synk/core/error.h"

using namespace synk;
using namespace synk::cluster;
using Catch::Contains;

namespace {

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>((i * 31 + static_cast<size_t>(seed)) & 0xff);
  return out;
}

// What the "MPI" work does to a byte.
std::byte twice(std::byte b) {
  return static_cast<std::byte>((static_cast<unsigned>(b) * 2 + 1) & 0xff);
}

ChunkPipeline::Staging stagingOf(size_t bytes) {
  return std::make_shared<std::vector<std::byte>>(bytes);
}

// The caller's loop as LeaderCommunicator runs it: the first chunk in, the job on its own thread,
// steps until the job ends, then finish. Returns how many chunks the job worked on.
size_t runAll(ChunkPipeline& pipe, const std::byte* in, std::byte* out) {
  std::atomic<size_t> worked{0};
  std::atomic<bool> ended{false};
  pipe.step(in, out);
  std::thread job([&] {
    pipe.run(
        [&](std::byte* data, size_t bytes) {
          for (size_t i = 0; i < bytes; ++i)
            data[i] = twice(data[i]);
          worked.fetch_add(1);
        },
        "test all_reduce");
    ended.store(true, std::memory_order_release);
  });
  while (!ended.load(std::memory_order_acquire))
    if (!pipe.step(in, out)) std::this_thread::yield();
  job.join();
  pipe.finish(out);
  return worked.load();
}

}  // namespace

TEST_CASE("a pipelined collective gives every byte, whatever the size against the chunk",
          "[cluster]") {
  const size_t chunk = 64;
  const size_t bytes = GENERATE(size_t{0}, size_t{1}, size_t{40}, size_t{64}, size_t{192},
                                size_t{200}, size_t{1000});
  CAPTURE(bytes);
  const std::vector<std::byte> in = pattern(bytes, 7);
  std::vector<std::byte> expected(bytes);
  for (size_t i = 0; i < bytes; ++i)
    expected[i] = twice(in[i]);

  SECTION("into another buffer") {
    std::vector<std::byte> out(bytes);
    ChunkPipeline pipe(stagingOf(bytes), bytes, chunk);
    CHECK(pipe.chunks() == (bytes + chunk - 1) / chunk);
    CHECK(runAll(pipe, in.data(), out.data()) == pipe.chunks());
    CHECK(out == expected);
    CHECK(pipe.copiedBack() == pipe.chunks());
  }
  SECTION("in place") {
    std::vector<std::byte> buffer = in;
    ChunkPipeline pipe(stagingOf(bytes), bytes, chunk);
    runAll(pipe, buffer.data(), buffer.data());
    CHECK(buffer == expected);
  }
  SECTION("nothing out (a reduce's other nodes)") {
    auto staging = stagingOf(bytes);
    ChunkPipeline pipe(staging, bytes, chunk);
    runAll(pipe, in.data(), nullptr);
    CHECK(*staging == expected);
    CHECK(pipe.copiedBack() == 0);
  }
  SECTION("nothing in (a broadcast's other nodes: the job writes the staging buffer)") {
    auto staging = stagingOf(bytes);
    *staging = in;
    std::vector<std::byte> out(bytes);
    ChunkPipeline pipe(staging, bytes, chunk);
    runAll(pipe, nullptr, out.data());
    CHECK(out == expected);
  }
  SECTION("a staging buffer larger than the bytes (reused from a larger call)") {
    auto staging = stagingOf(bytes + 100);
    std::vector<std::byte> out(bytes);
    ChunkPipeline pipe(staging, bytes, chunk);
    runAll(pipe, in.data(), out.data());
    CHECK(out == expected);
  }
}

TEST_CASE("a caller that gives up stops the job before its next chunk", "[cluster][fault]") {
  const size_t chunk = 8, bytes = 36;  // 5 chunks, the last of 4 bytes
  const std::vector<std::byte> in = pattern(bytes, 3);
  auto staging = stagingOf(bytes);
  ChunkPipeline pipe(staging, bytes, chunk);
  REQUIRE(pipe.chunks() == 5);
  std::atomic<size_t> worked{0};
  std::atomic<bool> release{false};
  std::string error;
  auto job = [&](size_t block_at) {
    return std::thread([&, block_at] {
      try {
        pipe.run(
            [&](std::byte* data, size_t n) {
              // Chunk `block_at` stands for an MPI call that does not return until the test says.
              if (worked.load() == block_at) {
                while (!release.load(std::memory_order_acquire))
                  std::this_thread::yield();
              }
              for (size_t i = 0; i < n; ++i)
                data[i] = twice(data[i]);
              worked.fetch_add(1);
            },
            "all_reduce across nodes");
      } catch (const UsageError& e) {
        error = e.what();
      }
    });
  };

  SECTION("while the job waits for the next chunk") {
    pipe.step(in.data(), nullptr);  // chunk 0 in, then the caller does nothing more
    std::thread t = job(size_t(-1));
    while (pipe.done() < 1)
      std::this_thread::yield();
    pipe.abandon();
    t.join();
    CHECK(worked.load() == 1);
    CHECK_THAT(error, Contains("all_reduce across nodes: its caller gave up before chunk 1 of 5"));
  }
  SECTION("while the job is inside a chunk's work: the caller's memory is not touched after") {
    auto out = std::make_unique<std::vector<std::byte>>(bytes, std::byte{0xee});
    pipe.step(in.data(), out->data());
    std::thread t = job(1);  // chunk 1's work blocks
    // The caller goes on as it would: every chunk in, chunk 0's result out.
    while (pipe.filled() < 5 || pipe.copiedBack() < 1)
      if (!pipe.step(in.data(), out->data())) std::this_thread::yield();
    CHECK_FALSE(pipe.step(in.data(), out->data()));  // chunk 1 is not done
    pipe.abandon();                                  // its deadline passed: it gives up
    for (size_t i = 0; i < bytes; ++i)
      CHECK((*out)[i] == (i < chunk ? twice(in[i]) : std::byte{0xee}));
    out.reset();                                     // the caller's memory is gone
    release.store(true, std::memory_order_release);  // the "MPI call" returns
    t.join();
    CHECK(worked.load() == 2);  // chunk 1 finished in the staging buffer, chunk 2 never started
    CHECK_THAT(error, Contains("before chunk 2 of 5"));
    for (size_t i = 0; i < bytes; ++i)  // the job's own buffer: chunks 0 and 1 worked, no more
      CHECK((*staging)[i] == (i < 2 * chunk ? twice(in[i]) : in[i]));
  }
}
