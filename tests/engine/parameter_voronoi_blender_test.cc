// Seed 000's properties of the parameter_voronoi blender beyond the common contract: exact culling,
// exact cell interiors and bisectors, continuity in the world, radii and validation.
#include "engine/parameter_voronoi_blender.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::FloatBits;
using ::testing::HasSubstr;

// A pseudo-random double in [lo, hi) for case k.
double TestValue(uint64_t k, uint64_t stream, double lo, double hi) {
  return lo +
         (hi - lo) *
             static_cast<double>(
                 HashCoords(0xbeef, static_cast<int64_t>(k), static_cast<int64_t>(stream)) >> 11) *
             0x1.0p-53;
}

// `n` random points in [-1, 1]^dims with radii in [0.01, 0.15].
ParameterSpace RandomSpace(int n, int dims, uint64_t salt) {
  std::vector<double> coords, radii;
  for (int k = 0; k < n; ++k) {
    for (int d = 0; d < dims; ++d) coords.push_back(TestValue(k, salt * 16 + d, -1.0, 1.0));
    radii.push_back(TestValue(k, salt * 16 + 15, 0.01, 0.15));
  }
  return ParameterSpace(dims, coords, radii);
}

uint64_t DoubleBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// Culled weights equal the unculled O(N^2) evaluation over every point, bit for bit, and every
// point left out weighs exactly 0 there. In 2 axes (today's climate) and 3 (a further axis).
TEST(ParameterSpaceTest, CullingNeverChangesAWeight) {
  for (int dims : {2, 3}) {
    const ParameterSpace space = RandomSpace(48, dims, static_cast<uint64_t>(dims));
    std::vector<int> all(static_cast<size_t>(space.size()));
    std::iota(all.begin(), all.end(), 0);
    std::vector<int> candidates;
    std::vector<double> culled, full;
    size_t culled_away = 0, blended = 0;
    for (uint64_t k = 0; k < 20000; ++k) {
      double input[3];
      for (int d = 0; d < dims; ++d) input[d] = TestValue(k, 100 + d, -1.1, 1.1);
      space.Candidates(input, &candidates);
      space.Weights(input, candidates, &culled);
      space.Weights(input, all, &full);
      culled_away += all.size() - candidates.size();
      size_t c = 0;
      size_t non_zero = 0;
      for (int p = 0; p < space.size(); ++p) {
        if (c < candidates.size() && candidates[c] == p) {
          ASSERT_EQ(DoubleBits(culled[c]), DoubleBits(full[static_cast<size_t>(p)]))
              << "dims " << dims << " case " << k << " point " << p;
          non_zero += culled[c] != 0.0;
          ++c;
        } else {
          ASSERT_EQ(DoubleBits(full[static_cast<size_t>(p)]), DoubleBits(0.0))
              << "dims " << dims << " case " << k << " culled point " << p;
        }
      }
      blended += non_zero > 1;
      const double sum = std::accumulate(culled.begin(), culled.end(), 0.0);
      ASSERT_NEAR(sum, 1.0, 1e-12);
    }
    // The comparison means something only if the cull removes points and borders are crossed.
    EXPECT_GT(culled_away, 20000u * 30u) << dims;
    EXPECT_GT(blended, 1000u) << dims;
  }
}

// Far enough from every dividing line (beyond each pair's radius), the nearest point weighs
// exactly 1.
TEST(ParameterSpaceTest, WeightIsExactlyOneDeepInsideACell) {
  const ParameterSpace space(2, {-0.5, 0.0, 0.5, 0.0, 0.0, 0.6}, {0.05, 0.1, 0.2});
  std::vector<int> candidates;
  std::vector<double> w;
  for (const auto& [t, h, expected] :
       {std::tuple{-0.5, 0.0, 0}, std::tuple{-0.2, 0.05, 0}, std::tuple{0.5, 0.0, 1},
        std::tuple{0.3, -0.4, 1}, std::tuple{0.0, 0.6, 2}, std::tuple{0.05, 0.9, 2}}) {
    const double input[2] = {t, h};
    space.Candidates(input, &candidates);
    space.Weights(input, candidates, &w);
    for (size_t i = 0; i < candidates.size(); ++i) {
      EXPECT_EQ(w[i], candidates[i] == expected ? 1.0 : 0.0) << t << "," << h << " point " << i;
    }
  }
}

// On the dividing line of two lone points, both weigh exactly 1/2, wherever along the line.
TEST(ParameterSpaceTest, HalfAndHalfOnTheBisectorOfALonePair) {
  const ParameterSpace space(2, {-0.25, 0.1, 0.25, 0.1}, {0.05, 0.3});
  std::vector<int> candidates;
  std::vector<double> w;
  for (double h : {-1.0, -0.3, 0.1, 0.55, 1.0}) {
    const double input[2] = {0.0, h};
    space.Candidates(input, &candidates);
    ASSERT_EQ(candidates.size(), 2u);
    space.Weights(input, candidates, &w);
    EXPECT_EQ(w[0], 0.5) << h;
    EXPECT_EQ(w[1], 0.5) << h;
  }
  // A slanted pair: the bisector point is only known to rounding.
  const ParameterSpace slanted(2, {0.1, 0.2, 0.3, 0.5}, {0.1, 0.1});
  const double input[2] = {0.2 - 0.3 * 0.5, 0.35 + 0.2 * 0.5};
  slanted.Candidates(input, &candidates);
  slanted.Weights(input, candidates, &w);
  EXPECT_NEAR(w[0], 0.5, 1e-12);
  EXPECT_NEAR(w[1], 0.5, 1e-12);
}

std::shared_ptr<const World> VoronoiWorld(double radius, double auto_fraction = 0.0) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kParameterVoronoi,
                  {{"climate_radius", radius}, {"auto_radius_fraction", auto_fraction}}};
  return *World::Create(spec);
}

// Along lines through the world, weights change by little between points 1/8 block apart, and by
// half as much between points 1/16 apart: no jumps, only slopes. The lines cross borders.
TEST(ParameterVoronoiBlenderTest, WeightsAreContinuousAlongLinesInTheWorld) {
  const std::shared_ptr<const World> world = VoronoiWorld(0.05);
  std::vector<testing::WalkLine> lines;
  for (uint64_t line = 0; line < 6; ++line) {
    lines.push_back({TestValue(line, 2, -20000, 20000), TestValue(line, 3, -20000, 20000),
                     TestValue(line, 1, 0.0, 6.283185307179586)});
  }
  int borders = 0;
  auto count_borders = [&](double, double, double, double, const testing::PointWeights& a,
                           const testing::PointWeights& b) {
    borders += b.size() > 1 && a.size() == 1;
  };
  const int n = static_cast<int>(world->spec().biomes.size());
  const double eighth =
      testing::WorstWeightStep(world->blender(), n, lines, 1500, 0.125, count_borders);
  const double sixteenth = testing::WorstWeightStep(world->blender(), n, lines, 1500, 0.0625);
  EXPECT_GT(borders, 10) << "the lines should cross borders";
  EXPECT_LT(eighth, 0.01);
  EXPECT_GT(eighth, 0.0);
  EXPECT_LT(sixteenth, 0.6 * eighth) << "a jump would not shrink with the step";
}

// The climate source's biome (nearest point, same noise) always has weight; a column with a single
// weight is the source's biome with weight exactly 1.
TEST(ParameterVoronoiBlenderTest, SourceBiomeAlwaysWeighsIn) {
  const std::shared_ptr<const World> world = VoronoiWorld(0.05);
  int blended = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    ChunkBlend chunk =
        *world->BlendChunk(testing::TestCoordinate(k, 1, -400, 400),
                           testing::TestCoordinate(k, 2, -400, 400), 32, {.source_biome = true});
    for (size_t col = 0; col < chunk.source_biome.size(); ++col) {
      int with_weight = 0;
      float source_weight = 0.0f;
      for (const BiomeLayer& layer : chunk.layers) {
        with_weight += layer.weights[col] != 0.0f;
        if (layer.biome_id == chunk.source_biome[col]) source_weight = layer.weights[col];
      }
      ASSERT_GT(source_weight, 0.0f) << "chunk " << chunk.chunk_x << "," << chunk.chunk_z;
      if (with_weight == 1) {
        ASSERT_EQ(source_weight, 1.0f);
      }
      blended += with_weight > 1;
    }
  }
  EXPECT_GT(blended, 500);
}

// Radii: the method's climate_radius, a biome's own parameter_radius, or the automatic fraction of
// the distance to the nearest other point.
TEST(ParameterVoronoiBlenderTest, BiomeRadii) {
  WorldSpec spec = DefaultWorldSpec();
  spec.biomes.resize(3);
  spec.biomes[0].temperature = 0.0, spec.biomes[0].humidity = 0.0;
  spec.biomes[1].temperature = 0.3, spec.biomes[1].humidity = 0.4;   // 0.5 from biome 0.
  spec.biomes[2].temperature = -0.6, spec.biomes[2].humidity = 0.0;  // 0.6 from biome 0.
  spec.biomes[2].parameter_radius = 0.07;
  spec.blender = {BlenderKind::kParameterVoronoi, {{"climate_radius", 0.02}}};
  ASSERT_TRUE(ValidateWorldSpec(spec).ok()) << ValidateWorldSpec(spec);
  EXPECT_THAT(ParameterVoronoiBlender::BiomeRadii(spec), ::testing::ElementsAre(0.02, 0.02, 0.07));
  spec.blender.params["auto_radius_fraction"] = 0.4;
  const std::vector<double> radii = ParameterVoronoiBlender::BiomeRadii(spec);
  EXPECT_DOUBLE_EQ(radii[0], 0.4 * 0.5);
  EXPECT_DOUBLE_EQ(radii[1], 0.4 * 0.5);
  EXPECT_EQ(radii[2], 0.07);
  // The automatic radii are what the world's blender describes.
  std::shared_ptr<const World> world = *World::Create(spec);
  bool described = false;
  for (const BlenderFigure& f : world->blender().Describe()) {
    if (f.name == "max_biome_radius") {
      EXPECT_DOUBLE_EQ(f.value, 0.2);
      described = true;
    }
  }
  EXPECT_TRUE(described);
}

TEST(ParameterVoronoiBlenderTest, RejectsSharedPointsAndBadRadii) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kParameterVoronoi, {}};
  spec.biomes[4].temperature = spec.biomes[2].temperature;
  spec.biomes[4].humidity = spec.biomes[2].humidity;
  absl::Status shared = ValidateWorldSpec(spec);
  EXPECT_EQ(shared.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shared.message(),
              HasSubstr("biomes[2] (id 2) and biomes[4] (id 4) share the climate point"));

  spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kParameterVoronoi, {}};
  spec.biomes[3].parameter_radius = 2.0;
  EXPECT_THAT(ValidateWorldSpec(spec).message(),
              HasSubstr("biomes[3] (id 3).parameter_radius = 2 is outside [0.001, 1]"));
  spec.biomes[3].parameter_radius = -1.0;
  EXPECT_THAT(ValidateWorldSpec(spec).message(),
              HasSubstr("biomes[3] (id 3).parameter_radius = -1"));
  spec.biomes[3].parameter_radius = 0.0;
  spec.blender.params["auto_radius_fraction"] = 0.6;
  EXPECT_THAT(ValidateWorldSpec(spec).message(),
              HasSubstr("parameter_voronoi.auto_radius_fraction = 0.6 is outside [0, 0.5]"));
}

// The blender's climate input is the climate source's: in a one-axis-degenerate world whose points
// differ only in temperature, the weights follow TemperatureAt exactly (weight 1 where the source's
// temperature is beyond every pair's band).
TEST(ParameterVoronoiBlenderTest, UsesTheClimateSourcesNoise) {
  WorldSpec spec = DefaultWorldSpec();
  spec.biomes.resize(2);
  spec.biomes[0].temperature = -0.5, spec.biomes[0].humidity = 0.0;
  spec.biomes[1].temperature = 0.5, spec.biomes[1].humidity = 0.0;
  spec.blender = {BlenderKind::kParameterVoronoi, {{"climate_radius", 0.1}}};
  std::shared_ptr<const World> world = *World::Create(spec);
  const auto& climate = dynamic_cast<const ClimateBiomeSource&>(world->source());
  std::vector<std::pair<int, float>> w;
  for (uint64_t k = 0; k < 2000; ++k) {
    const double x = TestValue(k, 7, -30000, 30000), z = TestValue(k, 8, -30000, 30000);
    const double t = climate.TemperatureAt(x, z);
    world->blender().BlendPoint(x, z, nullptr, &w);
    // F = t (the dividing line is t = 0, |B - A| = 1): H = fade(clamp(t / 0.1) / 2 + 1/2).
    const double c = std::clamp(t / 0.1, -1.0, 1.0) * 0.5 + 0.5;
    const double h = std::min(1.0, c * c * (3.0 - 2.0 * c));
    const double expected_warm = h / ((1.0 - h) + h);
    float warm = 0.0f;
    for (auto [biome, weight] : w) {
      if (biome == 1) warm = weight;
    }
    ASSERT_EQ(FloatBits(warm), FloatBits(static_cast<float>(expected_warm))) << x << "," << z;
  }
}

// A pair's band is the mean of its two radii (R_AB = (r_A + r_B) / 2): radii 0.04 and 0.16 give
// the same weights as 0.1 for both, bit for bit, and differ from either radius alone.
TEST(ParameterVoronoiBlenderTest, APairsBandIsTheMeanOfItsRadii) {
  const auto world_with = [](double r0, double r1) {
    WorldSpec spec = DefaultWorldSpec();
    spec.biomes.resize(2);
    spec.biomes[0].temperature = -0.5, spec.biomes[0].humidity = 0.0;
    spec.biomes[1].temperature = 0.5, spec.biomes[1].humidity = 0.0;
    spec.biomes[0].parameter_radius = r0;
    spec.biomes[1].parameter_radius = r1;
    spec.blender = {BlenderKind::kParameterVoronoi, {}};
    return *World::Create(spec);
  };
  const auto mixed = world_with(0.04, 0.16), mean = world_with(0.1, 0.1);
  const auto narrow = world_with(0.04, 0.04), wide = world_with(0.16, 0.16);
  std::vector<std::pair<int, float>> a, b, c, d;
  int blended = 0, unlike_narrow = 0, unlike_wide = 0;
  for (uint64_t k = 0; k < 4000; ++k) {
    const double x = TestValue(k, 9, -30000, 30000), z = TestValue(k, 10, -30000, 30000);
    mixed->blender().BlendPoint(x, z, nullptr, &a);
    mean->blender().BlendPoint(x, z, nullptr, &b);
    ASSERT_EQ(a.size(), b.size()) << x << "," << z;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].first, b[i].first);
      ASSERT_EQ(FloatBits(a[i].second), FloatBits(b[i].second)) << x << "," << z;
    }
    if (a.size() < 2) continue;
    ++blended;
    narrow->blender().BlendPoint(x, z, nullptr, &c);
    wide->blender().BlendPoint(x, z, nullptr, &d);
    unlike_narrow += c != a;
    unlike_wide += d != a;
  }
  EXPECT_GT(blended, 50);
  EXPECT_GT(unlike_narrow, blended / 2);
  EXPECT_GT(unlike_wide, blended / 2);
}

// The climate blend of a world whose raw map is noise-max would not be the map it serves.
TEST(ParameterVoronoiBlenderTest, RejectsAWorldWithoutAClimateSource) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kParameterVoronoi, {}};
  spec.biome_source = BiomeSourceKind::kNoiseMax;
  const absl::Status status = ValidateWorldSpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("needs biome_source = climate"));
  EXPECT_FALSE(World::Create(spec).ok());
}

}  // namespace
}  // namespace worldgen
