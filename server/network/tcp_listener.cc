#include "server/network/tcp_listener.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace worldgen {
namespace {

// The local port of the IPv4 or IPv6 socket `fd`, or -1.
int LocalPort(int fd) {
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) return -1;
  if (local.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port);
  }
  if (local.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&local)->sin6_port);
  }
  return -1;
}

// The sockets (by inode: every descriptor of a socket shares it) that TcpListeners hold through a
// drain. gRPC shuts a connection down for reading and writing before it closes it; on Linux a byte
// the client sends after that (an acknowledgement of what it is still reading) is answered with a
// reset, which destroys what the client had not read yet. So the process's shutdown() keeps the
// read side of a held socket open, and ReleaseHeldConnections reads and drops those bytes.
std::atomic<bool> holding_any{false};
absl::Mutex held_sockets_mu;
absl::flat_hash_set<ino_t>& HeldSockets() ABSL_EXCLUSIVE_LOCKS_REQUIRED(held_sockets_mu) {
  static absl::flat_hash_set<ino_t>* sockets = new absl::flat_hash_set<ino_t>();
  return *sockets;
}
ino_t SocketInode(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}
bool IsHeldSocket(int fd) {
  if (!holding_any.load(std::memory_order_acquire)) return false;
  const ino_t inode = SocketInode(fd);
  absl::MutexLock lock(&held_sockets_mu);
  return inode != 0 && HeldSockets().contains(inode);
}
// Takes `fds`' sockets out of the held ones (before they are closed: an inode is reused).
void ForgetHeld(const std::vector<int>& fds) {
  absl::MutexLock lock(&held_sockets_mu);
  for (int fd : fds) HeldSockets().erase(SocketInode(fd));
  holding_any.store(!HeldSockets().empty(), std::memory_order_release);
}

// Whether `fd` is a TCP connection whose local port is `port`.
bool IsConnectionOnPort(int fd, int port) {
  sockaddr_storage peer{};
  socklen_t peer_length = sizeof(peer);
  return LocalPort(fd) == port &&
         getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0;
}

// `address` as gRPC names a peer: "ipv4:A.B.C.D:PORT" or "ipv6:[ADDR]:PORT"; "unknown" otherwise.
std::string PeerName(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
    return absl::StrCat("ipv4:", text, ":", ntohs(in.sin_port));
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
    return absl::StrCat("ipv6:[", text, "]:", ntohs(in6.sin6_port));
  }
  return "unknown";
}

}  // namespace

std::string TcpListener::PeerOf(absl::string_view grpc_peer, absl::Time call_started) const {
  int fd = -1;
  if (!absl::ConsumePrefix(&grpc_peer, "fd:") || !absl::SimpleAtoi(grpc_peer, &fd)) {
    return std::string(grpc_peer);
  }
  absl::MutexLock lock(&peers_mu_);
  const auto found = peers_.find(fd);
  if (found == peers_.end()) return absl::StrCat("fd:", fd);
  if (found->second.handed > call_started) return absl::StrCat("fd:", fd, " (closed)");
  return found->second.address;
}

absl::StatusOr<std::unique_ptr<TcpListener>> TcpListener::Bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (int error =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      error != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve ", host, ": ", gai_strerror(error)));
  }
  std::string why = "no address";
  for (addrinfo* at = found; at != nullptr; at = at->ai_next) {
    const int fd = socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, at->ai_addr, at->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      why = strerror(errno);
      close(fd);
      continue;
    }
    const int bound_port = LocalPort(fd);
    freeaddrinfo(found);
    return std::unique_ptr<TcpListener>(new TcpListener(fd, bound_port));
  }
  freeaddrinfo(found);
  return absl::UnavailableError(why);
}

TcpListener::TcpListener(int fd, int port)
    : listen_fd_(fd), port_(port), spare_fd_(open("/dev/null", O_RDONLY | O_CLOEXEC)) {
  if (pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds_[0] = wake_fds_[1] = -1;
}

TcpListener::~TcpListener() {
  Stop();
  CloseRelayedConnections(absl::ZeroDuration());
  ForgetHeld(held_);
  for (int fd : held_) close(fd);
  for (int fd : {spare_fd_, wake_fds_[0], wake_fds_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void TcpListener::GuardHttp2(ConnectionRelay::Options options) {
  relay_ = std::make_unique<ConnectionRelay>(std::move(options));
}

void TcpListener::CloseRelayedConnections(absl::Duration drain) {
  if (relay_) relay_->Drain(drain);
}

void TcpListener::HoldDirectConnections() {
  // Relayed connections' client sockets belong to the relay, which drains them itself.
  if (relay_) return;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  std::vector<int> found;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    if (IsConnectionOnPort(static_cast<int>(fd), port_)) found.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  for (int fd : found) {
    // The number may have been closed and reused since the scan: check the duplicate itself.
    const int held = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (held < 0) continue;  // Out of descriptors: that connection closes as gRPC decides.
    if (IsConnectionOnPort(held, port_)) {
      held_.push_back(held);
      absl::MutexLock lock(&held_sockets_mu);
      HeldSockets().insert(SocketInode(held));
      holding_any.store(true, std::memory_order_release);
    } else {
      close(held);
    }
  }
}

int TcpListener::ReleaseHeldConnections(absl::Duration linger) {
  for (int fd : held_) shutdown(fd, SHUT_WR);
  ForgetHeld(held_);
  const absl::Time give_up = absl::Now() + linger;
  std::vector<pollfd> polls;
  char discard[4096];
  while (!held_.empty()) {
    const int64_t wait_ms = absl::ToInt64Milliseconds(give_up - absl::Now());
    if (wait_ms <= 0) break;
    polls.clear();
    for (int fd : held_) polls.push_back({fd, POLLIN, 0});
    if (poll(polls.data(), polls.size(), static_cast<int>(std::min<int64_t>(wait_ms, 100))) < 0 &&
        errno != EINTR) {
      break;
    }
    std::vector<int> open;
    for (const pollfd& p : polls) {
      bool closed = false;
      if (p.revents != 0) {
        // Drop what the client still sends; its end of file (or an error) means it is done.
        while (true) {
          const ssize_t n = recv(p.fd, discard, sizeof(discard), MSG_DONTWAIT);
          if (n > 0) continue;
          closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
          break;
        }
      }
      if (closed) {
        close(p.fd);
      } else {
        open.push_back(p.fd);
      }
    }
    held_ = std::move(open);
  }
  const int cut = static_cast<int>(held_.size());
  for (int fd : held_) close(fd);
  held_.clear();
  return cut;
}

void TcpListener::Start(std::function<void(int fd)> on_connection) {
  on_connection_ = std::move(on_connection);
  thread_ = std::thread([this] { AcceptLoop(); });
}

void TcpListener::Stop() {
  if (listen_fd_ < 0) return;
  if (thread_.joinable()) {
    const char byte = 0;
    (void)!write(wake_fds_[1], &byte, 1);
    thread_.join();
  }
  close(listen_fd_);
  listen_fd_ = -1;
}

void TcpListener::AcceptLoop() {
  pollfd polled[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
  while (true) {
    if (poll(polled, 2, -1) < 0 && errno != EINTR) return;
    if (polled[1].revents != 0) return;
    if ((polled[0].revents & POLLIN) == 0) continue;
    while (true) {
      sockaddr_storage peer{};
      socklen_t peer_length = sizeof(peer);
      const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_length,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        // Remembered before gRPC sees the descriptor, so no call on it can ask before.
        auto hand_over = [&](int handed) {
          {
            absl::MutexLock lock(&peers_mu_);
            peers_[handed] = Peer{.address = PeerName(peer), .handed = absl::Now()};
          }
          on_connection_(handed);
        };
        if (relay_ == nullptr) {
          hand_over(fd);
          continue;
        }
        // Out of descriptors for the pair: the relay closed the client's socket (refused at once).
        absl::StatusOr<int> served = relay_->Add(fd);
        if (served.ok()) {
          hand_over(*served);
        } else {
          ++refused_;
        }
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: refuse the waiting connection with the spare, then take it back.
        ++refused_;
        if (spare_fd_ >= 0) {
          close(spare_fd_);
          const int refused = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
          const int accept_error = errno;
          if (refused >= 0) close(refused);
          spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
          if (refused < 0 && (accept_error == EAGAIN || accept_error == EWOULDBLOCK)) {
            --refused_;  // Nobody was waiting after all.
            break;
          }
        }
        // Without a spare (or if it is gone again) do not spin: let descriptors free up.
        if (spare_fd_ < 0) {
          poll(&polled[1], 1, 100);
          if (polled[1].revents != 0) return;
          spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
        continue;
      }
      break;  // EAGAIN: nothing more waiting (other errors: poll again).
    }
  }
}

}  // namespace worldgen

// Every shutdown() in the process (gRPC's included: the executable's definition comes first) goes
// through here: a held socket is only half-closed, for writing (see HeldSockets above).
extern "C" int shutdown(int fd, int how) {
  if (how == SHUT_RDWR && worldgen::IsHeldSocket(fd)) how = SHUT_WR;
  return static_cast<int>(syscall(SYS_shutdown, fd, how));
}
