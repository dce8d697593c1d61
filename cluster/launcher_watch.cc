#include "synk/cluster/launcher_watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/shm_segment.h"
#include "synk/core/waiter.h"

namespace synk::cluster {
namespace {

// What node 0 broadcasts: whether the watch is on, and where to reach it.
constexpr int kMaxAddresses = 8;
struct Rendezvous {
  int32_t on;  // 0: off (SYNK_LAUNCHER_WATCH=0 on node 0, or it could not listen)
  int32_t pid;
  uint64_t token;  // this session's: a connection without it is another job's, or no one's
  uint16_t port;
  char host[256];
  uint32_t addresses;  // IPv4 addresses of node 0 besides its name, network order
  uint32_t address[kMaxAddresses];
  int64_t silence_ms;  // node 0's bound, every node's: one beat and one bound everywhere
};
// What a node says once connected.
struct Hello {
  uint64_t token;
  int32_t node;
  int32_t pid;
  char host[64];
};
// Node 0's answer to a Hello it took: the connecting node tries its next address without it.
constexpr char kWelcome = 'w';
// How a launcher that leaves on purpose ends its stream: 'q', or 'a' and its abort record.
constexpr char kLeft = 'q';
constexpr char kAborted = 'a';
// What a watch sends every beat while it runs (dropped by the reader before a last record).
constexpr char kBeat = 'h';
struct AbortHeader {
  uint32_t reason;
  int32_t rank;
  uint32_t message_bytes;
};

// Bounds of the setup: every launcher runs it at the same point, right after MPI started.
constexpr auto kConnectBound = std::chrono::seconds(10);
constexpr auto kAcceptBound = std::chrono::seconds(15);
// How long node 0 waits for a connection's Hello, and a node for node 0's welcome.
constexpr auto kHelloBound = std::chrono::seconds(2);

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string errnoText(const char* what) {
  return str(what, ": ", std::strerror(errno));
}

// Waits for `events` on `fd` until `deadline`: true when they came.
bool awaitFd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

bool sendAll(int fd, const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool recvAll(int fd, void* data, size_t bytes, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    if (!awaitFd(fd, POLLIN, deadline)) return false;
    const ssize_t n = recv(fd, p, bytes, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Node 0: a listening socket on every interface, a port of the kernel's choosing.
int listenSocket(uint16_t& port, std::string& why) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    why = errnoText("socket");
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    why = errnoText("bind/listen");
    close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

// Node 0's IPv4 addresses, loopback last: another node tries them in this order (loopback
// reaches node 0 only where it shares its host: simulated nodes).
void localAddresses(Rendezvous& r) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (const bool loopback : {false, true}) {
    for (ifaddrs* a = list; a != nullptr && r.addresses < kMaxAddresses; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
      if (((a->ifa_flags & IFF_LOOPBACK) != 0) != loopback) continue;
      r.address[r.addresses++] = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
    }
  }
  freeifaddrs(list);
}

// One connection attempt, bounded by `deadline`; the connected socket or -1.
int connectTo(const sockaddr_in& address, Clock::time_point deadline) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    int error = errno;
    if (error == EINPROGRESS && awaitFd(fd, POLLOUT, deadline)) {
      socklen_t length = sizeof error;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    }
    if (error != 0 && error != EISCONN) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

// Connected to node 0 and welcomed there (`hello` sent, its welcome back), or -1.
int greet(int fd, const Hello& hello, Clock::time_point deadline) {
  char welcome = 0;
  const auto bound = std::min(deadline, Clock::now() + kHelloBound);
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 &&
      sendAll(fd, &hello, sizeof hello) && recvAll(fd, &welcome, 1, bound) && welcome == kWelcome) {
    return fd;
  }
  close(fd);  // not node 0 of this session (another job's listener on that address), or gone
  return -1;
}

// Another node: node 0 by its broadcast addresses (loopback last), then by its name (a name
// lookup may wait on a resolver: only where the addresses failed).
int connectToNode0(const Rendezvous& r, const Hello& hello, std::string& why) {
  const auto deadline = Clock::now() + kConnectBound;
  int tried = 0;
  auto attempt = [&](sockaddr_in address) {
    address.sin_port = htons(r.port);
    ++tried;
    const int fd = connectTo(address, std::min(deadline, Clock::now() + std::chrono::seconds(3)));
    return fd < 0 ? -1 : greet(fd, hello, deadline);
  };
  for (uint32_t i = 0; i < r.addresses && i < kMaxAddresses && Clock::now() < deadline; ++i) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = r.address[i];
    if (const int fd = attempt(address); fd >= 0) return fd;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (Clock::now() < deadline && getaddrinfo(r.host, nullptr, &hints, &found) == 0) {
    for (addrinfo* a = found; a != nullptr && Clock::now() < deadline; a = a->ai_next) {
      if (const int fd = attempt(*reinterpret_cast<sockaddr_in*>(a->ai_addr)); fd >= 0) {
        freeaddrinfo(found);
        return fd;
      }
    }
    freeaddrinfo(found);
  }
  why = str("could not connect to node 0's launcher at ", r.host, " port ", r.port, " (", tried,
            " address(es) tried)");
  return -1;
}

bool watchRequested() {
  const char* value = std::getenv("SYNK_LAUNCHER_WATCH");
  return value == nullptr || std::string_view(value) != "0";
}

void closeAll(std::vector<LauncherWatch::Peer>& peers) {
  for (LauncherWatch::Peer& peer : peers) {
    if (peer.fd >= 0) close(peer.fd);
    peer.fd = -1;
  }
}

}  // namespace

std::unique_ptr<LauncherWatch> LauncherWatch::start(ControlBlock& cb, const NodeLayout& layout,
                                                    const Agreement& mpi) {
  Rendezvous r{};
  int listen_fd = -1;
  std::string why;
  const bool wanted = layout.node != 0 || watchRequested();
  if (layout.node == 0) {
    r.pid = static_cast<int32_t>(getpid());
    r.token = randomToken();
    r.silence_ms = silenceBound().count();
    const std::string host = hostName();
    std::strncpy(r.host, host.c_str(), sizeof r.host - 1);
    if (!wanted) {
      why = "SYNK_LAUNCHER_WATCH=0";
    } else if ((listen_fd = listenSocket(r.port, why)) >= 0) {
      r.on = 1;
      localAddresses(r);
    }
  }
  mpi.broadcast_from_node0(&r, sizeof r);
  std::vector<Peer> peers;
  if (r.on && layout.node == 0) {
    const auto deadline = Clock::now() + kAcceptBound;
    while (static_cast<int>(peers.size()) < layout.nodes - 1 &&
           awaitFd(listen_fd, POLLIN, deadline)) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Hello hello{};
      const bool known =
          recvAll(fd, &hello, sizeof hello, std::min(deadline, Clock::now() + kHelloBound)) &&
          hello.token == r.token && hello.node > 0 && hello.node < layout.nodes &&
          std::none_of(peers.begin(), peers.end(),
                       [&](const Peer& p) { return p.node == hello.node; }) &&
          sendAll(fd, &kWelcome, 1);
      if (!known) {
        close(fd);  // not one of this session's launchers
        continue;
      }
      hello.host[sizeof hello.host - 1] = '\0';
      peers.push_back({hello.node, fd, hello.pid, hello.host});
    }
    if (static_cast<int>(peers.size()) < layout.nodes - 1) {
      why = str(peers.size(), " of the ", layout.nodes - 1, " other nodes' launchers connected");
    }
  } else if (r.on) {
    Hello hello{};
    hello.token = r.token;
    hello.node = layout.node;
    hello.pid = static_cast<int32_t>(getpid());
    std::strncpy(hello.host, hostName().c_str(), sizeof hello.host - 1);
    r.host[sizeof r.host - 1] = '\0';
    if (const int fd = connectToNode0(r, hello, why); fd >= 0) {
      peers.push_back({0, fd, r.pid, r.host});
    }
  }
  if (listen_fd >= 0) close(listen_fd);
  const bool all = mpi.all(r.on && why.empty());
  if (!all) {
    closeAll(peers);
    // Said on every node where it was wanted (node 0 reads SYNK_LAUNCHER_WATCH for all).
    if (wanted && (r.on || layout.node == 0)) {
      logWarning("node ", layout.node, ": no watch of the other nodes' launchers (",
                 why.empty() ? "another node could not connect" : why,
                 "): a launcher that dies is seen at the step's deadline only");
    }
    return nullptr;
  }
  for (const Peer& peer : peers) {
    // The last record goes out at once (no Nagle delay); a send to a stopped peer with a full
    // buffer gives up after 2 s (leave() must not hang on it).
    const int one = 1;
    setsockopt(peer.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const timeval bound{2, 0};
    setsockopt(peer.fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
  }
  return over(cb, layout, std::move(peers), std::chrono::milliseconds(r.silence_ms));
}

std::unique_ptr<LauncherWatch> LauncherWatch::over(ControlBlock& cb, const NodeLayout& layout,
                                                   std::vector<Peer> peers,
                                                   std::chrono::milliseconds silence) {
  return std::unique_ptr<LauncherWatch>(new LauncherWatch(cb, layout, std::move(peers), silence));
}

std::chrono::milliseconds LauncherWatch::silenceBound() {
  const char* text = std::getenv("SYNK_LAUNCHER_SILENCE");
  if (text == nullptr || *text == '\0') return kDefaultSilence;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds >= 0) || seconds > 1e6) {
    logWarning("SYNK_LAUNCHER_SILENCE must be a number of seconds >= 0 (0: no bound), got '", text,
               "': the default, ", kDefaultSilence.count() / 1000, " s, is kept");
    return kDefaultSilence;
  }
  const auto bound = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  if (seconds > 0 && bound < kMinSilence) {
    // A few beats must fit in the bound, with room for a busy host's scheduling.
    logWarning("SYNK_LAUNCHER_SILENCE=", text, " is below the shortest bound, ",
               kMinSilence.count() / 1000, " s: that is used");
    return kMinSilence;
  }
  return bound;
}

LauncherWatch::LauncherWatch(ControlBlock& cb, const NodeLayout& layout, std::vector<Peer> peers,
                             std::chrono::milliseconds silence)
    : cb_(cb), layout_(layout), peers_(std::move(peers)), silence_(silence) {
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    const int err = errno;
    closeAll(peers_);
    throw SystemError("pipe2 (the launcher watch)", err);
  }
  thread_ = std::thread([this] { watch(); });
}

LauncherWatch::~LauncherWatch() {
  leave();
}

void LauncherWatch::watch() {
  using std::chrono::milliseconds;
  const bool bounded = silence_ > milliseconds(0);
  const milliseconds beat =
      bounded ? std::clamp(silence_ / 4, milliseconds(10), milliseconds(1000)) : milliseconds(1000);
  std::vector<std::string> received(peers_.size());
  std::vector<Clock::time_point> heard(peers_.size(), Clock::now());
  std::vector<bool> reported(peers_.size(), false);  // silent, said once
  Clock::time_point next_beat = Clock::now();
  while (true) {
    const Clock::time_point now = Clock::now();
    if (now >= next_beat) {
      for (const Peer& peer : peers_) {
        // A full buffer (a peer that reads nothing) or a gone peer: its reading side tells.
        if (peer.fd >= 0) (void)!send(peer.fd, &kBeat, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      }
      next_beat = now + beat;
    }
    std::vector<pollfd> fds{{stop_pipe_[0], POLLIN, 0}};
    std::vector<size_t> which;
    for (size_t i = 0; i < peers_.size(); ++i) {
      if (peers_[i].fd < 0) continue;
      // Silent past the bound, and not already saying goodbye (a record in progress).
      if (bounded && !reported[i] && received[i].empty() && now - heard[i] > silence_) {
        reported[i] = true;
        peerSilent(peers_[i], std::chrono::duration_cast<milliseconds>(now - heard[i]));
      }
      fds.push_back({peers_[i].fd, POLLIN, 0});
      which.push_back(i);
    }
    if (which.empty()) return;  // every peer left
    const auto wait = std::chrono::duration_cast<milliseconds>(next_beat - Clock::now());
    if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0) + 1)) <
        0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;  // leave()
    for (size_t k = 0; k < which.size(); ++k) {
      if (fds[k + 1].revents == 0) continue;
      Peer& peer = peers_[which[k]];
      std::string& bytes = received[which[k]];
      char buffer[4096];
      const ssize_t n = recv(peer.fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        heard[which[k]] = Clock::now();
        // Heartbeats come before a last record, never inside one (leave() stops this thread
        // before it sends the record).
        size_t skip = 0;
        while (bytes.empty() && skip < static_cast<size_t>(n) && buffer[skip] == kBeat)
          ++skip;
        if (bytes.size() < sizeof(AbortHeader) + kMessageBytes + 1) {
          bytes.append(buffer + skip, static_cast<size_t>(n) - skip);
        }
        continue;
      }
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      // The end of the stream: what came before it says how the launcher left.
      close(peer.fd);
      peer.fd = -1;
      if (!bytes.empty() && bytes[0] == kLeft) continue;
      AbortHeader header{};
      if (bytes.size() >= 1 + sizeof header && bytes[0] == kAborted) {
        std::memcpy(&header, bytes.data() + 1, sizeof header);
        const size_t length =
            std::min<size_t>(header.message_bytes, bytes.size() - 1 - sizeof header);
        // Only a reason a session can end with (a record its sender never saw settle: Fatal).
        const bool known = header.reason >= static_cast<uint32_t>(AbortReason::PeerDied) &&
                           header.reason <= static_cast<uint32_t>(AbortReason::Fatal);
        abortSession(cb_, known ? static_cast<AbortReason>(header.reason) : AbortReason::Fatal,
                     header.rank, bytes.substr(1 + sizeof header, length));
        continue;
      }
      peerEnded(peer);
    }
  }
}

void LauncherWatch::peerSilent(const Peer& peer, std::chrono::milliseconds silent) {
  abortFor(peer, AbortReason::Timeout,
           str("has sent nothing for ", silent.count() / 1000.0,
               " s, not even the watch's heartbeat (stopped, or hung; SYNK_LAUNCHER_SILENCE, "
               "seconds, bounds this, 0: no bound)"),
           "cannot go on");
}

void LauncherWatch::peerEnded(const Peer& peer) {
  abortFor(peer, AbortReason::PeerDied, "ended without leaving the session (killed, or it crashed)",
           "ended with it");
}

void LauncherWatch::abortFor(const Peer& peer, AbortReason reason, const std::string& how,
                             const char* its_ranks) {
  if (peer.node == 0) {
    const std::string why = str("the master's process (node 0's launcher, pid ", peer.pid, " on ",
                                peer.host, ") ", how);
    // Said here too: the master that would report it is gone (or cannot).
    if (abortSession(cb_, reason, cb_.master_rank, why)) {
      logWarning("node ", layout_.node, ": ", why, ": this node's ranks stop");
    }
    return;
  }
  const int first = peer.node * layout_.ranks_per_node;
  const int last = first + layout_.ranks_per_node - 1;
  abortSession(cb_, reason, first,
               str("node ", peer.node, "'s launcher process (pid ", peer.pid, " on ", peer.host,
                   ") ", how, ": its rank",
                   first == last ? str(" ", first) : str("s ", first, "-", last), " ", its_ranks));
}

void LauncherWatch::leave() noexcept {
  if (left_.exchange(true)) return;
  const char stop = 1;
  (void)!write(stop_pipe_[1], &stop, 1);
  if (thread_.joinable()) thread_.join();
  // How this node leaves: normally (never aborted, or closed), or with its abort record.
  std::string note(1, kLeft);
  const uint32_t reason = cb_.abort.load(std::memory_order_acquire);
  if (reason != 0 && reason != static_cast<uint32_t>(AbortReason::Shutdown)) {
    try {
      const std::string message = abortMessage(cb_);
      AbortHeader header{cb_.abort.load(std::memory_order_acquire), cb_.abort_rank,
                         static_cast<uint32_t>(message.size())};
      note.assign(1, kAborted);
      note.append(reinterpret_cast<const char*>(&header), sizeof header);
      note.append(message);
    } catch (...) {
      note.assign(1, kLeft);  // no memory for the record: its bridge's note carries it
    }
  }
  for (Peer& peer : peers_) {
    if (peer.fd < 0) continue;
    (void)sendAll(peer.fd, note.data(), note.size());
    // Closing with unread bytes (the peer's last heartbeats) would reset the connection and could
    // drop the note: end our side, then read what is there.
    shutdown(peer.fd, SHUT_WR);
    char drain[256];
    while (recv(peer.fd, drain, sizeof drain, MSG_DONTWAIT) > 0) {
    }
  }
  closeAll(peers_);
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
}

}  // namespace synk::cluster
