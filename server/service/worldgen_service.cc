#include "server/service/worldgen_service.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "engine/world.h"
#include "google/protobuf/stubs/logging.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "proto/call_headers.h"
#include "server/scheduling/chunk_stream_policy.h"
#include "server/service/queries.h"
#include "server/service/wire_encoding.h"

namespace worldgen {
namespace {

constexpr absl::string_view kGenerateChunk = kGenerateChunkMethod;  // call_log.h
constexpr absl::string_view kSampleWeights = "SampleWeights";
constexpr absl::string_view kDescribeWorld = "DescribeWorld";
constexpr absl::string_view kListSamplingPoints = "ListSamplingPoints";
// The call log's reason for a background call the scheduler shed for interactive ones.
constexpr absl::string_view kShed = "shed";

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// The trailer in which gRPC clients with a retry policy read when to retry (gRFC A6).
constexpr char kRetryPushbackTrailer[] = "grpc-retry-pushback-ms";

// ToGrpcStatus, and the scheduler's retry-after of a refusal or shed call as the pushback trailer.
grpc::Status PushbackStatus(grpc::CallbackServerContext* context, const absl::Status& status) {
  const absl::Duration retry_after = CallScheduler::RetryAfter(status);
  if (retry_after == absl::InfiniteDuration()) {
    context->AddTrailingMetadata(kRetryPushbackTrailer, "-1");  // gRPC's "do not retry".
  } else if (retry_after > absl::ZeroDuration()) {
    context->AddTrailingMetadata(kRetryPushbackTrailer,
                                 absl::StrCat(absl::ToInt64Milliseconds(retry_after)));
  }
  return ToGrpcStatus(status);
}

// Tells an admitted call's client where its time went on the server (proto/call_headers.h).
void AddServerTiming(grpc::CallbackServerContext* context, const CallTimes& times) {
  context->AddTrailingMetadata(kServerTimingTrailer,
                               FormatServerTiming({times.queued(), times.blend()}));
}

// The status of a call that stopped because the client went away or its deadline passed. A client
// cancels at its own deadline, which the server (having received the timeout a little later) places
// slightly after; a cancel that close to the deadline is the deadline passing.
grpc::Status AbandonedStatus(const grpc::CallbackServerContext& context) {
  constexpr auto kDeadlineSkew = std::chrono::milliseconds(100);
  if (context.deadline() <= std::chrono::system_clock::now() + kDeadlineSkew) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled");
}

// At most this many world names are listed in NOT_FOUND.
constexpr size_t kMaxListedWorlds = 16;

// `text` in quotes as EscapedPrefix gives it, saying how long it was when cut.
std::string Quoted(absl::string_view text) {
  if (text.size() <= kMaxEchoedBytes) return absl::StrCat("\"", EscapedPrefix(text), "\"");
  return absl::StrCat("\"", EscapedPrefix(text.substr(0, kMaxEchoedBytes)), "\"... (", text.size(),
                      " bytes)");
}

// Protobuf reports a string field that is not UTF-8 only in a log line, which a client could have
// written as fast as it sends requests. The service's handler (InstallParseLogHandler) prints none:
// it keeps the field's name for the parse that met it, on its thread, and the refusal says it (in
// the call log, at the call log's rate). Every other protobuf log line goes where it went before.
thread_local std::string non_utf8_field;
google::protobuf::LogHandler* previous_log_handler = nullptr;

void ParseLogHandler(google::protobuf::LogLevel level, const char* file, int line,
                     const std::string& message) {
  // "String field 'worldgen.v1.Message.field' contains invalid UTF-8 data when parsing ..."
  if (level == google::protobuf::LOGLEVEL_ERROR &&
      absl::StrContains(message, "invalid UTF-8 data when parsing")) {
    const size_t open = message.find('\'');
    const size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
    non_utf8_field = close == std::string::npos ? std::string("a string field")
                                                : message.substr(open + 1, close - open - 1);
    return;
  }
  if (previous_log_handler != nullptr) previous_log_handler(level, file, line, message);
}

void InstallParseLogHandler() {
  static absl::once_flag once;
  absl::call_once(once,
                  [] { previous_log_handler = google::protobuf::SetLogHandler(&ParseLogHandler); });
}

// Parses the raw request; INVALID_ARGUMENT saying why if the bytes are not a `Request`.
template <typename Request>
absl::Status ParseRequest(const grpc::ByteBuffer& raw, Request* request) {
  grpc::ByteBuffer copy(raw);  // Shares the slices; the reader consumes its buffer.
  grpc::ProtoBufferReader reader(&copy);
  non_utf8_field.clear();
  if (request->ParseFromZeroCopyStream(&reader) && reader.status().ok()) return absl::OkStatus();
  if (!non_utf8_field.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("request is not a valid ", request->GetTypeName(), ": ", non_utf8_field,
                     " is not valid UTF-8, which a proto string must be"));
  }
  return absl::InvalidArgumentError(absl::StrCat("request is not a valid ", request->GetTypeName(),
                                                 " (", raw.Length(),
                                                 " bytes that do not parse as that message)"));
}

void SerializeReply(const google::protobuf::Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  grpc::GenericSerialize<grpc::ProtoBufferWriter, google::protobuf::Message>(message, out,
                                                                             &own_buffer);
}

// Shared bytes as one slice without copying them; the slice holds a reference until gRPC drops it.
grpc::ByteBuffer ByteBufferFrom(std::shared_ptr<const std::string> bytes) {
  using Owner = std::shared_ptr<const std::string>;
  auto* owner = new Owner(std::move(bytes));
  grpc::Slice slice(
      const_cast<char*>((*owner)->data()), (*owner)->size(),
      [](void* p) { delete static_cast<Owner*>(p); }, owner);
  return grpc::ByteBuffer(&slice, 1);
}

absl::Time CallDeadline(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  // gRPC reports "no deadline" as the largest time point; anything years away is as good as none.
  if (deadline > std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

// The value of header `name` in the call's metadata; empty when absent.
absl::string_view Header(const grpc::CallbackServerContext& context, const char* name) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(name);
  if (found == metadata.end()) return {};
  return absl::string_view(found->second.data(), found->second.size());
}

// The client the scheduler shares interactive work between (CallShape::client), by the rule of
// ServiceOptions::fair_share (FairShareClient resolves the peer only when the rule needs it).
std::string ClientOf(const ServiceOptions& options, const grpc::CallbackServerContext& context) {
  auto peer = [&] {
    std::string grpc_peer = context.peer();
    return options.peer_name ? options.peer_name(grpc_peer, absl::Now()) : grpc_peer;
  };
  const char* header = FairShareHeader(options.fair_share);
  return FairShareClient(options.fair_share, peer,
                         header == nullptr ? absl::string_view() : Header(context, header));
}

// Latency, in-flight and call-log accounting of one call, from its start to its final status. The
// context must be alive at Finished (gRPC keeps it until the reactor's OnDone returns).
class CallRecord {
 public:
  CallRecord(const WorldGenService::Deps& deps, absl::string_view method,
             const grpc::CallbackServerContext* context)
      : metrics_(deps.metrics),
        log_(deps.options.call_log),
        context_(context),
        method_(method),
        start_(absl::Now()),
        client_(ClientOf(deps.options, *context)),
        times_(std::make_shared<CallTimes>()) {
    metrics_->CallStarted();
  }
  // Whom the call counts as for the scheduler's fair share (CallShape::client).
  const std::string& client() const { return client_; }
  // Where the call's time went (CallShape::times): its tasks' waits and their blending.
  const std::shared_ptr<CallTimes>& times() const { return times_; }
  // What the request asked for, for the call log: its world once it parsed, its chunks or points
  // once it is valid. Set before the record is copied into the call's tasks.
  void set_world(absl::string_view world) { world_ = std::string(world); }
  void set_items(int32_t items) { items_ = items; }
  // `reason`: a refusal's or shedding's, for the call log (Refused counts refusals).
  void Finished(const grpc::Status& status, absl::string_view reason = {}) const {
    const absl::Time now = absl::Now();
    const absl::Duration duration = now - start_;
    metrics_->RecordRpc(method_, status.error_code(), duration);
    metrics_->CallFinished();
    if (log_ == nullptr || !log_->Wants(method_, items_, status.error_code(), duration)) return;
    const std::string peer = context_->peer();
    const bool written =
        log_->Write(CallLog::Entry{.method = method_,
                                   .code = status.error_code(),
                                   .message = status.error_message(),
                                   .reason = reason,
                                   .world = world_,
                                   .items = items_,
                                   .duration = duration,
                                   .queued = times_->queued(),
                                   .blend = times_->blend(),
                                   .peer = peer,
                                   .forwarded_for = Header(*context_, "x-forwarded-for"),
                                   .request_id = Header(*context_, "x-request-id"),
                                   .user_agent = Header(*context_, "user-agent"),
                                   .client = client_,
                                   .traceparent = Header(*context_, kTraceparentHeader)},
                    now);
    metrics_->RecordCallLogLine(written);
  }
  // Counts a refusal (before any blending) under its reason label.
  void Rejected(absl::string_view reason) const { metrics_->RecordRejected(reason); }

 private:
  ServerMetrics* metrics_;
  CallLog* log_;
  const grpc::CallbackServerContext* context_;
  absl::string_view method_;
  absl::Time start_;
  std::string client_;
  std::shared_ptr<CallTimes> times_;
  std::string world_;
  int32_t items_ = 0;
};

// A call refused before any blending: counted under `reason` and finished with `status` (and the
// scheduler's pushback, if any). The one place a refusal is recorded.
grpc::Status Refused(grpc::CallbackServerContext* context, const CallRecord& record,
                     const absl::Status& status, absl::string_view reason) {
  record.Rejected(reason);
  grpc::Status sent = PushbackStatus(context, status);
  record.Finished(sent, reason);
  return sent;
}

// The world a request names; NOT_FOUND listing the served ones, or, when the request pins a
// fingerprint (`pinned`, its world_fingerprint) that is not the world's here, FAILED_PRECONDITION
// naming both. FindWorldRefusal gives the reason such a refusal is counted under.
absl::StatusOr<std::shared_ptr<const World>> FindWorld(const WorldRegistry& worlds,
                                                       absl::string_view name,
                                                       absl::string_view pinned = {}) {
  std::shared_ptr<const World> world = worlds.Find(name);
  if (world == nullptr) {
    std::vector<std::string> names = worlds.names();
    const size_t listed = std::min(names.size(), kMaxListedWorlds);
    std::string available = absl::StrJoin(names.begin(), names.begin() + listed, ", ");
    if (listed < names.size()) absl::StrAppend(&available, ", ... (", names.size(), " worlds)");
    return absl::NotFoundError(
        absl::StrCat("world = ", Quoted(name), " is not served; available: ", available));
  }
  if (pinned.empty()) return world;
  if (name.empty()) name = WorldRegistry::kDefaultWorldName;
  const std::string served = worlds.fingerprint(name);
  if (pinned == served) return world;
  return absl::FailedPreconditionError(
      absl::StrCat("world_fingerprint = ", Quoted(pinned), " is not world ", Quoted(name),
                   " as this server serves it (fingerprint \"", served,
                   "\"): it runs another config or server version of the world"));
}

absl::string_view FindWorldRefusal(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition ? "fingerprint" : "not_found";
}

// A stream refused before it started: finishes at once, deletes itself when done.
class RefusedStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

// The status of a call whose policy or task ended with `status` (absl CANCELLED = abandoned,
// RESOURCE_EXHAUSTED = shed by the scheduler, sent with its pushback).
grpc::Status CallStatus(grpc::CallbackServerContext* context, const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  if (absl::IsCancelled(status)) return AbandonedStatus(*context);
  if (absl::IsResourceExhausted(status)) return PushbackStatus(context, status);
  return grpc::Status(grpc::StatusCode::INTERNAL, std::string(status.message()));
}

// The cells of one 3D chunk of `selection` (CallShape::cells_per_task); 0 for a 2D selection.
int64_t ChunkCells(const ChunkSelection& selection) {
  if (!selection.vertical()) return 0;
  const int64_t side = selection.size() / selection.vertical()->cell;
  return side * side * selection.vertical()->sections() *
         (kSectionHeight / selection.vertical()->cell);
}

// One GenerateChunk call: blends and encodes chunks when its ChunkStreamPolicy says so, writes the
// bytes it is handed, and finishes with the policy's status. Deletes itself in OnDone, which gRPC
// calls after Finish, so never while a task or write of the policy is alive.
class ChunkStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  ChunkStream(const WorldGenService::Deps& deps, grpc::CallbackServerContext* context,
              std::shared_ptr<const World> world, ChunkSelection selection, BlendOptions options,
              CallRecord record, std::unique_ptr<CallScheduler::Call> call, int buffer_chunks)
      : deps_(deps),
        context_(context),
        world_(std::move(world)),
        selection_(std::move(selection)),
        options_(options),
        record_(record),
        call_class_(call->call_class()),
        policy_(std::move(call), selection_.count(), buffer_chunks,
                ChunkStreamPolicy::Hooks{
                    [this](int64_t index, ChunkStreamPolicy::Produced done) {
                      Produce(index, std::move(done));
                    },
                    [this] { return context_->IsCancelled(); },
                    [this](ChunkStreamPolicy::Reply reply) {
                      writing_ = ByteBufferFrom(std::move(reply));
                      StartWrite(&writing_);
                    },
                    [this](ChunkStreamPolicy::Ending ending) { End(std::move(ending)); }}) {}

  void Begin() { policy_.Start(); }
  void OnWriteDone(bool ok) override { policy_.WriteDone(ok); }
  void OnCancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    policy_.Cancel();
  }
  // The call's outcome is recorded here, when gRPC is done with it: a stream that ended with its
  // last reply may still be cancelled (deadline, client gone) before that reply is delivered, and
  // then OnCancel came first. Deleting the stream drops last_admission_: gRPC released the last
  // reply's bytes by now.
  void OnDone() override {
    const bool abandoned = final_status_.ok() && cancelled_.load();
    record_.Finished(abandoned ? AbandonedStatus(*context_) : final_status_, final_reason_);
    delete this;
  }

 private:
  void End(ChunkStreamPolicy::Ending ending) {
    grpc::Status status = CallStatus(context_, ending.status);
    AddServerTiming(context_, *record_.times());
    final_status_ = status;
    if (absl::IsResourceExhausted(ending.status)) final_reason_ = kShed;
    if (ending.last_reply == nullptr) {
      Finish(std::move(status));
      return;
    }
    last_admission_ = std::move(ending.admission);
    writing_ = ByteBufferFrom(std::move(ending.last_reply));
    StartWriteAndFinish(&writing_, grpc::WriteOptions(), std::move(status));
  }

  // The encoded reply of chunk `index`, through the shared flights (see the header), handed to
  // `done`: at once when it is cached or blended here; when another call is blending the same
  // chunk, by that call's thread once it publishes, this task's thread going back to the pool.
  void Produce(int64_t index, ChunkStreamPolicy::Produced done) {
    const ChunkSelection::Coord coord = selection_.at(index);
    ChunkReplyKey key{world_->uid(), coord.x, coord.z, selection_.size(),
                      ChunkReplyOptionBits(options_)};
    if (selection_.vertical()) {
      key.min_y = selection_.vertical()->min_y;
      key.max_y = selection_.vertical()->max_y;
      key.cell = selection_.vertical()->cell;
    }
    std::shared_ptr<const std::string> hit;
    // Moved into the joiner callback only when the lookup joins (Lookup calls it at most then).
    auto pending = std::make_shared<ChunkStreamPolicy::Produced>(std::move(done));
    const ChunkReplyFlights::Outcome outcome = deps_.replies->Lookup(
        key, &hit, [this, coord, pending](std::shared_ptr<const std::string> bytes) {
          // The leader failed or gave up (an engine error): blend it for this call alone, on the
          // leader's thread, which has just finished the same chunk's work.
          std::move (*pending)(bytes != nullptr ? absl::StatusOr<ChunkStreamPolicy::Reply>(bytes)
                                                : Blend(coord));
        });
    switch (outcome) {
      case ChunkReplyFlights::Outcome::kHit:
        return std::move(*pending)(hit);
      case ChunkReplyFlights::Outcome::kJoined:
        return;  // The callback above delivers it.
      case ChunkReplyFlights::Outcome::kLeader: {
        absl::StatusOr<ChunkStreamPolicy::Reply> bytes = Blend(coord);
        if (bytes.ok()) {
          deps_.replies->Publish(key, *bytes, ChunkReplyEntryBytes(**bytes));
        } else {
          deps_.replies->Abandon(key);
        }
        return std::move(*pending)(std::move(bytes));
      }
    }
  }

  // Blends and encodes one chunk, and records what it cost (metrics, admission's estimate).
  absl::StatusOr<ChunkStreamPolicy::Reply> Blend(const ChunkSelection::Coord& coord) {
    const absl::Time start = absl::Now();
    absl::Duration lent;  // This thread's time in other calls' tasks.
    const auto& vertical = selection_.vertical();
    v1::ChunkData data;
    absl::Status status;
    // Between pieces a background call's thread may run other calls' tasks; their time is not this
    // chunk's. Encoding a big chunk takes about as long as a piece: waiting tasks go first.
    auto lend = [&] { lent += deps_.scheduler->RunWaitingInteractive(call_class_); };
    if (vertical) {
      absl::StatusOr<VolumeBlend> blend =
          world_->BlendVolumeInPieces(coord.x, coord.z, selection_.size(), vertical->min_y,
                                      vertical->max_y, vertical->cell, options_, deps_.cache, lend);
      status = blend.status();
      lend();
      if (blend.ok()) EncodeVolume(*blend, &data);
    } else {
      absl::StatusOr<ChunkBlend> blend = world_->BlendChunkInPieces(
          coord.x, coord.z, selection_.size(), options_, deps_.cache, lend);
      status = blend.status();
      lend();
      if (blend.ok()) EncodeChunk(*blend, &data);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "worldgen-server: GenerateChunk chunk (%lld, %lld) size %d: %s\n",
                   static_cast<long long>(coord.x), static_cast<long long>(coord.z),
                   selection_.size(), status.ToString().c_str());
      std::fflush(stderr);
      return status;
    }
    auto bytes = std::make_shared<const std::string>(data.SerializeAsString());
    const absl::Duration elapsed = absl::Now() - start - lent;
    deps_.metrics->RecordChunk(elapsed);
    record_.times()->AddBlend(elapsed);
    if (vertical) {
      deps_.scheduler->RecordCellCost(ChunkCells(selection_), elapsed);
    } else {
      deps_.scheduler->RecordTaskCost(int64_t{selection_.size()} * selection_.size(), elapsed);
    }
    return bytes;
  }

  const WorldGenService::Deps& deps_;
  grpc::CallbackServerContext* const context_;
  const std::shared_ptr<const World> world_;
  const ChunkSelection selection_;
  const BlendOptions options_;
  const CallRecord record_;
  // The call's class: a background call's thread runs waiting interactive tasks between the pieces
  // of its chunks and volumes (CallScheduler::RunWaitingInteractive).
  const CallClass call_class_;
  grpc::ByteBuffer writing_;  // The reply being written (one at a time).
  // The scheduler call after the policy handed it over with the last reply: its reservation covers
  // that reply until OnDone.
  std::unique_ptr<CallScheduler::Call> last_admission_;
  // Set by End, read in OnDone.
  grpc::Status final_status_{grpc::StatusCode::UNKNOWN, "the stream did not end"};
  absl::string_view final_reason_;
  std::atomic<bool> cancelled_{false};  // OnCancel was called.
  ChunkStreamPolicy policy_;
};

// One SampleWeights or ListSamplingPoints call: holds its admission until gRPC is done with the
// reply.
class SampleCall final : public grpc::ServerUnaryReactor {
 public:
  SampleCall(grpc::CallbackServerContext* context, std::unique_ptr<CallScheduler::Call> call)
      : context_(context), call_(std::move(call)) {}
  CallScheduler::Call* call() const { return call_.get(); }
  // Records and finishes the call with `status` and its server timing (`reason`: kShed for a call
  // the scheduler shed, else empty; see CallRecord::Finished).
  void Done(const CallRecord& record, grpc::Status status, absl::string_view reason = {}) {
    AddServerTiming(context_, *record.times());
    record.Finished(status, reason);
    Finish(std::move(status));
  }
  void OnDone() override { delete this; }

 private:
  grpc::CallbackServerContext* const context_;
  std::unique_ptr<CallScheduler::Call> call_;
};

// A unary call refused before any work (see Refused), finished by gRPC's default reactor.
grpc::ServerUnaryReactor* RefusedUnary(grpc::CallbackServerContext* context,
                                       const CallRecord& record, const absl::Status& status,
                                       absl::string_view reason) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(Refused(context, record, status, reason));
  return reactor;
}

// Admits a call of `shape`, whose deadline, fair-share client and timing come from the call.
absl::StatusOr<std::unique_ptr<CallScheduler::Call>> AdmitCall(
    CallScheduler& scheduler, const grpc::CallbackServerContext& context, const CallRecord& record,
    CallShape shape) {
  shape.deadline = CallDeadline(context);
  shape.client = record.client();
  shape.times = record.times();
  return scheduler.Admit(shape, absl::Now());
}

// Admits a unary call of one task (SampleWeights, ListSamplingPoints) and queues `work` for a pool
// thread, its one reply reserved: `work` finishes the call unless the scheduler sheds it first,
// which finishes it with the shedding's pushback. A call not admitted is refused at once.
// `work(SampleCall& reactor, const CallRecord& record)`.
template <typename Work>
grpc::ServerUnaryReactor* RunUnary(CallScheduler& scheduler, grpc::CallbackServerContext* context,
                                   const CallRecord& record, CallShape shape, Work work) {
  absl::StatusOr<std::unique_ptr<CallScheduler::Call>> call =
      AdmitCall(scheduler, *context, record, std::move(shape));
  if (!call.ok()) {
    return RefusedUnary(context, record, call.status(),
                        CallScheduler::RefusalReason(call.status()));
  }
  auto* reactor = new SampleCall(context, *std::move(call));
  reactor->call()->TryReserveReply();  // Always succeeds: the admission floor covers one reply.
  reactor->call()->Submit([context, reactor, record, work = std::move(work)]() mutable {
    if (reactor->call()->shed()) {
      reactor->Done(record, PushbackStatus(context, reactor->call()->ShedStatus()), kShed);
      return;
    }
    work(*reactor, record);
  });
  return reactor;
}

}  // namespace

WorldGenService::WorldGenService(const WorldRegistry* worlds, CallScheduler* scheduler,
                                 BiomeSampleCache* cache, ChunkReplyFlights* replies,
                                 ServerMetrics* metrics, ServiceOptions options)
    : deps_{worlds, scheduler, cache, replies, metrics, options} {
  InstallParseLogHandler();
  if (deps_.options.stream_buffer_chunks < 1) deps_.options.stream_buffer_chunks = 1;
  if (deps_.options.stream_buffer_bytes < 1) deps_.options.stream_buffer_bytes = 1;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* WorldGenService::GenerateChunk(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* raw_request) {
  CallRecord record(deps_, kGenerateChunk, context);
  auto refuse = [&](const absl::Status& status, absl::string_view reason) {
    return new RefusedStream(Refused(context, record, status, reason));
  };
  v1::GenerateChunkRequest request;
  if (absl::Status s = ParseRequest(*raw_request, &request); !s.ok()) {
    return refuse(s, "unparseable");
  }
  record.set_world(request.world());
  absl::StatusOr<std::shared_ptr<const World>> world =
      FindWorld(*deps_.worlds, request.world(), request.world_fingerprint());
  if (!world.ok()) return refuse(world.status(), FindWorldRefusal(world.status()));
  absl::StatusOr<ChunkSelection> selection =
      ValidateChunkRequest(request, (*world)->spec().chunk_size, deps_.options.limits);
  if (!selection.ok()) return refuse(selection.status(), "invalid_argument");
  record.set_items(static_cast<int32_t>(selection->count()));  // <= max_chunks_per_request
  const int biome_count = static_cast<int>((*world)->spec().biomes.size());
  if (absl::Status s = ValidateSplatRequest(request, *selection, biome_count); !s.ok()) {
    return refuse(s, "invalid_argument");
  }
  BlendOptions options;
  options.heights = request.include_heights();
  options.dominant_biome = request.include_dominant_biome();
  options.source_biome = request.include_source_biome();
  options.splat = request.include_splat();
  CallShape shape;
  shape.tasks = selection->count();
  shape.columns_per_task = int64_t{selection->size()} * selection->size();
  shape.cells_per_task = ChunkCells(*selection);
  shape.reply_bytes_per_task =
      selection->vertical()
          ? MaxEncodedVolumeBytes(selection->size(), selection->vertical()->cell,
                                  selection->vertical()->sections(), biome_count, options)
          : MaxEncodedChunkBytes(selection->size(), biome_count, options);
  absl::StatusOr<std::unique_ptr<CallScheduler::Call>> call =
      AdmitCall(*deps_.scheduler, *context, record, shape);
  if (!call.ok()) return refuse(call.status(), CallScheduler::RefusalReason(call.status()));
  const int buffer_chunks = ChunkStreamPolicy::BufferChunks(deps_.options.stream_buffer_chunks,
                                                            deps_.options.stream_buffer_bytes,
                                                            shape.reply_bytes_per_task);
  auto* stream = new ChunkStream(deps_, context, *std::move(world), *std::move(selection), options,
                                 record, *std::move(call), buffer_chunks);
  stream->Begin();
  return stream;
}

grpc::ServerUnaryReactor* WorldGenService::SampleWeights(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* raw_request,
                                                         grpc::ByteBuffer* raw_response) {
  CallRecord record(deps_, kSampleWeights, context);
  auto refuse = [&](const absl::Status& status, absl::string_view reason) {
    return RefusedUnary(context, record, status, reason);
  };
  auto request = std::make_shared<v1::SampleWeightsRequest>();
  if (absl::Status s = ParseRequest(*raw_request, request.get()); !s.ok()) {
    return refuse(s, "unparseable");
  }
  record.set_world(request->world());
  absl::StatusOr<std::shared_ptr<const World>> world =
      FindWorld(*deps_.worlds, request->world(), request->world_fingerprint());
  if (!world.ok()) return refuse(world.status(), FindWorldRefusal(world.status()));
  absl::Status valid = ValidateSampleRequest(*request, deps_.options.limits);
  if (!valid.ok()) return refuse(valid, "invalid_argument");
  record.set_items(request->points_size());
  CallShape shape;
  shape.tasks = 1;
  shape.points_per_task = std::max(request->points_size(), 1);
  shape.volume_points_per_task = VolumePoints(*request);
  BlendOptions reply_options;
  reply_options.heights = request->include_heights();
  reply_options.source_biome = request->include_source_biome();
  shape.reply_bytes_per_task = MaxEncodedSampleBytes(
      request->points_size(), static_cast<int>((*world)->spec().biomes.size()), reply_options);
  auto blend_points = [this, context, request, raw_response, world = *std::move(world)](
                          SampleCall& reactor, const CallRecord& record) {
    PointTimes times;
    // A background call's thread runs waiting interactive tasks between its points.
    const CallClass call_class = reactor.call()->call_class();
    absl::StatusOr<v1::SampleWeightsResponse> response = SamplePoints(
        *world, *request, deps_.cache, [context] { return context->IsCancelled(); },
        [&] { return deps_.scheduler->RunWaitingInteractive(call_class); }, &times);
    record.times()->AddBlend(times.planar_time + times.volume_time);
    if (absl::IsCancelled(response.status())) {
      reactor.Done(record, AbandonedStatus(*context));
      return;
    }
    if (!response.ok()) {
      reactor.Done(record, grpc::Status(grpc::StatusCode::INTERNAL,
                                        std::string(response.status().message())));
      return;
    }
    deps_.metrics->AddPointsSampled(request->points_size());
    deps_.scheduler->RecordPointCost(times.planar, times.planar_time);
    deps_.scheduler->RecordVolumePointCost(times.volume, times.volume_time);
    SerializeReply(*response, raw_response);
    reactor.Done(record, grpc::Status::OK);
  };
  return RunUnary(*deps_.scheduler, context, record, std::move(shape), std::move(blend_points));
}

grpc::ServerUnaryReactor* WorldGenService::ListSamplingPoints(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* raw_request,
                                                              grpc::ByteBuffer* raw_response) {
  CallRecord record(deps_, kListSamplingPoints, context);
  auto refuse = [&](const absl::Status& status, absl::string_view reason) {
    return RefusedUnary(context, record, status, reason);
  };
  v1::ListSamplingPointsRequest request;
  if (absl::Status s = ParseRequest(*raw_request, &request); !s.ok()) {
    return refuse(s, "unparseable");
  }
  record.set_world(request.world());
  absl::StatusOr<std::shared_ptr<const World>> world =
      FindWorld(*deps_.worlds, request.world(), request.world_fingerprint());
  if (!world.ok()) return refuse(world.status(), FindWorldRefusal(world.status()));
  absl::StatusOr<BlockBox> box =
      ValidateSamplingPointsRequest(request, (*world)->blender(), deps_.options.limits);
  if (!box.ok()) return refuse(box.status(), "invalid_argument");
  const double bound = (*world)->blender().SamplingPointBound(*box);  // <= the limit (validated)
  CallShape shape;
  shape.tasks = 1;
  shape.columns_per_task = std::max<int64_t>(1, static_cast<int64_t>(bound));
  shape.reply_bytes_per_task = MaxEncodedSamplingPointsBytes(static_cast<int64_t>(bound));
  auto list_points = [this, context, box = *box, raw_response, world = *std::move(world)](
                         SampleCall& reactor, const CallRecord& record) {
    if (context->IsCancelled()) {
      reactor.Done(record, AbandonedStatus(*context));
      return;
    }
    const absl::Time start = absl::Now();
    SerializeReply(SamplingPointsReply(*world, box, deps_.cache), raw_response);
    record.times()->AddBlend(absl::Now() - start);
    reactor.Done(record, grpc::Status::OK);
  };
  return RunUnary(*deps_.scheduler, context, record, std::move(shape), std::move(list_points));
}

grpc::ServerUnaryReactor* WorldGenService::DescribeWorld(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* raw_request,
                                                         grpc::ByteBuffer* raw_response) {
  CallRecord record(deps_, kDescribeWorld, context);
  v1::DescribeWorldRequest request;
  if (absl::Status s = ParseRequest(*raw_request, &request); !s.ok()) {
    return RefusedUnary(context, record, s, "unparseable");
  }
  absl::StatusOr<std::shared_ptr<const World>> world = FindWorld(*deps_.worlds, request.world());
  record.set_world(request.world());
  if (!world.ok()) return RefusedUnary(context, record, world.status(), "not_found");
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  SerializeReply(DescribeWorldReply(**world, *deps_.worlds, deps_.options.limits), raw_response);
  record.Finished(grpc::Status::OK);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace worldgen
