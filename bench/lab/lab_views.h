// The pictures worldgen-lab draws of one blend of a region: blend colours, dominant biome with the
// raw map's borders, shaded heights, a zoomed crop, and the montage of several blends side by side.
#ifndef WORLDGEN_BENCH_LAB_LAB_VIEWS_H_
#define WORLDGEN_BENCH_LAB_LAB_VIEWS_H_

#include <cstdint>
#include <vector>

#include "client/rgb_image.h"
#include "engine/quality/blend_metrics.h"
#include "engine/world_spec.h"

namespace worldgen::lab {

// Everything drawn of one blend of a width x height region, per column row-major (x fastest).
struct RegionBlend {
  quality::RegionWeights weights;
  std::vector<float> heights;
  std::vector<int> dominant;  // Dense biome index of the largest weight.
  std::vector<int> source;    // Dense biome index the biome source returns (the raw map).
};

// The dense index of biome `id` (its position in the world's id-sorted biome table `biomes`).
int DenseBiomeIndex(const std::vector<BiomeSpec>& biomes, uint32_t id);

// Biome colours mixed by weight: a column's colour is sum over biomes of weight x colour.
// `biomes` is the world's id-sorted biome table (dense index order).
RgbImage BlendColours(const quality::RegionWeights& weights, const std::vector<BiomeSpec>& biomes);
RgbImage BlendColours(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes);

// Each column in its dominant biome's colour, with the raw map's borders (columns whose source
// biome differs from the next column's along x or z) drawn in black.
RgbImage DominantWithSourceBorders(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes);

// Grey relief of the blended heights, lit from the north-west (ReliefLight).
RgbImage ShadedHeights(const RegionBlend& blend);

// The centre `side` x `side` columns (or the whole region if smaller) of the blend colours lit by
// the heights' relief, each column drawn as zoom x zoom pixels.
RgbImage ZoomedCrop(const RegionBlend& blend, const std::vector<BiomeSpec>& biomes, int side,
                    int zoom);

// Panels side by side: columns[i] is one blend's views stacked top to bottom; all views of a row
// must have the same height. Separated by `gap` pixels of dark grey.
RgbImage Montage(const std::vector<std::vector<const RgbImage*>>& columns, int gap);

}  // namespace worldgen::lab

#endif  // WORLDGEN_BENCH_LAB_LAB_VIEWS_H_
