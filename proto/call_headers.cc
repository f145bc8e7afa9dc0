#include "proto/call_headers.h"

#include <cmath>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace worldgen {
namespace {

bool IsLowerHex(absl::string_view digits) {
  return absl::c_all_of(digits,
                        [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsAllZero(absl::string_view digits) {
  return absl::c_all_of(digits, [](char c) { return c == '0'; });
}

}  // namespace

std::optional<TraceParent> ParseTraceparent(absl::string_view value) {
  // version(2) '-' trace-id(32) '-' parent-id(16) '-' flags(2)
  constexpr size_t kLength = 55;
  if (value.size() < kLength || value[2] != '-' || value[35] != '-' || value[52] != '-') {
    return std::nullopt;
  }
  const absl::string_view version = value.substr(0, 2);
  const absl::string_view trace_id = value.substr(3, 32);
  const absl::string_view span_id = value.substr(36, 16);
  const absl::string_view flags = value.substr(53, 2);
  if (!IsLowerHex(version) || version == "ff") return std::nullopt;
  // Version 00 is exactly this long; a later one may go on, after a '-'.
  if (value.size() > kLength && (version == "00" || value[kLength] != '-')) return std::nullopt;
  if (!IsLowerHex(trace_id) || IsAllZero(trace_id) || !IsLowerHex(span_id) || IsAllZero(span_id) ||
      !IsLowerHex(flags)) {
    return std::nullopt;
  }
  const int low_digit = flags[1] <= '9' ? flags[1] - '0' : flags[1] - 'a' + 10;
  return TraceParent{std::string(trace_id), std::string(span_id), (low_digit & 1) != 0};
}

std::string FormatServerTiming(const ServerTiming& timing) {
  return absl::StrFormat("queued;dur=%.3f, blend;dur=%.3f",
                         absl::ToDoubleMilliseconds(timing.queued),
                         absl::ToDoubleMilliseconds(timing.blend));
}

ServerTiming ParseServerTiming(absl::string_view value) {
  ServerTiming timing{absl::ZeroDuration(), absl::ZeroDuration()};
  for (absl::string_view metric : absl::StrSplit(value, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(metric, ';');
    const absl::string_view name = absl::StripAsciiWhitespace(parts[0]);
    absl::Duration* field = name == "queued"  ? &timing.queued
                            : name == "blend" ? &timing.blend
                                              : nullptr;
    if (field == nullptr) continue;
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::string_view param = absl::StripAsciiWhitespace(parts[i]);
      double millis = 0;
      if (absl::ConsumePrefix(&param, "dur=") && absl::SimpleAtod(param, &millis) && millis >= 0 &&
          millis < 1e12) {
        *field = absl::Microseconds(std::llround(millis * 1000));
        break;
      }
    }
  }
  return timing;
}

}  // namespace worldgen
