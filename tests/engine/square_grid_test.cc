// The square grid's own sampling points (the grid methods' Blender contract is checked in
// blender_contract_test.cc).
#include "engine/square_grid.h"

#include <cmath>
#include <vector>

#include "engine/biome_sample_cache.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

// Every multiple of the spacing in the half-open box, row by row, with the source's biome there;
// the bound is the exact count.
TEST(SquareGridTest, SamplingPointsAreTheVerticesInTheHalfOpenBox) {
  const World& world = testing::DefaultWorld();
  for (int spacing : {1, 8, 12}) {
    const SquareGrid grid(world.source(), spacing,
                          std::vector<double>(world.spec().biomes.size(), 400.0),
                          /*world_uid=*/0);
    for (const BlockBox& box : {BlockBox{-40, 16, 24, 64}, BlockBox{-40.5, 15.5, 24.5, 64.5},
                                BlockBox{1000, -1000, 1001, -999}, BlockBox{3, 3, 5, 5}}) {
      std::vector<SamplingPoint> points;
      grid.SamplingPoints(box, nullptr, &points);
      std::vector<SamplingPoint> expected;
      for (double z = std::ceil(box.min_z / spacing) * spacing; z < box.max_z; z += spacing) {
        for (double x = std::ceil(box.min_x / spacing) * spacing; x < box.max_x; x += spacing) {
          expected.push_back({x, z, world.source().BiomeIndexAt(x, z)});
        }
      }
      SCOPED_TRACE(::testing::Message() << "spacing " << spacing << " box " << box.min_x);
      testing::ExpectSamePoints(points, expected);
      EXPECT_EQ(grid.SamplingPointCount(box), static_cast<double>(expected.size()));
    }
  }
}

// Listing a box's vertices reads the tiles holding them and no others: a box 2^20 blocks long and
// half a block deep holds no vertex, and once made ListSamplingPoints walk (and cache) every
// vertex within the kernel's reach of its whole length.
TEST(SquareGridTest, SamplingPointsReadOnlyTheTilesHoldingThem) {
  const World& world = testing::DefaultWorld();
  const SquareGrid grid(world.source(), 4, std::vector<double>(world.spec().biomes.size(), 400.0),
                        /*world_uid=*/0);
  BiomeSampleCache cache(64 << 20);
  std::vector<SamplingPoint> points;
  grid.SamplingPoints({0, 0.25, 1 << 20, 0.75}, &cache, &points);
  EXPECT_TRUE(points.empty());
  EXPECT_EQ(cache.stats().misses + cache.stats().hits, 0u);
  // 2 x 2 vertices in one tile (16 x 16 vertices of 4 blocks): one visit.
  grid.SamplingPoints({4, 4, 12, 12}, &cache, &points);
  EXPECT_EQ(points.size(), 4u);
  EXPECT_EQ(cache.stats().misses + cache.stats().hits, 1u);
}

}  // namespace
}  // namespace worldgen
