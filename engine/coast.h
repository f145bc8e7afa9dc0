// CoastalHeights: blended heights whose coastline is the raw map's land/water border
// (HeightMode::kCoastal).
//
// The blended height Σ w_b h_b crosses sea level wherever the weights happen to balance: a deep
// ocean next to a low plain pulls the coast inland, a mountain pushes it out, and where three
// biomes meet the coast bends toward the corner. Here the coastline is decided by the raw map and
// the heights are shaped around it.
//
// Each biome is land or water (BiomeSpec::surface); validation keeps every land biome's own height
// above the sea level s and every water biome's below it. For a column p:
//   - D(p), the signed distance to the raw border: the biome map is read at integer columns, p
//     takes the class of its nearest column c (floor(x + 1/2), floor(z + 1/2)), and
//     D = ±(min(|p − q| over columns q of the other class) − 1/2), + on land, − on water, capped
//     at the coast width W (also when no such q lies within W + 1/2). This raw D is continuous, 0
//     on the edges between land and water columns, and changes by at most 1 per block, but it is
//     the distance to a staircase of columns: every step of a diagonal coast leaves a crease that
//     runs inland. So D is the mean of the raw D at the 5 x 5 points p + (i, j), |i|, |j| ≤ 2
//     (summed row by row, rows in order), which makes its gradient continuous; the sign stays p's
//     class (a mean on the other side of 0 counts as 0: a one-column spit stays at the waterline).
//   - From the blender's weights w_b and the biomes' own heights h_b (ascending biome order, in
//     double): the land part λ = Σ_land w_b, the water part μ = Σ_water w_b, the land relief
//     Σ_land w_b (h_b − s) and the water depth Σ_water w_b (s − h_b), both ≥ 0. The land height
//     A_L = land relief + μ c_L and the water depth A_W = water depth + λ c_W, where c_L (c_W) is
//     the smallest margin any land (water) biome keeps from the sea: both are > 0 everywhere.
//     Inland, where μ = 0, A_L is exactly the blended height's rise above the sea.
//   - The shore slope k = min(shore_slope, 3 A_L / W, 3 A_W / W), common to both sides.
//   - With t = |D| / W capped at 1, the rise R(A) = A (3t² − 2t³) + k W t (1 − t)²: the cubic
//     Hermite curve from (0, 0) with slope k to (W, A) with slope 0, monotone because k W ≤ 3 A.
//   - H = s + R(A_L) on land and s − R(A_W) in water (the class of p's nearest column).
// So H > s exactly where the nearest column is land, the slope across the coast is k on both sides
// (C1 there), the profile reaches the blended relief at W from the border with zero slope, and a
// three-biome corner moves nothing: only the raw border decides. Rounded to float once; if the
// rounding lands on the wrong side of s (a rise below half a float step), the nearest float on the
// right side is returned.
//
// Cost: a chunk reads the raw map at every column of the chunk padded by ceil(W + 1/2) + 2 and runs
// an exact Euclidean distance transform over it when both classes occur; a point reads the columns
// within ceil(W + 1/2) + 3 and measures its 25 points against those on the class borders (the
// nearest column of a class is always one with a neighbour of the other class). The raw map's
// columns go through the BiomeSampleCache when there is one, in tiles of 16 x 16 columns keyed by
// the world's uid with kColumnTilesBit set (the blender's lattice tiles use the bare uid), so
// neighbouring chunks read each column's biome once.
//
// Bit-exactness: squared distances between integer columns are integers, exact in double on both
// paths, the box mean is summed in the same order, and the same sums and profile follow, so
// SignedDistances over any chunk equals SignedDistanceAt at its columns and the heights agree bit
// for bit.
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_COAST_H_
#define WORLDGEN_ENGINE_COAST_H_

#include <cstdint>
#include <vector>

#include "engine/biome_sample_cache.h"
#include "engine/biome_source.h"
#include "engine/world_spec.h"

namespace worldgen {

// One column's sums over the blender's weights (see the file comment).
struct CoastSums {
  double land_weight = 0.0;   // λ
  double water_weight = 0.0;  // μ
  double land_relief = 0.0;   // Σ_land w (h − s)
  double water_depth = 0.0;   // Σ_water w (s − h)
};

class CoastalHeights {
 public:
  // Set in the world uid of the cache keys of column tiles.
  static constexpr uint64_t kColumnTilesBit = uint64_t{1} << 63;

  // `spec` valid, with HeightMode::kCoastal and biomes sorted by id; `source` outlives this;
  // `world_uid` is World::uid() (keys the column tiles in a shared cache).
  CoastalHeights(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid);

  bool IsLand(int biome_index) const { return land_[static_cast<size_t>(biome_index)] != 0; }

  // Adds biome `biome_index`'s weight and own height at a column to its sums.
  void Add(int biome_index, double weight, double height, CoastSums* sums) const;

  // D at (x, z): its sign bit says land (clear) or water (set, also for −0). `cache` may be null.
  double SignedDistanceAt(double x, double z, BiomeSampleCache* cache) const;
  // D at the size x size integer columns from (x0, z0), ColumnIndex layout. `cache` may be null.
  void SignedDistances(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                       std::vector<double>* out) const;

  // H from a column's sums and its D (SignedDistanceAt or SignedDistances).
  float Height(const CoastSums& sums, double signed_distance) const;

 private:
  static constexpr int kSmooth = 2, kSmoothTaps = 2 * kSmooth + 1;

  // ±min(sqrt(d2) − 1/2, W) for the squared distance d2 to the nearest column of the other class.
  double Capped(double d2, bool land) const;
  // The raw D (unsmoothed) at the size x size columns from (x0, z0), ColumnIndex layout.
  void RawDistances(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<double>* out) const;
  // D from the sum of the 25 raw values around a point of class `land`.
  double Smoothed(double sum, bool land) const;
  // The class (1 = land) of the n x n columns from (x0, z0), row-major; returns how many are land.
  size_t ReadClasses(int64_t x0, int64_t z0, int n, BiomeSampleCache* cache,
                     std::vector<uint8_t>* land) const;

  const BiomeSource& source_;
  uint64_t column_tiles_uid_;
  std::vector<uint8_t> land_;  // Per dense biome index: 1 = land.
  double sea_level_, width_, shore_slope_;
  double land_margin_ = 1.0, water_margin_ = 1.0;  // c_L, c_W
  int pad_;                                        // ceil(W + 1/2)
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_COAST_H_
