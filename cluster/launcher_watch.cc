#include "synk/cluster/launcher_watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "synk/cluster/mpi_world.h"
#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/waiter.h"

namespace synk::cluster {
namespace {

using detail::checkMpi;

// What node 0 broadcasts: whether the watch is on, and where to reach it.
constexpr int kMaxAddresses = 8;
struct Rendezvous {
  int32_t on;  // 0: off (SYNK_LAUNCHER_WATCH=0 on node 0, or it could not listen)
  int32_t pid;
  uint16_t port;
  char host[256];
  uint32_t addresses;  // IPv4 addresses of node 0 besides its name, network order
  uint32_t address[kMaxAddresses];
};
// What a node says once connected.
struct Hello {
  int32_t node;
  int32_t pid;
  char host[64];
};
// How a launcher that leaves on purpose ends its stream: 'q', or 'a' and its abort record.
constexpr char kLeft = 'q';
constexpr char kAborted = 'a';
struct AbortHeader {
  uint32_t reason;
  int32_t rank;
  uint32_t message_bytes;
};

// Bounds of the setup: every launcher runs it at the same point, right after MPI started.
constexpr auto kConnectBound = std::chrono::seconds(10);
constexpr auto kAcceptBound = std::chrono::seconds(15);

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

void localAddresses(Rendezvous& r) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* a = list; a != nullptr && r.addresses < kMaxAddresses; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    r.address[r.addresses++] = reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
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

// Another node: node 0 by its name first, then by each of its addresses.
int connectToNode0(const Rendezvous& r, std::string& why) {
  std::vector<sockaddr_in> candidates;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(r.host, nullptr, &hints, &found) == 0) {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next)
      candidates.push_back(*reinterpret_cast<sockaddr_in*>(a->ai_addr));
    freeaddrinfo(found);
  }
  for (uint32_t i = 0; i < r.addresses && i < kMaxAddresses; ++i) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = r.address[i];
    candidates.push_back(address);
  }
  const auto deadline = Clock::now() + kConnectBound;
  for (sockaddr_in& address : candidates) {
    address.sin_port = htons(r.port);
    const auto attempt = std::min(deadline, Clock::now() + std::chrono::seconds(3));
    const int fd = connectTo(address, attempt);
    if (fd >= 0) return fd;
    if (Clock::now() >= deadline) break;
  }
  why = str("could not connect to node 0's launcher at ", r.host, " port ", r.port, " (",
            candidates.size(), " address(es) tried)");
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
                                                    MPI_Comm comm) {
  Rendezvous r{};
  int listen_fd = -1;
  std::string why;
  const bool wanted = layout.node != 0 || watchRequested();
  if (layout.node == 0) {
    r.pid = static_cast<int32_t>(getpid());
    const std::string host = hostName();
    std::strncpy(r.host, host.c_str(), sizeof r.host - 1);
    if (!wanted) {
      why = "SYNK_LAUNCHER_WATCH=0";
    } else if ((listen_fd = listenSocket(r.port, why)) >= 0) {
      r.on = 1;
      localAddresses(r);
    }
  }
  checkMpi(MPI_Bcast(&r, sizeof r, MPI_BYTE, 0, comm), "MPI_Bcast (the launcher watch)");
  std::vector<Peer> peers;
  if (r.on && layout.node == 0) {
    const auto deadline = Clock::now() + kAcceptBound;
    while (static_cast<int>(peers.size()) < layout.nodes - 1 &&
           awaitFd(listen_fd, POLLIN, deadline)) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Hello hello{};
      const bool known = recvAll(fd, &hello, sizeof hello, deadline) && hello.node > 0 &&
                         hello.node < layout.nodes &&
                         std::none_of(peers.begin(), peers.end(),
                                      [&](const Peer& p) { return p.node == hello.node; });
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
    const int fd = connectToNode0(r, why);
    if (fd >= 0) {
      Hello hello{};
      hello.node = layout.node;
      hello.pid = static_cast<int32_t>(getpid());
      std::strncpy(hello.host, hostName().c_str(), sizeof hello.host - 1);
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      if (sendAll(fd, &hello, sizeof hello)) {
        r.host[sizeof r.host - 1] = '\0';
        peers.push_back({0, fd, r.pid, r.host});
      } else {
        why = errnoText("sending to node 0's launcher");
        close(fd);
      }
    }
  }
  if (listen_fd >= 0) close(listen_fd);
  int ok = r.on && why.empty() ? 1 : 0;
  int all = 0;
  checkMpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm),
           "MPI_Allreduce (the launcher watch)");
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
  return std::unique_ptr<LauncherWatch>(new LauncherWatch(cb, layout, std::move(peers)));
}

LauncherWatch::LauncherWatch(ControlBlock& cb, const NodeLayout& layout, std::vector<Peer> peers)
    : cb_(cb), layout_(layout), peers_(std::move(peers)) {
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
  std::vector<std::string> received(peers_.size());
  while (true) {
    std::vector<pollfd> fds{{stop_pipe_[0], POLLIN, 0}};
    std::vector<size_t> which;
    for (size_t i = 0; i < peers_.size(); ++i) {
      if (peers_[i].fd < 0) continue;
      fds.push_back({peers_[i].fd, POLLIN, 0});
      which.push_back(i);
    }
    if (which.empty()) return;  // every peer left
    if (poll(fds.data(), fds.size(), -1) < 0) {
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
        if (bytes.size() < sizeof(AbortHeader) + kMessageBytes + 1) bytes.append(buffer, n);
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
        abortSession(cb_, static_cast<AbortReason>(header.reason), header.rank,
                     bytes.substr(1 + sizeof header, length));
        continue;
      }
      peerEnded(peer);
    }
  }
}

void LauncherWatch::peerEnded(const Peer& peer) {
  if (peer.node == 0) {
    abortSession(cb_, AbortReason::PeerDied, cb_.master_rank,
                 str("the master's process (node 0's launcher, pid ", peer.pid, " on ", peer.host,
                     ") ended without leaving the session (killed, or it crashed)"));
    return;
  }
  const int first = peer.node * layout_.ranks_per_node;
  const int last = first + layout_.ranks_per_node - 1;
  abortSession(
      cb_, AbortReason::PeerDied, first,
      str("node ", peer.node, "'s launcher process (pid ", peer.pid, " on ", peer.host,
          ") ended without leaving the session (killed, or it crashed): its rank",
          first == last ? str(" ", first) : str("s ", first, "-", last), " ended with it"));
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
    if (peer.fd >= 0) (void)sendAll(peer.fd, note.data(), note.size());
  }
  closeAll(peers_);
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
}

}  // namespace synk::cluster
