#include "client/cli/load_generator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/cli/output.h"

namespace worldgen::cli {
namespace {

// Seeds one engine per (seed, stream) so every worker draws its own reproducible sequence.
std::mt19937_64 MakeEngine(uint64_t seed, uint64_t stream) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
  return std::mt19937_64(seq);
}

class RandomPicker : public ChunkPicker {
 public:
  RandomPicker(const LoadConfig& config, int worker)
      : engine_(MakeEngine(config.seed, 1000 + worker)), coord_(-config.area, config.area - 1) {}
  std::vector<ChunkCoord> Next(int count) override {
    std::vector<ChunkCoord> out(count);
    for (ChunkCoord& c : out) c = {coord_(engine_), coord_(engine_)};
    return out;
  }

 private:
  std::mt19937_64 engine_;
  std::uniform_int_distribution<int64_t> coord_;
};

class SpiralPicker : public ChunkPicker {
 public:
  SpiralPicker(const LoadConfig& config, int worker)
      : engine_(MakeEngine(config.seed, 2000 + worker)) {
    std::uniform_int_distribution<int64_t> start(-config.area, config.area - 1);
    player_ = {start(engine_), start(engine_)};
    offsets_.push_back({0, 0});
    for (int64_t d = 1; d <= config.view_radius; ++d) {
      for (int64_t x = -d; x < d; ++x) offsets_.push_back({x, -d});  // North edge, west to east.
      for (int64_t z = -d; z < d; ++z) offsets_.push_back({d, z});   // East edge.
      for (int64_t x = d; x > -d; --x) offsets_.push_back({x, d});   // South edge.
      for (int64_t z = d; z > -d; --z) offsets_.push_back({-d, z});  // West edge.
    }
  }
  std::vector<ChunkCoord> Next(int count) override {
    std::vector<ChunkCoord> out;
    out.reserve(count);
    while (static_cast<int>(out.size()) < count) {
      if (next_ == offsets_.size()) {
        // The player walks 1..3 chunks along each axis and loads its surroundings again.
        std::uniform_int_distribution<int64_t> step(-3, 3);
        player_.x += step(engine_);
        player_.z += step(engine_);
        next_ = 0;
      }
      const ChunkCoord& o = offsets_[next_++];
      out.push_back({player_.x + o.x, player_.z + o.z});
    }
    return out;
  }

 private:
  std::mt19937_64 engine_;
  ChunkCoord player_;
  std::vector<ChunkCoord> offsets_;  // Ring by ring, centre first.
  size_t next_ = 0;
};

class HotPicker : public ChunkPicker {
 public:
  HotPicker(const LoadConfig& config, int worker)
      : engine_(MakeEngine(config.seed, 3000 + worker)) {
    // The same hot set for every worker: it depends on the seed only.
    std::mt19937_64 shared = MakeEngine(config.seed, 3);
    std::uniform_int_distribution<int64_t> coord(-config.area, config.area - 1);
    for (int i = 0; i < config.hot_set; ++i) hot_.push_back({coord(shared), coord(shared)});
  }
  std::vector<ChunkCoord> Next(int count) override {
    std::uniform_int_distribution<size_t> start(0, hot_.size() - 1);
    const size_t first = start(engine_);
    std::vector<ChunkCoord> out;
    out.reserve(count);
    for (int i = 0; i < count; ++i) out.push_back(hot_[(first + i) % hot_.size()]);
    return out;
  }

 private:
  std::mt19937_64 engine_;
  std::vector<ChunkCoord> hot_;
};

// A finite JSON number (JSON has no inf/nan).
std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.6g", v) : "0"; }

// The vertical range of 3D requests: null for 2D ones.
std::string VerticalJson(const ChunkRequestOptions& chunk) {
  if (!chunk.vertical.has_value()) return "null";
  return absl::StrCat("{\"min_y\":", chunk.vertical->min_y, ",\"max_y\":", chunk.vertical->max_y,
                      ",\"cell_size\":", chunk.vertical->cell_size, "}");
}

// " 3D y [MIN, MAX) cells of N" for 3D requests, "" for 2D ones.
std::string VerticalText(const ChunkRequestOptions& chunk) {
  if (!chunk.vertical.has_value()) return "";
  return absl::StrFormat("  3D y [%d, %d) cells of %d", chunk.vertical->min_y,
                         chunk.vertical->max_y, chunk.vertical->cell_size);
}

}  // namespace

absl::StatusOr<LoadPattern> ParseLoadPattern(absl::string_view name) {
  if (name == "random") return LoadPattern::kRandom;
  if (name == "spiral") return LoadPattern::kSpiral;
  if (name == "hot") return LoadPattern::kHot;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pattern \"", name, "\": want random, spiral or hot"));
}

absl::string_view LoadPatternName(LoadPattern pattern) {
  switch (pattern) {
    case LoadPattern::kRandom:
      return "random";
    case LoadPattern::kSpiral:
      return "spiral";
    case LoadPattern::kHot:
      return "hot";
  }
  return "?";
}

std::unique_ptr<ChunkPicker> MakeChunkPicker(const LoadConfig& config, int worker) {
  switch (config.pattern) {
    case LoadPattern::kRandom:
      return std::make_unique<RandomPicker>(config, worker);
    case LoadPattern::kSpiral:
      return std::make_unique<SpiralPicker>(config, worker);
    case LoadPattern::kHot:
      return std::make_unique<HotPicker>(config, worker);
  }
  return nullptr;
}

int64_t LoadReport::error_count() const {
  int64_t total = 0;
  for (const auto& [code, count] : errors) total += count;
  return total;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p * static_cast<double>(sorted.size()));
  const size_t index =
      static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size()))) - 1;
  return sorted[index];
}

absl::StatusOr<LoadReport> RunLoad(Client& client, const LoadConfig& config,
                                   const LoadProgress& progress, absl::Duration progress_interval) {
  if (config.concurrency < 1 || config.concurrency > 4096) {
    return absl::InvalidArgumentError("--concurrency must be in [1, 4096]");
  }
  if (config.chunks_per_request < 1 || config.chunks_per_request > kMaxChunksPerCall) {
    return absl::InvalidArgumentError(
        absl::StrCat("--chunks_per_request must be in [1, ", kMaxChunksPerCall, "]"));
  }
  if (config.duration <= absl::ZeroDuration() && config.requests <= 0) {
    return absl::InvalidArgumentError("give --duration > 0 or --requests > 0");
  }
  if (config.area < 1 || config.area > kMaxLoadArea) {
    return absl::InvalidArgumentError(absl::StrCat("--area must be in [1, ", kMaxLoadArea, "]"));
  }
  if (config.view_radius < 0) return absl::InvalidArgumentError("view_radius must be >= 0");
  // A request asks for distinct chunks (the client drops repeats): a hot set smaller than a
  // request could not fill one.
  if (config.pattern == LoadPattern::kHot &&
      (config.hot_set < config.chunks_per_request || config.hot_set > kMaxChunksPerCall)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--hot_set must be in [--chunks_per_request = ", config.chunks_per_request,
                     ", ", kMaxChunksPerCall, "]"));
  }
  if (!(config.rate >= 0) || config.rate > 1e7) {
    return absl::InvalidArgumentError(
        "--rate must be in [0, 1e7] requests per second (0 = closed loop)");
  }

  std::atomic<bool> stop{false};
  std::atomic<int64_t> claimed{0}, requests{0}, ok_requests{0}, chunks{0}, bytes{0};
  absl::Mutex mu;
  std::map<std::string, int64_t> errors;
  std::string first_error;
  std::vector<std::vector<double>> latencies(config.concurrency);
  const ClientStats before = client.stats();
  const absl::Time start = absl::Now();

  auto worker = [&](int index) {
    std::unique_ptr<ChunkPicker> picker = MakeChunkPicker(config, index);
    std::vector<double>& mine = latencies[index];
    // Open loop: this worker's schedule, every concurrency / rate seconds from start + index /
    // rate.
    const absl::Duration period =
        config.rate > 0 ? absl::Seconds(config.concurrency / config.rate) : absl::ZeroDuration();
    absl::Time scheduled =
        start + (config.rate > 0 ? absl::Seconds(index / config.rate) : absl::ZeroDuration());
    while (!stop.load(std::memory_order_relaxed)) {
      if (config.requests > 0 && claimed.fetch_add(1) >= config.requests) break;
      const std::vector<ChunkCoord> coords = picker->Next(config.chunks_per_request);
      absl::Time sent = absl::Now();
      if (config.rate > 0) {
        while (sent < scheduled && !stop.load(std::memory_order_relaxed)) {
          absl::SleepFor(std::min(scheduled - sent, absl::Milliseconds(50)));
          sent = absl::Now();
        }
        if (stop.load(std::memory_order_relaxed)) break;
        sent = scheduled;  // Latency counts from when the request was due.
        scheduled += period;
      }
      absl::Status status = client.GenerateChunks(coords, config.chunk, [&](ChunkView chunk) {
        chunks.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(static_cast<int64_t>(chunk.proto().ByteSizeLong()),
                        std::memory_order_relaxed);
      });
      const double ms = absl::ToDoubleMilliseconds(absl::Now() - sent);
      requests.fetch_add(1, std::memory_order_relaxed);
      if (status.ok()) {
        ok_requests.fetch_add(1, std::memory_order_relaxed);
        mine.push_back(ms);
      } else {
        absl::MutexLock lock(&mu);
        ++errors[absl::StatusCodeToString(status.code())];  // "RESOURCE_EXHAUSTED", ...
        if (first_error.empty()) first_error = status.ToString();
      }
    }
  };

  auto snapshot = [&] {
    LoadReport report;
    report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    report.requests = requests.load();
    report.ok_requests = ok_requests.load();
    report.chunks = chunks.load();
    report.bytes = bytes.load();
    const ClientStats now = client.stats();
    report.retries = now.retries - before.retries;
    if (report.requests > 0) {
      report.server_queued_ms =
          absl::ToDoubleMilliseconds(now.server_queued - before.server_queued) / report.requests;
      report.server_blend_ms =
          absl::ToDoubleMilliseconds(now.server_blend - before.server_blend) / report.requests;
    }
    absl::MutexLock lock(&mu);
    report.errors = errors;
    report.first_error = first_error;
    return report;
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < config.concurrency; ++i) threads.emplace_back(worker, i);

  // The monitor ends the run at its duration and reports progress; the workers end it by count.
  absl::Mutex done_mu;
  bool done = false;
  std::thread monitor([&] {
    const absl::Time end =
        config.duration > absl::ZeroDuration() ? start + config.duration : absl::InfiniteFuture();
    absl::MutexLock lock(&done_mu);
    while (!done) {
      const absl::Time now = absl::Now();
      if (now >= end) {
        stop.store(true);
        break;
      }
      const absl::Time wake = progress ? std::min(end, now + progress_interval) : end;
      done_mu.AwaitWithDeadline(absl::Condition(&done), wake);
      if (!done && progress && absl::Now() < end) {
        done_mu.Unlock();
        progress(absl::Now() - start, snapshot());
        done_mu.Lock();
      }
    }
  });
  for (std::thread& t : threads) t.join();
  {
    absl::MutexLock lock(&done_mu);
    done = true;
  }
  monitor.join();

  LoadReport report = snapshot();
  std::vector<double> all;
  for (const auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  report.p50_ms = Percentile(all, 0.50);
  report.p90_ms = Percentile(all, 0.90);
  report.p99_ms = Percentile(all, 0.99);
  report.p999_ms = Percentile(all, 0.999);
  report.max_ms = all.empty() ? 0 : all.back();
  double sum = 0;
  for (double v : all) sum += v;
  report.mean_ms = all.empty() ? 0 : sum / all.size();
  return report;
}

std::string LoadReportJson(const LoadConfig& config, const LoadReport& r) {
  std::string errors;
  for (const auto& [code, count] : r.errors) {
    absl::StrAppend(&errors, errors.empty() ? "" : ",", JsonString(code), ":", count);
  }
  return absl::StrCat(
      "{\"pattern\":", JsonString(LoadPatternName(config.pattern)),
      ",\"concurrency\":", config.concurrency,
      ",\"chunks_per_request\":", config.chunks_per_request,
      ",\"chunk_size\":", config.chunk.chunk_size, ",\"vertical\":", VerticalJson(config.chunk),
      ",\"rate\":", JsonNumber(config.rate), ",\"seconds\":", JsonNumber(r.seconds),
      ",\"requests\":", r.requests, ",\"ok_requests\":", r.ok_requests, ",\"chunks\":", r.chunks,
      ",\"bytes\":", r.bytes, ",\"chunks_per_second\":", JsonNumber(r.chunks_per_second()),
      ",\"mb_per_second\":", JsonNumber(r.megabytes_per_second()), ",\"retries\":", r.retries,
      ",\"latency_ms\":{\"p50\":", JsonNumber(r.p50_ms), ",\"p90\":", JsonNumber(r.p90_ms),
      ",\"p99\":", JsonNumber(r.p99_ms), ",\"p99.9\":", JsonNumber(r.p999_ms),
      ",\"max\":", JsonNumber(r.max_ms), ",\"mean\":", JsonNumber(r.mean_ms), "}",
      ",\"server_ms_per_request\":{\"queued\":", JsonNumber(r.server_queued_ms),
      ",\"blend\":", JsonNumber(r.server_blend_ms), "}", ",\"errors\":{", errors,
      "},\"error_count\":", r.error_count(), ",\"first_error\":", JsonString(r.first_error), "}");
}

std::string LoadReportText(const LoadConfig& config, const LoadReport& r) {
  std::string out = absl::StrFormat(
      "pattern %s  concurrency %d  chunks/request %d  chunk size %d%s  %s\n"
      "%d requests (%d ok) in %.2f s, %d chunks, %d retries\n"
      "throughput: %.1f chunks/s  %.2f MB/s\n"
      "latency ms: p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  mean %.3f\n"
      "server ms per request: waiting for a blend thread %.3f  blending %.3f\n",
      LoadPatternName(config.pattern), config.concurrency, config.chunks_per_request,
      config.chunk.chunk_size, VerticalText(config.chunk),
      config.rate > 0 ? absl::StrFormat("open loop at %g requests/s", config.rate) : "closed loop",
      r.requests, r.ok_requests, r.seconds, r.chunks, r.retries, r.chunks_per_second(),
      r.megabytes_per_second(), r.p50_ms, r.p90_ms, r.p99_ms, r.p999_ms, r.max_ms, r.mean_ms,
      r.server_queued_ms, r.server_blend_ms);
  if (r.errors.empty()) {
    absl::StrAppend(&out, "errors: none\n");
  } else {
    absl::StrAppend(&out, "errors:");
    for (const auto& [code, count] : r.errors) absl::StrAppend(&out, " ", code, "=", count);
    absl::StrAppend(&out, "\n  first: ", r.first_error, "\n");
  }
  return out;
}

}  // namespace worldgen::cli
