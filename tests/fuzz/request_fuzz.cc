// Fuzz target: request message bytes -> parse -> validation -> engine, as the server does. The
// first byte picks the message (even: GenerateChunkRequest, 1 mod 4: SampleWeightsRequest, 3 mod 4:
// ListSamplingPointsRequest); the rest are its bytes. A request that validates must blend without
// error (its first chunk or, for a vertical range, its first chunk's volume in a world with caves;
// or its first few points, in 3D when they have y), and a validated box's sampling points number at
// most the limit and lie in the box.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "engine/world.h"
#include "engine/world_spec.h"
#include "server/service/request_validation.h"
#include "worldgen/v1/worldgen.pb.h"

namespace {

const worldgen::World& DefaultWorld() {
  static const auto* world = new std::shared_ptr<const worldgen::World>(
      *worldgen::World::Create(worldgen::DefaultWorldSpec()));
  return **world;
}

// The default world with a cave biome, so that 3D requests (vertical ranges, points with y) reach
// the 3D blender.
const worldgen::World& CaveWorld() {
  static const auto* world = new std::shared_ptr<const worldgen::World>([] {
    worldgen::WorldSpec spec = worldgen::DefaultWorldSpec();
    worldgen::BiomeSpec cave = spec.biomes.front();
    cave.id = 900;
    cave.name = "cave";
    cave.temperature = 0.5;
    cave.humidity = 0.9;
    cave.cave = worldgen::CaveBand{-64.0, 0.0};
    spec.biomes.push_back(cave);
    return *worldgen::World::Create(spec);
  }());
  return **world;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const worldgen::RequestLimits limits;
  const worldgen::World& world = DefaultWorld();
  if (data[0] % 2 == 0) {
    worldgen::v1::GenerateChunkRequest request;
    if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
    absl::StatusOr<worldgen::ChunkSelection> selection =
        worldgen::ValidateChunkRequest(request, world.spec().chunk_size, limits);
    if (!selection.ok()) return 0;
    if (selection->count() < 1 || selection->count() > limits.max_chunks_per_request) std::abort();
    // Every index is addressable; blend the first and the last (small sizes only, to stay fast).
    const worldgen::ChunkSelection::Coord first = selection->at(0);
    const worldgen::ChunkSelection::Coord last = selection->at(selection->count() - 1);
    const auto& vertical = selection->vertical();
    if (vertical) {
      if (selection->count() * vertical->sections() > limits.max_sections_per_request) std::abort();
      // Small volumes only, to stay fast: a section of at most 16 x 16 x 16 cells.
      if (selection->size() / vertical->cell <= 16 && vertical->sections() <= 2) {
        if (!CaveWorld()
                 .BlendVolume(first.x, first.z, selection->size(), vertical->min_y, vertical->max_y,
                              vertical->cell, {}, nullptr)
                 .ok()) {
          std::abort();
        }
      }
    } else if (selection->size() <= 32) {
      for (const auto& coord : {first, last}) {
        if (!world.BlendChunk(coord.x, coord.z, selection->size(), {}, nullptr).ok()) std::abort();
      }
    }
  } else if (data[0] % 4 == 3) {
    worldgen::v1::ListSamplingPointsRequest request;
    if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
    absl::StatusOr<worldgen::BlockBox> box =
        worldgen::ValidateSamplingPointsRequest(request, world.blender(), limits);
    if (!box.ok()) return 0;
    std::vector<worldgen::SamplingPoint> points;
    world.blender().SamplingPoints(*box, nullptr, &points);
    if (static_cast<double>(points.size()) > world.blender().SamplingPointBound(*box) ||
        static_cast<int64_t>(points.size()) > limits.max_sampling_points_per_request) {
      std::abort();
    }
    for (const worldgen::SamplingPoint& p : points) {
      if (!box->Contains(p.x, p.z)) std::abort();
    }
  } else {
    worldgen::v1::SampleWeightsRequest request;
    if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
    if (!worldgen::ValidateSampleRequest(request, limits).ok()) return 0;
    for (int i = 0; i < request.points_size() && i < 8; ++i) {
      const worldgen::v1::Point& p = request.points(i);
      if (!(p.has_y() ? CaveWorld().BlendPoint(p.x(), p.y(), p.z(), {}, nullptr)
                      : world.BlendPoint(p.x(), p.z(), {}, nullptr))
               .ok()) {
        std::abort();
      }
    }
  }
  return 0;
}
