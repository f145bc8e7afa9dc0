// CallLog (server/service/call_log.h): which calls it logs, its rate limit and what its lines
// hold, read back as worldgen.v1.CallLogLine the way a log collector would.
#include "server/service/call_log.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/call_log_lines.h"

namespace worldgen {
namespace {

using ::worldgen::testing::CallLogLines;

// A log that keeps its lines, at `lines_per_second`.
struct KeptLog {
  explicit KeptLog(CallLog::Options options, CallLog::PeerName peer_name = nullptr)
      : log(
            options, [this](absl::string_view line) { absl::StrAppend(&text, line); },
            std::move(peer_name)) {}
  std::string text;  // Every line handed to the sink, in order.
  CallLog log;
};

CallLog::Entry Refusal() {
  return CallLog::Entry{.method = "GenerateChunk",
                        .code = grpc::StatusCode::RESOURCE_EXHAUSTED,
                        .message = "queued work is past --max_queue_seconds",
                        .reason = "queue_full",
                        .world = "archipelago",
                        .items = 16,
                        .duration = absl::Microseconds(1234567),
                        .peer = "ipv4:10.0.3.7:41822",
                        .forwarded_for = "192.0.2.44",
                        .request_id = "5f0e6d2ab1c94b1d8c1f4f6e1e7a9b20",
                        .user_agent = "survival-eu-3 worldgen-client grpc-c++/1.51.1",
                        .client = "192.0.2.44"};
}

TEST(CallLogTest, ParsesItsLevelsAndNamesTheChoicesOtherwise) {
  EXPECT_EQ(*CallLog::ParseLevel("off"), CallLog::Level::kOff);
  EXPECT_EQ(*CallLog::ParseLevel("errors"), CallLog::Level::kErrors);
  EXPECT_EQ(*CallLog::ParseLevel("all"), CallLog::Level::kAll);
  const absl::StatusOr<CallLog::Level> bad = CallLog::ParseLevel("Errors\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "\"Errors\\n\" is not a call log level: off, errors or all");
}

TEST(CallLogTest, ErrorsLevelLogsFailuresAndSlowCallsOrChunksButNotHangUps) {
  const CallLog errors({.level = CallLog::Level::kErrors}, [](absl::string_view) {});
  const absl::Duration hour = absl::Hours(1);
  EXPECT_FALSE(errors.Wants("SampleWeights", 1, grpc::StatusCode::OK, hour))
      << "no slow threshold set";
  EXPECT_FALSE(errors.Wants("SampleWeights", 1, grpc::StatusCode::CANCELLED, hour))
      << "a client hanging up";
  for (grpc::StatusCode code :
       {grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::NOT_FOUND,
        grpc::StatusCode::FAILED_PRECONDITION, grpc::StatusCode::RESOURCE_EXHAUSTED,
        grpc::StatusCode::DEADLINE_EXCEEDED, grpc::StatusCode::INTERNAL}) {
    EXPECT_TRUE(errors.Wants("SampleWeights", 1, code, absl::ZeroDuration())) << code;
  }

  const CallLog slow({.level = CallLog::Level::kErrors, .slow = absl::Milliseconds(50)},
                     [](absl::string_view) {});
  EXPECT_FALSE(slow.Wants("SampleWeights", 1, grpc::StatusCode::OK, absl::Microseconds(49999)));
  EXPECT_TRUE(slow.Wants("SampleWeights", 1, grpc::StatusCode::OK, absl::Milliseconds(50)));
  EXPECT_TRUE(slow.Wants("SampleWeights", 1, grpc::StatusCode::CANCELLED, absl::Milliseconds(60)));
  EXPECT_FALSE(slow.Wants("SampleWeights", 1, grpc::StatusCode::CANCELLED, absl::Milliseconds(40)));
  // A GenerateChunk stream is slow by its time per chunk (64 chunks in 3.2 s are 50 ms each); any
  // other call, by its whole time.
  EXPECT_FALSE(
      slow.Wants(kGenerateChunkMethod, 64, grpc::StatusCode::OK, absl::Milliseconds(3199)));
  EXPECT_TRUE(slow.Wants(kGenerateChunkMethod, 64, grpc::StatusCode::OK, absl::Milliseconds(3200)));
  EXPECT_TRUE(slow.Wants(kGenerateChunkMethod, 1, grpc::StatusCode::OK, absl::Milliseconds(50)));
  EXPECT_FALSE(
      slow.Wants(kGenerateChunkMethod, 2, grpc::StatusCode::CANCELLED, absl::Milliseconds(99)));
  EXPECT_TRUE(
      slow.Wants(kGenerateChunkMethod, 0, grpc::StatusCode::CANCELLED, absl::Milliseconds(50)))
      << "cancelled before its request was valid";
  EXPECT_TRUE(slow.Wants("SampleWeights", 64, grpc::StatusCode::OK, absl::Milliseconds(50)))
      << "points are answered at once, in one reply";
  EXPECT_TRUE(
      errors.Wants(kGenerateChunkMethod, 64, grpc::StatusCode::INTERNAL, absl::ZeroDuration()))
      << "a failed stream is logged whatever its length";

  const CallLog all({.level = CallLog::Level::kAll}, [](absl::string_view) {});
  EXPECT_TRUE(all.Wants("SampleWeights", 1, grpc::StatusCode::OK, absl::ZeroDuration()));
  EXPECT_TRUE(all.Wants("SampleWeights", 1, grpc::StatusCode::CANCELLED, absl::ZeroDuration()));
  const CallLog off({.level = CallLog::Level::kOff, .slow = absl::Milliseconds(1)},
                    [](absl::string_view) {});
  EXPECT_FALSE(off.Wants("SampleWeights", 1, grpc::StatusCode::INTERNAL, hour));
}

TEST(CallLogTest, ALineHoldsEveryFieldInOneJsonObject) {
  const absl::Time end = absl::FromUnixMicros(1795862727361204);  // 2026-11-28T10:45:27.361204Z
  const std::string line = CallLog::Format(Refusal(), end, 7);
  ASSERT_TRUE(absl::EndsWith(line, "}\n")) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  // The order of the message's fields, snake_case, numbers as numbers.
  EXPECT_TRUE(absl::StartsWith(
      line, R"({"time":"2026-11-28T10:45:27.361204Z","method":"GenerateChunk",)"
            R"("code":"RESOURCE_EXHAUSTED","message":"queued work is past --max_queue_seconds",)"
            R"("reason":"queue_full","world":"archipelago","items":16,"duration_ms":1234.567,)"))
      << line;
  const std::vector<v1::CallLogLine> parsed = CallLogLines(line);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].peer(), "ipv4:10.0.3.7:41822");
  EXPECT_EQ(parsed[0].forwarded_for(), "192.0.2.44");
  EXPECT_EQ(parsed[0].request_id(), "5f0e6d2ab1c94b1d8c1f4f6e1e7a9b20");
  EXPECT_EQ(parsed[0].user_agent(), "survival-eu-3 worldgen-client grpc-c++/1.51.1");
  EXPECT_EQ(parsed[0].client(), "192.0.2.44");
  EXPECT_EQ(parsed[0].suppressed(), 7);

  // An OK call leaves out what it does not have.
  CallLog::Entry ok{.method = "DescribeWorld", .duration = absl::Microseconds(38)};
  EXPECT_EQ(CallLog::Format(ok, end, 0),
            "{\"time\":\"2026-11-28T10:45:27.361204Z\",\"method\":\"DescribeWorld\",\"code\":"
            "\"OK\",\"duration_ms\":0.038}\n");
}

TEST(CallLogTest, AServedCallsLineSaysWhereItsTimeWent) {
  CallLog::Entry entry{.method = "GenerateChunk",
                       .items = 4,
                       .duration = absl::Microseconds(12500),
                       .queued = absl::Microseconds(8250),
                       .blend = absl::Nanoseconds(3100400)};
  EXPECT_EQ(CallLog::Format(entry, absl::UnixEpoch(), 0),
            "{\"time\":\"1970-01-01T00:00:00.000000Z\",\"method\":\"GenerateChunk\",\"code\":"
            "\"OK\",\"items\":4,\"duration_ms\":12.5,\"queued_ms\":8.25,\"blend_ms\":3.1}\n");
  // A chunk served from the cache waited for a thread but blended nothing.
  entry.blend = absl::ZeroDuration();
  const std::vector<v1::CallLogLine> parsed =
      CallLogLines(CallLog::Format(entry, absl::UnixEpoch(), 0));
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].queued_ms(), 8.25);
  EXPECT_EQ(parsed[0].blend_ms(), 0);
}

// A W3C traceparent names the call's trace and the caller's span; an invalid one is left out whole.
TEST(CallLogTest, ALineNamesTheTraceOfItsTraceparent) {
  CallLog::Entry entry = Refusal();
  entry.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  std::vector<v1::CallLogLine> parsed = CallLogLines(CallLog::Format(entry, absl::UnixEpoch(), 0));
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parsed[0].span_id(), "00f067aa0ba902b7");

  entry.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n{\"x\":1}";
  const std::string line = CallLog::Format(entry, absl::UnixEpoch(), 0);
  EXPECT_EQ(line.find("trace"), std::string::npos) << line;
  EXPECT_EQ(line.find("span"), std::string::npos) << line;
}

TEST(CallLogTest, ClientInputIsEscapedAndCutSoALineStaysOneShortLine) {
  CallLog::Entry entry = Refusal();
  const std::string world = absl::StrCat("a\"b\\c\nd\x01", std::string(200, 'w'));
  const std::string agent = "bot\r\n{\"code\":\"OK\"}";
  entry.world = world;
  entry.user_agent = agent;
  entry.forwarded_for = "\xff\xfe";  // Not UTF-8.
  entry.message = "bad \xc3";        // Not ASCII: escaped whole.
  const std::string line = CallLog::Format(entry, absl::UnixEpoch(), 0);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_LT(line.size(), 1000u);
  const std::vector<v1::CallLogLine> parsed = CallLogLines(line);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].world(),
            absl::StrCat("a\\\"b\\\\c\\nd\\x01", std::string(kMaxEchoedBytes - 8, 'w'), "..."));
  EXPECT_EQ(parsed[0].user_agent(), "bot\\r\\n{\\\"code\\\":\\\"OK\\\"}");
  EXPECT_EQ(parsed[0].forwarded_for(), "\\xff\\xfe");
  EXPECT_EQ(parsed[0].message(), "bad \\xc3") << line;
  // The fair share's client is cut where the scheduler cuts it, not at kMaxEchoedBytes: the log
  // tells apart the game servers the scheduler does.
  const std::string subject = absl::StrCat("10.0.9.21 CN=", std::string(60, 'g'), "-2\n");
  entry.client = subject;
  const std::vector<v1::CallLogLine> named =
      CallLogLines(CallLog::Format(entry, absl::UnixEpoch(), 0));
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].client(), absl::StrCat("10.0.9.21 CN=", std::string(60, 'g'), "-2\\n"));
  EXPECT_EQ(EscapedPrefix(std::string(kMaxEchoedBytes, 'x')), std::string(kMaxEchoedBytes, 'x'));
}

TEST(CallLogTest, LinesOverTheRateAreDroppedAndCountedInTheNextLine) {
  KeptLog kept({.level = CallLog::Level::kAll, .lines_per_second = 3});
  const absl::Time t0 = absl::FromUnixSeconds(1795862727);
  for (int i = 0; i < 5; ++i) {  // A burst of 3 passes.
    EXPECT_EQ(kept.log.Write(Refusal(), t0), i < 3) << i;
  }
  EXPECT_EQ(CallLogLines(kept.text).size(), 3u);
  EXPECT_FALSE(kept.log.Write(Refusal(), t0 + absl::Milliseconds(200)));  // 0.6 of a line.
  EXPECT_EQ(CallLogLines(kept.text).size(), 3u);
  EXPECT_TRUE(kept.log.Write(Refusal(), t0 + absl::Milliseconds(400)));  // 1.2 lines refilled.
  std::vector<v1::CallLogLine> lines = CallLogLines(kept.text);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].suppressed(), 0);
  EXPECT_EQ(lines[2].suppressed(), 0);
  EXPECT_EQ(lines[3].suppressed(), 3) << "two of the burst and one at 200 ms";
  // A quiet minute refills only the burst, not a minute's worth.
  for (int i = 0; i < 10; ++i) kept.log.Write(Refusal(), t0 + absl::Minutes(1));
  lines = CallLogLines(kept.text);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[4].suppressed(), 0);
  // A clock that steps back refills nothing and breaks nothing.
  kept.log.Write(Refusal(), t0);
  kept.log.Write(Refusal(), t0 + absl::Minutes(1) + absl::Milliseconds(350));
  lines = CallLogLines(kept.text);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[7].suppressed(), 8);
}

TEST(CallLogTest, ThePeerIsNamedByTheListenersAddressForIt) {
  absl::Time asked_for = absl::InfinitePast();
  KeptLog kept({.level = CallLog::Level::kAll}, [&asked_for](absl::string_view grpc_peer,
                                                             absl::Time call_started) {
    asked_for = call_started;
    return grpc_peer == "fd:13" ? std::string("ipv4:192.0.2.9:5000") : std::string(grpc_peer);
  });
  CallLog::Entry entry = Refusal();
  entry.peer = "fd:13";
  const absl::Time ended = absl::UnixEpoch() + absl::Seconds(10);
  kept.log.Write(entry, ended);
  const std::vector<v1::CallLogLine> lines = CallLogLines(kept.text);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].peer(), "ipv4:192.0.2.9:5000");
  // The listener is asked about the connection the call started on.
  EXPECT_EQ(asked_for, ended - entry.duration);
}

}  // namespace
}  // namespace worldgen
