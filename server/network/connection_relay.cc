#include "server/network/connection_relay.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace worldgen {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

// Bytes waiting to be written to one side; holds memory only while bytes wait.
class Pending {
 public:
  bool empty() const { return offset_ == bytes_.size(); }
  size_t size() const { return bytes_.size() - offset_; }
  const char* data() const { return bytes_.data() + offset_; }
  void Assign(const char* data, size_t size) {
    bytes_.assign(data, size);
    offset_ = 0;
  }
  void Consume(size_t n) {
    offset_ += n;
    if (offset_ == bytes_.size()) Clear();
  }
  // Keeps only the first `n` bytes waiting.
  void Truncate(size_t n) { bytes_.resize(offset_ + std::min(n, size())); }
  void Append(absl::string_view more) { bytes_.append(more.data(), more.size()); }
  void Clear() {
    std::string().swap(bytes_);
    offset_ = 0;
  }

 private:
  std::string bytes_;
  size_t offset_ = 0;
};

// One end of a relayed connection, as seen by the relay (edge-triggered readiness noted here).
struct Side {
  int fd = -1;
  bool readable = true;  // Until a read says EAGAIN; epoll's next edge sets it again.
  bool writable = true;
  bool eof = false;         // The peer finished sending.
  bool write_shut = false;  // End of stream passed on to the peer.
  Pending out;              // Bytes waiting to be written to this side.
};

// What moving bytes found.
enum class Flow { kIdle, kMore, kClientGone, kServerGone, kCut };

constexpr uint64_t kWakeTag = 0;
constexpr uint64_t kServerSideBit = 1;  // Low bit of an epoll tag: the event is for the server end.

}  // namespace

class ConnectionRelay::Worker {
 public:
  Worker(const Options& options, Count* connections)
      : options_(options),
        connections_(connections),
        epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        scratch_(new char[options.buffer_bytes]) {
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.u64 = kWakeTag;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake);
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "relay");  // For top -H, perf and bench/server_cpu.sh.
      Run();
    });
  }

  ~Worker() {
    Stop();
    close(epoll_fd_);
    close(wake_fd_);
  }

  // Queues a connection for this worker; false (nothing taken) once stopping.
  bool Hand(int client_fd, int server_fd) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
      inbox_.emplace_back(client_fd, server_fd);
    }
    Wake();
    return true;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    Wake();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Connection {
    uint64_t id = 0;
    Side client;
    Side server;  // The relay's end of the socket pair.
    Http2FrameGuard guard;
    Http2FrameReader server_frames{/*expect_preface=*/false};
    uint64_t server_bytes_read = 0;
    uint64_t client_bytes_sent = 0;  // Of those.
    bool lingering = false;          // The server end is closed; finishing with the client.
    bool dead = false;
    bool ready = false;  // In ready_: has more to move than one turn allows.

    explicit Connection(Http2FrameLimits limit) : guard(limit) {}
  };

  void Wake() {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }

  void Run() {
    epoll_event events[256];
    while (true) {
      int timeout_ms = -1;
      if (!ready_.empty()) {
        timeout_ms = 0;
      } else if (!lingering_.empty()) {
        const int64_t wait_ns = lingering_.front().first - NowNs();
        timeout_ms =
            static_cast<int>(std::clamp<int64_t>((wait_ns + 999'999) / 1'000'000, 0, 60'000));
      }
      const int n = epoll_wait(epoll_fd_, events, 256, timeout_ms);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag == kWakeTag) {
          if (!TakeInbox()) return CloseAll();
          continue;
        }
        Connection* c = reinterpret_cast<Connection*>(tag & ~kServerSideBit);
        if (c->dead) continue;
        Side& side = (tag & kServerSideBit) != 0 ? c->server : c->client;
        const uint32_t what = events[i].events;
        if (what & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) side.readable = true;
        if (what & (EPOLLOUT | EPOLLHUP | EPOLLERR)) side.writable = true;
        Pump(c);
      }
      std::vector<Connection*> ready;
      ready.swap(ready_);
      for (Connection* c : ready) {
        c->ready = false;
        Pump(c);
      }
      const int64_t now = NowNs();
      while (!lingering_.empty() && lingering_.front().first <= now) {
        auto it = live_.find(lingering_.front().second);
        if (it != live_.end() && !it->second->dead) Kill(it->second.get());
        lingering_.pop_front();
      }
      for (Connection* c : dead_) live_.erase(c->id);
      dead_.clear();
    }
    CloseAll();
  }

  // Registers the connections handed over; false once stopping.
  bool TakeInbox() {
    uint64_t count = 0;
    (void)!read(wake_fd_, &count, sizeof(count));
    std::vector<std::pair<int, int>> inbox;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
      inbox.swap(inbox_);
    }
    for (const auto& [client_fd, server_fd] : inbox) {
      auto owned = std::make_unique<Connection>(options_.frame_limits);
      Connection* c = owned.get();
      c->id = ++last_id_;
      c->client.fd = client_fd;
      c->server.fd = server_fd;
      epoll_event event{};
      event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
      event.data.u64 = reinterpret_cast<uint64_t>(c);
      bool added = epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, client_fd, &event) == 0;
      event.data.u64 |= kServerSideBit;
      added = added && epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, server_fd, &event) == 0;
      live_.emplace(c->id, std::move(owned));
      if (!added) Kill(c);
    }
    return true;
  }

  // Moves what can be moved on `c` now (at most a few buffers per direction; more is left for the
  // next turn so one busy connection does not hold up the others).
  void Pump(Connection* c) {
    if (c->dead) return;
    bool more = false;
    if (!c->lingering) {
      const Flow up = Move(*c, /*up=*/true);
      if (up == Flow::kClientGone) return Kill(c);
      if (up == Flow::kCut) {
        Cut(c);
      } else {
        // Even with the server end gone, what it sent before is still read and passed on.
        const Flow down = Move(*c, /*up=*/false);
        if (down == Flow::kClientGone) return Kill(c);
        more = up == Flow::kMore || down == Flow::kMore;
        if (down == Flow::kServerGone) CloseServerEnd(c);
        if (up == Flow::kServerGone || down == Flow::kServerGone || c->server.eof) {
          StartLingering(c);  // The server will send nothing more.
        }
      }
    }
    if (c->lingering) {
      switch (Linger(*c)) {
        case Flow::kClientGone:
          return Kill(c);
        case Flow::kMore:
          more = true;
          break;
        default:
          break;
      }
    }
    if (more && !c->ready) {
      c->ready = true;
      ready_.push_back(c);
    }
  }

  size_t TurnBudget() const { return 4 * options_.buffer_bytes; }

  // Client to server (`up`, through the guard) or server to client. A side is read only while
  // nothing waits to be written to the other.
  Flow Move(Connection& c, bool up) {
    Side& from = up ? c.client : c.server;
    Side& to = up ? c.server : c.client;
    const Flow to_gone = up ? Flow::kServerGone : Flow::kClientGone;
    const Flow from_gone = up ? Flow::kClientGone : Flow::kServerGone;
    size_t moved = 0;
    while (true) {
      if (!to.out.empty()) {
        if (!to.writable) break;
        const ssize_t n = send(to.fd, to.out.data(), to.out.size(), MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (WouldBlock(errno)) {
            to.writable = false;
            break;
          }
          return to_gone;
        }
        if (!up) c.client_bytes_sent += static_cast<uint64_t>(n);
        to.out.Consume(static_cast<size_t>(n));
        continue;
      }
      if (from.eof || !from.readable) break;
      if (moved >= TurnBudget()) return Flow::kMore;
      const ssize_t n = recv(from.fd, scratch_.get(), options_.buffer_bytes, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (WouldBlock(errno)) {
          from.readable = false;
          break;
        }
        return from_gone;
      }
      if (n == 0) {
        from.eof = true;
        break;
      }
      const size_t size = static_cast<size_t>(n);
      moved += size;
      const absl::string_view piece(scratch_.get(), size);
      if (up) {
        verdict_ = c.guard.Inspect(piece, NowNs());
        if (verdict_ != Http2FrameGuard::Verdict::kPass) return Flow::kCut;
      } else {
        c.server_frames.Read(piece, [](const Http2FrameHeader&) { return true; });
        c.server_bytes_read += size;
      }
      size_t sent = 0;
      if (to.writable) {
        const ssize_t w = send(to.fd, piece.data(), size, MSG_NOSIGNAL);
        if (w >= 0) {
          sent = static_cast<size_t>(w);
        } else if (WouldBlock(errno)) {
          to.writable = false;
        } else if (errno != EINTR) {
          return to_gone;
        }
      }
      if (!up) c.client_bytes_sent += sent;
      if (sent < size) to.out.Assign(piece.data() + sent, size - sent);
    }
    if (from.eof && to.out.empty() && !to.write_shut) {
      shutdown(to.fd, SHUT_WR);
      to.write_shut = true;
    }
    return Flow::kIdle;
  }

  // The guard tripped on the client's bytes (verdict_): drop the server end, tell a flooding client
  // why (GOAWAY at a frame boundary of what it was sent; if a frame is half sent, no GOAWAY),
  // close.
  void Cut(Connection* c) {
    const bool flood = verdict_ != Http2FrameGuard::Verdict::kNotHttp2;
    if (options_.on_cut) {
      options_.on_cut(verdict_ == Http2FrameGuard::Verdict::kResetFlood ? CutReason::kResetFlood
                      : verdict_ == Http2FrameGuard::Verdict::kControlFlood
                          ? CutReason::kControlFlood
                          : CutReason::kNotHttp2);
    }
    CloseServerEnd(c);
    const uint64_t boundary = c->server_bytes_read - c->server_frames.bytes_into_frame();
    if (!flood) {
      c->client.out.Clear();
    } else if (c->client_bytes_sent <= boundary) {
      c->client.out.Truncate(static_cast<size_t>(boundary - c->client_bytes_sent));
      c->client.out.Append(
          Http2GoawayFrame(c->guard.last_stream_id(), Http2ErrorCode::kEnhanceYourCalm));
    }
    StartLingering(c);
  }

  // Closes the relay's end of the pair: the server sees its connection end.
  void CloseServerEnd(Connection* c) {
    if (c->server.fd < 0) return;
    close(c->server.fd);
    c->server.fd = -1;
    c->server.out.Clear();
  }

  // The server is gone or was cut off: what waits for it is dropped, and the connection has
  // options_.linger to finish. A server end that was not read to its end stays open for reading
  // (the server closed it with bytes on their way; closing it would drop them).
  void StartLingering(Connection* c) {
    if (c->lingering) return;
    c->lingering = true;
    c->server.out.Clear();
    if (c->server.eof) CloseServerEnd(c);
    lingering_.emplace_back(NowNs() + absl::ToInt64Nanoseconds(options_.linger), c->id);
  }

  // The server will send nothing new: pass on what it sent before (reading its end to the end),
  // then end of stream, and read (and drop) what the client still sends until it closes too
  // (closing with unread input would reset the connection, and the client might lose the last
  // bytes). Bounded by options_.linger.
  Flow Linger(Connection& c) {
    bool more = false;
    if (c.server.fd >= 0) {
      const Flow down = Move(c, /*up=*/false);
      if (down == Flow::kClientGone) return Flow::kClientGone;
      if (down == Flow::kServerGone || c.server.eof) CloseServerEnd(&c);
      more = down == Flow::kMore;
    }
    Side& client = c.client;
    if (c.server.fd < 0) {
      while (!client.out.empty() && client.writable) {
        const ssize_t n = send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (!WouldBlock(errno)) return Flow::kClientGone;
          client.writable = false;
          break;
        }
        client.out.Consume(static_cast<size_t>(n));
      }
      if (client.out.empty() && !client.write_shut) {
        shutdown(client.fd, SHUT_WR);
        client.write_shut = true;
      }
    }
    size_t dropped = 0;
    while (!client.eof && client.readable) {
      if (dropped >= TurnBudget()) return Flow::kMore;
      const ssize_t n = recv(client.fd, scratch_.get(), options_.buffer_bytes, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (!WouldBlock(errno)) return Flow::kClientGone;
        client.readable = false;
        break;
      }
      if (n == 0) client.eof = true;
      dropped += static_cast<size_t>(n);
    }
    if (more) return Flow::kMore;
    return client.eof && client.write_shut ? Flow::kClientGone : Flow::kIdle;
  }

  void Kill(Connection* c) {
    if (c->dead) return;
    c->dead = true;
    for (Side* side : {&c->client, &c->server}) {
      if (side->fd >= 0) close(side->fd);
      side->fd = -1;
      side->out.Clear();
    }
    connections_->Add(-1);
    if (c->ready) std::erase(ready_, c);  // Killed after it was queued for another turn.
    dead_.push_back(c);
  }

  void CloseAll() {
    for (auto& [id, c] : live_) Kill(c.get());
    live_.clear();
    dead_.clear();
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [client_fd, server_fd] : inbox_) {
      close(client_fd);
      close(server_fd);
      connections_->Add(-1);
    }
    inbox_.clear();
  }

  const Options& options_;
  Count* const connections_;
  const int epoll_fd_;
  const int wake_fd_;
  std::unique_ptr<char[]> scratch_;                                     // One read's bytes.
  Http2FrameGuard::Verdict verdict_ = Http2FrameGuard::Verdict::kPass;  // Of the last Move.

  std::mutex mu_;
  bool stopping_ = false;                   // Guarded by mu_.
  std::vector<std::pair<int, int>> inbox_;  // Guarded by mu_: (client, server end) to register.

  // Relay thread only:
  uint64_t last_id_ = 0;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Connection>> live_;
  std::vector<Connection*> ready_;
  std::vector<Connection*> dead_;  // Closed this turn; freed after it (epoll events may name them).
  std::deque<std::pair<int64_t, uint64_t>> lingering_;  // (deadline ns, id), in deadline order.
  std::thread thread_;
};

ConnectionRelay::ConnectionRelay(Options options) : options_(std::move(options)) {
  options_.threads = std::max(1, options_.threads);
  options_.buffer_bytes = std::max<size_t>(options_.buffer_bytes, 4096);
  for (int i = 0; i < options_.threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(options_, &connections_));
  }
}

ConnectionRelay::~ConnectionRelay() { Shutdown(); }

absl::StatusOr<int> ConnectionRelay::Add(int client_fd) {
  int pair[2];
  if (shut_down_.load()) {
    close(client_fd);
    return absl::UnavailableError("the relay is shut down");
  }
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
    const int error = errno;
    close(client_fd);
    return absl::ResourceExhaustedError(absl::StrCat("socketpair: ", strerror(error)));
  }
  // Client bytes queue for the server in the relay's end's send buffer: keep it about one read, so
  // the server reads pieces no bigger than from a TCP socket. With the default (~200 KiB) gRPC's
  // peak RSS under Http2AbuseTest's SETTINGS flood went from ~140 MiB (TCP) to 80-295 MiB.
  const int queued = static_cast<int>(options_.buffer_bytes);
  setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &queued, sizeof(queued));
  connections_.Add(1);
  Worker& worker = *workers_[next_worker_.fetch_add(1) % workers_.size()];
  if (!worker.Hand(client_fd, pair[0])) {
    connections_.Add(-1);
    for (int fd : {client_fd, pair[0], pair[1]}) close(fd);
    return absl::UnavailableError("the relay is shut down");
  }
  return pair[1];
}

bool ConnectionRelay::Drain(absl::Duration timeout) {
  const bool drained = connections_.AwaitZero(timeout);
  Shutdown();
  return drained;
}

void ConnectionRelay::Shutdown() {
  if (shut_down_.exchange(true)) return;
  for (auto& worker : workers_) worker->Stop();
}

int64_t ConnectionRelay::connections() const { return connections_.Get(); }

void ConnectionRelay::Count::Add(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  n_ += n;
  if (n_ == 0) zero_.notify_all();
}

int64_t ConnectionRelay::Count::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_;
}

bool ConnectionRelay::Count::AwaitZero(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  const auto zero = [this] { return n_ == 0; };
  if (timeout == absl::InfiniteDuration()) {
    zero_.wait(lock, zero);
    return true;
  }
  return zero_.wait_for(lock, absl::ToChronoNanoseconds(timeout), zero);
}

}  // namespace worldgen
