// WorldGenService: the worldgen.v1.WorldGen gRPC service on the callback API.
//
// gRPC threads only validate requests and enqueue work; blending runs on the BlendPool.
// - GenerateChunk: a ServerWriteReactor keeps at most `stream_buffer_chunks` chunks outstanding
//   (queued, blending, or waiting to be written), so a slow reader holds a bounded amount of memory and
//   pool time; the next chunk is enqueued only when one has been written. A cancelled or expired call
//   blends nothing more: each task checks for cancellation before blending.
// - SampleWeights: one pool task per call, checking for cancellation every few points.
// - DescribeWorld: answered on the gRPC thread (no blending).
// A call whose first task does not fit in the pool's queue fails with RESOURCE_EXHAUSTED.
//
// Thread safety: safe for concurrent calls (gRPC's contract for services). The registry, pool, cache
// and metrics passed in must outlive the service and the server it is registered with.
#ifndef WORLDGEN_SERVER_WORLDGEN_SERVICE_H_
#define WORLDGEN_SERVER_WORLDGEN_SERVICE_H_

#include "engine/biome_sample_cache.h"
#include "server/blend_pool.h"
#include "server/metrics.h"
#include "server/request_validation.h"
#include "server/world_registry.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {

struct ServiceOptions {
  RequestLimits limits;
  int stream_buffer_chunks = 4;  // >= 1
};

class WorldGenService final : public v1::WorldGen::CallbackService {
 public:
  // `cache` may be null (no caching).
  WorldGenService(const WorldRegistry* worlds, BlendPool* pool, BiomeSampleCache* cache,
                  ServerMetrics* metrics, ServiceOptions options);

  grpc::ServerWriteReactor<v1::ChunkData>* GenerateChunk(
      grpc::CallbackServerContext* context, const v1::GenerateChunkRequest* request) override;
  grpc::ServerUnaryReactor* SampleWeights(grpc::CallbackServerContext* context,
                                          const v1::SampleWeightsRequest* request,
                                          v1::SampleWeightsResponse* response) override;
  grpc::ServerUnaryReactor* DescribeWorld(grpc::CallbackServerContext* context,
                                          const v1::DescribeWorldRequest* request,
                                          v1::WorldDescription* response) override;

  // Dependencies shared with the per-call reactors.
  struct Deps {
    const WorldRegistry* worlds;
    BlendPool* pool;
    BiomeSampleCache* cache;
    ServerMetrics* metrics;
    ServiceOptions options;
  };

 private:
  Deps deps_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_WORLDGEN_SERVICE_H_
