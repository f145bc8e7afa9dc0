// The lerped grid's interpolations beyond the common contract: bilinear creases on grid lines, the
// cubic B-spline does not, and both reproduce their formula at a column.
#include "engine/lerped_grid_blender.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

std::shared_ptr<const World> GridWorld(double interpolation) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kLerpedGrid, {{"interval", 8}, {"interpolation", interpolation}}};
  return *World::Create(spec);
}

std::map<int, double> WeightsAt(const World& world, double x, double z) {
  std::vector<std::pair<int, float>> w;
  world.blender().BlendPoint(x, z, nullptr, &w);
  std::map<int, double> out;
  for (auto [biome, weight] : w) out[biome] = weight;
  return out;
}

// The largest jump of a weight's x-derivative across the vertical grid lines x = 8n of border
// columns (one-sided differences over h = 1/16 block), and the largest derivative seen.
struct Crease {
  double jump = 0.0, slope = 0.0;
};

Crease MeasureCrease(const World& world) {
  constexpr double h = 1.0 / 16;
  Crease c;
  for (uint64_t k = 0; k < 3000; ++k) {
    const double x = 8.0 * static_cast<double>(testing::TestCoordinate(k, 50, -500, 500));
    const double z = static_cast<double>(testing::TestCoordinate(k, 51, -4000, 4000)) + 0.37;
    const std::map<int, double> left = WeightsAt(world, x - h, z), mid = WeightsAt(world, x, z),
                                right = WeightsAt(world, x + h, z);
    for (const auto& [biome, w] : mid) {
      const double l = left.contains(biome) ? left.at(biome) : 0.0;
      const double r = right.contains(biome) ? right.at(biome) : 0.0;
      const double dl = (w - l) / h, dr = (r - w) / h;
      c.jump = std::max(c.jump, std::fabs(dr - dl));
      c.slope = std::max({c.slope, std::fabs(dl), std::fabs(dr)});
    }
  }
  return c;
}

// Bilinear has a crease on every grid line: the derivative jumps by about as much as it is large.
// The B-spline is C2: what is left of a jump is the difference quotients' own error (O(h)) and
// float rounding, under 5% of the bilinear's.
TEST(LerpedGridBlenderTest, TheBSplineHasNoCreaseOnGridLines) {
  const Crease bilinear = MeasureCrease(*GridWorld(0));
  const Crease bspline = MeasureCrease(*GridWorld(1));
  ASSERT_GT(bilinear.slope, 0.02) << "no borders crossed";
  EXPECT_GT(bilinear.jump, 0.5 * bilinear.slope);
  EXPECT_LT(bspline.jump, 0.05 * bilinear.jump)
      << "bilinear jump " << bilinear.jump << ", B-spline jump " << bspline.jump;
  EXPECT_GT(bspline.slope, 0.25 * bilinear.slope) << "the B-spline should still blend";
}

// Both interpolants at a column from the vertex weights (the convoluted grid's weights at the
// vertices, which lerped_grid's vertices are): bilinear over the cell's 4 corners, and
// sum_{a,b} B_a(fx) B_b(fz) v(gx - 1 + a, gz - 1 + b) with the cubic B-spline basis.
TEST(LerpedGridBlenderTest, ColumnsAreTheInterpolantOfTheVertexWeights) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kConvolutedGrid, {{"interval", 8}}};
  const std::shared_ptr<const World> vertices = *World::Create(spec);
  const std::shared_ptr<const World> bilinear = GridWorld(0), bspline = GridWorld(1);
  const auto basis = [](double f) {
    return std::vector<double>{(1 - f) * (1 - f) * (1 - f) / 6, (3 * f * f * f - 6 * f * f + 4) / 6,
                               (-3 * f * f * f + 3 * f * f + 3 * f + 1) / 6, f * f * f / 6};
  };
  int borders = 0;
  for (uint64_t k = 0; k < 2000 && borders < 100; ++k) {
    const double x = static_cast<double>(testing::TestCoordinate(k, 52, -4000, 4000)) + 0.25;
    const double z = static_cast<double>(testing::TestCoordinate(k, 53, -4000, 4000)) + 0.75;
    const double gx = std::floor(x / 8), gz = std::floor(z / 8);
    const double fx = x / 8 - gx, fz = z / 8 - gz;
    std::map<int, double> lerp, spline;
    const std::vector<double> bx = basis(fx), bz = basis(fz);
    for (int b = -1; b <= 2; ++b) {
      for (int a = -1; a <= 2; ++a) {
        for (const auto& [biome, w] : WeightsAt(*vertices, (gx + a) * 8, (gz + b) * 8)) {
          spline[biome] += bx[static_cast<size_t>(a + 1)] * bz[static_cast<size_t>(b + 1)] * w;
          if (a >= 0 && a <= 1 && b >= 0 && b <= 1) {
            lerp[biome] += (a ? fx : 1 - fx) * (b ? fz : 1 - fz) * w;
          }
        }
      }
    }
    const std::map<int, double> got_lerp = WeightsAt(*bilinear, x, z);
    const std::map<int, double> got_spline = WeightsAt(*bspline, x, z);
    borders += got_spline.size() > 1;
    for (const auto& [expected, got] :
         {std::pair{&lerp, &got_lerp}, std::pair{&spline, &got_spline}}) {
      for (const auto& [biome, w] : *expected) {
        const double g = got->contains(biome) ? got->at(biome) : 0.0;
        EXPECT_NEAR(g, w, 1e-6) << "biome " << biome << " at (" << x << ", " << z << ")";
      }
      for (const auto& [biome, w] : *got) EXPECT_TRUE(expected->contains(biome)) << biome;
    }
  }
  EXPECT_EQ(borders, 100);
}

}  // namespace
}  // namespace worldgen
