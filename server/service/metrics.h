// ServerMetrics: the server's Prometheus metrics (prometheus-cpp), exposed by main() on /metrics.
// Each entry is "name{labels} (type): what it counts".
//
// Updated as calls and chunks happen:
//   worldgen_rpc_duration_seconds{method, code} (histogram): RPC latency, by method and final
//       status.
//   worldgen_chunk_generation_seconds (histogram): time to blend and encode one chunk.
//   worldgen_chunks_generated_total (counter): chunks blended (sent or not).
//   worldgen_points_sampled_total (counter): points blended by SampleWeights.
//   worldgen_rejected_calls_total{reason} (counter): calls refused: queue_full (queued work),
//       deadline, reply_memory, unparseable, invalid_argument, not_found, fingerprint (a pinned
//       world_fingerprint that is not this server's).
//   worldgen_inflight_calls (gauge): calls started and not yet finished.
//   worldgen_call_log_lines_total{outcome} (counter): call-log lines written, or dropped over
//       --call_log_lines_per_second.
//   worldgen_http2_connections_closed_total{reason} (counter): connections the HTTP/2 frame guard
//       cut: rst_flood (over --http2_max_resets_per_second), control_flood (over
//       --http2_max_control_frames_per_second), not_http2 (no client preface).
// Set once at start:
//   worldgen_world_info{world, fingerprint} (gauge, 1): every served world and its fingerprint
//       (WorldDescription.fingerprint); replicas must agree (alert
//       WorldgenWorldFingerprintsDiffer).
// Read at scrape from the scheduler:
//   worldgen_queue_depth (gauge): blend tasks waiting for a thread.
//   worldgen_queued_work_seconds, _limit_seconds (gauges): admitted unstarted work, and
//       --max_queue_seconds.
//   worldgen_shed_calls_total (counter): background calls shed for interactive ones, or for another
//       client's fair share.
//   worldgen_blend_threads (gauge): the blend pool's threads (CPU budget).
//   worldgen_admitted_calls (gauge): calls the scheduler holds.
//   worldgen_interactive_clients (gauge): clients (--fair_share) with an admitted interactive call.
//   worldgen_background_clients (gauge): clients (--fair_share) with an admitted background call.
//   worldgen_queue_wait_seconds{class} (histogram): how long blend tasks waited for a thread, by
//       their call's class (interactive, background).
//   worldgen_pending_columns (gauge): admitted columns not yet started.
//   worldgen_reply_bytes_reserved, _limit (gauges): reply memory reserved, and --max_reply_bytes.
//   worldgen_estimated_seconds_per_{column,point,volume_point,cell} (gauges): admission's cost
//       estimates.
// Read at scrape from the caches:
//   worldgen_cache_{hits,misses,evictions}_total (counters), worldgen_cache_bytes (gauge):
//       BiomeSampleCache::stats().
//   worldgen_chunk_replies_total{source} (counter): GenerateChunk replies blended ("computed"),
//       shared with a concurrent call ("joined") or served encoded from the cache ("cached").
//   worldgen_chunk_cache_bytes (gauge), worldgen_chunk_cache_evictions_total (counter): the
//       encoded-chunk cache (--chunk_cache_bytes).
//
// Thread safety: all methods are safe for concurrent use (prometheus-cpp metrics are atomic).
#ifndef WORLDGEN_SERVER_SERVICE_METRICS_H_
#define WORLDGEN_SERVER_SERVICE_METRICS_H_

#include <functional>
#include <memory>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/biome_sample_cache.h"
#include "grpcpp/support/status.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/scheduling/call_scheduler.h"
#include "server/service/chunk_reply_flights.h"

namespace worldgen {

class ServerMetrics {
 public:
  // `cache` may be null (cache disabled: its metrics read 0); `scheduler` and `replies` are read at
  // each scrape. All must outlive this object.
  ServerMetrics(const BiomeSampleCache* cache, const CallScheduler* scheduler,
                const ChunkReplyFlights* replies);
  ~ServerMetrics();

  void RecordRpc(absl::string_view method, grpc::StatusCode code, absl::Duration latency);
  void RecordChunk(absl::Duration latency);
  void AddPointsSampled(int64_t points);
  void RecordRejected(absl::string_view reason);
  // A connection the HTTP/2 frame guard closed: "rst_flood", "control_flood" or "not_http2".
  void RecordConnectionCut(absl::string_view reason);
  // A call-log line written (true) or dropped over the rate limit (false).
  void RecordCallLogLine(bool written);
  // A served world and its fingerprint (worldgen_world_info); once per world, at start.
  void RecordWorld(absl::string_view world, absl::string_view fingerprint);
  void CallStarted();
  void CallFinished();

  // What to register with a prometheus::Exposer: the registry and the scrape-time collector.
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables() const;

 private:
  class ScrapeTimeCollector;

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ScrapeTimeCollector> scrape_time_;
  prometheus::Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Histogram& chunk_generation_;
  prometheus::Counter& chunks_generated_;
  prometheus::Counter& points_sampled_;
  prometheus::Family<prometheus::Counter>& rejected_;
  prometheus::Family<prometheus::Counter>& connections_cut_;
  prometheus::Family<prometheus::Counter>& call_log_lines_;
  prometheus::Gauge& inflight_;
  prometheus::Family<prometheus::Gauge>& world_info_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_METRICS_H_
