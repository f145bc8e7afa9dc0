// The kernel methods against an independent brute force of seed 001's formula: at a column (x, z),
// every sample s of the method's sampling (the jittered lattice, or the square grid's vertices)
// with the source's biome b(s) at its position weighs w_s = max(0, r_b(s)^2 - d^2)^2, with r_b the
// biome's own blend_radius or else the method's; biome b's weight is sum_{b(s) = b} w_s / sum_s
// w_s. Radii, distances and sums are computed here from the spec and the raw map, not with the
// engine's helpers, so a wrong kernel, a wrong normalisation or ignored per-biome radii fail here
// (the golden hashes alone would only say "changed").
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "engine/scattered_blender.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

struct Sample {
  double x, z;
};

// Biome radius as the world file states it: the biome's own, else the method's.
double RadiusOf(const BiomeSpec& biome, double method_radius) {
  return biome.blend_radius != 0.0 ? biome.blend_radius : method_radius;
}

// Brute-force weights (dense biome index -> weight) at (x, z) from every sample in `samples`.
std::map<int, double> BruteForce(const World& world, double method_radius,
                                 const std::vector<Sample>& samples, double x, double z) {
  std::map<int, double> sums;
  double total = 0.0;
  for (const Sample& s : samples) {
    const int biome = world.source().BiomeIndexAt(s.x, s.z);
    const double r = RadiusOf(world.spec().biomes[static_cast<size_t>(biome)], method_radius);
    const double d2 = (s.x - x) * (s.x - x) + (s.z - z) * (s.z - z);
    const double w = d2 < r * r ? (r * r - d2) * (r * r - d2) : 0.0;
    if (w > 0.0) sums[biome] += w;
    total += w;
  }
  for (auto& [biome, sum] : sums) sum /= total;
  return sums;
}

// The method's samples within `reach` of (x, z), plus some beyond (they must weigh nothing).
using SamplesNear = std::vector<Sample> (*)(const World& world, double x, double z, double reach);

std::vector<Sample> LatticeNear(const World& world, double x, double z, double reach) {
  const JitteredLattice& lattice = dynamic_cast<const ScatteredBlender&>(world.blender()).lattice();
  const double row = lattice.row_height();
  std::vector<Sample> out;
  const int32_t j0 = static_cast<int32_t>(std::floor((z - reach) / row)) - 2;
  const int32_t j1 = static_cast<int32_t>(std::ceil((z + reach) / row)) + 2;
  for (int32_t j = j0; j <= j1; ++j) {
    const double shift = lattice.row_shift() * j;
    const int32_t i0 = static_cast<int32_t>(std::floor((x - reach) / lattice.interval() - shift));
    const int32_t i1 = static_cast<int32_t>(std::ceil((x + reach) / lattice.interval() - shift));
    for (int32_t i = i0 - 2; i <= i1 + 2; ++i) {
      Sample s;
      lattice.Position(i, j, &s.x, &s.z);
      out.push_back(s);
    }
  }
  return out;
}

template <int kSpacing>
std::vector<Sample> GridNear(const World&, double x, double z, double reach) {
  std::vector<Sample> out;
  const double g = kSpacing;
  for (double gz = std::floor((z - reach) / g) - 1; gz <= std::ceil((z + reach) / g) + 1; ++gz) {
    for (double gx = std::floor((x - reach) / g) - 1; gx <= std::ceil((x + reach) / g) + 1; ++gx) {
      out.push_back({gx * g, gz * g});
    }
  }
  return out;
}

struct KernelCase {
  std::string name;
  BlenderSpec blender;
  double radius;  // The method's blend_radius.
  SamplesNear near;
};

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }

class KernelBruteForceTest : public ::testing::TestWithParam<KernelCase> {};

// Columns on borders (two or more weights), among them borders of the two biomes with radii of
// their own (ocean and mountains, 32 against the method's 24), match the brute force to 1e-6.
TEST_P(KernelBruteForceTest, WeightsAreTheNormalizedKernelSumsWithEachBiomesRadius) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = GetParam().blender;
  const std::shared_ptr<const World> world = *World::Create(spec);
  const double reach = 32.0 + 8.0;  // Largest radius plus the jitter and a margin.
  int borders = 0, own_radius_borders = 0;
  std::vector<std::pair<int, float>> weights;
  for (uint64_t k = 0; k < 4000 && borders < 60; ++k) {
    const double x = static_cast<double>(testing::TestCoordinate(k, 40, -4000, 4000));
    const double z = static_cast<double>(testing::TestCoordinate(k, 41, -4000, 4000)) + 0.5;
    world->blender().BlendPoint(x, z, nullptr, &weights);
    if (weights.size() < 2) continue;
    ++borders;
    const std::map<int, double> expected =
        BruteForce(*world, GetParam().radius, GetParam().near(*world, x, z, reach), x, z);
    ASSERT_EQ(weights.size(), expected.size()) << "(" << x << ", " << z << ")";
    bool own = false;
    for (const auto& [biome, w] : weights) {
      ASSERT_TRUE(expected.contains(biome))
          << "biome " << biome << " at (" << x << ", " << z << ")";
      EXPECT_NEAR(w, expected.at(biome), 1e-6)
          << "biome " << biome << " at (" << x << ", " << z << ")";
      own = own || spec.biomes[static_cast<size_t>(biome)].blend_radius != 0.0;
    }
    own_radius_borders += own;
  }
  EXPECT_EQ(borders, 60);
  EXPECT_GE(own_radius_borders, 10) << "too few borders of biomes with their own radius";
}

INSTANTIATE_TEST_SUITE_P(
    KernelMethods, KernelBruteForceTest,
    ::testing::Values(
        KernelCase{"scattered",
                   {BlenderKind::kScattered,
                    {{"sampling_interval", 8.0}, {"jitter", 0.35}, {"blend_radius", 24.0}}},
                   24.0,
                   &LatticeNear},
        KernelCase{"scattered_square",
                   {BlenderKind::kScattered,
                    {{"sampling_interval", 8.0},
                     {"jitter", 0.35},
                     {"blend_radius", 24.0},
                     {"lattice", 1}}},
                   24.0,
                   &LatticeNear},
        KernelCase{"full_resolution",
                   {BlenderKind::kFullResolution, {{"blend_radius", 24.0}}},
                   24.0,
                   &GridNear<1>},
        KernelCase{"convoluted_grid",
                   {BlenderKind::kConvolutedGrid, {{"interval", 8.0}, {"blend_radius", 24.0}}},
                   24.0,
                   &GridNear<8>}),
    [](const ::testing::TestParamInfo<KernelCase>& info) { return info.param.name; });

// The scattered method at the two ends of its scale, the largest lattice with the largest radius
// and the finest with a radius near its least, matches the brute force near the origin and the
// world's corners: the gather's reach and the search bounds are derived from the parameters, and
// the test above sees only the defaults.
TEST(KernelBruteForceTest, ScatteredAtTheEndsOfItsRangesNearTheWorldsCorners) {
  struct Scale {
    double interval, radius;
    int min_borders;
  };
  const double corner = kMaxWorldCoordinate - 2048.0;
  for (const Scale& scale : {Scale{256.0, 1024.0, 40}, Scale{1.0, 1.25, 1}}) {
    SCOPED_TRACE(::testing::Message()
                 << "interval " << scale.interval << ", radius " << scale.radius);
    WorldSpec spec = DefaultWorldSpec();
    spec.blender = {
        BlenderKind::kScattered,
        {{"sampling_interval", scale.interval}, {"jitter", 0.35}, {"blend_radius", scale.radius}}};
    for (BiomeSpec& biome : spec.biomes) biome.blend_radius = 0.0;
    absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
    ASSERT_TRUE(world.ok()) << world.status();
    const double reach = scale.radius + scale.interval;  // The radius, the jitter and a margin.
    int borders = 0;
    std::vector<std::pair<int, float>> weights;
    for (const auto& [ax, az] : {std::pair{0.0, 0.0}, {corner, -corner}, {-corner, corner}}) {
      for (uint64_t k = 0; k < 40; ++k) {
        const double x = ax + static_cast<double>(testing::TestCoordinate(k, 42, -2000, 2000));
        const double z = az + static_cast<double>(testing::TestCoordinate(k, 43, -2000, 2000));
        (*world)->blender().BlendPoint(x, z, nullptr, &weights);
        borders += weights.size() > 1;
        const std::map<int, double> expected =
            BruteForce(**world, scale.radius, LatticeNear(**world, x, z, reach), x, z);
        ASSERT_EQ(weights.size(), expected.size()) << "(" << x << ", " << z << ")";
        for (const auto& [biome, w] : weights) {
          ASSERT_TRUE(expected.contains(biome))
              << "biome " << biome << " at (" << x << ", " << z << ")";
          EXPECT_NEAR(w, expected.at(biome), 1e-6)
              << "biome " << biome << " at (" << x << ", " << z << ")";
        }
      }
    }
    EXPECT_GE(borders, scale.min_borders);
  }
}

}  // namespace
}  // namespace worldgen
