#include "server/worldgen_service.h"

#include <atomic>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/splat.h"
#include "engine/world.h"
#include "server/wire_encoding.h"
#include "server/world_config.h"

namespace worldgen {
namespace {

constexpr absl::string_view kGenerateChunk = "GenerateChunk";
constexpr absl::string_view kSampleWeights = "SampleWeights";
constexpr absl::string_view kDescribeWorld = "DescribeWorld";

// SampleWeights checks for cancellation before every this many points.
constexpr int kPointsPerCancellationCheck = 64;

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// The status of a call that stopped because the client went away or its deadline passed.
grpc::Status AbandonedStatus(const grpc::CallbackServerContext& context) {
  if (context.deadline() <= std::chrono::system_clock::now()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled");
}

grpc::Status QueueFullStatus(const BlendPool& pool) {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat("blend queue is full (max_queue = ", pool.max_queue(),
                                   "); retry later"));
}

// Latency and in-flight accounting of one call, from its start to its final status.
class CallRecord {
 public:
  CallRecord(ServerMetrics* metrics, absl::string_view method)
      : metrics_(metrics), method_(method), start_(absl::Now()) {
    metrics_->CallStarted();
  }
  void Finished(grpc::StatusCode code) const {
    metrics_->RecordRpc(method_, code, absl::Now() - start_);
    metrics_->CallFinished();
  }
  // Counts a refusal (before any blending) under its reason label.
  void Rejected(grpc::StatusCode code) const {
    switch (code) {
      case grpc::StatusCode::RESOURCE_EXHAUSTED: metrics_->RecordRejected("queue_full"); break;
      case grpc::StatusCode::INVALID_ARGUMENT: metrics_->RecordRejected("invalid_argument"); break;
      case grpc::StatusCode::NOT_FOUND: metrics_->RecordRejected("not_found"); break;
      default: break;
    }
  }

 private:
  ServerMetrics* metrics_;
  absl::string_view method_;
  absl::Time start_;
};

absl::StatusOr<std::shared_ptr<const World>> FindWorld(const WorldRegistry& worlds,
                                                       absl::string_view name) {
  std::shared_ptr<const World> world = worlds.Find(name);
  if (world == nullptr) {
    return absl::NotFoundError(absl::StrCat("world = \"", name, "\" is not served; available: ",
                                            absl::StrJoin(worlds.names(), ", ")));
  }
  return world;
}

// A stream refused before it started: finishes at once, deletes itself when done.
class RefusedStream final : public grpc::ServerWriteReactor<v1::ChunkData> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

// One GenerateChunk call. Chunks are blended on the pool by tasks, each owning one chunk index; at
// most `stream_buffer_chunks` chunks are outstanding (a task exists for them or they wait in ready_,
// the front of which may be being written). Every decision (submit, write, finish) is taken under mu_
// in Advance(); Finish is called exactly once, only when no task is alive and no write is pending,
// so OnDone (which deletes the reactor) never races with a task.
class ChunkStream final : public grpc::ServerWriteReactor<v1::ChunkData> {
 public:
  ChunkStream(const WorldGenService::Deps& deps, grpc::CallbackServerContext* context,
              std::shared_ptr<const World> world, ChunkSelection selection, BlendOptions options,
              CallRecord record)
      : deps_(deps),
        context_(context),
        world_(std::move(world)),
        selection_(std::move(selection)),
        options_(options),
        record_(record) {}

  // Admits the first chunk into the pool (RESOURCE_EXHAUSTED if the queue is full), then fills the
  // buffer.
  void Begin() {
    {
      absl::MutexLock lock(&mu_);
      next_index_ = 1;
      tasks_ = 1;
    }
    if (!deps_.pool->TrySubmit([this] { RunChunk(0); })) {
      {
        absl::MutexLock lock(&mu_);
        tasks_ = 0;
        finished_ = true;
      }
      record_.Rejected(grpc::StatusCode::RESOURCE_EXHAUSTED);
      FinishCall(QueueFullStatus(*deps_.pool));
      return;
    }
    Advance([] {});
  }

  void OnWriteDone(bool ok) override {
    Advance([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      writing_ = false;
      ready_.pop_front();
      if (!ok) cancelled_ = true;  // The client is gone.
    });
  }

  void OnCancel() override {
    Advance([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { cancelled_ = true; });
  }

  void OnDone() override { delete this; }

 private:
  struct PendingTask {
    int64_t index;
    bool force;  // Submit past the queue bound: the stream has nothing else outstanding.
  };
  struct Actions {
    std::vector<PendingTask> submit;
    const v1::ChunkData* write = nullptr;
    std::optional<grpc::Status> finish;
  };

  void RunChunk(int64_t index) {
    std::unique_ptr<v1::ChunkData> data;
    absl::Status error;
    const bool abandoned = stop_.load(std::memory_order_relaxed) || context_->IsCancelled();
    if (!abandoned) {
      const absl::Time start = absl::Now();
      const ChunkSelection::Coord coord = selection_.at(index);
      absl::StatusOr<ChunkBlend> blend =
          world_->BlendChunk(coord.x, coord.z, selection_.size(), options_, deps_.cache);
      if (blend.ok()) {
        data = std::make_unique<v1::ChunkData>();
        EncodeChunk(*blend, data.get());
        deps_.metrics->RecordChunk(absl::Now() - start);
      } else {
        error = blend.status();
        std::fprintf(stderr, "worldgen-server: GenerateChunk chunk (%lld, %lld) size %d: %s\n",
                     static_cast<long long>(coord.x), static_cast<long long>(coord.z),
                     selection_.size(), error.ToString().c_str());
        std::fflush(stderr);
      }
    }
    Advance([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      --tasks_;
      if (abandoned) {
        cancelled_ = true;
      } else if (data != nullptr) {
        ready_.push_back(std::move(data));
      } else if (error_.ok()) {
        error_ = error;
      }
    });
  }

  // Applies `update` and decides what to do next under mu_, then acts outside it. After Finish
  // nothing touches `this`.
  void Advance(absl::FunctionRef<void()> update) {
    bool first_round = true;
    std::vector<int64_t> failed;
    while (true) {
      Actions actions;
      {
        absl::MutexLock lock(&mu_);
        if (first_round) {
          update();
        } else {
          tasks_ -= static_cast<int>(failed.size());
          retry_.insert(retry_.end(), failed.begin(), failed.end());
        }
        actions = DecideLocked();
      }
      first_round = false;
      if (actions.finish.has_value()) {
        FinishCall(*std::move(actions.finish));
        return;
      }
      // While tasks are being submitted tasks_ > 0, so the call cannot finish under us.
      if (actions.write != nullptr) StartWrite(actions.write);
      if (actions.submit.empty()) return;
      failed.clear();
      for (const PendingTask& task : actions.submit) {
        auto run = [this, index = task.index] { RunChunk(index); };
        if (task.force) {
          deps_.pool->Submit(run);
        } else if (!deps_.pool->TrySubmit(run)) {
          failed.push_back(task.index);
        }
      }
      if (failed.empty()) return;
      // Some did not fit: take them back and decide again (a forced task or a pending write or task
      // guarantees another Advance later).
    }
  }

  Actions DecideLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions actions;
    if (finished_) return actions;
    const bool stopping = cancelled_ || !error_.ok();
    if (stopping) stop_.store(true, std::memory_order_relaxed);
    const size_t buffer = static_cast<size_t>(deps_.options.stream_buffer_chunks);
    if (!stopping) {
      const bool must_force = tasks_ == 0 && ready_.empty();
      while ((!retry_.empty() || next_index_ < selection_.count()) &&
             static_cast<size_t>(tasks_) + ready_.size() < buffer) {
        int64_t index;
        if (!retry_.empty()) {
          index = retry_.back();
          retry_.pop_back();
        } else {
          index = next_index_++;
        }
        ++tasks_;
        actions.submit.push_back({index, must_force && actions.submit.empty()});
      }
    }
    if (writing_) return actions;
    if (!stopping && !ready_.empty()) {
      writing_ = true;
      actions.write = ready_.front().get();
      return actions;
    }
    const bool all_sent = next_index_ == selection_.count() && retry_.empty() && ready_.empty();
    if (tasks_ == 0 && (stopping || all_sent)) {
      finished_ = true;
      if (cancelled_) {
        actions.finish = AbandonedStatus(*context_);
      } else if (!error_.ok()) {
        actions.finish = grpc::Status(grpc::StatusCode::INTERNAL, std::string(error_.message()));
      } else {
        actions.finish = grpc::Status::OK;
      }
    }
    return actions;
  }

  void FinishCall(grpc::Status status) {
    record_.Finished(status.error_code());
    Finish(std::move(status));
  }

  const WorldGenService::Deps& deps_;
  grpc::CallbackServerContext* const context_;
  const std::shared_ptr<const World> world_;
  const ChunkSelection selection_;
  const BlendOptions options_;
  const CallRecord record_;
  std::atomic<bool> stop_{false};  // Mirrors "cancelled or failed" for tasks' lock-free check.

  absl::Mutex mu_;
  int64_t next_index_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> retry_ ABSL_GUARDED_BY(mu_);  // Claimed indices the pool refused.
  int tasks_ ABSL_GUARDED_BY(mu_) = 0;                // Submitted tasks not yet through Advance.
  std::deque<std::unique_ptr<v1::ChunkData>> ready_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // ready_.front() is being written.
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

void FinishUnary(grpc::ServerUnaryReactor* reactor, const CallRecord& record, grpc::Status status) {
  record.Finished(status.error_code());
  reactor->Finish(std::move(status));
}

}  // namespace

WorldGenService::WorldGenService(const WorldRegistry* worlds, BlendPool* pool,
                                 BiomeSampleCache* cache, ServerMetrics* metrics,
                                 ServiceOptions options)
    : deps_{worlds, pool, cache, metrics, options} {
  if (deps_.options.stream_buffer_chunks < 1) deps_.options.stream_buffer_chunks = 1;
}

grpc::ServerWriteReactor<v1::ChunkData>* WorldGenService::GenerateChunk(
    grpc::CallbackServerContext* context, const v1::GenerateChunkRequest* request) {
  CallRecord record(deps_.metrics, kGenerateChunk);
  auto refuse = [&](const absl::Status& status) {
    record.Rejected(static_cast<grpc::StatusCode>(status.code()));
    record.Finished(static_cast<grpc::StatusCode>(status.code()));
    return new RefusedStream(ToGrpcStatus(status));
  };
  absl::StatusOr<std::shared_ptr<const World>> world = FindWorld(*deps_.worlds, request->world());
  if (!world.ok()) return refuse(world.status());
  absl::StatusOr<ChunkSelection> selection =
      ValidateChunkRequest(*request, (*world)->spec().chunk_size, deps_.options.limits);
  if (!selection.ok()) return refuse(selection.status());
  const int biome_count = static_cast<int>((*world)->spec().biomes.size());
  if (absl::Status s = ValidateSplatRequest(*request, *selection, biome_count); !s.ok()) return refuse(s);
  BlendOptions options;
  options.heights = request->include_heights();
  options.dominant_biome = request->include_dominant_biome();
  options.source_biome = request->include_source_biome();
  options.splat = request->include_splat();
  auto* stream = new ChunkStream(deps_, context, *std::move(world), *std::move(selection), options,
                                 record);
  stream->Begin();
  return stream;
}

grpc::ServerUnaryReactor* WorldGenService::SampleWeights(grpc::CallbackServerContext* context,
                                                         const v1::SampleWeightsRequest* request,
                                                         v1::SampleWeightsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  CallRecord record(deps_.metrics, kSampleWeights);
  auto refuse = [&](const absl::Status& status) {
    record.Rejected(static_cast<grpc::StatusCode>(status.code()));
    FinishUnary(reactor, record, ToGrpcStatus(status));
    return reactor;
  };
  absl::StatusOr<std::shared_ptr<const World>> world = FindWorld(*deps_.worlds, request->world());
  if (!world.ok()) return refuse(world.status());
  absl::Status valid = ValidateSampleRequest(*request, deps_.options.limits);
  if (!valid.ok()) return refuse(valid);

  auto blend_points = [this, context, request, response, reactor, record,
                       world = *std::move(world)] {
    BlendOptions options;
    options.heights = request->include_heights();
    options.dominant_biome = true;
    options.source_biome = request->include_source_biome();
    response->mutable_samples()->Reserve(request->points_size());
    for (int i = 0; i < request->points_size(); ++i) {
      if (i % kPointsPerCancellationCheck == 0 && context->IsCancelled()) {
        FinishUnary(reactor, record, AbandonedStatus(*context));
        return;
      }
      const v1::Point& point = request->points(i);
      absl::StatusOr<PointBlend> blend = world->BlendPoint(point.x(), point.z(), options,
                                                           deps_.cache);
      if (!blend.ok()) {
        std::fprintf(stderr, "worldgen-server: SampleWeights point (%.17g, %.17g): %s\n",
                     point.x(), point.z(), blend.status().ToString().c_str());
        std::fflush(stderr);
        FinishUnary(reactor, record,
                    grpc::Status(grpc::StatusCode::INTERNAL, std::string(blend.status().message())));
        return;
      }
      EncodePoint(*blend, options, response->add_samples());
    }
    deps_.metrics->AddPointsSampled(request->points_size());
    FinishUnary(reactor, record, grpc::Status::OK);
  };
  if (!deps_.pool->TrySubmit(std::move(blend_points))) {
    record.Rejected(grpc::StatusCode::RESOURCE_EXHAUSTED);
    FinishUnary(reactor, record, QueueFullStatus(*deps_.pool));
  }
  return reactor;
}

grpc::ServerUnaryReactor* WorldGenService::DescribeWorld(grpc::CallbackServerContext* context,
                                                         const v1::DescribeWorldRequest* request,
                                                         v1::WorldDescription* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  CallRecord record(deps_.metrics, kDescribeWorld);
  absl::StatusOr<std::shared_ptr<const World>> world = FindWorld(*deps_.worlds, request->world());
  if (!world.ok()) {
    record.Rejected(static_cast<grpc::StatusCode>(world.status().code()));
    FinishUnary(reactor, record, ToGrpcStatus(world.status()));
    return reactor;
  }
  const WorldSpec& spec = (*world)->spec();
  *response->mutable_config() = WorldConfigFromSpec(spec);
  const Blender& blender = (*world)->blender();
  response->set_blender(std::string(BlenderName(blender.kind())));
  for (const BlenderFigure& figure : blender.Describe()) {
    if (figure.name == "min_blend_radius") response->set_min_blend_radius(figure.value);
    v1::BlenderFigure* out = response->add_blender_figures();
    out->set_name(figure.name);
    out->set_value(figure.value);
  }
  v1::ServerLimits* limits = response->mutable_limits();
  limits->set_min_chunk_size(kMinServedChunkSize);
  limits->set_max_chunk_size(kMaxServedChunkSize);
  limits->set_max_chunks_per_request(
      static_cast<uint32_t>(deps_.options.limits.max_chunks_per_request));
  limits->set_max_points_per_request(
      static_cast<uint32_t>(deps_.options.limits.max_points_per_request));
  limits->set_world_coordinate_bound(kMaxWorldCoordinate);
  limits->set_max_splat_bytes_per_chunk(static_cast<uint64_t>(kMaxSplatBytesPerChunk));
  for (const BiomeSpec& biome : spec.biomes) response->add_splat_channel_biome_ids(biome.id);
  for (const std::string& name : deps_.worlds->names()) response->add_available_worlds(name);
  FinishUnary(reactor, record, grpc::Status::OK);
  return reactor;
}

}  // namespace worldgen
