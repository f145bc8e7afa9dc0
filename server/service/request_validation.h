// Validation of WorldGen requests against the engine's world bounds and the server's limits.
//
// Every error is INVALID_ARGUMENT and names the offending field, its value and the limit, e.g.
//   "chunk_size = 12 is not a power of two in [4, 256]"
//   "region covers 40 x 40 = 1600 chunks; the limit is max_chunks_per_request = 1024"
//   "points[3].x = nan is not finite"
// Arithmetic on request values is overflow-safe for every int64 input.
//
// Thread safety: ChunkSelection is a plain value; the functions have no shared state.
#ifndef WORLDGEN_SERVER_SERVICE_REQUEST_VALIDATION_H_
#define WORLDGEN_SERVER_SERVICE_REQUEST_VALIDATION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

// Limits a server enforces (flags); reported in DescribeWorld's ServerLimits.
// Chunk sizes: the engine's served range (IsServedChunkSize in engine/world_spec.h).
struct RequestLimits {
  int64_t max_chunks_per_request = 1024;
  int64_t max_points_per_request = 4096;
  // The most points one ListSamplingPoints box may hold: 65536 is a 256 x 256 map tile of a
  // full-resolution world, ~1.7 MiB of reply.
  int64_t max_sampling_points_per_request = 65536;
  // 3D requests: chunks times sections (GenerateChunkRequest.vertical). 6144 is 256 chunks of
  // Minecraft's 24 sections.
  int64_t max_sections_per_request = 6144;
};

// The validated chunks of a GenerateChunkRequest: count() chunks of size() columns, addressed by
// index.
class ChunkSelection {
 public:
  struct Coord {
    int64_t x = 0;
    int64_t z = 0;
  };

  // A 3D request's range (GenerateChunkRequest.vertical), cell size resolved.
  struct Vertical {
    int64_t min_y = 0;
    int64_t max_y = 0;
    int cell = 0;
    int64_t sections() const { return (max_y - min_y) / kSectionHeight; }
  };

  int size() const { return size_; }
  int64_t count() const { return count_; }
  // Set for a 3D request.
  const std::optional<Vertical>& vertical() const { return vertical_; }
  // Chunk `index` in [0, count()): list order, or row-major (x fastest) over a region.
  Coord at(int64_t index) const;

 private:
  friend absl::StatusOr<ChunkSelection> ValidateChunkRequest(const v1::GenerateChunkRequest&, int,
                                                             const RequestLimits&);
  int size_ = 0;
  int64_t count_ = 0;
  std::vector<Coord> list_;  // Empty for a region.
  int64_t region_min_x_ = 0;
  int64_t region_min_z_ = 0;
  int64_t region_width_ = 0;
  std::optional<Vertical> vertical_;
};

// Checks chunk size (0 = `world_chunk_size`), the selection, the chunk count, that a list names no
// chunk twice, and that every column of every chunk lies within
// [-kMaxWorldCoordinate, kMaxWorldCoordinate]; for a 3D request (vertical), the range and cell
// size (World::ValidateVolume), the sections per request, and that no per-column output (heights,
// splat) is asked for.
absl::StatusOr<ChunkSelection> ValidateChunkRequest(const v1::GenerateChunkRequest& request,
                                                    int world_chunk_size,
                                                    const RequestLimits& limits);

// OK if the request asks for no splat textures or they fit kMaxSplatBytesPerChunk (engine/splat.h)
// for a world of `biome_count` biomes at the selection's chunk size; else INVALID_ARGUMENT naming
// include_splat and the numbers.
absl::Status ValidateSplatRequest(const v1::GenerateChunkRequest& request,
                                  const ChunkSelection& selection, int biome_count);

// Checks the point count and that every point is finite and within the world bounds (y, if set,
// within +-kMaxWorldY).
absl::Status ValidateSampleRequest(const v1::SampleWeightsRequest& request,
                                   const RequestLimits& limits);

// The box of a ListSamplingPointsRequest: every bound finite and within the world bounds, min <
// max on both axes, and `blender`'s bound of the points inside at most
// limits.max_sampling_points_per_request.
absl::StatusOr<BlockBox> ValidateSamplingPointsRequest(const v1::ListSamplingPointsRequest& request,
                                                       const Blender& blender,
                                                       const RequestLimits& limits);

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_REQUEST_VALIDATION_H_
