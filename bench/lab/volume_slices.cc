#include "bench/lab/volume_slices.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/lab/lab_views.h"
#include "engine/quality/full_resolution_volume.h"

namespace worldgen::lab {
namespace {

// The same cache size the 2D rows are timed with (lab_main.cc, TimeBlend).
constexpr size_t kCacheBytes = 64 << 20;

// Every cell of `slice` in picture order (rows, then columns), by index and block.
template <typename Fn>
void ForEachCell(const VolumeSlice& slice, Fn&& fn) {
  for (int v = 0; v < slice.height; ++v) {
    for (int u = 0; u < slice.width; ++u) {
      fn(static_cast<size_t>(v) * static_cast<size_t>(slice.width) + static_cast<size_t>(u),
         slice.Block(u, v));
    }
  }
}

void Store(const std::vector<std::pair<int, float>>& weights, size_t cell,
           quality::RegionWeights* field) {
  for (const auto& [biome, w] : weights) field->layer(biome)[cell] = w;
}

double NanosecondsPerCell(std::chrono::steady_clock::time_point start, size_t cells) {
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(cells);
}

}  // namespace

std::array<double, 3> VolumeSlice::Block(int u, int v) const {
  std::array<double, 3> block;
  for (size_t a = 0; a < 3; ++a)
    block[a] = static_cast<double>(origin[a] + u * step_u[a] + v * step_v[a]);
  return block;
}

VolumeBox VolumeSlice::Box() const {
  const std::array<double, 3> a = Block(0, 0), b = Block(width - 1, height - 1);
  return {std::min(a[0], b[0]), std::min(a[1], b[1]), std::min(a[2], b[2]),
          std::max(a[0], b[0]), std::max(a[1], b[1]), std::max(a[2], b[2])};
}

VolumeSlice HorizontalSlice(int64_t x0, int64_t z0, int width, int height, int64_t y) {
  return {.name = "horizontal",
          .where = absl::StrFormat("y = %d, x [%d, %d], z [%d, %d]", y, x0, x0 + width - 1, z0,
                                   z0 + height - 1),
          .width = width,
          .height = height,
          .origin = {x0, y, z0},
          .step_u = {1, 0, 0},
          .step_v = {0, 0, 1}};
}

VolumeSlice VerticalSlice(int64_t x, int64_t z0, int width, int64_t min_y, int64_t max_y) {
  return {.name = "vertical",
          .where = absl::StrFormat("x = %d, z [%d, %d], y [%d, %d]", x, z0, z0 + width - 1, min_y,
                                   max_y),
          .width = width,
          .height = static_cast<int>(max_y - min_y + 1),
          .origin = {x, max_y, z0},
          .step_u = {0, 0, 1},
          .step_v = {0, -1, 0}};
}

SliceBlend::SliceBlend(const VolumeSlice& slice, int biome_count)
    : slice(slice),
      map(0, 0, slice.width, slice.height, biome_count),
      scattered(map),
      reference(map),
      surface(map) {}

absl::StatusOr<SliceBlend> BlendSlice(const World& world, const VolumeSlice& slice, int repeat,
                                      std::span<const LayeredMethod> layered) {
  const std::vector<BiomeSpec>& biomes = world.spec().biomes;
  SliceBlend out(slice, static_cast<int>(biomes.size()));
  const size_t cells = out.map.columns();
  // The reference first: a slice it refuses (too large, outside the world, a world without caves)
  // is refused before anything else. Its time includes reading the 3D map over the slice's
  // reach, which is part of its cost per cell.
  BiomeSampleCache reference_cache(kCacheBytes);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<quality::FullResolutionVolumeReference> reference =
      quality::FullResolutionVolumeReference::Create(world, slice.Box());
  if (!reference.ok()) return reference.status();
  std::vector<std::pair<int, float>> weights;
  absl::Status status;
  ForEachCell(slice, [&](size_t cell, const std::array<double, 3>& b) {
    if (absl::Status s = reference->BlendPoint(b[0], b[1], b[2], &reference_cache, &weights);
        !s.ok()) {
      status.Update(s);
      return;
    }
    Store(weights, cell, &out.reference);
  });
  if (!status.ok()) return status;
  out.ns_per_cell_reference = NanosecondsPerCell(start, cells);

  size_t caves = 0;
  ForEachCell(slice, [&](size_t cell, const std::array<double, 3>& b) {
    const int biome = world.volume_source()->BiomeIndexAt(b[0], b[1], b[2]);
    out.map.layer(biome)[cell] = 1.0f;
    caves += biomes[static_cast<size_t>(biome)].cave ? 1 : 0;
  });
  out.cave_share = static_cast<double>(caves) / static_cast<double>(cells);

  // The 3D blend through the world's own entry point, as a client gets it.
  out.ns_per_cell_scattered = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < std::max(1, repeat); ++pass) {
    BiomeSampleCache cache(kCacheBytes);
    start = std::chrono::steady_clock::now();
    ForEachCell(slice, [&](size_t cell, const std::array<double, 3>& b) {
      absl::StatusOr<PointBlend> point = world.BlendPoint(b[0], b[1], b[2], {}, &cache);
      if (!point.ok()) {
        status.Update(point.status());
        return;
      }
      if (pass > 0) return;
      for (const BiomeWeight& w : point->weights) {
        out.scattered.layer(DenseBiomeIndex(biomes, w.biome_id))[cell] = w.weight;
      }
    });
    if (!status.ok()) return status;
    out.ns_per_cell_scattered =
        std::min(out.ns_per_cell_scattered, NanosecondsPerCell(start, cells));
  }

  ForEachCell(slice, [&](size_t cell, const std::array<double, 3>& b) {
    world.blender().BlendPoint(b[0], b[2], &reference_cache, &weights);
    Store(weights, cell, &out.surface);
  });
  for (const LayeredMethod& method : layered) {
    LayeredVolumePrototype prototype(world, method);
    quality::RegionWeights& field = out.layered.emplace_back(out.map);
    std::fill(field.weights.begin(), field.weights.end(), 0.0f);
    uint64_t terms = 0;
    ForEachCell(slice, [&](size_t cell, const std::array<double, 3>& b) {
      prototype.BlendPoint(b[0], b[1], b[2], &reference_cache, &weights, &terms);
      Store(weights, cell, &field);
    });
    out.layered_terms_per_cell.push_back(static_cast<double>(terms) / static_cast<double>(cells));
  }
  return out;
}

}  // namespace worldgen::lab
