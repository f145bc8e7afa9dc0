// The call-log lines (worldgen.v1.CallLogLine, --call_log) in a worldgen-server's output, for
// tests that read what a server logged about their calls.
#ifndef WORLDGEN_TESTS_SUPPORT_CALL_LOG_LINES_H_
#define WORLDGEN_TESTS_SUPPORT_CALL_LOG_LINES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "worldgen/v1/call_log.pb.h"

namespace worldgen::testing {

// Every line of `output` that is a JSON object; one that does not parse as a CallLogLine (an
// unknown field, a wrong type) fails the test.
inline std::vector<v1::CallLogLine> CallLogLines(absl::string_view output) {
  std::vector<v1::CallLogLine> lines;
  for (absl::string_view text : absl::StrSplit(output, '\n')) {
    if (!absl::StartsWith(text, "{")) continue;
    v1::CallLogLine line;
    const auto parsed = google::protobuf::util::JsonStringToMessage(std::string(text), &line);
    EXPECT_TRUE(parsed.ok()) << parsed << ": " << text;
    lines.push_back(std::move(line));
  }
  return lines;
}

// The call-log lines of `server` once there are at least `count` (or after 10 s, then fewer).
inline std::vector<v1::CallLogLine> AwaitCallLogLines(const ServerProcess& server, size_t count) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::vector<v1::CallLogLine> lines = CallLogLines(server.output());
  while (lines.size() < count && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
    lines = CallLogLines(server.output());
  }
  return lines;
}

// The call-log lines of every server in `servers` for calls naming `world`, once there are at least
// `count` (or after 10 s, then fewer): the lines of a test's own calls among the replicas behind a
// balancer, which picks the replica.
inline std::vector<v1::CallLogLine> AwaitCallLogLinesOfWorld(
    const std::vector<const ServerProcess*>& servers, absl::string_view world, size_t count) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::vector<v1::CallLogLine> lines;
  while (true) {
    for (const ServerProcess* server : servers) {
      for (v1::CallLogLine& line : CallLogLines(server->output())) {
        if (line.world() == world) lines.push_back(std::move(line));
      }
    }
    if (lines.size() >= count || absl::Now() >= deadline) return lines;
    lines.clear();
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_CALL_LOG_LINES_H_
