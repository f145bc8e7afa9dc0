// Baselines from seed 001's comparison, for benchmarks only: full-resolution blur, lerped grid and
// convoluted grid blending. They read a biome map pre-generated over a fixed square (as the seed's
// mockups did), use the same kernel max(0, r^2 - d^2)^2, skip chunks whose inputs are one biome, and
// return the same sparse per-biome layout as the engine. Not thread-safe per instance.
#ifndef WORLDGEN_BENCH_REFERENCE_BLENDERS_H_
#define WORLDGEN_BENCH_REFERENCE_BLENDERS_H_

#include <cstdint>
#include <vector>

#include "engine/biome_source.h"
#include "engine/scattered_blender.h"

namespace worldgen::bench {

// Biome index of every integer column in [origin, origin + extent)^2, evaluated once up front.
class PregeneratedBiomeMap {
 public:
  PregeneratedBiomeMap(const BiomeSource& source, int64_t origin, int extent);
  int biome(int64_t x, int64_t z) const {
    return map_[static_cast<size_t>(z - origin_) * extent_ + static_cast<size_t>(x - origin_)];
  }
  int64_t origin() const { return origin_; }
  int extent() const { return extent_; }

 private:
  int64_t origin_;
  size_t extent_;
  std::vector<uint16_t> map_;
};

// Full-resolution blur: every column within radius r contributes. Kernel table precomputed, so the
// normalization is a constant.
class FullResolutionBlender {
 public:
  FullResolutionBlender(const PregeneratedBiomeMap& map, int radius, int biome_count);
  bool Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers);

 private:
  const PregeneratedBiomeMap& map_;
  int radius_;
  int biome_count_;
  std::vector<double> kernel_;  // (2r+1)^2
  std::vector<double> acc_;
};

// Sparse convolution over the unjittered square grid of spacing `interval` (normalized per column).
class ConvolutedGridBlender {
 public:
  ConvolutedGridBlender(const PregeneratedBiomeMap& map, int interval, int radius, int biome_count);
  bool Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers);

 private:
  const PregeneratedBiomeMap& map_;
  int interval_, radius_, biome_count_;
  std::vector<double> acc_;
};

// Convoluted-grid weights at the grid vertices only, bilinearly interpolated in between.
class LerpedGridBlender {
 public:
  LerpedGridBlender(const PregeneratedBiomeMap& map, int interval, int radius, int biome_count);
  bool Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers);

 private:
  const PregeneratedBiomeMap& map_;
  int interval_, radius_, biome_count_;
  ConvolutedGridBlender vertex_blender_;
};

}  // namespace worldgen::bench

#endif  // WORLDGEN_BENCH_REFERENCE_BLENDERS_H_
