// `worldgen load`: a closed-loop load generator for GenerateChunk.
//
// `concurrency` workers share one Client; each sends a request, waits for its last chunk, records
// the latency and sends the next, until `requests` requests were sent in total or `duration` passed
// (whichever comes first; a zero means "no limit", at least one limit is required). A request asks
// for `chunks_per_request` chunks chosen by the pattern:
//   random  uniformly in the square of chunks [-area, area)^2;
//   spiral  each worker is a player at a random spot who loads the chunks around it ring by ring
//   out to
//           `view_radius`, then walks a few chunks and starts again: nearby, overlapping requests;
//   hot     a fixed set of `hot_set` chunks, drawn again and again: the server's cache at its best.
// Chunk choice is deterministic given `seed` and the worker index.
//
// With `rate` > 0 the load is open-loop instead: requests leave on a fixed schedule of `rate` per
// second in total (worker i sends its k-th request at start + (k * concurrency + i) / rate, if it
// is free by then), and a request's latency counts from its scheduled time, so time spent waiting
// behind a slow server is not hidden (no coordinated omission). That is how latency at a given
// fraction of the maximum sustained load is measured.
//
// The client retries UNAVAILABLE (ClientOptions), so a replica that dies behind a load balancer
// costs retries, not errors; errors are the requests that still failed, by status code.
#ifndef WORLDGEN_CLIENT_CLI_LOAD_GENERATOR_H_
#define WORLDGEN_CLIENT_CLI_LOAD_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/worldgen_client.h"

namespace worldgen::cli {

enum class LoadPattern { kRandom, kSpiral, kHot };
// The largest LoadConfig::area: chunk coordinates within +-2^40 (the server's coordinate bound
// refuses most of them; a load test of refusals is a load test too).
inline constexpr int64_t kMaxLoadArea = int64_t{1} << 40;
absl::StatusOr<LoadPattern> ParseLoadPattern(absl::string_view name);
absl::string_view LoadPatternName(LoadPattern pattern);

struct LoadConfig {
  int concurrency = 4;
  absl::Duration duration = absl::Seconds(10);  // Zero: no time limit.
  int64_t requests = 0;                         // Zero: no request limit.
  LoadPattern pattern = LoadPattern::kRandom;
  int chunks_per_request = 16;
  ChunkRequestOptions chunk;
  uint64_t seed = 1;
  int64_t area = 4096;  // random: chunk coordinates in [-area, area).
  int view_radius = 8;  // spiral: rings around each player.
  int hot_set = 64;     // hot: number of distinct chunks.
  double rate = 0;  // Requests per second over all workers; 0 = closed loop, as fast as answered.
};

// Produces the chunk lists one worker requests. Not thread-safe: one per worker.
class ChunkPicker {
 public:
  virtual ~ChunkPicker() = default;
  virtual std::vector<ChunkCoord> Next(int count) = 0;
};
std::unique_ptr<ChunkPicker> MakeChunkPicker(const LoadConfig& config, int worker);

struct LoadReport {
  double seconds = 0;    // Wall time of the run.
  int64_t requests = 0;  // Requests finished (OK or not).
  int64_t ok_requests = 0;
  int64_t chunks = 0;   // Chunks received (also from requests that failed later).
  int64_t bytes = 0;    // Serialized size of the ChunkData messages received.
  int64_t retries = 0;  // Retried attempts inside the client.
  // Per request, on average, as the replicas timed it (ClientStats::server_queued, server_blend):
  // milliseconds its work waited for a blend thread, and blended.
  double server_queued_ms = 0, server_blend_ms = 0;
  // Latency of OK requests, milliseconds (nearest-rank percentiles).
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
  std::map<std::string, int64_t> errors;  // Status code name -> failed requests.
  std::string first_error;                // One example message, for diagnosis.
  int64_t error_count() const;
  double chunks_per_second() const { return seconds > 0 ? chunks / seconds : 0; }
  double megabytes_per_second() const { return seconds > 0 ? bytes / 1e6 / seconds : 0; }
};

// Progress while running: elapsed time and the report so far (latencies not filled in).
using LoadProgress = std::function<void(absl::Duration elapsed, const LoadReport& so_far)>;

// Runs the load. `progress` (may be empty) is called from one monitor thread about every
// `progress_interval`. INVALID_ARGUMENT for a bad config.
absl::StatusOr<LoadReport> RunLoad(Client& client, const LoadConfig& config,
                                   const LoadProgress& progress = {},
                                   absl::Duration progress_interval = absl::Seconds(1));

// Nearest-rank percentile (0 < p <= 1) of sorted values; 0 when empty.
double Percentile(const std::vector<double>& sorted, double p);

std::string LoadReportJson(const LoadConfig& config, const LoadReport& report);
std::string LoadReportText(const LoadConfig& config, const LoadReport& report);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_LOAD_GENERATOR_H_
