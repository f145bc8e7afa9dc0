// The HTTP/2 framing a relay in front of gRPC needs to see (RFC 9113 section 3.4 and 4.1), without
// gRPC: frame boundaries of a byte stream fed in pieces of any size, and a per-connection limit on
// the rate of RST_STREAM frames a client sends (the "rapid reset" attack, CVE-2023-44487: gRPC 1.51
// turns every reset stream into a server call that lives until the application has seen it, so an
// unlimited reset rate is unlimited memory).
//
// Only frame headers are read (9 bytes each); payloads are skipped by counting, so a frame's length
// field costs nothing whatever it says (validating it against SETTINGS_MAX_FRAME_SIZE is gRPC's
// job).
//
// Thread safety: none; each object belongs to one direction of one connection.
#ifndef WORLDGEN_SERVER_NETWORK_HTTP2_FRAME_GUARD_H_
#define WORLDGEN_SERVER_NETWORK_HTTP2_FRAME_GUARD_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace worldgen {

// The client connection preface every HTTP/2 connection starts with (followed by a SETTINGS frame).
inline constexpr absl::string_view kHttp2ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr size_t kHttp2FrameHeaderBytes = 9;

enum class Http2FrameType : uint8_t {
  kHeaders = 1,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoaway = 7
};
inline constexpr uint8_t kHttp2AckFlag = 0x1;  // On SETTINGS and PING: an answer, not a request.
enum class Http2ErrorCode : uint32_t { kProtocolError = 0x1, kEnhanceYourCalm = 0xb };

struct Http2FrameHeader {
  uint32_t length = 0;  // Payload bytes (24 bits).
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t stream_id = 0;  // 31 bits; the reserved bit is dropped.
};

// A GOAWAY frame (stream 0) naming the last stream the sender may have processed and an error code.
std::string Http2GoawayFrame(uint32_t last_stream_id, Http2ErrorCode code);

// Frame boundaries of one direction of a connection.
class Http2FrameReader {
 public:
  // `expect_preface`: the client-to-server direction, which starts with kHttp2ClientPreface.
  explicit Http2FrameReader(bool expect_preface);

  // Reads `bytes`, the next piece of the stream, calling `on_frame` for each frame header completed
  // in it (in order). `on_frame` returns false to stop; then the bytes after that header are not
  // read and Read returns false. Read also returns false, with not_http2() set, once the stream
  // does not start with the preface. Once false, later calls return false at once.
  bool Read(absl::string_view bytes, absl::FunctionRef<bool(const Http2FrameHeader&)> on_frame);

  bool not_http2() const { return not_http2_; }
  // Bytes of the current frame (header and payload) read so far: 0 between frames (and within the
  // preface).
  uint64_t bytes_into_frame() const;

 private:
  bool stopped_ = false;
  bool not_http2_ = false;
  size_t preface_left_;          // Preface bytes still to match.
  size_t header_filled_ = 0;     // Bytes of the current frame header gathered in header_.
  uint64_t payload_left_ = 0;    // Payload bytes of the current frame still to skip.
  uint64_t payload_length_ = 0;  // The current frame's payload length (while skipping it).
  uint8_t header_[kHttp2FrameHeaderBytes] = {};
};

// How many frames of a kind a client may send: N per second on average, in bursts of at most N (a
// token bucket holding one second's worth); 0 = no limit.
//   resets:          RST_STREAM frames;
//   control frames:  SETTINGS and PING frames that ask for an answer (no ACK flag). Each one makes
//                    the server queue an answer; a client that never reads them makes gRPC hold
//                    them all in memory. Clients send a few per connection (settings once,
//                    keepalive and flow-control pings now and then).
struct Http2FrameLimits {
  int64_t max_resets_per_second = 200;
  int64_t max_control_frames_per_second = 200;
};

// The client-to-server direction of one connection: its framing and its frame rates.
class Http2FrameGuard {
 public:
  enum class Verdict { kPass, kNotHttp2, kResetFlood, kControlFlood };

  explicit Http2FrameGuard(Http2FrameLimits limits);

  // Inspects the next `bytes` the client sent, read at `now_ns` (any monotonic clock, never
  // decreasing). Once the verdict is not kPass it stays so and nothing more is read; the bytes of
  // the piece that tripped it should not be forwarded.
  Verdict Inspect(absl::string_view bytes, int64_t now_ns);

  // The highest stream id the client opened with HEADERS (for GOAWAY's last-stream-id).
  uint32_t last_stream_id() const { return last_stream_id_; }
  int64_t resets() const { return resets_; }

 private:
  // A token bucket as a "theoretical arrival time" (GCRA): each frame moves it one interval later;
  // a frame that would move it more than a second past now is over the limit.
  class RateBucket {
   public:
    explicit RateBucket(int64_t per_second);
    // Whether one more frame at `now_ns` is within the limit (then it is counted).
    bool Take(int64_t now_ns);

   private:
    int64_t interval_ns_;  // 0: no limit.
    int64_t full_at_ns_ = 0;
  };

  Http2FrameReader reader_{/*expect_preface=*/true};
  Verdict verdict_ = Verdict::kPass;
  uint32_t last_stream_id_ = 0;
  int64_t resets_ = 0;
  RateBucket resets_bucket_;
  RateBucket control_bucket_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_NETWORK_HTTP2_FRAME_GUARD_H_
