#include "proto/call_headers.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

constexpr char kTrace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kSpan[] = "00f067aa0ba902b7";

std::string Value(const std::string& version, const std::string& trace, const std::string& span,
                  const std::string& flags) {
  return version + "-" + trace + "-" + span + "-" + flags;
}

TEST(TraceparentTest, ReadsTheTraceAndSpanOfAValidTraceparent) {
  const std::optional<TraceParent> sampled = ParseTraceparent(Value("00", kTrace, kSpan, "01"));
  ASSERT_TRUE(sampled.has_value());
  EXPECT_EQ(sampled->trace_id, kTrace);
  EXPECT_EQ(sampled->span_id, kSpan);
  EXPECT_TRUE(sampled->sampled);
  const std::optional<TraceParent> not_sampled = ParseTraceparent(Value("00", kTrace, kSpan, "fe"));
  ASSERT_TRUE(not_sampled.has_value());
  EXPECT_FALSE(not_sampled->sampled);
  // A later version may carry more fields after a '-'.
  const std::optional<TraceParent> later =
      ParseTraceparent(Value("01", kTrace, kSpan, "03") + "-what-comes-next");
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->span_id, kSpan);
  EXPECT_TRUE(ParseTraceparent(Value("cc", kTrace, kSpan, "00")).has_value());
}

// The spec drops an invalid traceparent whole: nothing of it is logged or sent.
TEST(TraceparentTest, AnythingElseIsNone) {
  const std::string zeros32(32, '0'), zeros16(16, '0');
  for (const std::string& bad : {
           std::string(), std::string("00"),
           Value("00", kTrace, kSpan, "01") + "-x",  // version 00 has nothing after
           Value("01", kTrace, kSpan, "01") + "x",   // a later version's extra field needs a '-'
           Value("ff", kTrace, kSpan, "01"),         // forbidden version
           Value("0g", kTrace, kSpan, "01"),         // not hex
           Value("00", zeros32, kSpan, "01"),        // all-zero trace
           Value("00", kTrace, zeros16, "01"),       // all-zero span
           Value("00", "4BF92F3577B34DA6A3CE929D0E0E4736", kSpan, "01"),  // uppercase
           Value("00", std::string(kTrace) + "0", kSpan, "01"),           // one digit too many
           Value("00", kTrace, std::string(kSpan).substr(1), "01"),       // one too few
           Value("00", kTrace, kSpan, "0x"),
           "00_" + std::string(kTrace) + "-" + kSpan + "-01",  // wrong separator
       }) {
    EXPECT_FALSE(ParseTraceparent(bad).has_value()) << bad;
  }
}

// The server writes the trailer and the client reads it: to the microsecond, whatever it holds.
TEST(ServerTimingTest, WhatTheServerWritesTheClientReads) {
  const ServerTiming timing{absl::Microseconds(5668), absl::Nanoseconds(332400)};
  const std::string value = FormatServerTiming(timing);
  EXPECT_EQ(value, "queued;dur=5.668, blend;dur=0.332");
  const ServerTiming read = ParseServerTiming(value);
  EXPECT_EQ(read.queued, absl::Microseconds(5668));
  EXPECT_EQ(read.blend, absl::Microseconds(332));
  const ServerTiming long_wait = ParseServerTiming(FormatServerTiming({absl::Seconds(90), {}}));
  EXPECT_EQ(long_wait.queued, absl::Seconds(90));
  EXPECT_EQ(long_wait.blend, absl::ZeroDuration());
}

// Other servers' syntax (another order, more metrics and parameters) is read; what is not a
// duration counts as none.
TEST(ServerTimingTest, ReadsTheHeaderSyntaxAndIgnoresWhatItCannotUse) {
  ServerTiming read =
      ParseServerTiming("db;dur=53, blend;desc=\"blending\";dur=0.25 ,queued ; dur=1.5");
  EXPECT_EQ(read.queued, absl::Microseconds(1500));
  EXPECT_EQ(read.blend, absl::Microseconds(250));
  for (const char* bad : {"", "queued", "queued;dur=", "queued;dur=-1", "queued;dur=nan",
                          "queued;dur=inf", "queued;dur=1e300", "queued;dur=5ms", "Queued;dur=5"}) {
    read = ParseServerTiming(bad);
    EXPECT_EQ(read.queued, absl::ZeroDuration()) << bad;
    EXPECT_EQ(read.blend, absl::ZeroDuration()) << bad;
  }
}

}  // namespace
}  // namespace worldgen
