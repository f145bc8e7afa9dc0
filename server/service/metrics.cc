#include "server/service/metrics.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"

namespace worldgen {
namespace {

// Latency buckets from 100 us to ~30 s, roughly x2.5 apart.
prometheus::Histogram::BucketBoundaries RpcBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

// One chunk: 10 us (single-biome 4x4) to ~1 s (256x256 with wide kernels).
prometheus::Histogram::BucketBoundaries ChunkBuckets() {
  return {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
          0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   0.5,   1};
}

prometheus::MetricFamily ScalarFamily(std::string name, std::string help,
                                      prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

// A histogram counted elsewhere (CallScheduler::WaitHistogram), one series per class.
prometheus::MetricFamily WaitFamily(const CallScheduler::Stats& stats) {
  using Waits = CallScheduler::WaitHistogram;
  prometheus::MetricFamily family;
  family.name = "worldgen_queue_wait_seconds";
  family.help =
      "Time blend tasks waited for a thread, from their submission to their start, by the class "
      "of their call (interactive or background).";
  family.type = prometheus::MetricType::Histogram;
  for (const auto& [label, waits] :
       {std::pair<const char*, const Waits*>{"interactive", &stats.interactive_waits},
        {"background", &stats.background_waits}}) {
    prometheus::ClientMetric metric;
    metric.label.push_back({"class", label});
    uint64_t cumulative = 0;
    for (size_t i = 0; i < waits->counts.size(); ++i) {
      cumulative += static_cast<uint64_t>(waits->counts[i]);
      metric.histogram.bucket.push_back(
          {cumulative, i < Waits::kBounds.size() ? Waits::kBounds[i]
                                                 : std::numeric_limits<double>::infinity()});
    }
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = waits->sum_seconds;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

}  // namespace

// Values owned elsewhere (the cache's stats, the scheduler's), read when /metrics is scraped.
class ServerMetrics::ScrapeTimeCollector : public prometheus::Collectable {
 public:
  ScrapeTimeCollector(const BiomeSampleCache* cache, const CallScheduler* scheduler,
                      const ChunkReplyFlights* replies)
      : cache_(cache), scheduler_(scheduler), replies_(replies) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    using prometheus::MetricType;
    BiomeSampleCache::Stats stats;
    if (cache_ != nullptr) stats = cache_->stats();
    const CallScheduler::Stats scheduled = scheduler_->stats();
    const CallScheduler::Options& limits = scheduler_->options();
    std::vector<prometheus::MetricFamily> families;
    families.push_back(ScalarFamily("worldgen_queue_depth", "Blend tasks waiting for a thread.",
                                    MetricType::Gauge,
                                    static_cast<double>(scheduled.queued_tasks)));
    families.push_back(
        ScalarFamily("worldgen_queued_work_seconds",
                     "Admitted, unstarted blending work in seconds of the pool's time "
                     "(pending columns x estimated cost / threads).",
                     MetricType::Gauge, scheduled.queued_seconds));
    families.push_back(ScalarFamily("worldgen_queued_work_limit_seconds",
                                    "Queued work past which background calls are refused or shed "
                                    "(--max_queue_seconds).",
                                    MetricType::Gauge, limits.max_queue_seconds));
    families.push_back(
        ScalarFamily("worldgen_shed_calls_total",
                     "Admitted background calls shed (ended RESOURCE_EXHAUSTED with a "
                     "retry-after) to make room for interactive calls, or for another "
                     "client's fair share of the queue.",
                     MetricType::Counter, static_cast<double>(scheduled.shed_calls)));
    families.push_back(
        ScalarFamily("worldgen_blend_threads",
                     "Threads of the blend pool (--blend_threads, or the CPU budget: "
                     "the affinity mask lowered by a cgroup CPU quota).",
                     MetricType::Gauge, static_cast<double>(scheduled.threads)));
    families.push_back(ScalarFamily("worldgen_admitted_calls",
                                    "Calls admitted by the scheduler and not yet finished.",
                                    MetricType::Gauge, static_cast<double>(scheduled.calls)));
    families.push_back(
        ScalarFamily("worldgen_interactive_clients",
                     "Clients (--fair_share) with an admitted interactive call: the ones "
                     "interactive work is shared between.",
                     MetricType::Gauge, static_cast<double>(scheduled.interactive_clients)));
    families.push_back(
        ScalarFamily("worldgen_background_clients",
                     "Clients (--fair_share) with an admitted background call: the ones "
                     "background work is shared between.",
                     MetricType::Gauge, static_cast<double>(scheduled.background_clients)));
    families.push_back(WaitFamily(scheduled));
    families.push_back(ScalarFamily("worldgen_pending_columns",
                                    "Columns of admitted work not yet started.", MetricType::Gauge,
                                    static_cast<double>(scheduled.pending_columns)));
    families.push_back(ScalarFamily(
        "worldgen_reply_bytes_reserved", "Bytes reserved for replies blended and not yet sent.",
        MetricType::Gauge, static_cast<double>(scheduled.reserved_reply_bytes)));
    families.push_back(ScalarFamily(
        "worldgen_reply_bytes_limit", "Most bytes replies may reserve (--max_reply_bytes).",
        MetricType::Gauge, static_cast<double>(limits.max_reply_bytes)));
    families.push_back(ScalarFamily("worldgen_estimated_seconds_per_column",
                                    "Blend cost per column admission assumes (moving average).",
                                    MetricType::Gauge, scheduled.seconds_per_column));
    families.push_back(ScalarFamily("worldgen_estimated_seconds_per_point",
                                    "Blend cost per SampleWeights point without a y admission "
                                    "assumes (moving average).",
                                    MetricType::Gauge, scheduled.seconds_per_point));
    families.push_back(ScalarFamily("worldgen_estimated_seconds_per_volume_point",
                                    "Blend cost per SampleWeights point with a y (3D) admission "
                                    "assumes (moving average).",
                                    MetricType::Gauge, scheduled.seconds_per_volume_point));
    families.push_back(ScalarFamily("worldgen_estimated_seconds_per_cell",
                                    "Blend cost per 3D cell (GenerateChunk with a vertical range) "
                                    "admission assumes (moving average).",
                                    MetricType::Gauge, scheduled.seconds_per_cell));
    families.push_back(ScalarFamily("worldgen_cache_hits_total",
                                    "Biome sample cache lookups answered from the cache.",
                                    MetricType::Counter, static_cast<double>(stats.hits)));
    families.push_back(ScalarFamily(
        "worldgen_cache_misses_total",
        "Biome sample cache lookups that computed samples (the tile or what it lacked).",
        MetricType::Counter, static_cast<double>(stats.misses)));
    families.push_back(
        ScalarFamily("worldgen_cache_evictions_total",
                     "Biome sample cache tiles evicted to stay within --cache_bytes.",
                     MetricType::Counter, static_cast<double>(stats.evictions)));
    families.push_back(ScalarFamily("worldgen_cache_bytes",
                                    "Bytes held by the biome sample cache (tiles plus overhead).",
                                    MetricType::Gauge, static_cast<double>(stats.bytes)));
    const ChunkReplyFlights::Stats replies = replies_->stats();
    prometheus::MetricFamily by_source;
    by_source.name = "worldgen_chunk_replies_total";
    by_source.help =
        "GenerateChunk replies by where their bytes came from: blended for this call (computed), "
        "shared with a concurrent call blending the same chunk (joined), or the encoded-chunk "
        "cache (cached).";
    by_source.type = MetricType::Counter;
    for (const auto& [source, count] :
         {std::pair{"computed", replies.leaders}, std::pair{"joined", replies.joined},
          std::pair{"cached", replies.hits}}) {
      prometheus::ClientMetric metric;
      metric.label.push_back({"source", source});
      metric.counter.value = static_cast<double>(count);
      by_source.metric.push_back(std::move(metric));
    }
    families.push_back(std::move(by_source));
    families.push_back(ScalarFamily("worldgen_chunk_cache_bytes",
                                    "Bytes held by the encoded-chunk cache (--chunk_cache_bytes).",
                                    MetricType::Gauge, static_cast<double>(replies.bytes)));
    families.push_back(ScalarFamily("worldgen_chunk_cache_evictions_total",
                                    "Encoded chunks evicted to stay within --chunk_cache_bytes.",
                                    MetricType::Counter, static_cast<double>(replies.evictions)));
    return families;
  }

 private:
  const BiomeSampleCache* cache_;
  const CallScheduler* scheduler_;
  const ChunkReplyFlights* replies_;
};

ServerMetrics::ServerMetrics(const BiomeSampleCache* cache, const CallScheduler* scheduler,
                             const ChunkReplyFlights* replies)
    : registry_(std::make_shared<prometheus::Registry>()),
      scrape_time_(std::make_shared<ScrapeTimeCollector>(cache, scheduler, replies)),
      rpc_duration_(prometheus::BuildHistogram()
                        .Name("worldgen_rpc_duration_seconds")
                        .Help("Latency of WorldGen RPCs from start to final status, by method and "
                              "status code.")
                        .Register(*registry_)),
      chunk_generation_(prometheus::BuildHistogram()
                            .Name("worldgen_chunk_generation_seconds")
                            .Help("Time to blend and encode one chunk on a blend thread.")
                            .Register(*registry_)
                            .Add({}, ChunkBuckets())),
      chunks_generated_(prometheus::BuildCounter()
                            .Name("worldgen_chunks_generated_total")
                            .Help("Chunks blended by GenerateChunk.")
                            .Register(*registry_)
                            .Add({})),
      points_sampled_(prometheus::BuildCounter()
                          .Name("worldgen_points_sampled_total")
                          .Help("Points blended by SampleWeights.")
                          .Register(*registry_)
                          .Add({})),
      rejected_(prometheus::BuildCounter()
                    .Name("worldgen_rejected_calls_total")
                    .Help("Calls refused before any blending, by reason (queue_full, deadline, "
                          "reply_memory, unparseable, invalid_argument, not_found, fingerprint).")
                    .Register(*registry_)),
      connections_cut_(prometheus::BuildCounter()
                           .Name("worldgen_http2_connections_closed_total")
                           .Help("Client connections the HTTP/2 frame guard closed, by reason "
                                 "(rst_flood: over the stream reset rate; control_flood: over the "
                                 "SETTINGS/PING rate; not_http2).")
                           .Register(*registry_)),
      call_log_lines_(prometheus::BuildCounter()
                          .Name("worldgen_call_log_lines_total")
                          .Help("Call-log lines (--call_log) written, or dropped over "
                                "--call_log_lines_per_second (outcome written, dropped).")
                          .Register(*registry_)),
      inflight_(prometheus::BuildGauge()
                    .Name("worldgen_inflight_calls")
                    .Help("WorldGen calls started and not yet finished.")
                    .Register(*registry_)
                    .Add({})),
      world_info_(prometheus::BuildGauge()
                      .Name("worldgen_world_info")
                      .Help("1 for every served world, labelled with its fingerprint (a hash of "
                            "its config and of the engine's answers to fixed probes): replicas "
                            "that answer alike show the same fingerprint.")
                      .Register(*registry_)) {
  // Pre-create the rejection series so they read 0 rather than being absent.
  for (const char* reason : {"queue_full", "deadline", "reply_memory", "unparseable",
                             "invalid_argument", "not_found", "fingerprint"}) {
    rejected_.Add({{"reason", reason}});
  }
  for (const char* reason : {"rst_flood", "control_flood", "not_http2"})
    connections_cut_.Add({{"reason", reason}});
  for (const char* outcome : {"written", "dropped"}) call_log_lines_.Add({{"outcome", outcome}});
}

ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::RecordRpc(absl::string_view method, grpc::StatusCode code,
                              absl::Duration latency) {
  rpc_duration_
      .Add({{"method", std::string(method)},
            {"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}},
           RpcBuckets())
      .Observe(absl::ToDoubleSeconds(latency));
}

void ServerMetrics::RecordWorld(absl::string_view world, absl::string_view fingerprint) {
  world_info_.Add({{"world", std::string(world)}, {"fingerprint", std::string(fingerprint)}})
      .Set(1.0);
}

void ServerMetrics::RecordChunk(absl::Duration latency) {
  chunks_generated_.Increment();
  chunk_generation_.Observe(absl::ToDoubleSeconds(latency));
}

void ServerMetrics::AddPointsSampled(int64_t points) {
  points_sampled_.Increment(static_cast<double>(points));
}

void ServerMetrics::RecordRejected(absl::string_view reason) {
  rejected_.Add({{"reason", std::string(reason)}}).Increment();
}

void ServerMetrics::RecordConnectionCut(absl::string_view reason) {
  connections_cut_.Add({{"reason", std::string(reason)}}).Increment();
}

void ServerMetrics::RecordCallLogLine(bool written) {
  call_log_lines_.Add({{"outcome", written ? "written" : "dropped"}}).Increment();
}

void ServerMetrics::CallStarted() { inflight_.Increment(); }
void ServerMetrics::CallFinished() { inflight_.Decrement(); }

std::vector<std::weak_ptr<prometheus::Collectable>> ServerMetrics::collectables() const {
  return {registry_, scrape_time_};
}

}  // namespace worldgen
