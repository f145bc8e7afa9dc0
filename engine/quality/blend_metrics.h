// Figures of a blend over a region of a real map: how well a blender keeps the blending contract
// (weights sum to one, change gradually), how much blending work its chunks carry, how far it is
// from another blender's weights, and how strongly it is locked to a grid.
//
// All functions are pure: they read a RegionWeights (every biome's weight at every column of a
// rectangle) built by BlendRegion from any chunk-blending callback (Blender::BlendColumns fits), or
// by hand in tests. Used by worldgen-lab (bench/lab) and the tests; isotropy.h builds on it.
#ifndef WORLDGEN_ENGINE_QUALITY_BLEND_METRICS_H_
#define WORLDGEN_ENGINE_QUALITY_BLEND_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/blender.h"

namespace worldgen::quality {

// Blends the size x size columns whose lowest corner is (x0, z0) into layers of dense biome indices
// sorted by index (IndexedLayer): Blender::BlendColumns fits.
using ChunkBlendFn =
    std::function<void(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers)>;

// Every biome's weight at every column of [x0, x0 + width) x [z0, z0 + height): dense, biome-major,
// then row-major with x fastest. Absent biomes weigh 0.
struct RegionWeights {
  RegionWeights(int64_t x0, int64_t z0, int width, int height, int biome_count);

  int64_t x0 = 0, z0 = 0;
  int width = 0, height = 0;
  int biome_count = 0;
  std::vector<float> weights;  // biome_count * height * width

  size_t columns() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
  // Biome `biome`'s weights, `columns()` values, row-major.
  const float* layer(int biome) const {
    return weights.data() + static_cast<size_t>(biome) * columns();
  }
  float* layer(int biome) { return weights.data() + static_cast<size_t>(biome) * columns(); }
  // (x, z) relative to (x0, z0).
  float at(int biome, int x, int z) const {
    return layer(
        biome)[static_cast<size_t>(z) * static_cast<size_t>(width) + static_cast<size_t>(x)];
  }
};

// Blends the region chunk by chunk: chunks of chunk_size columns starting at (x0, z0); width and
// height must be multiples of chunk_size. Layers must name biomes in [0, biome_count).
RegionWeights BlendRegion(const ChunkBlendFn& blend, int64_t x0, int64_t z0, int width, int height,
                          int chunk_size, int biome_count);

// max over columns of |sum of the column's weights - 1| (summed in double, ascending biome index).
// The contract bounds it by 1e-6.
double MaxSumError(const RegionWeights& field);

// max over biomes and over pairs of columns adjacent along x or z of |w(a) - w(b)|: the steepest
// step any biome's weight takes between neighbours. A hard border scores 1; a blur of radius r
// about 1/r.
double MaxNeighbourJump(const RegionWeights& field);

struct ChunkCoverage {
  int64_t chunks = 0;
  // Mean number of biomes with a non-zero weight somewhere in the chunk (layers a chunk carries).
  double biomes_per_chunk = 0.0;
  // Share of chunks with exactly one biome: the chunks a blender can answer without blending.
  double single_biome_share = 0.0;
};

// Over the chunks of chunk_size columns starting at the field's corner (width and height multiples
// of chunk_size).
ChunkCoverage MeasureChunks(const RegionWeights& field, int chunk_size);

// Root mean square over columns of the Euclidean distance between the two fields' weight vectors,
// sqrt(mean over columns of sum over biomes (a - b)^2). 0 for identical blends; sqrt(2) at most
// (two different single biomes everywhere). The fields must have the same rectangle and biome
// count.
double RmsDistance(const RegionWeights& a, const RegionWeights& b);

// Grid lock (engine/quality/isotropy.h, GridLock) of every biome's layer pooled: the curvature
// energy of all layers at each column phase (world coordinate mod `period`) summed before the
// ratio, so a map with many biomes is measured as one. 0 when no layer bends.
double GridLock(const RegionWeights& field, int period);

// The larger of GridLock at `interval` and, for an even interval, at interval / 2 (where an
// unjittered triangular lattice repeats along x): the lock of a method sampling every `interval`
// blocks.
double IntervalGridLock(const RegionWeights& field, int interval);

}  // namespace worldgen::quality

#endif  // WORLDGEN_ENGINE_QUALITY_BLEND_METRICS_H_
