// WorldGenService: the worldgen.v1.WorldGen gRPC service on the callback API.
//
// Every method is registered raw (grpc::ByteBuffer in and out), so the service parses requests
// itself: bytes that are not the method's request message get INVALID_ARGUMENT (counted as
// "unparseable") instead of gRPC's bare UNIMPLEMENTED, and replies are serialized once, into bytes
// whose size the reply budget accounts.
//
// gRPC threads parse, validate and ask the CallScheduler for admission; blending runs on the
// scheduler's pool, except that a one-chunk call's chunk is blended on the gRPC thread when a pool
// thread is idle and nothing waits (CallScheduler::Call::SubmitOrRunHere: no hand-off, no
// overtaking). A stream's last reply is written together with its status (one gRPC operation).
// Admission is decided for the whole call up front (CallScheduler::Admit: RESOURCE_EXHAUSTED at
// once when the deadline cannot be met, or the reply budget or the queued work is full), each call
// counted for its client (ServiceOptions::fair_share: the peer's address, or what the balancer
// names in X-Forwarded-For or x-worldgen-client), between which work is shared. A
// refusal, and a background call the scheduler sheds for interactive ones, carries the scheduler's
// retry-after as the grpc-retry-pushback-ms trailer, which gRPC clients with a retry policy (and
// worldgen::Client) wait for before trying again.
// - GenerateChunk: the stream's decisions (which chunk next, how many outstanding, when to finish)
//   are ChunkStreamPolicy's; the reactor only moves bytes. Each chunk's encoded reply goes through
//   ChunkReplyFlights: concurrent calls for the same chunk blend it once (a joiner's task returns
//   its thread to the pool at once, and the leader's thread hands the bytes on when it publishes:
//   no thread waits for another), and with --chunk_cache_bytes repeats are served from encoded
//   bytes without blending.
// - SampleWeights: one task, checking for cancellation every few points.
// - ListSamplingPoints: one task, admitted as one column per point of the blender's bound (a
//   sampling point costs one biome-source read, less than a blended column, which reads many).
// - DescribeWorld: answered on the gRPC thread (no blending).
// Error messages never echo unbounded client input: a world name is escaped and cut to 64 bytes.
// A request that does not parse is INVALID_ARGUMENT saying why where protobuf knows (a string
// field that is not UTF-8): the first service made installs a protobuf log handler that takes that
// line out of stderr and into the refusal, and passes every other line on.
// Every call's end goes to the metrics and, when ServiceOptions::call_log wants it, to the call log
// (with the request's world and size, the peer and the balancer's forwarding headers).
//
// Thread safety: safe for concurrent calls (gRPC's contract for services). The registry, scheduler,
// caches and metrics passed in must outlive the service and the server it is registered with.
#ifndef WORLDGEN_SERVER_SERVICE_WORLDGEN_SERVICE_H_
#define WORLDGEN_SERVER_SERVICE_WORLDGEN_SERVICE_H_

#include "engine/biome_sample_cache.h"
#include "proto/world_registry.h"
#include "server/scheduling/call_scheduler.h"
#include "server/service/call_log.h"
#include "server/service/chunk_reply_flights.h"
#include "server/service/fair_share.h"
#include "server/service/metrics.h"
#include "server/service/request_validation.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {

struct ServiceOptions {
  RequestLimits limits;
  int stream_buffer_chunks = 16;                   // >= 1
  int64_t stream_buffer_bytes = int64_t{8} << 20;  // >= 1; see ChunkStreamPolicy::BufferChunks
  CallLog* call_log = nullptr;                     // Null: no call log. Must outlive the service.
  FairShare fair_share = FairShare::kPeer;         // whom the scheduler shares work between
  CallLog::PeerName peer_name;  // the peer's address for gRPC's name; null: that name
};

using RawWorldGenService = v1::WorldGen::WithRawCallbackMethod_GenerateChunk<
    v1::WorldGen::WithRawCallbackMethod_SampleWeights<
        v1::WorldGen::WithRawCallbackMethod_DescribeWorld<
            v1::WorldGen::WithRawCallbackMethod_ListSamplingPoints<
                v1::WorldGen::CallbackService>>>>;

class WorldGenService final : public RawWorldGenService {
 public:
  // `cache` may be null (no caching); `replies` is required (its capacity may be 0).
  WorldGenService(const WorldRegistry* worlds, CallScheduler* scheduler, BiomeSampleCache* cache,
                  ChunkReplyFlights* replies, ServerMetrics* metrics, ServiceOptions options);

  grpc::ServerWriteReactor<grpc::ByteBuffer>* GenerateChunk(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* SampleWeights(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* DescribeWorld(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListSamplingPoints(grpc::CallbackServerContext* context,
                                               const grpc::ByteBuffer* request,
                                               grpc::ByteBuffer* response) override;

  // Dependencies shared with the per-call reactors.
  struct Deps {
    const WorldRegistry* worlds;
    CallScheduler* scheduler;
    BiomeSampleCache* cache;
    ChunkReplyFlights* replies;
    ServerMetrics* metrics;
    ServiceOptions options;
  };

 private:
  Deps deps_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_WORLDGEN_SERVICE_H_
