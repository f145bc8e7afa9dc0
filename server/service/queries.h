// The work of the unary methods apart from gRPC: what SampleWeights, ListSamplingPoints and
// DescribeWorld answer, as
// functions of the world and the request. The reactors in worldgen_service.cc only move it.
//
// Thread safety: pure functions of their arguments (the cache is safe for concurrent use).
#ifndef WORLDGEN_SERVER_SERVICE_QUERIES_H_
#define WORLDGEN_SERVER_SERVICE_QUERIES_H_

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "engine/biome_sample_cache.h"
#include "engine/world.h"
#include "server/service/request_validation.h"
#include "server/service/world_registry.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

// SampleWeights checks for cancellation before every this many points.
inline constexpr int kPointsPerCancellationCheck = 64;

// SampleWeights' work: every point blended and encoded in order; CANCELLED as soon as `cancelled`
// says so (asked every kPointsPerCancellationCheck points), INTERNAL (logged) if the engine fails.
absl::StatusOr<v1::SampleWeightsResponse> SamplePoints(const World& world,
                                                       const v1::SampleWeightsRequest& request,
                                                       BiomeSampleCache* cache,
                                                       absl::FunctionRef<bool()> cancelled);

// ListSamplingPoints' work: the world blender's sampling points in `box` (validated), biome ids
// from the world's table.
v1::ListSamplingPointsResponse SamplingPointsReply(const World& world, const BlockBox& box,
                                                   BiomeSampleCache* cache);

// DescribeWorld's reply for `world`: its config with every default filled in, the blender and its
// figures, the limits this server enforces, and the names of every served world.
v1::WorldDescription DescribeWorldReply(const World& world, const WorldRegistry& worlds,
                                        const RequestLimits& request_limits);

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_QUERIES_H_
