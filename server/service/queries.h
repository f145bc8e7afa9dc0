// The work of the unary methods apart from gRPC: what SampleWeights, ListSamplingPoints and
// DescribeWorld answer, as
// functions of the world and the request. The reactors in worldgen_service.cc only move it.
//
// Thread safety: pure functions of their arguments (the cache is safe for concurrent use).
#ifndef WORLDGEN_SERVER_SERVICE_QUERIES_H_
#define WORLDGEN_SERVER_SERVICE_QUERIES_H_

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/biome_sample_cache.h"
#include "engine/world.h"
#include "proto/world_registry.h"
#include "server/service/request_validation.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

// SampleWeights checks for cancellation before every this many points.
inline constexpr int kPointsPerCancellationCheck = 64;
// And offers its thread to other work (SamplePoints' `lend`) after every this many: 8 points far
// apart, each its own gather, are a few hundred microseconds (docs/performance.md).
inline constexpr int kPointsPerLend = 8;

// How many points of each kind SamplePoints blended and the time each kind took (blending and
// encoding): the scheduler's two point estimates (CallScheduler::RecordPointCost and
// RecordVolumePointCost) learn from them, and their sum is the call's blend time (CallTimes).
struct PointTimes {
  int64_t planar = 0;  // points without a y
  int64_t volume = 0;  // points with a y
  absl::Duration planar_time, volume_time;
};

// The number of `request`'s points that have a y.
int64_t VolumePoints(const v1::SampleWeightsRequest& request);

// SampleWeights' work: every point blended and encoded in order; CANCELLED as soon as `cancelled`
// says so (asked every kPointsPerCancellationCheck points), INTERNAL (logged) if the engine fails.
// `lend` is called after every kPointsPerLend points, holding nothing of the engine's, and returns
// how long it ran other work (a background call's CallScheduler::RunWaitingInteractive); that time
// is left out of `times`. `times`, if not null, receives each kind's count and time (the clock is
// read where the kind changes, so a request of one kind reads it twice), up to where it stopped
// when it fails.
absl::StatusOr<v1::SampleWeightsResponse> SamplePoints(const World& world,
                                                       const v1::SampleWeightsRequest& request,
                                                       BiomeSampleCache* cache,
                                                       absl::FunctionRef<bool()> cancelled,
                                                       absl::FunctionRef<absl::Duration()> lend,
                                                       PointTimes* times = nullptr);

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
