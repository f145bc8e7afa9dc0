// SquareGrid: biome samples on the square grid anchored at the world origin, vertex (gx, gz) at
// (gx * spacing, gz * spacing) blocks, and the kernel blender that convolves them.
//
// Seed 001's comparison methods sample the biome map on such a grid: every integer column
// (spacing 1, the full-resolution blur) or every `interval` blocks (convoluted and lerped grids).
// Vertices are gathered in canonical (gz, gx) order and their biomes come from the world's biome
// source through the shared BiomeSampleCache (tiles of kTileSize x kTileSize vertices).
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_SQUARE_GRID_H_
#define WORLDGEN_ENGINE_SQUARE_GRID_H_

#include <cstdint>
#include <span>
#include <vector>

#include "engine/blender.h"
#include "engine/sparse_convolution.h"

namespace worldgen {

class SquareGrid {
 public:
  // `spacing` >= 1 blocks; `radius_sq` per dense biome index (BiomeRadiiSquared); `source` must
  // outlive the grid; `world_uid` keys its tiles in a shared cache.
  SquareGrid(const BiomeSource& source, int spacing, std::vector<double> radius_sq,
             uint64_t world_uid);

  int spacing() const { return spacing_; }
  double max_radius() const { return max_radius_; }

  // Vertices whose kernel (of the largest radius) reaches some point of the box
  // [min_x, max_x] x [min_z, max_z], in canonical (gz, gx) order, with biome and squared radius.
  // `cache` may be null.
  void Gather(double min_x, double min_z, double max_x, double max_z, BiomeSampleCache* cache,
              std::vector<KernelSample>* out) const;

  // The vertices in the half-open box, in canonical (gz, gx) order, and exactly how many there
  // are (the work is that count's).
  void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                      std::vector<SamplingPoint>* out) const;
  double SamplingPointCount(const BlockBox& box) const;

 private:
  void ComputeTile(int32_t tile_x, int32_t tile_z, BiomeTile* tile) const;
  // The biomes (through `cache`, may be null) and squared radii of the vertices in `out`: row
  // gz0 + r holds gx_lo[r]..gx_hi[r] (none when hi < lo), stored from out[row_start[r]] on.
  void FillBiomes(int64_t gz0, std::span<const int64_t> gx_lo, std::span<const int64_t> gx_hi,
                  std::span<const size_t> row_start, BiomeSampleCache* cache,
                  std::vector<KernelSample>* out) const;

  const BiomeSource& source_;
  int spacing_;
  std::vector<double> radius_sq_;
  double max_radius_ = 0.0;
  uint64_t world_uid_;
};

// Normalized sparse convolution over a SquareGrid: full_resolution (spacing 1) and convoluted_grid.
class SquareGridKernelBlender final : public Blender {
 public:
  // Reads `blend_radius` (and `interval` unless `spacing` is given) from the spec's method.
  SquareGridKernelBlender(BlenderKind kind, int spacing, const WorldSpec& spec,
                          const BiomeSource& source, uint64_t world_uid);

  BlenderKind kind() const override { return kind_; }
  std::vector<BlenderFigure> Describe() const override { return figures_; }
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const override;
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const override;
  void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                      std::vector<SamplingPoint>* out) const override {
    grid_.SamplingPoints(box, cache, out);
  }
  double SamplingPointBound(const BlockBox& box) const override {
    return grid_.SamplingPointCount(box);
  }

 private:
  BlenderKind kind_;
  SquareGrid grid_;
  std::vector<BlenderFigure> figures_;
};

// Smallest kernel radius for a square grid of `spacing`: the farthest a column can be from its
// nearest vertex (spacing / sqrt(2)) plus a quarter spacing of padding, as for the scattered
// lattice.
double MinSquareGridRadius(int spacing);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_SQUARE_GRID_H_
