// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header a game server
// may send with its calls (ClientOptions::traceparent), so that a replica's call log names the
// trace and span each call belongs to and a studio can go from its own traces to the replica's
// line. Part of the wire contract, so the client (which checks what it is asked to send: gRPC
// aborts on some malformed headers) and the server (which logs what it gets) read it the same way.
#ifndef WORLDGEN_PROTO_TRACE_CONTEXT_H_
#define WORLDGEN_PROTO_TRACE_CONTEXT_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace worldgen {

inline constexpr char kTraceparentHeader[] = "traceparent";

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

}  // namespace worldgen

#endif  // WORLDGEN_PROTO_TRACE_CONTEXT_H_
