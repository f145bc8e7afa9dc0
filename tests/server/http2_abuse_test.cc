// Reliability against HTTP/2-level abuse (ctest label "reliability"): streams opened and reset at
// once, PING and SETTINGS floods, many idle connections, and file-descriptor exhaustion. The
// abusive clients write raw HTTP/2 frames over loopback sockets; meanwhile a legitimate client on
// its own connection must get a GenerateChunk and a /metrics scrape answered within a bound, and
// the server's peak RSS must stay under the bound each test states. Bounded in count and time.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/http2_frames.h"
#include "tests/support/nginx_process.h"
#include "tests/support/worldgen_calls.h"

namespace worldgen {
namespace {

using ::worldgen::testing::Be32;
using ::worldgen::testing::Connect;
using ::worldgen::testing::ConnectLoopback;
using ::worldgen::testing::ExpectPeakRssBelow;
using ::worldgen::testing::Frame;
using ::worldgen::testing::GenerateAll;
using ::worldgen::testing::GenerateChunkHeaders;
using ::worldgen::testing::GrpcRequestHeaders;
using ::worldgen::testing::HttpGet;
using ::worldgen::testing::kAck;
using ::worldgen::testing::kCancel;
using ::worldgen::testing::kData;
using ::worldgen::testing::kEndHeaders;
using ::worldgen::testing::kEnhanceYourCalm;
using ::worldgen::testing::kGoaway;
using ::worldgen::testing::kHeaders;
using ::worldgen::testing::kPing;
using ::worldgen::testing::kRstStream;
using ::worldgen::testing::kSettings;
using ::worldgen::testing::kWindowUpdate;
using ::worldgen::testing::MetricValue;
using ::worldgen::testing::Preface;
using ::worldgen::testing::RegionRequest;
using ::worldgen::testing::Scrape;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::StartServer;
using ::worldgen::testing::WaitUntilIdle;

// Writes all of `bytes`; false once the peer closed or the send timed out (SO_SNDTIMEO).
bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// An abusive client's connections: opened and prefaced up front, then read by one background thread
// that discards what the server sends but notes GOAWAY frames and end of stream per connection.
class RawConnections {
 public:
  struct State {
    bool goaway = false;
    uint32_t goaway_code = 0;
    // The GOAWAY's debug data: none from the frame guard, "too_many_pings" from gRPC's own ping
    // policing (GRPC_ARG_HTTP2_MAX_PING_STRIKES), which may answer a PING flood first.
    std::string goaway_debug;
    bool closed = false;
  };

  // Opens `count` connections to `port`, each sending the preface and an empty SETTINGS frame.
  // Stops early (fewer connections) when connecting fails.
  RawConnections(int port, int count) {
    for (int i = 0; i < count; ++i) {
      const int fd = ConnectLoopback(port);
      if (fd < 0) break;
      timeval timeout{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
      fds_.push_back(fd);
      if (!SendAll(fd, Preface())) break;
    }
    states_.resize(fds_.size());
    reader_ = std::thread([this] { Read(); });
  }
  ~RawConnections() { CloseAll(); }

  size_t size() const { return fds_.size(); }
  int fd(size_t i) const { return fds_[i]; }
  State state(size_t i) const {
    absl::MutexLock lock(&mu_);
    return states_[i];
  }
  int CountClosed() const {
    absl::MutexLock lock(&mu_);
    int closed = 0;
    for (const State& state : states_) closed += state.closed ? 1 : 0;
    return closed;
  }

  void CloseAll() {
    stop_ = true;
    if (reader_.joinable()) reader_.join();
    for (int fd : fds_) close(fd);
    fds_.clear();
  }

 private:
  void Read() {
    std::vector<std::string> pending(fds_.size());
    std::vector<pollfd> polled(fds_.size());
    for (size_t i = 0; i < fds_.size(); ++i) polled[i] = {fds_[i], POLLIN, 0};
    char buffer[16384];
    while (!stop_) {
      if (poll(polled.data(), polled.size(), 50) <= 0) continue;
      for (size_t i = 0; i < polled.size(); ++i) {
        if (polled[i].fd < 0 || polled[i].revents == 0) continue;
        const ssize_t n = recv(polled[i].fd, buffer, sizeof(buffer), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        absl::MutexLock lock(&mu_);
        if (n <= 0) {
          states_[i].closed = true;
          polled[i].fd = -1;  // poll() ignores it from now on.
          continue;
        }
        std::string& bytes = pending[i];
        bytes.append(buffer, static_cast<size_t>(n));
        while (bytes.size() >= 9) {
          const size_t length = (static_cast<uint8_t>(bytes[0]) << 16) |
                                (static_cast<uint8_t>(bytes[1]) << 8) |
                                static_cast<uint8_t>(bytes[2]);
          if (bytes.size() < 9 + length) break;
          if (bytes[3] == kGoaway && length >= 8) {
            states_[i].goaway = true;
            states_[i].goaway_code = 0;
            for (int k = 0; k < 4; ++k) {
              states_[i].goaway_code =
                  (states_[i].goaway_code << 8) | static_cast<uint8_t>(bytes[13 + k]);
            }
            states_[i].goaway_debug = bytes.substr(17, length - 8);
          }
          bytes.erase(0, 9 + length);
        }
      }
    }
  }

  std::vector<int> fds_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  std::vector<State> states_ ABSL_GUARDED_BY(mu_);
};

// --- The legitimate client
// ------------------------------------------------------------------------

constexpr absl::Duration kProbeBound = absl::Seconds(5);

// Where a legitimate client calls: the replica itself, or the balancer in front of it; the scrape
// always goes to the replica's /metrics.
struct Entry {
  std::string target;
  int metrics_port;
};
Entry DirectTo(const ServerProcess& server) { return {server.target(), server.metrics_port()}; }

// One GenerateChunk (a 16² chunk) on a fresh connection and one /metrics scrape; returns the slower
// of the two, or an error naming what failed within `bound`.
absl::StatusOr<absl::Duration> LegitimateCall(const Entry& entry, int index,
                                              absl::Duration bound = kProbeBound) {
  const absl::Time start = absl::Now();
  auto stub = Connect(entry.target);
  testing::StreamResult result = GenerateAll(*stub, RegionRequest(index, 3, index, 3, 16), bound);
  if (!result.status.ok() || result.chunks.size() != 1) {
    return absl::UnavailableError(absl::StrCat("GenerateChunk: ", result.status.error_code(), " ",
                                               result.status.error_message()));
  }
  const absl::Duration call = absl::Now() - start;
  const absl::Time scrape_start = absl::Now();
  absl::StatusOr<std::string> scrape = HttpGet("127.0.0.1", entry.metrics_port, "/metrics", bound);
  if (!scrape.ok()) return scrape.status();
  return std::max(call, absl::Now() - scrape_start);
}

// Legitimate calls one after another from their own thread while an abuse runs; every one must
// succeed within kProbeBound.
class LegitimateClient {
 public:
  explicit LegitimateClient(Entry entry)
      : thread_([this, entry = std::move(entry)] {
          for (int i = 0; !stop_; ++i) {
            absl::StatusOr<absl::Duration> took = LegitimateCall(entry, i);
            absl::MutexLock lock(&mu_);
            ++calls_;
            if (!took.ok()) {
              failures_.push_back(std::string(took.status().ToString()));
            } else {
              slowest_ = std::max(slowest_, *took);
            }
            absl::SleepFor(absl::Milliseconds(20));
          }
        }) {}

  // Stops and reports: every call succeeded within the bound; prints the slowest.
  void Finish(const char* test) {
    stop_ = true;
    thread_.join();
    absl::MutexLock lock(&mu_);
    std::fprintf(
        stderr, "figure %s: %d legitimate GenerateChunk+scrape during the abuse, slowest %.1f ms\n",
        test, calls_, absl::ToDoubleMilliseconds(slowest_));
    EXPECT_GT(calls_, 0);
    EXPECT_TRUE(failures_.empty()) << failures_.size() << " failed, first: " << failures_.front();
    EXPECT_LT(slowest_, kProbeBound);
  }

 private:
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration slowest_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> failures_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

void ExpectLegitimateCallAfterwards(const Entry& entry, const char* test) {
  absl::StatusOr<absl::Duration> took = LegitimateCall(entry, 1000);
  ASSERT_TRUE(took.ok()) << took.status();
  std::fprintf(stderr, "figure %s: legitimate GenerateChunk+scrape after the abuse %.1f ms\n", test,
               absl::ToDoubleMilliseconds(*took));
}

// --- The abuses
// -----------------------------------------------------------------------------------

// Three bursts of 4 connections, each trying to open and at once reset 5,000 streams (HEADERS +
// RST_STREAM; 60,000 in all): the HTTP/2 frame guard in front of gRPC (--http2_guard, on by
// default) cuts each connection once it is over --http2_max_resets_per_second (200 in a burst):
// GOAWAY ENHANCE_YOUR_CALM, then closed, counted as rst_flood. gRPC sees at most a burst's worth of
// resets per connection, so memory stays flat across the bursts (without the guard, gRPC 1.51
// turned each reset stream into a server call: 280-460 MiB for one burst of 20,000, creeping up
// with more), and the legitimate client is served throughout. A DescribeWorldRequest whose world
// name is `inflated` bytes of 'a', gzip- or deflate-compressed (zlib format for deflate, as gRPC's
// "deflate" is), compressed a block at a time: the inflated message is never held.
std::string CompressedBomb(int64_t inflated, bool gzip) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, gzip ? 31 : 15, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out;
  char buffer[1 << 16];
  auto feed = [&](const std::string& in, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, flush);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
  };
  std::string header = "\x0a";  // Field 1 (world), length-delimited.
  for (uint64_t v = static_cast<uint64_t>(inflated);; v >>= 7) {
    header.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80) break;
  }
  feed(header, Z_NO_FLUSH);
  const std::string block(1 << 20, 'a');
  for (int64_t left = inflated; left > 0; left -= static_cast<int64_t>(block.size())) {
    feed(left >= static_cast<int64_t>(block.size()) ? block : block.substr(0, left), Z_NO_FLUSH);
  }
  feed("", Z_FINISH);
  deflateEnd(&z);
  return out;
}

// What came back for a request stream: whether the server ended it (HEADERS or RST_STREAM on it, or
// GOAWAY) before, and how much of the message it let the client send.
struct BombResult {
  bool answered = false;
  size_t sent = 0;
};

// Sends one gRPC request on stream 1 of a raw connection: `headers`, then `message` (already
// compressed; the gRPC prefix says so) in DATA frames as fast as HTTP/2 flow control lets it,
// answering SETTINGS and PING, until everything is sent or the server answers the stream. Bounded.
BombResult SendCompressedRequest(int port, const std::string& headers, const std::string& message) {
  BombResult result;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return result;
  std::string body = std::string(1, '\x01') + Be32(static_cast<uint32_t>(message.size())) + message;
  int64_t connection_window = 65535, stream_window = 65535;
  std::string bytes;  // Received, not yet parsed.
  bool ok = SendAll(fd, Preface()) && SendAll(fd, Frame(kHeaders, kEndHeaders, 1, headers));
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (ok && !result.answered && absl::Now() < give_up) {
    // Send what the windows allow, a frame of at most 16 KiB at a time.
    while (result.sent < body.size() && connection_window > 0 && stream_window > 0) {
      const size_t n = std::min<size_t>({body.size() - result.sent, 16384,
                                         static_cast<size_t>(connection_window),
                                         static_cast<size_t>(stream_window)});
      const bool last = result.sent + n == body.size();
      if (!SendAll(fd, Frame(kData, last ? 1 : 0, 1, body.substr(result.sent, n)))) {
        ok = false;
        break;
      }
      result.sent += n;
      connection_window -= static_cast<int64_t>(n);
      stream_window -= static_cast<int64_t>(n);
    }
    pollfd polled{fd, POLLIN, 0};
    if (poll(&polled, 1, 100) <= 0) continue;
    char buffer[16384];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    while (bytes.size() >= 9) {
      const size_t length = (static_cast<uint8_t>(bytes[0]) << 16) |
                            (static_cast<uint8_t>(bytes[1]) << 8) | static_cast<uint8_t>(bytes[2]);
      if (bytes.size() < 9 + length) break;
      const uint8_t type = static_cast<uint8_t>(bytes[3]), flags = static_cast<uint8_t>(bytes[4]);
      const uint32_t stream =
          ((static_cast<uint8_t>(bytes[5]) & 0x7f) << 24) | (static_cast<uint8_t>(bytes[6]) << 16) |
          (static_cast<uint8_t>(bytes[7]) << 8) | static_cast<uint8_t>(bytes[8]);
      const std::string payload = bytes.substr(9, length);
      bytes.erase(0, 9 + length);
      auto be32 = [&](size_t at) {
        return (static_cast<uint32_t>(static_cast<uint8_t>(payload[at])) << 24) |
               (static_cast<uint8_t>(payload[at + 1]) << 16) |
               (static_cast<uint8_t>(payload[at + 2]) << 8) | static_cast<uint8_t>(payload[at + 3]);
      };
      if (type == kSettings && !(flags & kAck)) {
        for (size_t at = 0; at + 6 <= payload.size(); at += 6) {
          const int id =
              (static_cast<uint8_t>(payload[at]) << 8) | static_cast<uint8_t>(payload[at + 1]);
          if (id == 4)
            stream_window += static_cast<int64_t>(be32(at + 2)) - 65535;  // INITIAL_WINDOW_SIZE
        }
        ok = SendAll(fd, Frame(kSettings, kAck, 0, ""));
      } else if (type == kPing && !(flags & kAck)) {
        ok = SendAll(fd, Frame(kPing, kAck, 0, payload));
      } else if (type == kWindowUpdate && payload.size() == 4) {
        (stream == 0 ? connection_window : stream_window) += be32(0) & 0x7fffffff;
      } else if ((type == kHeaders || type == kRstStream) && stream == 1) {
        result.answered = true;
      } else if (type == kGoaway) {
        result.answered = true;
      }
    }
  }
  close(fd);
  return result;
}

// A request of about 1 MiB that inflates to 1 GiB (gzip, then deflate): gRPC 1.51 inflates a whole
// message before checking its size, so it once took the server's RSS past 1 GiB. Compressed
// requests are now refused when their headers arrive: the server answers the stream while most of
// the bomb is unsent, its memory stays flat, and it serves on.
TEST(Http2AbuseTest, ACompressedRequestThatInflatesToAGibibyteIsRefusedBeforeItIsRead) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  ASSERT_TRUE(GenerateAll(*stub, RegionRequest(0, 0, 0, 0, 16)).status.ok());
  absl::StatusOr<int64_t> idle = server->PeakRssBytes();
  ASSERT_TRUE(idle.ok()) << idle.status();
  for (const bool gzip : {true, false}) {
    const std::string bomb = CompressedBomb(int64_t{1} << 30, gzip);
    const std::string encoding = gzip ? "gzip" : "deflate";
    std::fprintf(stderr, "figure compression bomb: %s, %zu bytes inflating to 1 GiB\n",
                 encoding.c_str(), bomb.size());
    ASSERT_LT(bomb.size(), size_t{1} << 20) << "under --max_request_bytes, as an attack would be";
    const BombResult result = SendCompressedRequest(
        server->grpc_port(),
        GrpcRequestHeaders("/worldgen.v1.WorldGen/DescribeWorld", {{"grpc-encoding", encoding}}),
        bomb);
    EXPECT_TRUE(result.answered) << encoding << ": the server never answered the stream";
    std::fprintf(stderr, "figure compression bomb: %s answered after %zu of %zu bytes\n",
                 encoding.c_str(), result.sent, bomb.size() + 5);
  }
  absl::StatusOr<int64_t> peak = server->PeakRssBytes();
  ASSERT_TRUE(peak.ok()) << peak.status();
  std::fprintf(stderr, "figure compression bomb: peak RSS %.1f MiB, %.1f MiB above idle\n",
               *peak / 1048576.0, (*peak - *idle) / 1048576.0);
  // 100 MiB above idle (AddressSanitizer's build: 2x + 512 MiB, still far below a GiB).
  const int64_t allowed = testing::kRssUnderAsan ? (int64_t{712} << 20) : (int64_t{100} << 20);
  EXPECT_LT(*peak - *idle, allowed) << "the bomb was inflated";
  EXPECT_TRUE(GenerateAll(*stub, RegionRequest(1, 1, 2, 2, 16)).status.ok());
}

// What one burst of an abuse left: frames written before the connections were cut, how many the
// far end closed, and each connection's end state.
struct Burst {
  int sent = 0;
  int closed = 0;
  std::vector<RawConnections::State> states;
};

// Bursts of kConnections connections to `port`, each trying to open and at once reset 5,000 streams
// (HEADERS + RST_STREAM).
std::vector<Burst> RapidResetBursts(int port, const char* front) {
  const std::string headers = GenerateChunkHeaders();
  constexpr int kBursts = 3;
  constexpr int kConnections = 4;
  constexpr int kStreamsPerConnection = 5000;
  std::vector<Burst> bursts;
  for (int burst = 0; burst < kBursts; ++burst) {
    RawConnections abuse(port, kConnections);
    EXPECT_EQ(abuse.size(), static_cast<size_t>(kConnections));
    const absl::Time start = absl::Now();
    std::vector<std::thread> writers;
    std::atomic<int> sent{0};
    for (size_t c = 0; c < abuse.size(); ++c) {
      writers.emplace_back([&, c] {
        std::string batch;
        for (int i = 0; i < kStreamsPerConnection; ++i) {
          const uint32_t stream = 1 + 2 * static_cast<uint32_t>(i);
          batch += Frame(kHeaders, kEndHeaders, stream, headers);
          batch += Frame(kRstStream, 0, stream, Be32(kCancel));
          if (i % 100 == 99) {
            if (!SendAll(abuse.fd(c), batch)) return;  // Cut off.
            sent += 100;
            batch.clear();
          }
        }
      });
    }
    for (std::thread& writer : writers) writer.join();
    const absl::Time give_up = absl::Now() + absl::Seconds(5);
    while (abuse.CountClosed() < static_cast<int>(abuse.size()) && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    Burst result;
    result.sent = sent.load();
    result.closed = abuse.CountClosed();
    for (size_t c = 0; c < abuse.size(); ++c) result.states.push_back(abuse.state(c));
    std::fprintf(stderr,
                 "figure rapid reset (%s): burst %d: %d HEADERS+RST_STREAM pairs written on %zu "
                 "connections in %.0f ms; %d closed by the far end, GOAWAY %s code %u\n",
                 front, burst, result.sent, abuse.size(),
                 absl::ToDoubleMilliseconds(absl::Now() - start), result.closed,
                 result.states.empty() || !result.states[0].goaway ? "none" : "with",
                 result.states.empty() ? 0 : result.states[0].goaway_code);
    bursts.push_back(std::move(result));
  }
  return bursts;
}

// A replica exposed without a balancer (--http2_guard): three bursts of 4 connections, each trying
// to open and at once reset 5,000 streams (60,000 in all). The HTTP/2 frame guard in front of
// gRPC cuts every connection over --http2_max_resets_per_second (200 in a burst) with GOAWAY
// ENHANCE_YOUR_CALM; the legitimate client is served throughout and memory stays flat.
TEST(Http2AbuseTest, StreamsOpenedAndResetAtOnceAreCutOffAndStayFlat) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1", "--http2_guard=true"});
  ASSERT_TRUE(server);
  LegitimateClient legitimate(DirectTo(*server));
  const std::vector<Burst> bursts = RapidResetBursts(server->grpc_port(), "replica's guard");
  int cut = 0;
  for (size_t burst = 0; burst < bursts.size(); ++burst) {
    for (size_t c = 0; c < bursts[burst].states.size(); ++c) {
      const RawConnections::State& state = bursts[burst].states[c];
      EXPECT_TRUE(state.goaway) << "burst " << burst << " connection " << c;
      EXPECT_EQ(state.goaway_code, kEnhanceYourCalm) << "burst " << burst << " connection " << c;
      EXPECT_TRUE(state.closed) << "burst " << burst << " connection " << c;
      ++cut;
    }
  }
  WaitUntilIdle(*server);
  legitimate.Finish("rapid reset");
  ExpectLegitimateCallAfterwards(DirectTo(*server), "rapid reset");
  EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_http2_connections_closed_total",
                        {{"reason", "rst_flood"}}),
            cut);
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "rapid reset");
}

// Peak RSS (VmHWM) of process `pid`, in bytes; 0 if unreadable.
int64_t PeakRssOf(int pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

// A replica with the guard off (the default) and nginx in front of it, rendered from the
// deployment's template; a legitimate call has gone through before it is returned.
struct BehindNginx {
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<testing::NginxProcess> nginx;
  Entry entry() const { return {nginx->target(), server->metrics_port()}; }
};
BehindNginx StartBehindNginx() {
  BehindNginx front;
  front.server = StartServer({"--blend_threads=1"});
  if (!front.server) return front;
  absl::StatusOr<std::unique_ptr<testing::NginxProcess>> nginx =
      testing::NginxProcess::Start({front.server->target()});
  EXPECT_TRUE(nginx.ok()) << nginx.status();
  if (!nginx.ok()) return front;
  front.nginx = *std::move(nginx);
  absl::StatusOr<absl::Duration> warm = LegitimateCall(front.entry(), 0, absl::Seconds(10));
  EXPECT_TRUE(warm.ok()) << warm.status() << front.nginx->error_log();
  return front;
}

// The deployment's shape: replicas with the guard off (the default) behind nginx, which holds the
// HTTP/2 limits (docker/nginx/: concurrent streams, requests per connection, connections per
// client, and Debian's backport of nginx's rapid-reset mitigation). The same bursts at nginx: the
// legitimate client, through nginx, is served throughout, and neither the replica's memory nor
// nginx's grows.
TEST(Http2AbuseTest, BehindNginxStreamsOpenedAndResetAtOnceStayFlat) {
  BehindNginx front = StartBehindNginx();
  ASSERT_TRUE(front.server && front.nginx);
  std::unique_ptr<ServerProcess>& server = front.server;
  std::unique_ptr<testing::NginxProcess>& nginx = front.nginx;
  const Entry through_nginx = front.entry();
  LegitimateClient legitimate(through_nginx);
  const std::vector<Burst> bursts = RapidResetBursts(nginx->port(), "nginx");
  WaitUntilIdle(*server);
  legitimate.Finish("rapid reset behind nginx");
  ExpectLegitimateCallAfterwards(through_nginx, "rapid reset behind nginx");
  std::vector<testing::MetricSample> metrics = Scrape(*server);
  std::fprintf(stderr,
               "figure rapid reset behind nginx: the replica saw %.0f GenerateChunk calls end "
               "CANCELLED; nginx peak RSS %.1f MiB\n",
               MetricValue(metrics, "worldgen_rpc_duration_seconds_count",
                           {{"method", "GenerateChunk"}, {"code", "CANCELLED"}}),
               PeakRssOf(nginx->pid()) / 1048576.0);
  EXPECT_LT(PeakRssOf(nginx->pid()), int64_t{200} << 20) << "nginx's memory grew";
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "rapid reset behind nginx");
}

// What the floods left: frames written, and each connection's end state.
struct Floods {
  int pings_sent = 0, settings_sent = 0;
  std::vector<RawConnections::State> pings, settings;
};

// Two connections to `port` flooding 20,000 PINGs each and two flooding 20,000 SETTINGS each (every
// one changing INITIAL_WINDOW_SIZE and MAX_FRAME_SIZE), none of them reading.
Floods PingAndSettingsFloods(int port, const char* front) {
  RawConnections pings(port, 2);
  RawConnections settings(port, 2);
  EXPECT_EQ(pings.size(), 2u);
  EXPECT_EQ(settings.size(), 2u);
  constexpr int kFrames = 20000;  // per connection
  std::vector<std::thread> writers;
  std::atomic<int> pings_sent{0}, settings_sent{0};
  for (size_t c = 0; c < std::min(pings.size(), settings.size()); ++c) {
    writers.emplace_back([&, c] {
      std::string batch;
      for (int i = 0; i < kFrames; ++i) {
        batch += Frame(kPing, 0, 0, std::string(8, static_cast<char>(i)));
        if (i % 200 == 199) {
          if (!SendAll(pings.fd(c), batch)) return;
          pings_sent += 200;
          batch.clear();
        }
      }
    });
    writers.emplace_back([&, c] {
      std::string batch;
      for (int i = 0; i < kFrames; ++i) {
        batch += Frame(kSettings, 0, 0,
                       std::string("\x00\x04", 2) + Be32(65535 + (i % 1000)) +
                           std::string("\x00\x05", 2) + Be32(16384 + (i % 1000)));
        if (i % 200 == 199) {
          if (!SendAll(settings.fd(c), batch)) return;
          settings_sent += 200;
          batch.clear();
        }
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while ((pings.CountClosed() < 2 || settings.CountClosed() < 2) && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  Floods floods;
  floods.pings_sent = pings_sent.load();
  floods.settings_sent = settings_sent.load();
  for (size_t c = 0; c < pings.size(); ++c) floods.pings.push_back(pings.state(c));
  for (size_t c = 0; c < settings.size(); ++c) floods.settings.push_back(settings.state(c));
  std::fprintf(stderr,
               "figure ping/settings floods (%s): %d PINGs and %d SETTINGS sent before the cut; "
               "closed by the far end: %d of 2 ping and %d of 2 settings connections\n",
               front, floods.pings_sent, floods.settings_sent, pings.CountClosed(),
               settings.CountClosed());
  return floods;
}

// PING and SETTINGS floods at a replica exposed without a balancer: each such frame makes the
// server queue an answer, which a client that never reads leaves in the server's memory; the frame
// guard cuts a connection over --http2_max_control_frames_per_second (200 in a burst) with GOAWAY
// ENHANCE_YOUR_CALM, so neither flood grows memory nor delays others.
TEST(Http2AbuseTest, PingAndSettingsFloodsAreCutOffAndStayFlat) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1", "--http2_guard=true"});
  ASSERT_TRUE(server);
  LegitimateClient legitimate(DirectTo(*server));
  const Floods floods = PingAndSettingsFloods(server->grpc_port(), "replica's guard");
  for (const auto* states : {&floods.pings, &floods.settings}) {
    const char* kind = states == &floods.pings ? "ping" : "settings";
    for (size_t c = 0; c < states->size(); ++c) {
      EXPECT_TRUE((*states)[c].goaway) << kind << " connection " << c;
      EXPECT_EQ((*states)[c].goaway_code, kEnhanceYourCalm) << kind << " connection " << c;
      EXPECT_TRUE((*states)[c].closed) << kind << " connection " << c;
    }
  }
  // A PING flood's first batch of 200 is within the guard's burst and reaches gRPC, whose ping
  // policing may close the connection (GOAWAY ENHANCE_YOUR_CALM "too_many_pings") before the
  // guard reads the next batch; every other connection is the guard's cut, counted.
  int cut_by_grpc = 0;
  for (const RawConnections::State& state : floods.pings) {
    cut_by_grpc += state.goaway_debug == "too_many_pings" ? 1 : 0;
  }
  for (const RawConnections::State& state : floods.settings) {
    EXPECT_EQ(state.goaway_debug, "") << "a SETTINGS flood was not cut by the guard";
  }
  std::fprintf(stderr, "figure ping/settings floods: %d of 2 PING floods closed by gRPC first\n",
               cut_by_grpc);
  EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_http2_connections_closed_total",
                        {{"reason", "control_flood"}}),
            4 - cut_by_grpc);
  legitimate.Finish("ping/settings floods");
  ExpectLegitimateCallAfterwards(DirectTo(*server), "ping/settings floods");
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "ping/settings floods");
}

// The same floods at nginx in front of a replica with the guard off: nginx answers or drops them
// itself (its own flood limits), the replica never sees them, and the legitimate client through
// nginx is served throughout with nginx's and the replica's memory flat.
TEST(Http2AbuseTest, BehindNginxPingAndSettingsFloodsStayFlat) {
  BehindNginx front = StartBehindNginx();
  ASSERT_TRUE(front.server && front.nginx);
  std::unique_ptr<ServerProcess>& server = front.server;
  std::unique_ptr<testing::NginxProcess>& nginx = front.nginx;
  const Entry through_nginx = front.entry();
  LegitimateClient legitimate(through_nginx);
  PingAndSettingsFloods(nginx->port(), "nginx");
  legitimate.Finish("ping/settings floods behind nginx");
  ExpectLegitimateCallAfterwards(through_nginx, "ping/settings floods behind nginx");
  std::fprintf(stderr, "figure ping/settings floods behind nginx: nginx peak RSS %.1f MiB\n",
               PeakRssOf(nginx->pid()) / 1048576.0);
  EXPECT_LT(PeakRssOf(nginx->pid()), int64_t{200} << 20) << "nginx's memory grew";
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "ping/settings floods behind nginx");
}

// 500 connections complete the preface and then say nothing: the legitimate client is served while
// they sit there, and --max_connection_idle_seconds closes every one of them.
TEST(Http2AbuseTest, IdleConnectionsAreClosedAfterTheIdleLimit) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--max_connection_idle_seconds=2"});
  ASSERT_TRUE(server);
  constexpr int kIdle = 500;
  const absl::Time opened = absl::Now();
  RawConnections idle(server->grpc_port(), kIdle);
  ASSERT_EQ(idle.size(), static_cast<size_t>(kIdle));
  LegitimateClient legitimate(DirectTo(*server));
  const absl::Time give_up = opened + absl::Seconds(12);
  while (idle.CountClosed() < kIdle && absl::Now() < give_up)
    absl::SleepFor(absl::Milliseconds(50));
  const absl::Duration took = absl::Now() - opened;
  int goaways = 0;
  for (size_t i = 0; i < idle.size(); ++i) goaways += idle.state(i).goaway ? 1 : 0;
  std::fprintf(
      stderr,
      "figure idle connections: %d of %d idle connections closed (%d with GOAWAY) %.1f s after "
      "opening, idle limit 2 s\n",
      idle.CountClosed(), kIdle, goaways, absl::ToDoubleSeconds(took));
  EXPECT_EQ(idle.CountClosed(), kIdle);
  legitimate.Finish("idle connections");
  ExpectLegitimateCallAfterwards(DirectTo(*server), "idle connections");
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "idle connections");
}

int OpenFds(pid_t pid) {
  int count = 0;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++count;
  }
  return count;
}

// The server's RLIMIT_NOFILE is lowered to what it uses plus 32; 200 connections exhaust it. A
// legitimate call then fails (bounded, no crash); once the connections are gone the server serves
// normally again within a bound, by itself.
TEST(Http2AbuseTest, RecoversOnceFileDescriptorsAreFreedAgain) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1"});
  ASSERT_TRUE(server);
  ASSERT_TRUE(LegitimateCall(DirectTo(*server), 0).ok());  // Warm: the server's fds settle.
  const int in_use = OpenFds(server->pid());
  ASSERT_GT(in_use, 0);
  rlimit limit{};
  ASSERT_EQ(prlimit(server->pid(), RLIMIT_NOFILE, nullptr, &limit), 0);
  rlimit lowered = limit;
  lowered.rlim_cur = static_cast<rlim_t>(in_use + 32);
  ASSERT_EQ(prlimit(server->pid(), RLIMIT_NOFILE, &lowered, nullptr), 0);
  {
    RawConnections hog(server->grpc_port(), 200);
    absl::SleepFor(absl::Milliseconds(500));
    std::fprintf(stderr, "figure fd pressure: server holds %d fds of its limit %d\n",
                 OpenFds(server->pid()), in_use + 32);
    auto stub = Connect(server->target());
    const absl::Time start = absl::Now();
    testing::StreamResult result =
        GenerateAll(*stub, RegionRequest(0, 0, 0, 0, 16), absl::Seconds(2));
    std::fprintf(
        stderr, "figure fd pressure: legitimate call under pressure: %d (%s) after %.0f ms\n",
        static_cast<int>(result.status.error_code()), result.status.error_message().c_str(),
        absl::ToDoubleMilliseconds(absl::Now() - start));
    EXPECT_FALSE(result.status.ok());
    EXPECT_EQ(kill(server->pid(), 0), 0) << "the server died under fd pressure";
  }
  // Connections released: the server recovers by itself within a bound.
  const absl::Time released = absl::Now();
  absl::StatusOr<absl::Duration> took = absl::UnavailableError("not tried");
  while (absl::Now() - released < absl::Seconds(10)) {
    took = LegitimateCall(DirectTo(*server), 7, absl::Seconds(2));
    if (took.ok()) break;
  }
  ASSERT_TRUE(took.ok()) << "not served 10 s after the pressure was gone: " << took.status();
  std::fprintf(stderr,
               "figure fd pressure: served again %.0f ms after the connections were released\n",
               absl::ToDoubleMilliseconds(absl::Now() - released));
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "fd pressure");
}

}  // namespace
}  // namespace worldgen
