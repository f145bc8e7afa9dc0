// HeightField: each biome's own terrain height function, and the weighted blend of them.
//
// Biome b's height at (x, z) is base_b + amplitude_b * FractalNoise2D(seed_b, x, z, frequency_b,
// 4), with seed_b derived from the world seed and the biome id. A blended height is the sum over
// biomes in ascending id order of weight * height, accumulated in double and rounded to float once.
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_HEIGHT_FIELD_H_
#define WORLDGEN_ENGINE_HEIGHT_FIELD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/world_spec.h"

namespace worldgen {

class HeightField {
 public:
  static constexpr int kOctaves = 4;

  // `spec` must be valid and its biomes sorted by id.
  explicit HeightField(const WorldSpec& spec);

  // Height of biome `biome_index` (dense, id-sorted) alone at (x, z).
  double BiomeHeight(int biome_index, double x, double z) const;

  // BiomeHeight at n points, bit for bit: out[k] = BiomeHeight(biome_index, xs[k], zs[k]).
  // Vectorized (FractalNoise2DBatch); cheapest for runs of neighbouring columns. `out` must not
  // overlap `xs` or `zs`.
  void BiomeHeights(int biome_index, const double* xs, const double* zs, size_t n,
                    double* out) const;

 private:
  struct BiomeHeightParams {
    uint64_t seed;
    double base;
    double amplitude;
    double frequency;
  };
  std::vector<BiomeHeightParams> params_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_HEIGHT_FIELD_H_
