// What a call carries besides its messages, for observability, read and written the same way by
// the client and the server (both link this; it is part of the wire contract):
//   - the request header `traceparent` (W3C Trace Context, https://www.w3.org/TR/trace-context/): a
//     game server's tracing may send its current span with each call (ClientOptions::traceparent),
//     and a replica's call log names the trace and span each call belongs to, so a studio can go
//     from its own traces to the replica's line. The client checks what it is asked to send (gRPC
//     aborts on some malformed header values); the server drops an invalid one whole, as the spec
//     says.
//   - the trailer `server-timing` (the syntax of HTTP's Server-Timing header, durations in
//     milliseconds): where an admitted call's time went on the replica, "queued;dur=5.668,
//     blend;dur=0.332" (CallTimes: its tasks' waits for a blend thread and their blending, each
//     summed over its tasks), which the client sums in ClientStats.
#ifndef WORLDGEN_PROTO_CALL_HEADERS_H_
#define WORLDGEN_PROTO_CALL_HEADERS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace worldgen {

inline constexpr char kTraceparentHeader[] = "traceparent";
inline constexpr char kServerTimingTrailer[] = "server-timing";

struct TraceParent {
  std::string trace_id;  // 32 lowercase hex digits, not all zero
  std::string span_id;   // 16 lowercase hex digits, not all zero: the caller's span
  bool sampled = false;  // the flags' sampled bit
};

// The trace and span of a traceparent value, "VV-<trace id>-<span id>-FF" in lowercase hex; a
// version above 00 may carry more fields after a '-', which are ignored. nullopt for anything else
// (the spec's rule: an invalid traceparent is dropped): another shape or length, uppercase or
// non-hex digits, an all-zero id, version ff.
std::optional<TraceParent> ParseTraceparent(absl::string_view value);

// A call's time on the replica, as the server-timing trailer gives it (to the microsecond).
struct ServerTiming {
  absl::Duration queued;  // its tasks' waits for a blend thread
  absl::Duration blend;   // their blending and encoding
};
std::string FormatServerTiming(const ServerTiming& timing);
// Reads the trailer's value: each metric's `dur` (others, and malformed or negative durations, are
// ignored; a metric missing is zero).
ServerTiming ParseServerTiming(absl::string_view value);

}  // namespace worldgen

#endif  // WORLDGEN_PROTO_CALL_HEADERS_H_
