// Coastal heights (HeightMode::kCoastal, engine/coast.h): the sea-level contour is the raw map's
// land/water border, the heights follow the documented profile, chunk == point bit for bit, and
// the lab's coast figures (engine/quality/coast_metrics.h) read what they claim.
#include "engine/coast.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "engine/height_field.h"
#include "engine/quality/coast_metrics.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::CoastalWorldSpec;
using testing::FloatBits;

// A 256 x 256 region of CoastalWorldSpec() with ocean, lakes and coasts where the ocean meets two
// or more land biomes.
constexpr int64_t kRegionX = -768, kRegionZ = -1024;
constexpr int kRegionSide = 256;

struct Region {
  std::vector<uint8_t> land;  // Raw map class per column, row-major.
  std::vector<uint32_t> biome;
  std::vector<float> heights;
};

Region BlendRegion(const World& world, int chunk_size) {
  Region region;
  const size_t n = static_cast<size_t>(kRegionSide) * kRegionSide;
  region.land.resize(n);
  region.biome.resize(n);
  region.heights.resize(n);
  BiomeSampleCache cache(16 << 20);
  for (int cz = 0; cz < kRegionSide; cz += chunk_size) {
    for (int cx = 0; cx < kRegionSide; cx += chunk_size) {
      ChunkBlend chunk =
          *world.BlendChunk((kRegionX + cx) / chunk_size, (kRegionZ + cz) / chunk_size, chunk_size,
                            {.heights = true, .source_biome = true}, &cache);
      for (int lz = 0; lz < chunk_size; ++lz) {
        for (int lx = 0; lx < chunk_size; ++lx) {
          const size_t i = static_cast<size_t>(cz + lz) * kRegionSide + (cx + lx);
          const size_t c = static_cast<size_t>(ColumnIndex(chunk_size, lx, lz));
          region.heights[i] = chunk.heights[c];
          region.biome[i] = chunk.source_biome[c];
          region.land[i] = chunk.source_biome[c] != 0;  // Biome 0, the ocean, is the only water.
        }
      }
    }
  }
  return region;
}

TEST(CoastTest, TheSeaLevelContourIsTheRawBorderAndCornersDoNotBendIt) {
  const WorldSpec spec = CoastalWorldSpec();
  const std::shared_ptr<const World> world = *World::Create(spec);
  const Region region = BlendRegion(*world, 32);

  // Every column is above the sea exactly where its raw biome is land.
  int64_t wrong = 0;
  for (size_t i = 0; i < region.land.size(); ++i) {
    wrong += (region.heights[i] > spec.heights.sea_level) != (region.land[i] != 0);
  }
  EXPECT_EQ(wrong, 0);

  // The region is a real test: many coast points, and coasts where three biomes meet (a 2 x 2 block
  // of columns holding water and two land biomes).
  int corners = 0;
  for (int z = 0; z + 1 < kRegionSide; ++z) {
    for (int x = 0; x + 1 < kRegionSide; ++x) {
      std::set<uint32_t> ids;
      for (int k = 0; k < 4; ++k) {
        ids.insert(region.biome[static_cast<size_t>(z + k / 2) * kRegionSide + (x + k % 2)]);
      }
      corners += ids.size() >= 3 && ids.contains(0);
    }
  }
  EXPECT_GE(corners, 2);

  const quality::CoastFigures coastal = quality::MeasureCoast(
      region.land, region.heights, kRegionSide, kRegionSide, spec.heights.sea_level);
  EXPECT_GE(coastal.border_points, 300);
  EXPECT_LE(coastal.max_error, 0.5);

  // Plain blended heights put the same coast many blocks off: the figure discriminates.
  WorldSpec plain_spec = spec;
  plain_spec.heights.mode = HeightMode::kBlendedWeights;
  const Region plain = BlendRegion(**World::Create(plain_spec), 32);
  const quality::CoastFigures blended = quality::MeasureCoast(
      plain.land, plain.heights, kRegionSide, kRegionSide, spec.heights.sea_level);
  EXPECT_GT(blended.rms_error, 3.0);
  // The coast adds no steep slope of its own.
  EXPECT_LE(coastal.steepest_slope, blended.steepest_slope + 0.5);
}

// The heights, computed here from the file comment of engine/coast.h with a brute-force distance
// over the raw map.
TEST(CoastTest, HeightsFollowTheDocumentedProfile) {
  const WorldSpec spec = CoastalWorldSpec();
  const std::shared_ptr<const World> world = *World::Create(spec);
  const HeightField heights(world->spec());
  const double s = spec.heights.sea_level, w = spec.heights.coast_width;
  double land_margin = 1e9, water_margin = 1e9;
  for (const BiomeSpec& b : world->spec().biomes) {
    if (b.surface == BiomeSurface::kLand) {
      land_margin = std::min(land_margin, b.height_base - b.height_amplitude - s);
    } else {
      water_margin = std::min(water_margin, s - b.height_base - b.height_amplitude);
    }
  }
  auto is_land = [&](double x, double z) { return world->SourceBiomeAt(x, z) != 0; };
  int near_coast = 0;
  for (int k = 0; k < 160; ++k) {
    // Points on integer columns and between them, across the region.
    const double x = static_cast<double>(kRegionX) + (k * 37 % kRegionSide) + (k % 3) * 0.25;
    const double z = static_cast<double>(kRegionZ) + (k * 91 % kRegionSide) + (k % 5) * 0.2;
    // The raw distance at q: to the nearest column of the other class than q's nearest column,
    // less 1/2, capped at W.
    auto raw = [&](double qx, double qz) {
      const double cx = std::floor(qx + 0.5), cz = std::floor(qz + 0.5);
      const bool land = is_land(cx, cz);
      double nearest = std::numeric_limits<double>::infinity();
      for (int dz = -17; dz <= 17; ++dz) {
        for (int dx = -17; dx <= 17; ++dx) {
          if (is_land(cx + dx, cz + dz) == land) continue;
          nearest = std::min(nearest, std::hypot(cx + dx - qx, cz + dz - qz));
        }
      }
      const double d = std::min(nearest - 0.5, w);
      return land ? d : -d;
    };
    // Its mean over the 5 x 5 points around (x, z), clamped to the side of (x, z)'s class.
    double mean = 0;
    for (int j = -2; j <= 2; ++j) {
      for (int i = -2; i <= 2; ++i) mean += raw(x + i, z + j) / 25;
    }
    const bool land = is_land(std::floor(x + 0.5), std::floor(z + 0.5));
    const double distance = land ? std::max(mean, 0.0) : std::max(-mean, 0.0);
    near_coast += distance < w;

    const PointBlend point = *world->BlendPoint(x, z, {.heights = true});
    double lambda = 0, mu = 0, relief = 0, depth = 0;
    for (const auto& [id, weight] : point.weights) {
      const int index = static_cast<int>(id);  // Ids are the dense indices in this world.
      const double h = heights.BiomeHeight(index, x, z);
      if (id != 0) {
        lambda += weight;
        relief += weight * (h - s);
      } else {
        mu += weight;
        depth += weight * (s - h);
      }
    }
    const double a_land = relief + mu * land_margin, a_water = depth + lambda * water_margin;
    const double slope = std::min({spec.heights.shore_slope, 3 * a_land / w, 3 * a_water / w});
    const double t = distance / w;
    const double a = land ? a_land : a_water;
    const double rise = a * (3 * t * t - 2 * t * t * t) + slope * w * t * (1 - t) * (1 - t);
    const double expected = land ? s + rise : s - rise;
    ASSERT_NEAR(point.height, expected, 1e-4 * std::max(1.0, std::fabs(expected)))
        << "at " << x << "," << z << " distance " << distance << (land ? " land" : " water");
  }
  EXPECT_GE(near_coast, 20) << "too few points within the coastal profile";
}

TEST(CoastTest, ChunkHeightsEqualPointHeightsBitForBit) {
  for (BlenderKind kind :
       {BlenderKind::kScattered, BlenderKind::kFullResolution, BlenderKind::kLerpedGrid}) {
    WorldSpec spec = CoastalWorldSpec();
    spec.blender = {kind, {}};
    const std::shared_ptr<const World> world = *World::Create(spec);
    for (int size : {4, 16, 64}) {
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t cx = (kRegionX + 100 + 29 * c) / size, cz = (kRegionZ + 60 + 41 * c) / size;
        const ChunkBlend chunk = *world->BlendChunk(cx, cz, size, {.heights = true});
        for (int lz = 0; lz < size; lz += std::max(1, size / 8)) {
          for (int lx = 0; lx < size; lx += std::max(1, size / 8)) {
            const double x = static_cast<double>(cx * size + lx);
            const double z = static_cast<double>(cz * size + lz);
            const PointBlend point = *world->BlendPoint(x, z, {.heights = true});
            ASSERT_EQ(FloatBits(chunk.heights[ColumnIndex(size, lx, lz)]), FloatBits(point.height))
                << MethodOf(kind).name << " size " << size << " at " << x << "," << z;
          }
        }
      }
    }
  }
}

// Where a land column meets a water column the step is the common shore slope plus the little the
// cubic adds half a block from the border: 2 (k/2 + 3 (1/(2W))² A) with A the largest relief.
TEST(CoastTest, TheStepAcrossTheCoastIsTheShoreSlope) {
  const WorldSpec spec = CoastalWorldSpec();
  const Region region = BlendRegion(**World::Create(spec), 16);
  double largest_relief = 0;
  for (const BiomeSpec& b : spec.biomes) {
    largest_relief = std::max(
        largest_relief, std::fabs(b.height_base - spec.heights.sea_level) + b.height_amplitude);
  }
  const double t = 0.5 / spec.heights.coast_width;
  const double bound = 2 * (spec.heights.shore_slope * 0.5 + 3 * t * t * largest_relief);
  double worst = 0;
  int steps = 0;
  for (int z = 0; z < kRegionSide; ++z) {
    for (int x = 0; x + 1 < kRegionSide; ++x) {
      const size_t a = static_cast<size_t>(z) * kRegionSide + x;
      if (region.land[a] == region.land[a + 1]) continue;
      worst = std::max(worst,
                       static_cast<double>(std::fabs(region.heights[a] - region.heights[a + 1])));
      ++steps;
    }
  }
  EXPECT_GE(steps, 100);
  EXPECT_LE(worst, bound);
  EXPECT_GT(worst, 0.0);
}

TEST(CoastTest, AWorldOfOneClassIsItsBlendedRelief) {
  WorldSpec spec = CoastalWorldSpec();
  for (BiomeSpec& b : spec.biomes) {
    b.surface = BiomeSurface::kLand;
    b.height_base = std::max(b.height_base, 70.0);
  }
  spec.heights.sea_level = 20;
  WorldSpec plain = spec;
  plain.heights.mode = HeightMode::kBlendedWeights;
  const std::shared_ptr<const World> coastal = *World::Create(spec);
  const std::shared_ptr<const World> blended = *World::Create(plain);
  const ChunkBlend a = *coastal->BlendChunk(-20, -20, 16, {.heights = true});
  const ChunkBlend b = *blended->BlendChunk(-20, -20, 16, {.heights = true});
  for (size_t col = 0; col < 256; ++col) {
    // s + Σ w (h − s) against Σ w h: equal up to rounding.
    EXPECT_NEAR(a.heights[col], b.heights[col], 1e-4) << col;
  }
}

TEST(CoastMetricsTest, MeasuresTheDistanceBetweenContourAndBorder) {
  // Land for x < 10; the heights cross sea level (0) at x = 12.5: every contour point is 3 blocks
  // from the border and every border point 3 from the contour.
  const int width = 32, height = 8;
  std::vector<uint8_t> land(width * height);
  std::vector<float> heights(width * height);
  for (int z = 0; z < height; ++z) {
    for (int x = 0; x < width; ++x) {
      land[z * width + x] = x < 10;
      heights[z * width + x] = static_cast<float>(12.5 - x);
    }
  }
  quality::CoastFigures f = quality::MeasureCoast(land, heights, width, height, 0.0);
  EXPECT_EQ(f.border_points, height);
  EXPECT_EQ(f.contour_points, height);
  EXPECT_DOUBLE_EQ(f.max_error, 3.0);
  EXPECT_DOUBLE_EQ(f.rms_error, 3.0);
  EXPECT_DOUBLE_EQ(f.steepest_slope, 1.0);

  // One contour point moved: only its own distance and its nearest border point's change.
  heights[3 * width + 12] = -1.0f;  // The row-3 crossing moves to x = 11.6.
  f = quality::MeasureCoast(land, heights, width, height, 0.0);
  EXPECT_DOUBLE_EQ(f.max_error, 3.0);
  EXPECT_LT(f.rms_error, 3.0);

  // Heights entirely below the sea: the coast is lost.
  std::fill(heights.begin(), heights.end(), -1.0f);
  f = quality::MeasureCoast(land, heights, width, height, 0.0);
  EXPECT_EQ(f.contour_points, 0);
  EXPECT_TRUE(std::isinf(f.max_error));
}

}  // namespace
}  // namespace worldgen
