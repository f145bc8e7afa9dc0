// JitteredCellsBlender: seed 003's jittered cells with a closest-cell transition curve, done right.
//
// The plane is cut into square cells of `cell_size` blocks anchored at the world origin. Cell (i,
// j) has one point, ((i + 1/2 + jitter (2u - 1)) s, (j + 1/2 + jitter (2v - 1)) s), with u, v in
// [0, 1) integer hashes of (world seed, i, j), and one biome: the biome source's at that point, or
// (with uniform_biomes) a hashed uniform pick among the surface biomes (a cave biome belongs to the
// 3D map only; without caves, every biome). A column (x, z) is looked up at its warped position
// P = (x, z) + warp_amplitude * (fractal noise, fractal noise). With d_c = |P - point_c| and
// d_min = min_c d_c, every cell weighs curve((d_c - d_min) / overlap), so the closest weighs
// curve(0) = 1, and a biome's weight is the sum of its cells' (cells in ascending (j, i) order),
// divided by the total (ascending biome index), rounded to float once.
//
// Same-biome cells count toward their biome like any other cell. That keeps the weights continuous:
// every cell's weight is a continuous function of P (d_min is), so nothing jumps when the closest
// cell changes (the runner-up has curve(0) = 1 exactly at the switch, as the closest has). Leaving
// same- biome cells out, as the seed does, makes a biome's weight jump when a cell of another biome
// becomes the closest and they suddenly count.
//
// The curve is piecewise linear through (0, 1), (1/4, curve_25), (1/2, curve_50), (3/4, curve_75),
// (1, 0), non-increasing (validated), baked into a table of kCurveTableSize + 1 samples that
// lookups interpolate linearly (continuous: no quantized steps). curve(t >= 1) = 0.
//
// Neighbour search: the cell containing P has its point within (1/2 + jitter) s per axis, so
// d_min <= sqrt(2) (1/2 + jitter) s, and only cells with d_c < d_min + overlap weigh anything: the
// search covers every cell whose jitter box comes within reach = sqrt(2) (1/2 + jitter) s + overlap
// of P, around P itself (after warping), whatever the warp amplitude.
//
// Parameters (world config message `jittered_cells`): cell_size (whole blocks, [4, 1024], default
// 64), jitter ([0, 0.5] of a cell, default 0.4), overlap (blocks, [0.5, 4 cell sizes], default 24),
// warp_amplitude (blocks, [0, 1024], default 16), warp_frequency (cycles per block, default 1/128),
// warp_octaves ([1, 8], default 3), uniform_biomes (0 = the source's biome at the cell point,
// 1 = hashed uniform pick), curve_25, curve_50, curve_75 (the curve's inner control points,
// defaults 1 - smoothstep: 0.84375, 0.5, 0.15625).
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_JITTERED_CELLS_BLENDER_H_
#define WORLDGEN_ENGINE_JITTERED_CELLS_BLENDER_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/blender.h"

namespace worldgen {

class JitteredCellsBlender final : public Blender {
 public:
  static const BlenderMethod kMethod;
  static constexpr int kCurveTableSize = 1024;

  JitteredCellsBlender(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid);

  BlenderKind kind() const override { return BlenderKind::kJitteredCells; }
  std::vector<BlenderFigure> Describe() const override;
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const override;
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const override;
  // The cell points in the box, in ascending (j, i) order. They live where columns are looked up,
  // after the warp: a column's blend reads the cells around its warped position.
  void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                      std::vector<SamplingPoint>* out) const override;
  double SamplingPointBound(const BlockBox& box) const override;

  // Cell (i, j)'s point: a pure function of (seed, i, j).
  std::pair<double, double> CellPoint(int64_t i, int64_t j) const;
  // Cell (i, j)'s biome (dense index). `cache` may be null.
  int CellBiome(int64_t i, int64_t j, BiomeSampleCache* cache) const;
  // The transition curve at t (1 at 0, 0 from 1 on).
  double Curve(double t) const;
  // Where column (x, z) is looked up.
  std::pair<double, double> WarpedPosition(double x, double z) const;
  // Non-zero weights at warped position (px, pz), searching `extra_cells` cells beyond the bound on
  // every side (0 in production; tests widen it to show the bound misses nothing).
  void WeightsAtWarped(double px, double pz, int extra_cells, BiomeSampleCache* cache,
                       std::vector<std::pair<int, float>>* weights) const;

 private:
  // Points and biomes of the cells [i0, i0 + ni) x [j0, j0 + nj).
  struct CellWindow {
    int64_t i0 = 0, j0 = 0;
    int64_t ni = 0, nj = 0;
    std::vector<double> x, z;
    std::vector<int> biome;
  };
  // The cells that can weigh at coordinate p on one axis: [*lo, *hi].
  void CellRange(double p, int extra_cells, int64_t* lo, int64_t* hi) const;
  void FillWindow(int64_t i0, int64_t i1, int64_t j0, int64_t j1, BiomeSampleCache* cache,
                  CellWindow* window) const;
  void WeightsInWindow(const CellWindow& window, double px, double pz, int extra_cells,
                       std::vector<double>* distances, std::vector<std::pair<int, double>>* sums,
                       std::vector<std::pair<int, float>>* weights) const;
  void ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const;
  int UncachedCellBiome(int64_t i, int64_t j) const;

  const BiomeSource& source_;
  uint64_t world_uid_;
  int biome_count_;
  double cell_size_, jitter_, overlap_;
  double warp_amplitude_, warp_frequency_;
  int warp_octaves_;
  bool uniform_biomes_;
  std::vector<uint16_t> surface_biomes_;  // SurfaceBiomes(spec): what the uniform pick picks from.
  double curve_25_, curve_50_, curve_75_;
  double reach_;  // sqrt(2) (1/2 + jitter) cell_size + overlap.
  uint64_t jitter_seed_, biome_seed_, warp_x_seed_, warp_z_seed_;
  std::array<double, kCurveTableSize + 1> curve_table_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_JITTERED_CELLS_BLENDER_H_
