// worldgen-lab --slices: a cave world's 3D blend on planes of blocks through its caves, against the
// full-resolution 3D reference (engine/quality/full_resolution_volume.h).
#ifndef WORLDGEN_BENCH_LAB_VOLUME_SLICES_H_
#define WORLDGEN_BENCH_LAB_VOLUME_SLICES_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/lab/layered_volume.h"
#include "engine/quality/blend_metrics.h"
#include "engine/volume_blender.h"
#include "engine/world.h"

namespace worldgen::lab {

// A width x height picture of blocks: cell (u, v) (column u, row v of the picture) is the block
// origin + u * step_u + v * step_v.
struct VolumeSlice {
  std::string name;   // The table's row and the files' prefix.
  std::string where;  // The blocks it covers, for people.
  int width = 0, height = 0;
  std::array<int64_t, 3> origin{}, step_u{}, step_v{};  // (x, y, z)

  std::array<double, 3> Block(int u, int v) const;
  // The smallest box holding every block of the slice.
  VolumeBox Box() const;
};

// "horizontal": the width x height columns from (x0, z0) at height y, x along the picture's
// columns and z down its rows, as the 2D pictures lie.
VolumeSlice HorizontalSlice(int64_t x0, int64_t z0, int width, int height, int64_t y);
// "vertical": the plane x = const, z from z0 along the picture's columns, and y from max_y at the
// top row down to min_y at the bottom (up is up).
VolumeSlice VerticalSlice(int64_t x, int64_t z0, int width, int64_t min_y, int64_t max_y);

// One slice of a world's 3D blend. Every field of weights is the slice's picture (its x0 and z0
// are 0; column u, row v), in dense biome indices.
struct SliceBlend {
  explicit SliceBlend(const VolumeSlice& slice, int biome_count);

  VolumeSlice slice;
  quality::RegionWeights map;        // The raw 3D map: weight 1 for the biome there.
  quality::RegionWeights scattered;  // World::BlendPoint(x, y, z): the world's 3D blend.
  quality::RegionWeights reference;  // FullResolutionVolumeReference.
  quality::RegionWeights surface;    // The world's 2D blend of each cell's column.
  double cave_share = 0.0;           // Share of cells where the 3D map is a cave biome.
  // Per candidate method asked for (LayeredVolumePrototype): its blend, and its positive kernel
  // terms per cell.
  std::vector<quality::RegionWeights> layered;
  std::vector<double> layered_terms_per_cell;
  // The fastest of `repeat` passes for the 3D blend, each with a fresh cache; one pass, reading
  // the 3D map over the slice's reach included, for the reference.
  double ns_per_cell_scattered = 0.0, ns_per_cell_reference = 0.0;
};

// Blends `slice` of `world` all four ways, and with each of `layered`. FAILED_PRECONDITION for a
// world without cave biomes, INVALID_ARGUMENT for a slice the reference or World::BlendPoint
// refuses (their messages).
absl::StatusOr<SliceBlend> BlendSlice(const World& world, const VolumeSlice& slice, int repeat,
                                      std::span<const LayeredMethod> layered = {});

}  // namespace worldgen::lab

#endif  // WORLDGEN_BENCH_LAB_VOLUME_SLICES_H_
