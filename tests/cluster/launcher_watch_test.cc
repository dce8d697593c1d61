// LauncherWatch (cluster/launcher_watch.h) over socket pairs: how a peer's end of the stream is
// read. A launcher that leaves normally ('q') aborts nothing; one that leaves aborted hands over
// its record; an end without either is a death, named by node and ranks (or as the master's
// process, on another node); leave() says which of the first two this node is. Every watch sends
// heartbeats; a peer silent past the bound is named as stopped or hung.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "synk/cluster/launcher_watch.h"
#include "synk/core/waiter.h"

namespace synk::cluster {
namespace {

// A control block for n ranks on the heap (the watch only reads and aborts it).
class LocalControlBlock {
 public:
  explicit LocalControlBlock(int n_ranks) {
    const size_t bytes = (ControlBlock::bytesFor(n_ranks) + 63) / 64 * 64;
    memory_ = std::aligned_alloc(64, bytes);
    std::memset(memory_, 0, bytes);
    cb_ = new (memory_) ControlBlock();
    cb_->n_ranks = n_ranks;
    cb_->master_rank = 0;
    for (int r = 0; r < n_ranks; ++r)
      new (&cb_->slot(r)) RankSlot{};
  }
  ~LocalControlBlock() { std::free(memory_); }
  LocalControlBlock(const LocalControlBlock&) = delete;
  LocalControlBlock& operator=(const LocalControlBlock&) = delete;
  ControlBlock& operator*() { return *cb_; }
  ControlBlock* operator->() { return cb_; }

 private:
  void* memory_;
  ControlBlock* cb_;
};

// One end for the watch, one for the test (the "peer launcher").
struct Pair {
  int watched = -1, peer = -1;
  Pair() {
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    watched = fds[0];
    peer = fds[1];
  }
};

// Until the session is aborted, at most 10 s: the reason (0: it never was).
uint32_t awaitAbort(ControlBlock& cb) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cb.abort.load() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return cb.abort.load();
}

std::string readAll(int fd) {
  std::string bytes;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
    bytes.append(buffer, static_cast<size_t>(n));
  return bytes;
}

// Reads until the other side closes, at most 10 s (a watch that never closes fails the test).
std::string readAllBounded(int fd) {
  std::string bytes;
  char buffer[4096];
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < give_up) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  FAIL("the watch did not close its side within 10 s");
  return bytes;
}

// What a watch sent, without the heartbeats before its last record.
std::string withoutBeats(const std::string& bytes) {
  return bytes.substr(std::min(bytes.find_first_not_of('h'), bytes.size()));
}

using std::chrono::milliseconds;

TEST_CASE(
    "node 0's watch: a launcher that leaves with 'q' aborts nothing, one that ends without "
    "is named with its ranks") {
  LocalControlBlock cb(6);
  const NodeLayout layout{3, 0, 2};
  Pair one, two;
  auto watch = LauncherWatch::over(
      *cb, layout, {{1, one.watched, 111, "host-a"}, {2, two.watched, 222, "host-b"}});
  REQUIRE(write(one.peer, "q", 1) == 1);
  close(one.peer);
  close(two.peer);  // node 2's launcher killed: no word first
  REQUIRE(awaitAbort(*cb) == static_cast<uint32_t>(AbortReason::PeerDied));
  CHECK(cb->abort_rank == 4);
  CHECK(abortMessage(*cb) ==
        "node 2's launcher process (pid 222 on host-b) ended without leaving the session (killed, "
        "or it crashed): its ranks 4-5 ended with it");
  watch->leave();
}

TEST_CASE("node 0's watch: a launcher that leaves aborted hands over its record") {
  LocalControlBlock cb(2);
  const NodeLayout layout{2, 0, 1};
  Pair one;
  auto watch = LauncherWatch::over(*cb, layout, {{1, one.watched, 111, "host-a"}});
  const std::string message = "rank 1 timed out at the barrier";
  struct {
    uint32_t reason;
    int32_t rank;
    uint32_t bytes;
  } header{static_cast<uint32_t>(AbortReason::Timeout), 1, static_cast<uint32_t>(message.size())};
  std::string note = "a";
  note.append(reinterpret_cast<const char*>(&header), sizeof header);
  note += message;
  REQUIRE(write(one.peer, note.data(), note.size()) == static_cast<ssize_t>(note.size()));
  close(one.peer);
  REQUIRE(awaitAbort(*cb) == static_cast<uint32_t>(AbortReason::Timeout));
  CHECK(cb->abort_rank == 1);
  CHECK(abortMessage(*cb) == message);
  watch->leave();
}

TEST_CASE("another node's watch: the master's process ending without a word aborts the node") {
  LocalControlBlock cb(4);
  cb->master_rank = 1;
  const NodeLayout layout{2, 1, 2};
  Pair zero;
  auto watch = LauncherWatch::over(*cb, layout, {{0, zero.watched, 42, "head"}});
  close(zero.peer);
  REQUIRE(awaitAbort(*cb) == static_cast<uint32_t>(AbortReason::PeerDied));
  CHECK(cb->abort_rank == 1);
  CHECK(abortMessage(*cb).find("the master's process (node 0's launcher, pid 42 on head)") == 0);
}

TEST_CASE("leave says 'q' after a normal session, the abort record after an aborted one") {
  SECTION("normal") {
    LocalControlBlock cb(2);
    Pair zero;
    auto watch = LauncherWatch::over(*cb, NodeLayout{2, 1, 1}, {{0, zero.watched, 42, "head"}});
    watch->leave();
    CHECK(withoutBeats(readAll(zero.peer)) == "q");
    CHECK(cb->abort.load() == 0);  // leaving aborts nothing here
    close(zero.peer);
  }
  SECTION("aborted") {
    LocalControlBlock cb(2);
    Pair zero;
    auto watch = LauncherWatch::over(*cb, NodeLayout{2, 1, 1}, {{0, zero.watched, 42, "head"}});
    REQUIRE(abortSession(*cb, AbortReason::Fatal, 1, "rank 1 failed: boom"));
    watch->leave();
    const std::string note = withoutBeats(readAll(zero.peer));
    REQUIRE(note.size() > 13);
    CHECK(note[0] == 'a');
    CHECK(note.substr(13) == "rank 1 failed: boom");
    close(zero.peer);
  }
}

TEST_CASE("heartbeats: a watch sends them while it runs, a 'q' after a peer's is a normal leave") {
  LocalControlBlock cb(2);
  Pair one;
  // No silence bound here: the test's end beats only when it leaves.
  auto watch = LauncherWatch::over(*cb, NodeLayout{2, 0, 1}, {{1, one.watched, 111, "host-a"}},
                                   milliseconds(0));
  std::string got;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.size() < 2 && std::chrono::steady_clock::now() < give_up) {
    pollfd fd{one.peer, POLLIN, 0};
    char buffer[64];
    if (poll(&fd, 1, 100) == 1) {
      const ssize_t n = read(one.peer, buffer, sizeof buffer);
      REQUIRE(n > 0);
      got.append(buffer, static_cast<size_t>(n));
    }
  }
  CHECK(got.size() >= 2);  // a beat a second (the most), nothing else
  CHECK(got.find_first_not_of('h') == std::string::npos);
  REQUIRE(write(one.peer, "hhhq", 4) == 4);
  shutdown(one.peer, SHUT_WR);
  readAllBounded(one.peer);  // ends when the watch has read our stream's end and closed its side
  CHECK(cb->abort.load() == 0);
  watch->leave();
  close(one.peer);
}

TEST_CASE("node 0's watch: a launcher that sends nothing past the bound is named, with its ranks") {
  LocalControlBlock cb(4);
  Pair one;
  auto watch = LauncherWatch::over(*cb, NodeLayout{2, 0, 2}, {{1, one.watched, 111, "host-a"}},
                                   milliseconds(200));
  REQUIRE(awaitAbort(*cb) == static_cast<uint32_t>(AbortReason::Timeout));
  CHECK(cb->abort_rank == 2);
  const std::string message = abortMessage(*cb);
  CHECK(message.find("node 1's launcher process (pid 111 on host-a) has sent nothing for ") == 0);
  CHECK(message.find("(stopped, or hung; SYNK_LAUNCHER_SILENCE") != std::string::npos);
  CHECK(message.find("its ranks 2-3 cannot go on") != std::string::npos);
  watch->leave();
  close(one.peer);
}

TEST_CASE("another node's watch: a master's process silent past the bound aborts the node") {
  LocalControlBlock cb(2);
  cb->master_rank = 0;
  Pair zero;
  auto watch = LauncherWatch::over(*cb, NodeLayout{2, 1, 1}, {{0, zero.watched, 42, "head"}},
                                   milliseconds(200));
  REQUIRE(awaitAbort(*cb) == static_cast<uint32_t>(AbortReason::Timeout));
  CHECK(cb->abort_rank == 0);
  CHECK(abortMessage(*cb).find(
            "the master's process (node 0's launcher, pid 42 on head) has sent nothing for ") == 0);
  watch->leave();
  close(zero.peer);
}

TEST_CASE(
    "SYNK_LAUNCHER_SILENCE sets the bound in seconds, at least 3, a bad value keeps the default") {
  const char* before = std::getenv("SYNK_LAUNCHER_SILENCE");
  const std::string saved = before ? before : "";
  setenv("SYNK_LAUNCHER_SILENCE", "7.5", 1);
  CHECK(LauncherWatch::silenceBound() == milliseconds(7500));
  setenv("SYNK_LAUNCHER_SILENCE", "0.5", 1);  // too short for a few beats on a busy host
  CHECK(LauncherWatch::silenceBound() == LauncherWatch::kMinSilence);
  setenv("SYNK_LAUNCHER_SILENCE", "0", 1);
  CHECK(LauncherWatch::silenceBound() == milliseconds(0));
  for (const char* bad : {"-1", "ten", "5s"}) {
    setenv("SYNK_LAUNCHER_SILENCE", bad, 1);
    CHECK(LauncherWatch::silenceBound() == LauncherWatch::kDefaultSilence);
  }
  unsetenv("SYNK_LAUNCHER_SILENCE");
  CHECK(LauncherWatch::silenceBound() == LauncherWatch::kDefaultSilence);
  if (before) setenv("SYNK_LAUNCHER_SILENCE", saved.c_str(), 1);
}

}  // namespace
}  // namespace synk::cluster
