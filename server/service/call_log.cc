#include "server/service/call_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "proto/call_headers.h"
#include "server/service/fair_share.h"
#include "worldgen/v1/call_log.pb.h"

namespace worldgen {
namespace {

// Milliseconds to the microsecond, as the line gives durations.
double Millis(absl::Duration d) { return std::round(absl::ToDoubleMicroseconds(d)) / 1000; }

}  // namespace

std::string EscapedPrefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return absl::CHexEscape(text);
  return absl::StrCat(absl::CHexEscape(text.substr(0, max_bytes)), "...");
}

absl::StatusOr<CallLog::Level> CallLog::ParseLevel(absl::string_view text) {
  if (text == "off") return Level::kOff;
  if (text == "errors") return Level::kErrors;
  if (text == "all") return Level::kAll;
  return absl::InvalidArgumentError(
      absl::StrCat("\"", EscapedPrefix(text), "\" is not a call log level: off, errors or all"));
}

CallLog::Sink CallLog::StderrSink() {
  return [](absl::string_view line) {
    while (!line.empty()) {
      const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // Nowhere to write to: the call log is best effort.
      line.remove_prefix(static_cast<size_t>(n));
    }
  };
}

CallLog::CallLog(Options options, Sink sink, PeerName peer_name)
    : options_(options),
      sink_(std::move(sink)),
      peer_name_(std::move(peer_name)),
      tokens_(options.lines_per_second) {}

bool CallLog::Wants(absl::string_view method, int32_t items, grpc::StatusCode code,
                    absl::Duration duration) const {
  switch (options_.level) {
    case Level::kOff:
      return false;
    case Level::kAll:
      return true;
    case Level::kErrors:
      if (code != grpc::StatusCode::OK && code != grpc::StatusCode::CANCELLED) return true;
      if (options_.slow <= absl::ZeroDuration()) return false;
      if (method == kGenerateChunkMethod)
        return duration >= options_.slow * std::max<int32_t>(1, items);
      return duration >= options_.slow;
  }
  return false;
}

bool CallLog::Write(const Entry& entry, absl::Time now) {
  int32_t suppressed = 0;
  {
    absl::MutexLock lock(&mu_);
    const double rate = options_.lines_per_second;
    if (refilled_ != absl::InfinitePast() && now > refilled_) {
      tokens_ = std::min(rate, tokens_ + absl::ToDoubleSeconds(now - refilled_) * rate);
    }
    refilled_ = std::max(refilled_, now);
    if (tokens_ < 1) {
      if (suppressed_ < std::numeric_limits<int32_t>::max()) ++suppressed_;
      return false;
    }
    tokens_ -= 1;
    suppressed = std::exchange(suppressed_, 0);
  }
  const std::string peer =
      peer_name_ ? peer_name_(entry.peer, now - entry.duration) : std::string(entry.peer);
  Entry named = entry;
  named.peer = peer;
  sink_(Format(named, now, suppressed));
  return true;
}

std::string CallLog::Format(const Entry& entry, absl::Time now, int32_t suppressed) {
  v1::CallLogLine line;
  line.set_time(absl::FormatTime("%Y-%m-%d%ET%H:%M:%E6SZ", now, absl::UTCTimeZone()));
  line.set_method(std::string(entry.method));
  line.set_code(absl::StatusCodeToString(static_cast<absl::StatusCode>(entry.code)));
  // Status messages are the server's own ASCII, with client input already escaped in them; one that
  // is not is escaped whole (protobuf's JSON printer would drop what is not UTF-8 without a word).
  const bool ascii = absl::c_all_of(entry.message, [](char c) { return (c & 0x80) == 0; });
  line.set_message(ascii ? std::string(entry.message) : absl::CHexEscape(entry.message));
  line.set_reason(std::string(entry.reason));
  line.set_world(EscapedPrefix(entry.world));
  line.set_items(entry.items);
  line.set_duration_ms(Millis(entry.duration));
  line.set_queued_ms(Millis(entry.queued));
  line.set_blend_ms(Millis(entry.blend));
  line.set_peer(EscapedPrefix(entry.peer));
  line.set_forwarded_for(EscapedPrefix(entry.forwarded_for));
  line.set_request_id(EscapedPrefix(entry.request_id));
  line.set_user_agent(EscapedPrefix(entry.user_agent));
  // Whole (FairShareClient bounds it), so that the log tells apart the clients the scheduler does.
  line.set_client(EscapedPrefix(entry.client, kMaxClientNameBytes));
  if (const std::optional<TraceParent> trace = ParseTraceparent(entry.traceparent)) {
    line.set_trace_id(trace->trace_id);
    line.set_span_id(trace->span_id);
  }
  line.set_suppressed(suppressed);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(line, &json, options).ok()) return {};
  json += '\n';
  return json;
}

}  // namespace worldgen
