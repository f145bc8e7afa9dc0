// Seed 003's jittered cells, and the seed code's bugs shown absent (the common contract covers
// chunk == point, sums to one, threads and cache).
#include "engine/jittered_cells_blender.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::FloatBits;
using ::testing::HasSubstr;
using testing::TestCoordinate;

WorldSpec CellsSpec(std::map<std::string, double> params = {}) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kJitteredCells, std::move(params)};
  return spec;
}

const JitteredCellsBlender& Cells(const World& world) {
  return dynamic_cast<const JitteredCellsBlender&>(world.blender());
}

// Weight per biome of column (lx, lz) of a BlendColumns result.
std::map<int, uint32_t> ColumnWeights(const std::vector<IndexedLayer>& layers, int size, int lx,
                                      int lz) {
  std::map<int, uint32_t> out;
  for (const IndexedLayer& layer : layers) {
    const float w = layer.weights[static_cast<size_t>(ColumnIndex(size, lx, lz))];
    if (w != 0.0f) out[layer.biome] = FloatBits(w);
  }
  return out;
}

// Seed bug: the cell grid was anchored at each request's base position (and jitter hashed from it),
// so two maps whose regions touch disagreed along their common edge. Here cells belong to the
// world: two blocks at arbitrary, unaligned bases equal the block that covers both, bit for bit.
TEST(JitteredCellsBlenderTest, NoSeamBetweenRequestsWhoseRegionsTouch) {
  std::shared_ptr<const World> world = *World::Create(CellsSpec({{"cell_size", 16}}));
  int compared_multi = 0;
  for (uint64_t k = 0; k < 30; ++k) {
    const int64_t x0 = TestCoordinate(k, 1, -90000, 90000),
                  z0 = TestCoordinate(k, 2, -90000, 90000);
    std::vector<IndexedLayer> left, right, both;
    world->blender().BlendColumns(x0, z0, 20, nullptr, &left);
    world->blender().BlendColumns(x0 + 20, z0, 20, nullptr, &right);
    world->blender().BlendColumns(x0, z0, 40, nullptr, &both);
    for (int lz = 0; lz < 20; ++lz) {
      for (int lx = 0; lx < 40; ++lx) {
        const auto part =
            lx < 20 ? ColumnWeights(left, 20, lx, lz) : ColumnWeights(right, 20, lx - 20, lz);
        ASSERT_EQ(part, ColumnWeights(both, 40, lx, lz)) << x0 + lx << "," << z0 + lz;
        compared_multi += part.size() > 1;
      }
    }
  }
  EXPECT_GT(compared_multi, 1000);
}

// Seed bugs: jitter from the global RNG (GD.Seed/GD.Randf: order- and thread-dependent) seeded by a
// float cell position, and offsets only toward +x/+z (the points sat in the cell's upper quarter).
// Here a point is a hash of (seed, cell index), inside the cell's jitter box, on both sides of
// centre.
TEST(JitteredCellsBlenderTest, CellPointsAreHashesOfSeedAndIndexCentredOnTheCell) {
  std::shared_ptr<const World> a = *World::Create(CellsSpec());
  std::shared_ptr<const World> b = *World::Create(CellsSpec());
  WorldSpec other = CellsSpec();
  other.seed ^= 1;
  std::shared_ptr<const World> c = *World::Create(other);
  int below_x = 0, above_x = 0, below_z = 0, above_z = 0, differ = 0;
  for (int64_t j = -40; j < 40; ++j) {
    for (int64_t i = -40; i < 40; ++i) {
      const auto p = Cells(*a).CellPoint(i, j);
      ASSERT_EQ(p, Cells(*b).CellPoint(i, j));
      differ += p != Cells(*c).CellPoint(i, j);
      const double cx = (static_cast<double>(i) + 0.5) * 64.0,
                   cz = (static_cast<double>(j) + 0.5) * 64.0;
      ASSERT_LE(std::fabs(p.first - cx), 0.4 * 64.0);
      ASSERT_LE(std::fabs(p.second - cz), 0.4 * 64.0);
      below_x += p.first<cx, above_x += p.first> cx;
      below_z += p.second<cz, above_z += p.second> cz;
    }
  }
  EXPECT_GT(differ, 6000);
  for (int n : {below_x, above_x, below_z, above_z}) EXPECT_GT(n, 2800);
}

// Seed bug: only neighbours with a lower biome index took influence from the closest cell, so a
// border blended on one side only and the result depended on the order of the biome table. Here
// reversing the biome ids (same names and climate points) gives the same weight to each named
// biome.
TEST(JitteredCellsBlenderTest, InfluenceDoesNotDependOnBiomeOrder) {
  WorldSpec spec = CellsSpec({{"cell_size", 32}});
  WorldSpec reversed = spec;
  const uint32_t n = static_cast<uint32_t>(spec.biomes.size());
  for (BiomeSpec& b : reversed.biomes) b.id = n - 1 - b.id;
  std::shared_ptr<const World> w1 = *World::Create(spec);
  std::shared_ptr<const World> w2 = *World::Create(reversed);
  int multi = 0;
  for (uint64_t k = 0; k < 3000; ++k) {
    const double x = static_cast<double>(TestCoordinate(k, 3, -20000, 20000));
    const double z = static_cast<double>(TestCoordinate(k, 4, -20000, 20000));
    PointBlend p1 = *w1->BlendPoint(x, z, {}), p2 = *w2->BlendPoint(x, z, {});
    std::map<std::string, float> by_name1, by_name2;
    for (const BiomeWeight& w : p1.weights) by_name1[spec.biomes[w.biome_id].name] = w.weight;
    for (const BiomeWeight& w : p2.weights)
      by_name2[spec.biomes[n - 1 - w.biome_id].name] = w.weight;
    ASSERT_EQ(by_name1.size(), by_name2.size()) << x << "," << z;
    for (const auto& [name, w] : by_name1) {
      ASSERT_NEAR(w, by_name2.at(name), 1e-6) << name << " at " << x << "," << z;
    }
    multi += by_name1.size() > 1;
  }
  EXPECT_GT(multi, 300);
}

// Seed bug: the 3 x 3 cells searched were those around the unwarped position, so a warp of more
// than about half a cell looked for the closest cell in the wrong place. Here the search is around
// the warped position and covers every cell that can weigh: widening it by 6 cells on every side
// changes no bit, even with a warp of 3 cells.
TEST(JitteredCellsBlenderTest, SearchCoversEveryCellAfterWarping) {
  std::shared_ptr<const World> world = *World::Create(
      CellsSpec({{"cell_size", 16}, {"warp_amplitude", 48}, {"overlap", 40}, {"jitter", 0.5}}));
  const JitteredCellsBlender& cells = Cells(*world);
  std::vector<std::pair<int, float>> normal, wide;
  int multi = 0;
  double largest_shift = 0.0;
  for (uint64_t k = 0; k < 4000; ++k) {
    const double x = static_cast<double>(TestCoordinate(k, 5, -50000, 50000)) + 0.25;
    const double z = static_cast<double>(TestCoordinate(k, 6, -50000, 50000)) - 0.125;
    const auto [px, pz] = cells.WarpedPosition(x, z);
    largest_shift = std::max(largest_shift, std::max(std::fabs(px - x), std::fabs(pz - z)));
    world->blender().BlendPoint(x, z, nullptr, &normal);
    cells.WeightsAtWarped(px, pz, 6, nullptr, &wide);
    ASSERT_EQ(normal.size(), wide.size()) << x << "," << z;
    for (size_t i = 0; i < normal.size(); ++i) {
      ASSERT_EQ(normal[i].first, wide[i].first);
      ASSERT_EQ(FloatBits(normal[i].second), FloatBits(wide[i].second));
    }
    multi += normal.size() > 1;
  }
  EXPECT_GT(largest_shift, 16.0) << "the warp should move columns by more than a cell";
  EXPECT_GT(multi, 1000);
}

// Seed bugs: dropping same-biome neighbours, one-sided influence and the 256-entry byte-indexed
// curve made weights jump when the closest cell changed; float positions stepped at large
// coordinates. Here weights change by little between points 1/8 block apart and by half that 1/16
// apart (a jump would not shrink), near the origin and near the world's edge.
TEST(JitteredCellsBlenderTest, WeightsAreContinuousAcrossClosestCellChanges) {
  std::shared_ptr<const World> world = *World::Create(CellsSpec({{"cell_size", 32}}));
  const JitteredCellsBlender& cells = Cells(*world);
  for (double origin : {0.0, 33000000.0}) {
    std::vector<testing::WalkLine> lines;
    for (uint64_t line = 0; line < 6; ++line) {
      lines.push_back({origin + static_cast<double>(TestCoordinate(line, 7, -5000, 5000)),
                       -origin + static_cast<double>(TestCoordinate(line, 8, -5000, 5000)),
                       0.37 + 1.1 * static_cast<double>(line)});
    }
    // Crossings of a cell border by the warped position: where the closest cell tends to change.
    int switches = 0;
    auto count_switches = [&](double x, double z, double next_x, double next_z,
                              const testing::PointWeights&, const testing::PointWeights&) {
      switches += std::floor(cells.WarpedPosition(x, z).first / 32) !=
                  std::floor(cells.WarpedPosition(next_x, next_z).first / 32);
    };
    const int n = static_cast<int>(world->spec().biomes.size());
    const double eighth =
        testing::WorstWeightStep(world->blender(), n, lines, 300, 0.125, count_switches);
    const double sixteenth = testing::WorstWeightStep(world->blender(), n, lines, 300, 0.0625);
    EXPECT_GT(switches, 25) << origin;
    EXPECT_GT(eighth, 0.0) << origin;
    EXPECT_LT(eighth, 0.05) << origin;
    EXPECT_LT(sixteenth, 0.6 * eighth) << origin;
  }
}

// Seed bug: the curve was sampled into 256 bytes-indexed entries and read at the nearest one, a
// staircase. Here it is piecewise linear through the control points, monotone, without steps.
TEST(JitteredCellsBlenderTest, CurveIsContinuousMonotoneAndHitsItsControlPoints) {
  std::shared_ptr<const World> world =
      *World::Create(CellsSpec({{"curve_25", 0.9}, {"curve_50", 0.7}, {"curve_75", 0.1}}));
  const JitteredCellsBlender& cells = Cells(*world);
  EXPECT_EQ(cells.Curve(0.0), 1.0);
  EXPECT_NEAR(cells.Curve(0.25), 0.9, 1e-15);
  EXPECT_NEAR(cells.Curve(0.5), 0.7, 1e-15);
  EXPECT_NEAR(cells.Curve(0.75), 0.1, 1e-15);
  EXPECT_EQ(cells.Curve(1.0), 0.0);
  EXPECT_EQ(cells.Curve(7.0), 0.0);
  EXPECT_NEAR(cells.Curve(0.625), 0.4, 1e-12);
  // Steepest segment: 0.6 over a quarter, slope 2.4.
  double previous = 1.0;
  for (int k = 1; k <= 100000; ++k) {
    const double t = k / 100000.0;
    const double v = cells.Curve(t);
    ASSERT_LE(v, previous) << t;
    ASSERT_LE(previous - v, 2.4 / 100000.0 + 1e-12) << t;
    previous = v;
  }
}

TEST(JitteredCellsBlenderTest, UniformBiomesAreAHashedUniformPick) {
  std::shared_ptr<const World> world = *World::Create(CellsSpec({{"uniform_biomes", 1}}));
  const JitteredCellsBlender& cells = Cells(*world);
  std::vector<int> counts(world->spec().biomes.size(), 0);
  BiomeSampleCache cache(1 << 20);
  for (int64_t j = -50; j < 50; ++j) {
    for (int64_t i = -50; i < 50; ++i) {
      const int biome = cells.CellBiome(i, j, nullptr);
      ASSERT_EQ(biome, cells.CellBiome(i, j, &cache));
      ++counts[static_cast<size_t>(biome)];
    }
  }
  for (int c : counts) {
    EXPECT_GT(c, 10000 / 11 * 8 / 10);
    EXPECT_LT(c, 10000 / 11 * 12 / 10);
  }
  // Without the option, a cell takes the source's biome at its point.
  std::shared_ptr<const World> sourced = *World::Create(CellsSpec());
  const auto p = Cells(*sourced).CellPoint(3, -9);
  EXPECT_EQ(Cells(*sourced).CellBiome(3, -9, nullptr),
            sourced->source().BiomeIndexAt(p.first, p.second));
}

TEST(JitteredCellsBlenderTest, RejectsARisingCurveAndAnOverlapTooWide) {
  EXPECT_THAT(
      ValidateWorldSpec(CellsSpec({{"curve_25", 0.4}, {"curve_50", 0.6}})).message(),
      HasSubstr(
          "curve (1, curve_25 = 0.4, curve_50 = 0.6, curve_75 = 0.15625, 0) must not increase"));
  EXPECT_THAT(ValidateWorldSpec(CellsSpec({{"cell_size", 8}, {"overlap", 40}})).message(),
              HasSubstr("jittered_cells.overlap = 40 is more than 4 cell sizes"));
  EXPECT_THAT(ValidateWorldSpec(CellsSpec({{"cell_size", 8.5}})).message(),
              HasSubstr("jittered_cells.cell_size = 8.5 must be a whole number"));
}

// Its sampling points are the cell points in the box (brute force over the cells around it), with
// the cell's biome, and that biome weighs where the cell point is looked up (the warped position).
TEST(JitteredCellsBlenderTest, SamplingPointsAreTheCellPointsInTheBox) {
  for (double uniform : {0.0, 1.0}) {
    std::shared_ptr<const World> world =
        *World::Create(CellsSpec({{"cell_size", 16}, {"uniform_biomes", uniform}}));
    const JitteredCellsBlender& cells = Cells(*world);
    for (uint64_t k = 0; k < 10; ++k) {
      const double x0 = static_cast<double>(TestCoordinate(k, 7, -50000, 50000)) + 0.5;
      const double z0 = static_cast<double>(TestCoordinate(k, 8, -50000, 50000));
      const BlockBox box{x0, z0, x0 + 100, z0 + 70};
      std::vector<SamplingPoint> points;
      cells.SamplingPoints(box, nullptr, &points);
      std::vector<SamplingPoint> expected;
      for (int64_t j = static_cast<int64_t>(z0 / 16) - 3; j <= (z0 + 70) / 16 + 3; ++j) {
        for (int64_t i = static_cast<int64_t>(x0 / 16) - 3; i <= (x0 + 100) / 16 + 3; ++i) {
          const auto [x, z] = cells.CellPoint(i, j);
          if (box.Contains(x, z)) expected.push_back({x, z, cells.CellBiome(i, j, nullptr)});
        }
      }
      testing::ExpectSamePoints(points, expected);
      EXPECT_LE(static_cast<double>(points.size()), cells.SamplingPointBound(box));
      std::vector<std::pair<int, float>> weights;
      for (size_t n = 0; n < points.size(); ++n) {
        cells.WeightsAtWarped(points[n].x, points[n].z, 0, nullptr, &weights);
        EXPECT_TRUE(std::any_of(weights.begin(), weights.end(),
                                [&](const auto& w) { return w.first == points[n].biome; }));
      }
    }
  }
}

// The header's formula at a column, computed here from scratch: the closest cell point's distance
// d_min to the (warped) lookup position, each cell weighing curve((d_c - d_min) / overlap) with the
// curve the straight segments through (0, 1), (1/4, curve_25), (1/2, curve_50), (3/4, curve_75),
// (1, 0), summed per biome and divided by the total. Cells from a window wider than any reach.
TEST(JitteredCellsBlenderTest, WeightsFollowTheCurveOfEachCellsDistanceBeyondTheClosest) {
  for (double warp : {0.0, 16.0}) {
    const std::map<std::string, double> params = {{"cell_size", 32},  {"overlap", 20},
                                                  {"curve_25", 0.9},  {"curve_50", 0.6},
                                                  {"curve_75", 0.15}, {"warp_amplitude", warp}};
    std::shared_ptr<const World> world = *World::Create(CellsSpec(params));
    const JitteredCellsBlender& cells = Cells(*world);
    const double knots[5] = {1.0, 0.9, 0.6, 0.15, 0.0};
    const auto curve = [&](double t) {
      if (t >= 1.0) return 0.0;
      const int segment = std::min(3, static_cast<int>(t * 4));
      return knots[segment] + (knots[segment + 1] - knots[segment]) * (t * 4 - segment);
    };
    int blended = 0;
    std::vector<std::pair<int, float>> weights;
    for (uint64_t k = 0; k < 3000; ++k) {
      const double x = static_cast<double>(TestCoordinate(k, 11, -20000, 20000)) + 0.5;
      const double z = static_cast<double>(TestCoordinate(k, 12, -20000, 20000));
      const auto [px, pz] = cells.WarpedPosition(x, z);
      const int64_t ci = static_cast<int64_t>(std::floor(px / 32)),
                    cj = static_cast<int64_t>(std::floor(pz / 32));
      std::vector<std::tuple<double, int>> near;  // (distance, biome)
      double d_min = 1e300;
      for (int64_t j = cj - 4; j <= cj + 4; ++j) {
        for (int64_t i = ci - 4; i <= ci + 4; ++i) {
          const auto [qx, qz] = cells.CellPoint(i, j);
          const double d = std::hypot(qx - px, qz - pz);
          d_min = std::min(d_min, d);
          near.emplace_back(d, cells.CellBiome(i, j, nullptr));
        }
      }
      std::map<int, double> sums;
      double total = 0.0;
      for (const auto& [d, biome] : near) {
        const double w = curve((d - d_min) / 20.0);
        if (w > 0.0) sums[biome] += w;
        total += w;
      }
      world->blender().BlendPoint(x, z, nullptr, &weights);
      ASSERT_EQ(weights.size(), sums.size()) << x << ", " << z;
      for (const auto& [biome, w] : weights) {
        ASSERT_TRUE(sums.contains(biome));
        EXPECT_NEAR(w, sums[biome] / total, 1e-6) << "biome " << biome << " at " << x << ", " << z;
      }
      blended += weights.size() > 1;
    }
    EXPECT_GT(blended, 300) << "warp " << warp;
  }
}

}  // namespace
}  // namespace worldgen
