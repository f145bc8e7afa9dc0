#include "engine/fingerprint.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "engine/floor_div.h"
#include "engine/world_spec.h"

namespace worldgen {

uint64_t HashChunk(const ChunkBlend& chunk, uint64_t h) {
  Fnv1a fnv(h);
  fnv.Add(static_cast<uint64_t>(chunk.chunk_x));
  fnv.Add(static_cast<uint64_t>(chunk.chunk_z));
  fnv.Add(static_cast<uint64_t>(chunk.single_biome));
  fnv.Add(chunk.layers);
  for (float v : chunk.heights) fnv.Add(FloatBits(v));
  for (uint32_t v : chunk.dominant_biome) fnv.Add(v);
  for (uint32_t v : chunk.source_biome) fnv.Add(v);
  for (const std::vector<uint8_t>& texture : chunk.splat_textures) {
    for (uint8_t v : texture) fnv.Add(v);
  }
  return fnv.value();
}

uint64_t HashVolume(const VolumeBlend& volume, uint64_t h) {
  Fnv1a fnv(h);
  fnv.Add(static_cast<uint64_t>(volume.chunk_x));
  fnv.Add(static_cast<uint64_t>(volume.chunk_z));
  fnv.Add(static_cast<uint64_t>(volume.cell));
  for (const SectionBlend& section : volume.sections) {
    fnv.Add(static_cast<uint64_t>(section.min_y));
    fnv.Add(section.single_biome);
    fnv.Add(section.layers);
    for (uint32_t id : section.dominant_biome) fnv.Add(id);
    for (uint32_t id : section.source_biome) fnv.Add(id);
  }
  return fnv.value();
}

uint64_t HashPoint(const PointBlend& point, uint64_t h) {
  Fnv1a fnv(h);
  for (const BiomeWeight& w : point.weights) {
    fnv.Add(w.biome_id);
    fnv.Add(FloatBits(w.weight));
  }
  fnv.Add(FloatBits(point.height));
  fnv.Add(point.dominant_biome);
  fnv.Add(point.source_biome);
  return fnv.value();
}

namespace {

// The lowest y of the 3D probe: one section below the lowest cave band's floor (so the band's
// lower border runs through the probe), 0 in a world without caves; inside the world's y bounds.
int64_t VolumeProbeMinY(const WorldSpec& spec) {
  double floor_y = 16.0;  // No caves: the probe spans [0, 32).
  for (const BiomeSpec& biome : spec.biomes) {
    if (biome.cave.has_value()) floor_y = std::min(floor_y, biome.cave->y_min);
  }
  const int64_t below = FloorDiv(static_cast<int64_t>(std::floor(floor_y)), kSectionHeight) - 1;
  return std::clamp<int64_t>(below * kSectionHeight, -kMaxWorldY, kMaxWorldY - 2 * kSectionHeight);
}

}  // namespace

uint64_t OutputFingerprint(const World& world) {
  Fnv1a fnv;
  // Chunks near the origin (both signs), chunks of 32, and chunks far out (to 2^24 blocks), where
  // the lattice and the noise work with large coordinates.
  struct ChunkProbe {
    int64_t chunk_x, chunk_z;
    int size;
  };
  constexpr ChunkProbe kChunks[] = {
      {0, 0, 16},        {-1, -1, 16},           {7, -3, 32}, {-41, 96, 16}, {1250, -830, 16},
      {-9000, 4000, 32}, {1048575, -1048576, 16}};
  constexpr BlendOptions kColumns{
      .heights = true, .dominant_biome = true, .source_biome = true, .splat = true};
  for (const ChunkProbe& probe : kChunks) {
    const absl::StatusOr<ChunkBlend> chunk =
        world.BlendChunk(probe.chunk_x, probe.chunk_z, probe.size, kColumns);
    // Every probe is a valid chunk for every valid world; a failure still changes the hash.
    fnv.Add(chunk.ok() ? HashChunk(*chunk) : static_cast<uint64_t>(chunk.status().code()));
  }

  struct PointProbe {
    double x, z;
  };
  constexpr PointProbe kPoints[] = {{0.5, -0.25},
                                    {-17.375, 33.625},
                                    {1234.75, -987.125},
                                    {-300000.3, 70000.6},
                                    {16777215.5, -16777215.5}};
  constexpr BlendOptions kPoint{.heights = true, .dominant_biome = true, .source_biome = true};
  for (const PointProbe& probe : kPoints) {
    const absl::StatusOr<PointBlend> point = world.BlendPoint(probe.x, probe.z, kPoint);
    fnv.Add(point.ok() ? HashPoint(*point) : static_cast<uint64_t>(point.status().code()));
  }

  const int64_t min_y = VolumeProbeMinY(world.spec());
  const int64_t max_y = min_y + 2 * kSectionHeight;
  constexpr BlendOptions kCells{.dominant_biome = true, .source_biome = true};
  for (const ChunkProbe& probe : {ChunkProbe{0, 0, 16}, ChunkProbe{-3, 5, 16}}) {
    const absl::StatusOr<VolumeBlend> volume =
        world.BlendVolume(probe.chunk_x, probe.chunk_z, probe.size, min_y, max_y, 4, kCells);
    fnv.Add(volume.ok() ? HashVolume(*volume) : static_cast<uint64_t>(volume.status().code()));
  }
  const double y = static_cast<double>(min_y);
  for (const auto& [px, py, pz] : {std::array<double, 3>{0.5, y + 3.25, -0.75},
                                   std::array<double, 3>{100.25, y + 17.5, -55.5}}) {
    const absl::StatusOr<PointBlend> point = world.BlendPoint(px, py, pz, kPoint);
    fnv.Add(point.ok() ? HashPoint(*point) : static_cast<uint64_t>(point.status().code()));
  }
  return fnv.value();
}

}  // namespace worldgen
