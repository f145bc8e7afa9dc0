// The region metrics (engine/quality/blend_metrics.h) read the value they claim on fields built by
// hand, and grid lock separates a lerped grid from scattered blending on a real multi-biome map.
#include "engine/quality/blend_metrics.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <numbers>

#include "engine/quality/isotropy.h"
#include "engine/world.h"
#include "gtest/gtest.h"

namespace worldgen::quality {
namespace {

// Two biomes split at x = split: biome 0 to the left (weight 1), biome 1 from `split` on, with a
// linear ramp of `ramp` columns centred on the split (0 = hard border).
RegionWeights TwoBiomeRamp(int width, int height, double split, double ramp) {
  RegionWeights field(0, 0, width, height, 2);
  for (int z = 0; z < height; ++z) {
    for (int x = 0; x < width; ++x) {
      const double w1 =
          ramp == 0.0 ? (x >= split ? 1.0 : 0.0) : std::clamp((x - split) / ramp + 0.5, 0.0, 1.0);
      field.layer(1)[z * width + x] = static_cast<float>(w1);
      field.layer(0)[z * width + x] = static_cast<float>(1.0 - w1);
    }
  }
  return field;
}

TEST(RegionWeightsTest, BlendRegionPlacesEveryChunksLayersAtTheirColumns) {
  // Each chunk reports biome (chunk x index + chunk z index) % 3 with weight 0.25 + column / 1000.
  const ChunkBlendFn blend = [](int64_t x0, int64_t z0, int size,
                                std::vector<IndexedLayer>* layers) {
    IndexedLayer layer;
    layer.biome = static_cast<int>((x0 / size + z0 / size) % 3);
    for (int i = 0; i < size * size; ++i) layer.weights.push_back(0.25f + i / 1000.0f);
    *layers = {layer};
  };
  const RegionWeights field = BlendRegion(blend, 8, 16, 24, 16, 8, 3);
  EXPECT_EQ(field.x0, 8);
  EXPECT_EQ(field.z0, 16);
  // Column (13, 9) relative: chunk (1, 1) of the region = world chunk (2, 3), biome 5 % 3 = 2,
  // local column (5, 1) = index 13.
  EXPECT_FLOAT_EQ(field.at(2, 13, 9), 0.25f + 13 / 1000.0f);
  EXPECT_EQ(field.at(0, 13, 9), 0.0f);
  EXPECT_EQ(field.at(1, 13, 9), 0.0f);
  // Column (0, 0): world chunk (1, 2), biome 0, local index 0.
  EXPECT_FLOAT_EQ(field.at(0, 0, 0), 0.25f);
}

TEST(BlendMetricsTest, MaxSumErrorIsTheWorstColumnsDeviation) {
  RegionWeights field = TwoBiomeRamp(16, 16, 8.0, 6.0);
  EXPECT_LT(MaxSumError(field), 1e-7);
  field.layer(0)[5 * 16 + 3] += 0.125f;    // One column sums to 1.125 ...
  field.layer(1)[9 * 16 + 12] -= 0.0625f;  // ... another to 0.9375.
  EXPECT_NEAR(MaxSumError(field), 0.125, 1e-7);
}

TEST(BlendMetricsTest, MaxNeighbourJumpIsTheSteepestStep) {
  EXPECT_EQ(MaxNeighbourJump(TwoBiomeRamp(32, 8, 16.0, 0.0)), 1.0);  // A hard border.
  EXPECT_NEAR(MaxNeighbourJump(TwoBiomeRamp(32, 8, 16.0, 8.0)), 1.0 / 8.0, 1e-6);
  // A step along z is seen too.
  RegionWeights field = TwoBiomeRamp(8, 8, 100.0, 0.0);  // All biome 0.
  EXPECT_EQ(MaxNeighbourJump(field), 0.0);
  field.layer(0)[4 * 8 + 2] = 0.7f;
  field.layer(1)[4 * 8 + 2] = 0.3f;
  EXPECT_NEAR(MaxNeighbourJump(field), 0.3, 1e-6);
}

TEST(BlendMetricsTest, MeasureChunksCountsBiomesPresentPerChunk) {
  // 4 x 2 chunks of 8: the ramp from x = 12 to 20 touches chunks 1 and 2 of each row, which carry
  // both biomes; chunks 0 and 3 carry one.
  const ChunkCoverage coverage = MeasureChunks(TwoBiomeRamp(32, 16, 16.0, 8.0), 8);
  EXPECT_EQ(coverage.chunks, 8);
  EXPECT_DOUBLE_EQ(coverage.biomes_per_chunk, 12.0 / 8.0);
  EXPECT_DOUBLE_EQ(coverage.single_biome_share, 0.5);
  // A hard border on a chunk boundary leaves every chunk single.
  const ChunkCoverage hard = MeasureChunks(TwoBiomeRamp(32, 16, 16.0, 0.0), 8);
  EXPECT_DOUBLE_EQ(hard.biomes_per_chunk, 1.0);
  EXPECT_DOUBLE_EQ(hard.single_biome_share, 1.0);
}

TEST(BlendMetricsTest, RmsDistanceIsTheRootMeanSquareOfPerColumnDistances) {
  const RegionWeights a = TwoBiomeRamp(16, 4, 8.0, 0.0);
  EXPECT_EQ(RmsDistance(a, a), 0.0);
  // Moving the hard border by 2 columns flips 2 of 16 columns per row from (1, 0) to (0, 1):
  // squared distance 2 there, 0 elsewhere, so sqrt(2 * 2 / 16).
  const RegionWeights b = TwoBiomeRamp(16, 4, 10.0, 0.0);
  EXPECT_NEAR(RmsDistance(a, b), std::sqrt(4.0 / 16.0), 1e-12);
  EXPECT_NEAR(RmsDistance(b, a), RmsDistance(a, b), 1e-15);
  // Every column different: sqrt(2).
  EXPECT_NEAR(RmsDistance(TwoBiomeRamp(8, 8, 0.0, 0.0), TwoBiomeRamp(8, 8, 8.0, 0.0)),
              std::sqrt(2.0), 1e-12);
}

TEST(BlendMetricsTest, GridLockPoolsLayersAndUsesWorldPhase) {
  // Piecewise-linear ramps with their kinks on x = 0 mod 8 (world), in a field whose corner is at
  // x0 = -13 (not a multiple of 8): every kink at the same world phase, so fully locked.
  RegionWeights locked(-13, 0, 64, 8, 2);
  RegionWeights unlocked(-13, 0, 64, 8, 2);
  for (int z = 0; z < 8; ++z) {
    for (int x = 0; x < 64; ++x) {
      const int64_t wx = -13 + x;
      // Slope changes at wx = -8 and 24 (layer 1 rises between them).
      const double w1 = std::clamp((static_cast<double>(wx) + 8.0) / 32.0, 0.0, 1.0);
      locked.layer(1)[z * 64 + x] = static_cast<float>(w1);
      locked.layer(0)[z * 64 + x] = static_cast<float>(1.0 - w1);
      // Kinks at wx = -8 and 9: different phases mod 8, equal curvature energy, at opposite
      // phases' neighbours: the lock is |1 + e^{i pi/4}| / 2.
      const double u1 = std::clamp((static_cast<double>(wx) + 8.0) / 17.0, 0.0, 1.0);
      unlocked.layer(1)[z * 64 + x] = static_cast<float>(u1);
      unlocked.layer(0)[z * 64 + x] = static_cast<float>(1.0 - u1);
    }
  }
  EXPECT_NEAR(GridLock(locked, 8), 1.0, 1e-9);
  EXPECT_NEAR(GridLock(unlocked, 8), std::abs(1.0 + std::polar(1.0, std::numbers::pi / 4)) / 2.0,
              1e-6);
  // A field without curvature (one biome everywhere) has nothing to lock.
  EXPECT_EQ(GridLock(TwoBiomeRamp(16, 16, 100.0, 0.0), 8), 0.0);
}

TEST(BlendMetricsTest, GridLockOfOneLayerMatchesTheSquareFieldForm) {
  RegionWeights field = TwoBiomeRamp(64, 64, 20.0, 12.0);
  for (int z = 0; z < 64; ++z) {
    for (int x = 0; x < 64; ++x)
      field.layer(1)[z * 64 + x] *= static_cast<float>(1.0 + 0.01 * ((x * z) % 7));
  }
  RegionWeights one(0, 0, 64, 64, 1);
  one.weights.assign(field.layer(1), field.layer(1) + field.columns());
  EXPECT_DOUBLE_EQ(GridLock(one, 8), GridLock(one.weights, 64, 8));
}

// A default-world map with its climate shrunk so that 256 x 256 columns hold many borders of many
// biomes.
WorldSpec BusyWorld(BlenderKind kind) {
  WorldSpec spec = DefaultWorldSpec();
  spec.climate.temperature_frequency = 1.0 / 160.0;
  spec.climate.humidity_frequency = 1.0 / 130.0;
  spec.blender = KernelBlenderSpec(kind, 8, 24);
  return spec;
}

RegionWeights BlendWorld(BlenderKind kind) {
  const std::shared_ptr<const World> world = *World::Create(BusyWorld(kind));
  return BlendRegion(
      [&](int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers) {
        world->blender().BlendColumns(x0, z0, size, nullptr, layers);
      },
      -128, -128, 256, 256, 16, static_cast<int>(world->spec().biomes.size()));
}

TEST(BlendMetricsTest, GridLockOnARealMapSeparatesLerpedGridFromScattered) {
  const RegionWeights lerped = BlendWorld(BlenderKind::kLerpedGrid);
  const RegionWeights scattered = BlendWorld(BlenderKind::kScattered);
  const ChunkCoverage coverage = MeasureChunks(scattered, 16);
  ASSERT_GT(coverage.biomes_per_chunk, 1.5) << "the map should be busy enough to measure";
  EXPECT_GT(IntervalGridLock(lerped, 8), 0.99);
  EXPECT_LT(IntervalGridLock(scattered, 8), 0.1);
  // Both keep the contract and blend gradually.
  EXPECT_LT(MaxSumError(lerped), 1e-6);
  EXPECT_LT(MaxSumError(scattered), 1e-6);
  EXPECT_LT(MaxNeighbourJump(scattered), 0.2);
  EXPECT_GT(RmsDistance(lerped, scattered), 0.0);
}

}  // namespace
}  // namespace worldgen::quality
