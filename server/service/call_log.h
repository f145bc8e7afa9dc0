// CallLog: the server's call log, one JSON line per logged call (worldgen.v1.CallLogLine, whose
// comments say which calls are logged and what each field holds), for the operator who has to
// answer "why did my game server get RESOURCE_EXHAUSTED at 20:31?" when the metrics only count it.
//
//   CallLog log({.level = CallLog::Level::kErrors}, CallLog::StderrSink());
//   if (log.Wants(method, items, code, duration)) log.Write(entry, absl::Now());
//
// Lines are rate limited (a token bucket: bursts of `lines_per_second`, refilled at that rate);
// a line over the rate is dropped and counted in the next written line's `suppressed`, so a flood
// of refusals costs the server no more than the rate in writes. The sink receives whole lines
// (ending in '\n'), one call at a time or concurrently from several threads.
//
// Thread safety: Wants, Write and Format are safe for concurrent use.
#ifndef WORLDGEN_SERVER_SERVICE_CALL_LOG_H_
#define WORLDGEN_SERVER_SERVICE_CALL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/status.h"

namespace worldgen {

// The method whose calls stream chunks: its slow threshold is per chunk (CallLog::Wants).
inline constexpr absl::string_view kGenerateChunkMethod = "GenerateChunk";

// Client input quoted in an error message or a log line is escaped and cut to this many bytes.
inline constexpr size_t kMaxEchoedBytes = 64;

// `text` escaped C-style (quotes, backslashes and control bytes cannot break a message or a line),
// its first `max_bytes` bytes only, followed by "..." when it was longer.
std::string EscapedPrefix(absl::string_view text, size_t max_bytes = kMaxEchoedBytes);

class CallLog {
 public:
  enum class Level { kOff, kErrors, kAll };
  // "off", "errors" or "all" (the --call_log flag); INVALID_ARGUMENT naming the choices otherwise.
  static absl::StatusOr<Level> ParseLevel(absl::string_view text);

  struct Options {
    Level level = Level::kErrors;
    // > 0: at level kErrors, OK (and CANCELLED) calls that took at least this long are logged too;
    // for a GenerateChunk stream, at least this long per chunk.
    absl::Duration slow = absl::ZeroDuration();
    int lines_per_second = 100;  // >= 1; also the burst
  };

  // What one finished call says about itself; client input in it is escaped by Format.
  struct Entry {
    absl::string_view method;
    grpc::StatusCode code = grpc::StatusCode::OK;
    absl::string_view message;
    absl::string_view reason;
    absl::string_view world;
    int32_t items = 0;
    absl::Duration duration;
    absl::Duration queued;  // its tasks' waits for a blend thread, summed (CallTimes)
    absl::Duration blend;   // its tasks' blending and encoding, summed (CallTimes)
    absl::string_view peer;
    absl::string_view forwarded_for;
    absl::string_view request_id;
    absl::string_view user_agent;
    absl::string_view client;       // whom it counted as for the fair share (FairShareClient)
    absl::string_view traceparent;  // its W3C traceparent header, as the client sent it
  };

  using Sink = std::function<void(absl::string_view line)>;
  // The peer to log for gRPC's name of it and the time the call started (TcpListener::PeerOf: gRPC
  // names connections it was handed by descriptor); null logs gRPC's name.
  using PeerName = std::function<std::string(absl::string_view grpc_peer, absl::Time call_started)>;
  // Writes each line to stderr with one write(2) (lines of a few hundred bytes stay whole among
  // other writers of the same pipe).
  static Sink StderrSink();

  CallLog(Options options, Sink sink, PeerName peer_name = nullptr);

  // Whether a call of `method` ("GenerateChunk", ...; Entry::method) for `items` chunks or points
  // (Entry::items) that ended with `code` after `duration` is one to log (before the rate limit). A
  // GenerateChunk stream's duration is spread over its chunks before the slow threshold applies: a
  // stream of many quick chunks is long, not slow. Cheap: the service asks it for every call and
  // gathers an Entry only when it says yes.
  bool Wants(absl::string_view method, int32_t items, grpc::StatusCode code,
             absl::Duration duration) const;

  // Hands `entry`'s line, ended at `now`, to the sink and returns true, or counts it as suppressed
  // over the rate and returns false. `entry.peer` is gRPC's name of the peer.
  bool Write(const Entry& entry, absl::Time now);

  // The JSON line (with '\n') of `entry` ended at `now` after `suppressed` dropped lines.
  static std::string Format(const Entry& entry, absl::Time now, int32_t suppressed);

 private:
  const Options options_;
  const Sink sink_;
  const PeerName peer_name_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time refilled_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int32_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_CALL_LOG_H_
