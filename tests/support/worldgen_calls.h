// Shared helpers of the server's end-to-end tests beside tests/server/service_calls.h (calls with
// bounded deadlines, request builders): /metrics parsing and scraping, and starting a server that
// must start.
#ifndef WORLDGEN_TESTS_SUPPORT_WORLDGEN_CALLS_H_
#define WORLDGEN_TESTS_SUPPORT_WORLDGEN_CALLS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/server/service_calls.h"
#include "tests/support/server_process.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen::testing {

// Chunks keyed by coordinate, as serialized bytes (bit-exact floats).
inline std::map<std::pair<int64_t, int64_t>, std::string> ByCoord(
    const std::vector<v1::ChunkData>& chunks) {
  std::map<std::pair<int64_t, int64_t>, std::string> out;
  for (const v1::ChunkData& chunk : chunks) {
    out[{chunk.coord().x(), chunk.coord().z()}] = chunk.SerializeAsString();
  }
  return out;
}

// --- /metrics parsing
// -------------------------------------------------------------------------------

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

inline std::vector<MetricSample> ParseMetrics(const std::string& text) {
  std::vector<MetricSample> samples;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    MetricSample sample;
    size_t brace = line.find('{');
    size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    if (brace != absl::string_view::npos && brace < space) {
      sample.name = std::string(line.substr(0, brace));
      size_t close = line.find('}', brace);
      for (absl::string_view pair :
           absl::StrSplit(line.substr(brace + 1, close - brace - 1), ',', absl::SkipEmpty())) {
        size_t eq = pair.find('=');
        std::string value(pair.substr(eq + 1));
        if (value.size() >= 2) value = value.substr(1, value.size() - 2);
        sample.labels[std::string(pair.substr(0, eq))] = value;
      }
    } else {
      sample.name = std::string(line.substr(0, line.find(' ')));
    }
    if (!absl::SimpleAtod(line.substr(space + 1), &sample.value)) continue;
    samples.push_back(std::move(sample));
  }
  return samples;
}

// Sum of the samples called `name` whose labels include `labels`; -1 if there is none.
inline double MetricValue(const std::vector<MetricSample>& samples, const std::string& name,
                          const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  bool found = false;
  for (const MetricSample& sample : samples) {
    if (sample.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = sample.labels.find(key);
      if (it == sample.labels.end() || it->second != value) match = false;
    }
    if (!match) continue;
    sum += sample.value;
    found = true;
  }
  return found ? sum : -1;
}

inline std::vector<MetricSample> Scrape(const ServerProcess& server) {
  absl::StatusOr<std::string> text = HttpGet("127.0.0.1", server.metrics_port(), "/metrics");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? ParseMetrics(*text) : std::vector<MetricSample>{};
}

// Waits (bounded) until no call is in flight, so counters can no longer move.
inline void WaitUntilIdle(const ServerProcess& server) {
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (absl::Now() < give_up) {
    std::vector<MetricSample> samples = Scrape(server);
    if (MetricValue(samples, "worldgen_inflight_calls") == 0 &&
        MetricValue(samples, "worldgen_queue_depth") == 0) {
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ADD_FAILURE() << "server did not become idle";
}

// Prints the server's peak RSS as a `figure` line (and a test property) and expects it under
// `bound_bytes`, the bound a reliability test states.
// The bounds are the uninstrumented server's guarantees, checked as stated by the normal build of
// each test. An AddressSanitizer build's RSS also holds ASan's quarantine of freed memory (256 MiB
// by default), shadow memory and redzones, so there the bound allows twice the memory plus 512 MiB:
// it still catches unbounded growth, not ASan's own overhead.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssUnderAsan = true;
#else
inline constexpr bool kRssUnderAsan = false;
#endif

// Deadlines a test states for the uninstrumented server, multiplied by this in an
// AddressSanitizer build: its server blends about 5x slower, and its admission estimate (wall time
// per column) rises further when ctest runs another test beside it on a 2-core machine.
inline constexpr int kAsanDeadlineFactor = kRssUnderAsan ? 3 : 1;

inline void ExpectPeakRssBelow(const ServerProcess& server, int64_t bound_bytes, const char* test) {
  absl::StatusOr<int64_t> peak = server.PeakRssBytes();
  ASSERT_TRUE(peak.ok()) << peak.status();
  if (kRssUnderAsan) bound_bytes = 2 * bound_bytes + (int64_t{512} << 20);
  std::fprintf(stderr, "figure %s: server peak RSS %.1f MiB (bound %.0f MiB%s)\n", test,
               static_cast<double>(*peak) / (1 << 20), static_cast<double>(bound_bytes) / (1 << 20),
               kRssUnderAsan ? ", AddressSanitizer build: 2x + 512 MiB" : "");
  ::testing::Test::RecordProperty("server_peak_rss_bytes", std::to_string(*peak));
  EXPECT_LT(*peak, bound_bytes);
}

// Starts a server with `flags` (plus ServerProcess's defaults); null (and a test failure) if it
// fails.
inline std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(std::move(flags));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_WORLDGEN_CALLS_H_
