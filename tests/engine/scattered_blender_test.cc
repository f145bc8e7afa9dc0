// Scattered blending's own lattice gathering (the Blender contract is checked for it, and every other
// method, in blender_contract_test.cc).
#include "engine/scattered_blender.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

TEST(ScatteredBlenderTest, GatheredSamplesAreCanonicalAndReachTheBox) {
  const ScatteredBlender blender(testing::DefaultWorld().spec(), testing::DefaultWorld().source(),
                                 /*world_uid=*/0);
  std::vector<KernelSample> samples;
  std::vector<LatticeIndex> indices;
  blender.GatherSamples(160, -48, 175, -33, nullptr, &samples, &indices);
  ASSERT_GT(samples.size(), 10u);
  ASSERT_EQ(indices.size(), samples.size());
  for (size_t k = 1; k < indices.size(); ++k) {
    EXPECT_TRUE(indices[k - 1].j < indices[k].j ||
                (indices[k - 1].j == indices[k].j && indices[k - 1].i < indices[k].i));
  }
  double r = blender.max_radius();
  for (const KernelSample& s : samples) {
    double dx = std::max({0.0, 160 - s.x, s.x - 175}), dz = std::max({0.0, -48 - s.z, s.z + 33});
    EXPECT_LT(std::hypot(dx, dz), r + 1e-9);
  }
}

}  // namespace
}  // namespace worldgen
