// The benchmark baselines must be real blenders, or the comparison means nothing.
#include "bench/reference_blenders.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen::bench {
namespace {

TEST(ReferenceBlendersTest, EachBaselineIsAPartitionOfUnityAndAgreesWithScattered) {
  const World& world = testing::DefaultWorld();
  const int biomes = static_cast<int>(world.spec().biomes.size());
  PregeneratedBiomeMap map(world.source(), -512, 1024);
  FullResolutionBlender full(map, 24, biomes);
  ConvolutedGridBlender grid(map, 8, 24, biomes);
  LerpedGridBlender lerp(map, 8, 24, biomes);
  int multi = 0;
  for (int64_t cz = -20; cz < 20; cz += 3) {
    for (int64_t cx = -20; cx < 20; cx += 3) {
      std::vector<IndexedLayer> reference;
      world.blender().BlendColumns(cx * 16, cz * 16, 16, nullptr, &reference);
      std::vector<IndexedLayer> layers;
      for (int method = 0; method < 3; ++method) {
        if (method == 0) full.Blend(cx * 16, cz * 16, 16, &layers);
        if (method == 1) grid.Blend(cx * 16, cz * 16, 16, &layers);
        if (method == 2) lerp.Blend(cx * 16, cz * 16, 16, &layers);
        multi += layers.size() > 1;
        for (size_t col = 0; col < 256; ++col) {
          double sum = 0.0, dominant_weight = -1.0, scattered_weight = 0.0;
          int dominant = -1;
          for (const IndexedLayer& l : layers) {
            sum += l.weights[col];
            if (l.weights[col] > dominant_weight) {
              dominant_weight = l.weights[col];
              dominant = l.biome;
            }
          }
          ASSERT_NEAR(sum, 1.0, 1e-5) << "method " << method;
          for (const IndexedLayer& l : reference) {
            if (l.biome == dominant) scattered_weight = l.weights[col];
          }
          // Where a baseline is sure of a biome, scattered blending gives it weight too.
          if (dominant_weight > 0.999) {
            EXPECT_GT(scattered_weight, 0.0) << "method " << method;
          }
        }
      }
    }
  }
  EXPECT_GT(multi, 10);
}

}  // namespace
}  // namespace worldgen::bench
