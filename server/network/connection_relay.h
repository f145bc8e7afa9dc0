// ConnectionRelay: puts an HTTP/2 frame guard between accepted client connections and the server
// that serves them. Each client connection is paired with one end of a local socket pair whose
// other end the server serves instead of the client's socket; a few relay threads (epoll,
// edge-triggered) move the bytes both ways, reading the client's frame headers on the way in
// (Http2FrameGuard):
//
//   - A client over its reset or control-frame budget (Http2FrameLimits) is cut: its server end is
//   closed at once (so
//     the server drops its calls), a GOAWAY ENHANCE_YOUR_CALM is written to it at a frame boundary
//     of what the server sent, and its socket is closed. Bytes that are not HTTP/2 (no client
//     preface) are cut the same way, without GOAWAY.
//   - Memory is bounded per connection: at most `buffer_bytes` wait in each direction, and a side
//   is
//     not read while the bytes from it wait for the other side (a slow reader stalls its writer, in
//     the kernel's socket buffers, not in ours). Idle connections hold no buffer.
//   - Either side ending ends the other: end of stream is passed on (shutdown of writing) after the
//     bytes before it; a connection whose server end is gone is flushed to the client (all the
//     server wrote before closing, even if it left the client's last bytes unread) and closed
//     within `linger` even if the client never closes; an error on either side closes both.
//   - Stopping: Drain() lets the connections finish by themselves (a server that stopped serving
//     closes its ends, and its last bytes still reach the clients) before Shutdown() closes the
//     rest. Shutdown() alone drops whatever is still on its way.
//
// Each connection costs three descriptors: the client's socket and both ends of the pair.
//
// Thread safety: Add() and Shutdown() may be called from any thread; callbacks run on relay
// threads.
#ifndef WORLDGEN_SERVER_NETWORK_CONNECTION_RELAY_H_
#define WORLDGEN_SERVER_NETWORK_CONNECTION_RELAY_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/network/http2_frame_guard.h"

namespace worldgen {

class ConnectionRelay {
 public:
  enum class CutReason { kResetFlood, kControlFlood, kNotHttp2 };

  struct Options {
    int threads = 1;
    // Most bytes waiting per connection in each direction (also the size of one read).
    size_t buffer_bytes = 64 << 10;
    Http2FrameLimits frame_limits;
    // How long a connection whose server end is gone (or that was cut) may take to receive what is
    // left for it and close.
    absl::Duration linger = absl::Seconds(1);
    // Called on a relay thread for each connection the guard cut. May be empty.
    std::function<void(CutReason)> on_cut;
  };

  explicit ConnectionRelay(Options options);
  ~ConnectionRelay();  // Shutdown().
  ConnectionRelay(const ConnectionRelay&) = delete;
  ConnectionRelay& operator=(const ConnectionRelay&) = delete;

  // Relays `client_fd` (a connected, non-blocking stream socket, owned by the relay from now on)
  // and returns the descriptor to serve in its place (non-blocking, close-on-exec; the caller owns
  // it). On failure (no descriptor free for the pair, or after Shutdown()) `client_fd` is closed.
  absl::StatusOr<int> Add(int client_fd);

  // Waits at most `timeout` for every connection to close by itself, then Shutdown(). Returns
  // whether none was left to close. Call it once the server closed (or is closing) its ends.
  bool Drain(absl::Duration timeout);

  // Stops the relay threads and closes every connection they still relay (client socket and the
  // relay's end of the pair). Idempotent.
  void Shutdown();

  // Connections relayed now (added and not yet closed).
  int64_t connections() const;

 private:
  class Worker;

  // The number of connections relayed now, which Drain() waits on.
  class Count {
   public:
    void Add(int64_t n);
    int64_t Get() const;
    bool AwaitZero(absl::Duration timeout) const;

   private:
    // std::mutex so that ThreadSanitizer sees it (apt's Abseil is not instrumented).
    mutable std::mutex mu_;
    mutable std::condition_variable zero_;
    int64_t n_ = 0;  // Guarded by mu_.
  };

  Options options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<size_t> next_worker_{0};
  Count connections_;
  std::atomic<bool> shut_down_{false};
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_NETWORK_CONNECTION_RELAY_H_
