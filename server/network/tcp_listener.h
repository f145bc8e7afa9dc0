// TcpListener: the server's own accept loop for the gRPC port, so that running out of file
// descriptors never stops the server from accepting (gRPC 1.51's listener gives up for good after
// accept4 fails with EMFILE). Each accepted connection is handed to a callback (main() gives it to
// gRPC with grpc::AddInsecureChannelFromFd, which applies the server's channel arguments).
//
// Under descriptor exhaustion a spare descriptor kept for the purpose is released, the waiting
// connection is accepted and closed at once (the client sees the connection refused fast instead of
// hanging in the backlog), and the spare is taken back; accepting resumes by itself as soon as
// descriptors are free again.
//
// With GuardHttp2(), each connection is relayed through a ConnectionRelay (an HTTP/2 frame guard
// against stream-reset floods, server/connection_relay.h) and the callback gets the relay's end of
// a socket pair instead of the client's socket: three descriptors per connection instead of one. A
// connection for which no pair can be made is closed at once and counted as refused.
//
// gRPC names a connection it was handed by descriptor "fd:N", not by address; PeerOf() gives the
// address of the client the listener accepted for it (the call log's `peer`).
//
// Thread safety: GuardHttp2(), Start(), Stop(), CloseRelayedConnections() and the Hold/Release
// pair from one thread; the callback runs on the listener's thread; PeerOf() from any thread.
#ifndef WORLDGEN_SERVER_NETWORK_TCP_LISTENER_H_
#define WORLDGEN_SERVER_NETWORK_TCP_LISTENER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/network/connection_relay.h"

namespace worldgen {

class TcpListener {
 public:
  // Binds host:port (port 0 = any free port; no SO_REUSEPORT, so a taken port is an error) and
  // listens; accepting starts with Start().
  static absl::StatusOr<std::unique_ptr<TcpListener>> Bind(const std::string& host, int port);
  ~TcpListener();  // Stop() and CloseRelayedConnections() without waiting.
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  int port() const { return port_; }
  // Connections refused because no descriptor was free.
  int64_t refused() const { return refused_.load(); }
  // Connections relayed now (0 without GuardHttp2()).
  int64_t relayed_connections() const { return relay_ ? relay_->connections() : 0; }

  // Before Start(): relay every connection through an HTTP/2 frame guard with these options.
  void GuardHttp2(ConnectionRelay::Options options);

  // Accepts on a thread of its own; each connection's descriptor (non-blocking, close-on-exec) is
  // handed to `on_connection`, which owns it from then on.
  void Start(std::function<void(int fd)> on_connection);
  // Stops accepting and closes the listening socket; connections already handed over are untouched
  // (relayed ones keep being relayed).
  void Stop();
  // Waits at most `drain` for the relayed connections to close by themselves (call it after the
  // server stopped serving them and closed its ends: its last words, such as a stream's final
  // messages and status or GOAWAY, still reach the clients), then stops the relay threads and
  // closes what is left.
  void CloseRelayedConnections(absl::Duration drain);

  // Lingering close for connections handed over as they are (not relayed). gRPC closes its
  // connections as soon as their calls are done, while a client may still be reading a stream's
  // last messages and acknowledging them; a socket closed with unread bytes, or receiving bytes
  // after its close, resets the connection, and the client loses what it had not read yet
  // (measured: about 1 shutdown in 50 lost the last chunks of a stream it was still sending).
  //
  // HoldDirectConnections (after Stop(), before the server shuts down): keeps each such
  // connection's socket open past its owner's close, with a descriptor of its own (found in
  // /proc/self/fd: the sockets whose local port is port() and which have a peer). Its owner's
  // shutdown(SHUT_RDWR) (gRPC's, before its close) then only shuts it for writing: this file
  // defines the process's shutdown() to do so, since on Linux a byte received after a shutdown for
  // reading is answered with a reset. Nothing with GuardHttp2(): the relay holds those sockets and
  // drains them (CloseRelayedConnections).
  void HoldDirectConnections();
  // ReleaseHeldConnections (once the server has finished its calls): ends each held connection
  // gracefully: FIN after everything written so far, whatever the client still sends is read and
  // dropped, and the socket is closed when the client has closed its end or `linger` has passed.
  // Returns how many were cut at the deadline.
  int ReleaseHeldConnections(absl::Duration linger);
  int held_connections() const { return static_cast<int>(held_.size()); }

  // The client address ("ipv4:10.0.3.7:41822", "ipv6:[::1]:41822", gRPC's spelling) of the
  // connection gRPC calls `grpc_peer` ("fd:N", N a descriptor this listener handed over) for a call
  // that started at `call_started`; any other name is returned as it is. A descriptor is
  // remembered until the next connection handed over under the same number. When that happened
  // after `call_started`, the call's own connection has closed and the number names a newer one:
  // the answer is then "fd:N (closed)", never the newer connection's address.
  std::string PeerOf(absl::string_view grpc_peer,
                     absl::Time call_started = absl::InfiniteFuture()) const;

 private:
  TcpListener(int fd, int port);
  void AcceptLoop();

  int listen_fd_;
  int port_;
  int spare_fd_;
  int wake_fds_[2] = {-1, -1};  // A pipe: Stop() writes to wake the loop.
  std::function<void(int)> on_connection_;
  std::unique_ptr<ConnectionRelay> relay_;  // With GuardHttp2().
  std::vector<int> held_;                   // HoldDirectConnections' descriptors.
  std::atomic<int64_t> refused_{0};
  mutable absl::Mutex peers_mu_;
  struct Peer {
    std::string address;
    absl::Time handed;  // When its descriptor was handed over.
  };
  absl::flat_hash_map<int, Peer> peers_ ABSL_GUARDED_BY(peers_mu_);  // By handed-over descriptor.
  std::thread thread_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_NETWORK_TCP_LISTENER_H_
