#include "engine/noise.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

TEST(NoiseTest, StaysWithinUnitRangeAndUsesIt) {
  double lo = 0.0, hi = 0.0;
  for (int a = 0; a < 300; ++a) {
    for (int b = 0; b < 300; ++b) {
      double v = SimplexNoise2D(11, a * 0.071 - 9.3, b * 0.067 + 4.1);
      ASSERT_GE(v, -1.0);
      ASSERT_LE(v, 1.0);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  EXPECT_LT(lo, -0.6);
  EXPECT_GT(hi, 0.6);
}

TEST(NoiseTest, IsAPureFunctionOfSeedAndPosition) {
  for (int k = 0; k < 1000; ++k) {
    double x = k * 1.37 - 500.0, z = k * -0.91 + 77.0;
    double a = SimplexNoise2D(5, x, z), b = SimplexNoise2D(5, x, z);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  }
  EXPECT_NE(SimplexNoise2D(1, 0.3, 0.7), SimplexNoise2D(2, 0.3, 0.7));
}

TEST(NoiseTest, IsContinuous) {
  // Gradient noise with a quartic falloff has a bounded derivative: tiny steps give tiny changes.
  for (int k = 0; k < 2000; ++k) {
    double x = k * 0.173, z = k * 0.311 - 40.0;
    EXPECT_LT(std::fabs(SimplexNoise2D(3, x, z) - SimplexNoise2D(3, x + 1e-4, z)), 1e-2);
    EXPECT_LT(std::fabs(SimplexNoise2D(3, x, z) - SimplexNoise2D(3, x, z + 1e-4)), 1e-2);
  }
}

TEST(NoiseTest, GoldenValues) {
  // Pinned outputs: changing the noise changes every world, so it must be a deliberate act.
  EXPECT_EQ(SimplexNoise2D(0, 0.0, 0.0), 0.0);
  const double expected[] = {-0x1.7f53125a2ed78p-1, -0x1.194f3b784b003p-2,
                             -0x1.4e6adccd88f57p-2};
  const double inputs[][2] = {{0.25, 0.5}, {-13.7, 42.01}, {1e6 + 0.5, -2.5e6 + 0.25}};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(SimplexNoise2D(0x5eed, inputs[k][0], inputs[k][1]), expected[k]) << k;
  }
}

TEST(NoiseTest, FractalNoiseStaysInRange) {
  for (int k = 0; k < 5000; ++k) {
    double v = FractalNoise2D(9, k * 7.3, k * -3.1, 1.0 / 300.0, 4);
    ASSERT_GE(v, -1.0);
    ASSERT_LE(v, 1.0);
  }
}

}  // namespace
}  // namespace worldgen
