// The squareness measurements (bench/isotropy.h): the metrics see what they claim to see on fields
// built by hand, and scattered blending measures free of grid structure where the grid methods of
// seed 001 do not. All figures are deterministic (hashed maps, canonical sums), so the bounds hold
// exactly as long as the blenders' output does.
#include "engine/quality/isotropy.h"

#include <cmath>
#include <numbers>

#include "gtest/gtest.h"

namespace worldgen::quality {
namespace {

constexpr int kExtent = 256;

std::vector<float> Tabulate(const std::function<double(double, double)>& f) {
  std::vector<float> field(kExtent * kExtent);
  for (int z = 0; z < kExtent; ++z) {
    for (int x = 0; x < kExtent; ++x) field[z * kExtent + x] = static_cast<float>(f(x, z));
  }
  return field;
}

// A smooth radial ramp: 1 inside radius 60 of the centre, 0 beyond 100, cosine in between.
double Ramp(double x, double z) {
  const double d = std::hypot(x - 128.3, z - 127.6);
  if (d <= 60.0) return 1.0;
  if (d >= 100.0) return 0.0;
  return 0.5 + 0.5 * std::cos(std::numbers::pi * (d - 60.0) / 40.0);
}

TEST(IsotropyMetricTest, RadialFieldIsIsotropicAndUnlocked) {
  const std::vector<float> field = Tabulate(Ramp);
  const OrientationHarmonics h = MeasureHarmonics(field, kExtent);
  EXPECT_GT(h.gradient_columns, 10000.0);
  EXPECT_LT(h.a4(), 0.01);
  EXPECT_LT(h.a6(), 0.01);
  EXPECT_LT(GridLock(field, kExtent, 8), 0.02);
}

TEST(IsotropyMetricTest, AxisAlignedFieldIsSquare) {
  // Gradients only along x or z: a square pyramid's level sets.
  const std::vector<float> field = Tabulate([](double x, double z) {
    return std::max(0.0, 1.0 - std::max(std::abs(x - 128.3), std::abs(z - 127.6)) / 100.0);
  });
  EXPECT_GT(MeasureHarmonics(field, kExtent).a4(), 0.95);
}

TEST(IsotropyMetricTest, BilinearInterpolationOfAGridIsFullyLocked) {
  // The radial ramp sampled every 8 columns and interpolated bilinearly: bends only on grid lines.
  const std::vector<float> field = Tabulate([](double x, double z) {
    const double gx = std::floor(x / 8) * 8, gz = std::floor(z / 8) * 8;
    const double tx = (x - gx) / 8, tz = (z - gz) / 8;
    return (1 - tz) * ((1 - tx) * Ramp(gx, gz) + tx * Ramp(gx + 8, gz)) +
           tz * ((1 - tx) * Ramp(gx, gz + 8) + tx * Ramp(gx + 8, gz + 8));
  });
  EXPECT_GT(GridLock(field, kExtent, 8), 0.99);
  EXPECT_LT(GridLock(Tabulate(Ramp), kExtent, 8), 0.02);
}

TEST(IsotropyMetricTest, EdgeWidthOfASharpEdgeIsZeroAndOfARampItsLength) {
  const std::vector<float> sharp = Tabulate([](double x, double) { return x < 128.5 ? 1.0 : 0.0; });
  EXPECT_EQ(EdgeWidth(sharp, kExtent, 100.0), 0.0);
  // Linear 0..1 over 30 columns: integral of 4 w (1 - w) across it is 30 * 2/3.
  const std::vector<float> ramp =
      Tabulate([](double x, double) { return std::clamp((x - 113.0) / 30.0, 0.0, 1.0); });
  EXPECT_NEAR(EdgeWidth(ramp, kExtent, 100.0), 20.0, 0.5);
}

TEST(IsotropyTest, ScatteredBlendingHasNoGridWhereGridMethodsDo) {
  // Seed 001's configuration r = 24, interval 8, on 1024 x 1024 columns of discs, for three seeds
  // (disc placement and lattice jitter): the grid methods' structure is there for every seed, and
  // scattered blending's figures stay below it for every seed.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    const IsotropyReport scattered =
        MeasureIsotropy(BlenderKind::kScattered, 8, 24, 1024, 256, 6, seed);
    const IsotropyReport convoluted =
        MeasureIsotropy(BlenderKind::kConvolutedGrid, 8, 24, 1024, 256, 6, seed);
    const IsotropyReport lerped =
        MeasureIsotropy(BlenderKind::kLerpedGrid, 8, 24, 1024, 256, 6, seed);
    EXPECT_GT(lerped.grid_lock, 0.99) << "a lerped grid creases on every grid line";
    EXPECT_GT(convoluted.grid_lock, 0.05) << "a convoluted grid repeats its grid in the curvature";
    EXPECT_LT(scattered.grid_lock, 0.03);
    EXPECT_LT(scattered.grid_lock * 3.0, convoluted.grid_lock);
    // Orientation and edge width carry the jitter's noise at this size; bound it loosely.
    EXPECT_LT(scattered.discs.a4(), 0.06);
    EXPECT_LT(scattered.edge_width_ratio(), 1.1);
    EXPECT_NEAR(0.5 * (scattered.edge_width_min + scattered.edge_width_max), 19.3, 1.0);
  }
}

}  // namespace
}  // namespace worldgen::quality
