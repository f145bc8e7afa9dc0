// ConnectionRelay over real sockets: the "client" is one end of a socket pair handed to the relay,
// the "server" is the descriptor the relay returns. Bytes pass intact both ways, a reader that does
// not read stalls its writer within a bounded number of bytes, reset floods and non-HTTP/2 bytes
// are cut, either side closing closes the other, Drain() lets the server's last bytes through, and
// Shutdown() closes everything.
#include "server/network/connection_relay.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/network/http2_frame_guard.h"
#include "server/network/tcp_listener.h"
#include "tests/support/http2_frames.h"

namespace worldgen {
namespace {

using testing::Frame;
using testing::Preface;
using testing::RstStream;

void SetBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

// Writes all of `bytes` to `fd` (blocking or not).
void WriteAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd polled{fd, POLLOUT, 0};
      poll(&polled, 1, 1000);
      continue;
    }
    ASSERT_GT(n, 0) << strerror(errno);
    sent += static_cast<size_t>(n);
  }
}

// Reads until `want` bytes arrived, end of stream, an error, or 10 s without a byte.
std::string ReadUpTo(int fd, size_t want) {
  std::string got;
  char buffer[65536];
  while (got.size() < want) {
    pollfd polled{fd, POLLIN, 0};
    if (poll(&polled, 1, 10000) <= 0) break;
    const ssize_t n = recv(fd, buffer, std::min(sizeof(buffer), want - got.size()), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
  }
  return got;
}

std::string ReadToEnd(int fd) { return ReadUpTo(fd, SIZE_MAX); }

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

// Writes to `fd` (non-blocking) until its send buffer is full, and returns what it wrote.
std::string FillSendBuffer(int fd, uint32_t seed) {
  const std::string chunk = RandomBytes(65536, seed);
  std::string written;
  while (true) {
    const ssize_t n = send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return written;
    written.append(chunk, 0, static_cast<size_t>(n));
  }
}

// Reads `fd` (blocking) to its end; `*error` is the errno that ended it, 0 for end of stream.
std::string ReadToEnd(int fd, int* error) {
  std::string got;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) got.append(buffer, static_cast<size_t>(n));
  *error = n < 0 ? errno : 0;
  return got;
}

// DATA frames carrying `payload` in pieces of at most 16 KiB.
std::string DataFrames(const std::string& payload) {
  std::string frames;
  for (size_t at = 0; at < payload.size(); at += 16384) {
    frames += Frame(testing::kData, 0, 1, payload.substr(at, 16384));
  }
  return frames;
}

struct Relayed {
  int client = -1;  // The client application's socket.
  int server = -1;  // What the relay gives the server to serve.
  Relayed() = default;
  Relayed(Relayed&& other) noexcept { *this = std::move(other); }
  Relayed& operator=(Relayed&& other) noexcept {
    std::swap(client, other.client);
    std::swap(server, other.server);
    return *this;
  }
  ~Relayed() {
    if (client >= 0) close(client);
    if (server >= 0) close(server);
  }
};

Relayed Relay(ConnectionRelay& relay) {
  int pair[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK);
  absl::StatusOr<int> server = relay.Add(pair[1]);
  EXPECT_TRUE(server.ok()) << server.status();
  Relayed relayed;
  relayed.client = pair[0];
  relayed.server = server.ok() ? *server : -1;
  return relayed;
}

ConnectionRelay::Options SmallOptions() {
  ConnectionRelay::Options options;
  options.buffer_bytes = 16 << 10;
  options.linger = absl::Milliseconds(500);
  return options;
}

TEST(ConnectionRelayTest, BytesPassIntactBothWays) {
  ConnectionRelay relay(SmallOptions());
  Relayed c = Relay(relay);
  SetBlocking(c.server);
  const std::string up = Preface() + DataFrames(RandomBytes(3 << 20, 1));
  const std::string down =
      RandomBytes(5 << 20, 2);  // Unparsed framing: the server's bytes are opaque.
  std::thread client_writer([&] { WriteAll(c.client, up); });
  std::thread server_writer([&] { WriteAll(c.server, down); });
  std::string server_got, client_got;
  std::thread server_reader([&] { server_got = ReadUpTo(c.server, up.size()); });
  client_got = ReadUpTo(c.client, down.size());
  client_writer.join();
  server_writer.join();
  server_reader.join();
  EXPECT_TRUE(server_got == up) << server_got.size() << " of " << up.size() << " bytes";
  EXPECT_TRUE(client_got == down) << client_got.size() << " of " << down.size() << " bytes";
  EXPECT_EQ(relay.connections(), 1);
}

// Every byte a socket may hold on the way from `writer`'s side to the reader: send and receive
// buffers of each socket on the path (counted twice: the kernel's accounting includes overhead).
int64_t KernelBuffers(const std::vector<int>& fds) {
  int64_t total = 0;
  for (int fd : fds) {
    for (int option : {SO_SNDBUF, SO_RCVBUF}) {
      int size = 0;
      socklen_t length = sizeof(size);
      getsockopt(fd, SOL_SOCKET, option, &size, &length);
      total += 2 * static_cast<int64_t>(size);
    }
  }
  return total;
}

// Writes to `fd` (non-blocking) what is accepted until nothing more is for 300 ms, at most `cap`.
std::string WriteUntilStalled(int fd, const std::string& bytes) {
  size_t sent = 0;
  absl::Time last_progress = absl::Now();
  while (sent < bytes.size() && absl::Now() - last_progress < absl::Milliseconds(300)) {
    const ssize_t n = send(fd, bytes.data() + sent, std::min<size_t>(65536, bytes.size() - sent),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      last_progress = absl::Now();
    } else {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  return bytes.substr(0, sent);
}

TEST(ConnectionRelayTest, AReaderThatDoesNotReadStallsItsWriterWithinABound) {
  const ConnectionRelay::Options options = SmallOptions();
  ConnectionRelay relay(options);
  Relayed c = Relay(relay);
  // Down: the server writes, the client does not read.
  const std::string down = RandomBytes(64 << 20, 3);
  const std::string accepted_down = WriteUntilStalled(c.server, down);
  // Up: the client writes HTTP/2 frames, the server does not read.
  const std::string up = Preface() + DataFrames(RandomBytes(64 << 20, 4));
  const std::string accepted_up = WriteUntilStalled(c.client, up);
  const int64_t bound =
      KernelBuffers({c.client, c.server}) * 2 + 2 * static_cast<int64_t>(options.buffer_bytes);
  std::fprintf(stderr,
               "figure relay backpressure: stalled after %zu bytes down, %zu up (bound %lld)\n",
               accepted_down.size(), accepted_up.size(), static_cast<long long>(bound));
  EXPECT_LT(static_cast<int64_t>(accepted_down.size()), bound);
  EXPECT_LT(static_cast<int64_t>(accepted_up.size()), bound);
  // Nothing was lost: once read, everything arrives.
  EXPECT_TRUE(ReadUpTo(c.client, accepted_down.size()) == accepted_down);
  EXPECT_TRUE(ReadUpTo(c.server, accepted_up.size()) == accepted_up);
}

TEST(ConnectionRelayTest, AResetFloodIsCutWithGoawayAtAFrameBoundary) {
  std::atomic<int> floods{0}, others{0};
  ConnectionRelay::Options options = SmallOptions();
  options.frame_limits.max_resets_per_second = 50;
  options.on_cut = [&](ConnectionRelay::CutReason reason) {
    ++(reason == ConnectionRelay::CutReason::kResetFlood ? floods : others);
  };
  ConnectionRelay relay(options);
  Relayed c = Relay(relay);
  // The server's SETTINGS and some data reach the client first.
  const std::string down = Frame(testing::kSettings, 0, 0, "") + DataFrames(RandomBytes(100000, 5));
  WriteAll(c.server, down);
  ASSERT_TRUE(ReadUpTo(c.client, down.size()) == down);
  std::string flood = Preface();
  for (uint32_t i = 0; i < 100; ++i) {
    flood += Frame(testing::kHeaders, testing::kEndHeaders, 1 + 2 * i, "h") + RstStream(1 + 2 * i);
  }
  WriteAll(c.client, flood);
  // The client gets GOAWAY ENHANCE_YOUR_CALM naming the last stream it opened before the 51st reset
  // (101, or later if the budget refilled meanwhile), then end of stream (without closing its own
  // socket), within the linger.
  const std::string got = ReadToEnd(c.client);
  ASSERT_EQ(got.size(), 17u);
  EXPECT_EQ(got.substr(0, 9), testing::FrameHeader(8, testing::kGoaway, 0, 0));
  const uint32_t last_stream =
      (uint32_t{static_cast<uint8_t>(got[11])} << 8) | static_cast<uint8_t>(got[12]);
  EXPECT_EQ(got.substr(9, 2), std::string(2, '\0'));
  EXPECT_GE(last_stream, 101u);
  EXPECT_LE(last_stream, 199u);
  EXPECT_EQ(got.substr(13), testing::Be32(testing::kEnhanceYourCalm));
  EXPECT_EQ(floods.load(), 1);
  EXPECT_EQ(others.load(), 0);
  // The server's end is closed: it sees end of stream after a part of what the client sent (the
  // piece that went over the budget is not passed on).
  const std::string server_got = ReadToEnd(c.server);
  EXPECT_LT(server_got.size(), flood.size());
  EXPECT_EQ(server_got, flood.substr(0, server_got.size()));
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (relay.connections() > 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(relay.connections(), 0);
}

TEST(ConnectionRelayTest, AGoawayNeverSplitsAFrameTheServerWasSending) {
  ConnectionRelay::Options options = SmallOptions();
  options.frame_limits.max_resets_per_second = 1;
  ConnectionRelay relay(options);
  Relayed c = Relay(relay);
  // Half a frame from the server reaches the client; then the client floods.
  const std::string frame = Frame(testing::kData, 0, 1, RandomBytes(1000, 6));
  WriteAll(c.server, frame.substr(0, 500));
  ASSERT_EQ(ReadUpTo(c.client, 500), frame.substr(0, 500));
  WriteAll(c.client, Preface() + RstStream(1) + RstStream(3));
  // The stream ends where it was: no GOAWAY in the middle of the frame.
  EXPECT_EQ(ReadToEnd(c.client), "");
}

TEST(ConnectionRelayTest, BytesThatAreNotHttp2AreCutWithoutReachingTheServer) {
  std::atomic<int> not_http2{0};
  ConnectionRelay::Options options = SmallOptions();
  options.on_cut = [&](ConnectionRelay::CutReason reason) {
    if (reason == ConnectionRelay::CutReason::kNotHttp2) ++not_http2;
  };
  ConnectionRelay relay(options);
  Relayed c = Relay(relay);
  WriteAll(c.client, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(ReadToEnd(c.client), "");
  EXPECT_EQ(ReadToEnd(c.server), "");
  EXPECT_EQ(not_http2.load(), 1);
}

TEST(ConnectionRelayTest, EitherSideClosingClosesTheOther) {
  ConnectionRelay relay(SmallOptions());
  {
    // The client closes after its bytes: the server gets them, then end of stream.
    Relayed c = Relay(relay);
    WriteAll(c.client, Preface());
    close(c.client);
    c.client = -1;
    EXPECT_EQ(ReadToEnd(c.server), Preface());
  }
  {
    // The server closes after its bytes: the client gets them, then end of stream, though it never
    // closes (nor reads until the end).
    Relayed c = Relay(relay);
    const std::string last_words = RandomBytes(100000, 7);
    WriteAll(c.server, last_words);
    close(c.server);
    c.server = -1;
    EXPECT_TRUE(ReadToEnd(c.client) == last_words);
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (relay.connections() > 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(relay.connections(), 0);
}

TEST(ConnectionRelayTest, ShutdownClosesEveryConnection) {
  ConnectionRelay::Options options = SmallOptions();
  options.threads = 2;
  ConnectionRelay relay(options);
  std::vector<Relayed> connections(10);
  for (Relayed& c : connections) c = Relay(relay);
  EXPECT_EQ(relay.connections(), 10);
  relay.Shutdown();
  EXPECT_EQ(relay.connections(), 0);
  for (Relayed& c : connections) {
    EXPECT_EQ(ReadToEnd(c.client), "");
    EXPECT_EQ(ReadToEnd(c.server), "");
  }
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_FALSE(relay.Add(pair[1]).ok());
  close(pair[0]);
}

// The server writes more than the relay moves in one turn and closes its end without reading what
// the client sent; then the client sends more (a window update, a cancel), which cannot reach the
// server any more. What the server wrote before closing still reaches the client, every byte.
TEST(ConnectionRelayTest, AServerThatClosedStillDeliversEverythingItWroteWhenTheClientWritesOn) {
  ConnectionRelay relay(SmallOptions());
  Relayed c = Relay(relay);
  WriteAll(c.client, Preface());
  EXPECT_EQ(ReadUpTo(c.server, Preface().size()), Preface());
  WriteAll(c.client, RstStream(1));                           // Left unread by the server.
  const std::string last_words = RandomBytes(300 << 10, 13);  // Fits the socket buffers unread.
  WriteAll(c.server, last_words);
  close(c.server);
  c.server = -1;
  WriteAll(c.client, Frame(testing::kPing, 0, 0, std::string(8, '\0')));
  absl::SleepFor(
      absl::Milliseconds(50));  // The relay finds the server end gone before the client reads.
  EXPECT_TRUE(ReadToEnd(c.client) == last_words);
}

// A server that stopped serving writes its last bytes, closes its end, and the relay is drained
// before its client read any of them: the client still gets every byte, then end of stream, and the
// drain ends as soon as the connection has closed. A connection whose server end stays open is
// closed when the drain's time is up.
TEST(ConnectionRelayTest, DrainPassesOnTheServersLastBytesBeforeClosing) {
  {
    ConnectionRelay relay(SmallOptions());
    Relayed finishing = Relay(relay);
    const std::string last_words = RandomBytes(2 << 20, 11);  // Far more than the socket buffers.
    std::thread server([&] {
      WriteAll(finishing.server, last_words);
      close(finishing.server);
      finishing.server = -1;
    });
    std::atomic<bool> drained{false};
    std::thread drain([&] { drained = relay.Drain(absl::Seconds(30)); });
    absl::SleepFor(
        absl::Milliseconds(100));  // The drain is under way; the client has read nothing.
    EXPECT_TRUE(ReadToEnd(finishing.client) == last_words);
    close(finishing.client);
    finishing.client = -1;
    server.join();
    drain.join();
    EXPECT_TRUE(drained);
    EXPECT_EQ(relay.connections(), 0);
  }
  ConnectionRelay relay(SmallOptions());
  Relayed idle = Relay(relay);
  const absl::Time started = absl::Now();
  EXPECT_FALSE(relay.Drain(absl::Milliseconds(200))) << "the idle connection's server end is open";
  EXPECT_GE(absl::Now() - started, absl::Milliseconds(200));
  EXPECT_EQ(relay.connections(), 0);
  EXPECT_EQ(ReadToEnd(idle.client), "");
  EXPECT_EQ(ReadToEnd(idle.server), "");
}

// Starts `listener`, connects a client to it, and waits for the listener to hand the connection
// over: `client` is the client's socket, `served` the descriptor the callback got.
void StartAndConnect(TcpListener& listener, int* client, int* served) {
  auto handed = std::make_shared<std::atomic<int>>(-1);
  listener.Start([handed](int fd) { *handed = fd; });
  *client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(listener.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(*client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (*handed < 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
  *served = handed->load();
  ASSERT_GE(*served, 0);
}

TEST(TcpListenerTest, AGuardedListenerHandsOverTheRelaysEnd) {
  absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Bind("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  (*listener)->GuardHttp2(SmallOptions());
  int client = -1, served = -1;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(**listener, &client, &served));
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  ASSERT_EQ(getsockname(served, reinterpret_cast<sockaddr*>(&local), &length), 0);
  EXPECT_EQ(local.ss_family, AF_UNIX) << "the server got the client's socket, not the relay's";
  EXPECT_EQ((*listener)->relayed_connections(), 1);
  WriteAll(client, Preface());
  EXPECT_EQ(ReadUpTo(served, Preface().size()), Preface());
  WriteAll(served, "settings");
  EXPECT_EQ(ReadUpTo(client, 8), "settings");
  (*listener)->Stop();
  (*listener)->CloseRelayedConnections(absl::ZeroDuration());
  EXPECT_EQ(ReadToEnd(client), "");
  EXPECT_EQ((*listener)->relayed_connections(), 0);
  close(client);
  close(served);
}

// gRPC's "fd:N" is named by the client's address for calls that started after the connection was
// handed over; for a call that started earlier, the number names a newer connection than the
// call's, and the answer says the call's connection closed instead of naming the newer one.
TEST(TcpListenerTest, PeerOfNamesTheClientOfTheCallsOwnConnection) {
  absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Bind("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  const absl::Time before = absl::Now();
  int client = -1, served = -1;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(**listener, &client, &served));
  sockaddr_in local{};
  socklen_t length = sizeof(local);
  ASSERT_EQ(getsockname(client, reinterpret_cast<sockaddr*>(&local), &length), 0);
  const std::string address = absl::StrCat("ipv4:127.0.0.1:", ntohs(local.sin_port));
  const std::string grpc_name = absl::StrCat("fd:", served);
  EXPECT_EQ((*listener)->PeerOf(grpc_name, absl::Now()), address);
  EXPECT_EQ((*listener)->PeerOf(grpc_name), address);
  EXPECT_EQ((*listener)->PeerOf(grpc_name, before), absl::StrCat(grpc_name, " (closed)"));
  EXPECT_EQ((*listener)->PeerOf("fd:99999", absl::Now()), "fd:99999");  // Never handed over.
  EXPECT_EQ((*listener)->PeerOf("ipv4:10.0.3.7:41822", before), "ipv4:10.0.3.7:41822");
  (*listener)->Stop();
  close(client);
  close(served);
}

// Releases `listener`'s held connections while `client` reads to the end: every byte `written`
// arrives, then an orderly end of stream (not a reset), and nothing is cut (the client closes).
void ExpectReleaseDeliversEveryByte(TcpListener& listener, int client, const std::string& written) {
  int cut = -1;
  std::thread release([&] { cut = listener.ReleaseHeldConnections(absl::Seconds(10)); });
  SetBlocking(client);
  int error = 0;
  const std::string got = ReadToEnd(client, &error);
  EXPECT_EQ(error, 0) << "the connection ended with " << strerror(error) << " after " << got.size()
                      << " of " << written.size() << " bytes";
  EXPECT_EQ(got.size(), written.size());
  EXPECT_TRUE(got == written);
  close(client);
  release.join();
  EXPECT_EQ(cut, 0) << "the client had closed: nothing to cut";
  EXPECT_EQ(listener.held_connections(), 0);
}

// The lingering close at shutdown: a connection handed over as it is, whose owner (gRPC) wrote
// more than the client has read and then closed it while the client's bytes sat unread, still
// delivers every byte and ends with an orderly end of stream, not a reset; the listener closes it
// once the client has. Without HoldDirectConnections the close resets the connection and the
// client gets a fraction of the bytes.
TEST(TcpListenerTest, HeldConnectionsDeliverTheirLastBytesAfterTheOwnerCloses) {
  absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Bind("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  int client = -1, served = -1;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(**listener, &client, &served));

  // The owner writes what the socket takes (the client reads none of it yet); the client sends
  // bytes the owner never reads (HTTP/2 acknowledgements, in gRPC's case).
  const std::string written = FillSendBuffer(served, 7);
  ASSERT_GT(written.size(), 65536u);
  WriteAll(client, "acknowledgements");
  absl::SleepFor(absl::Milliseconds(50));  // Let them arrive.

  (*listener)->Stop();
  (*listener)->HoldDirectConnections();
  EXPECT_EQ((*listener)->held_connections(), 1);
  close(served);  // The owner is done with it.
  ExpectReleaseDeliversEveryByte(**listener, client, written);
}

// gRPC's endpoint shuts its socket down for reading and writing before it closes it. On Linux a
// byte that arrives after that (the client's acknowledgement of what it is still reading) answers
// with a reset, which destroys what the client had not read yet. A held connection keeps its read
// side open, so the client's late bytes are taken and dropped and every byte it was sent arrives.
TEST(TcpListenerTest, HeldConnectionsShutDownByTheirOwnerStillDeliverTheirLastBytes) {
  absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Bind("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  int client = -1, served = -1;
  ASSERT_NO_FATAL_FAILURE(StartAndConnect(**listener, &client, &served));
  const std::string written = FillSendBuffer(served, 8);
  ASSERT_GT(written.size(), 65536u);

  (*listener)->Stop();
  (*listener)->HoldDirectConnections();
  EXPECT_EQ((*listener)->held_connections(), 1);
  ASSERT_EQ(shutdown(served, SHUT_RDWR), 0);  // What gRPC does, then it closes.
  close(served);
  WriteAll(client, "acknowledgements");  // The client, still reading, sends after the shutdown.
  absl::SleepFor(absl::Milliseconds(50));
  ExpectReleaseDeliversEveryByte(**listener, client, written);
}

}  // namespace
}  // namespace worldgen
