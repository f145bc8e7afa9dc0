// Scattered blending's own lattice gathering (the Blender contract is checked for it, and every
// other method, in blender_contract_test.cc).
#include "engine/scattered_blender.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
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

// The gather holds exactly the vertices whose jittered position is within the largest radius of the
// box (brute force over a wide window of the lattice), with the same positions and biomes through a
// cache as without one.
TEST(ScatteredBlenderTest, GatherIsCompleteAndCacheIndependent) {
  const ScatteredBlender blender(testing::DefaultWorld().spec(), testing::DefaultWorld().source(),
                                 /*world_uid=*/0);
  const JitteredLattice& lattice = blender.lattice();
  const double r = blender.max_radius();
  BiomeSampleCache cache(1 << 22);
  for (uint64_t k = 0; k < 40; ++k) {
    const double min_x = static_cast<double>(testing::TestCoordinate(k, 20, -100000, 100000));
    const double min_z = static_cast<double>(testing::TestCoordinate(k, 21, -100000, 100000));
    const double extent = k % 4 == 0 ? 0.0 : static_cast<double>(4 << (k % 5));
    std::vector<KernelSample> plain, cached;
    std::vector<LatticeIndex> plain_at, cached_at;
    blender.GatherSamples(min_x, min_z, min_x + extent, min_z + extent, nullptr, &plain, &plain_at);
    blender.GatherSamples(min_x, min_z, min_x + extent, min_z + extent, &cache, &cached,
                          &cached_at);
    ASSERT_EQ(plain.size(), cached.size());
    for (size_t s = 0; s < plain.size(); ++s) {
      ASSERT_EQ(plain[s].x, cached[s].x);
      ASSERT_EQ(plain[s].z, cached[s].z);
      ASSERT_EQ(plain[s].biome, cached[s].biome);
      ASSERT_EQ(plain_at[s].i, cached_at[s].i);
      ASSERT_EQ(plain_at[s].j, cached_at[s].j);
    }
    // Brute force: every vertex of a window well beyond the reach.
    std::vector<std::pair<int32_t, int32_t>> expected;
    const double row_height = lattice.interval() * JitteredLattice::kSqrt3 / 2;
    const int32_t jc = static_cast<int32_t>(std::floor(min_z / row_height));
    const int32_t span = static_cast<int32_t>((r + extent) / row_height) + 4;
    for (int32_t j = jc - span; j <= jc + span; ++j) {
      const int32_t ic = static_cast<int32_t>(std::floor(min_x / lattice.interval() - 0.5 * j));
      for (int32_t i = ic - span - 2; i <= ic + span + 2; ++i) {
        double x, z;
        lattice.Position(i, j, &x, &z);
        const double dx = std::max({0.0, min_x - x, x - (min_x + extent)});
        const double dz = std::max({0.0, min_z - z, z - (min_z + extent)});
        if (dx * dx + dz * dz < r * r) expected.push_back({j, i});
      }
    }
    ASSERT_EQ(plain_at.size(), expected.size()) << "box " << min_x << "," << min_z;
    for (size_t s = 0; s < expected.size(); ++s) {
      ASSERT_EQ(plain_at[s].j, expected[s].first);
      ASSERT_EQ(plain_at[s].i, expected[s].second);
    }
  }
}

// Its sampling points are exactly the jittered lattice vertices in the box (brute force over a
// window beyond it), in canonical order, each with the source's biome at its position.
TEST(ScatteredBlenderTest, SamplingPointsAreTheLatticeVerticesInTheBox) {
  const World& world = testing::DefaultWorld();
  const ScatteredBlender blender(world.spec(), world.source(), /*world_uid=*/0);
  const JitteredLattice& lattice = blender.lattice();
  const double row_height = lattice.interval() * JitteredLattice::kSqrt3 / 2;
  for (uint64_t k = 0; k < 20; ++k) {
    const double min_x = static_cast<double>(testing::TestCoordinate(k, 30, -100000, 100000)) + 0.3;
    const double min_z = static_cast<double>(testing::TestCoordinate(k, 31, -100000, 100000));
    const BlockBox box{min_x, min_z, min_x + 16.0 * (1 + k % 5), min_z + 8.0 * (1 + k % 7)};
    std::vector<SamplingPoint> points;
    blender.SamplingPoints(box, nullptr, &points);
    std::vector<SamplingPoint> expected;
    const int32_t j0 = static_cast<int32_t>(std::floor(box.min_z / row_height)) - 2;
    const int32_t j1 = static_cast<int32_t>(std::ceil(box.max_z / row_height)) + 2;
    for (int32_t j = j0; j <= j1; ++j) {
      const int32_t i0 = static_cast<int32_t>(std::floor(box.min_x / lattice.interval() - 0.5 * j));
      const int32_t i1 = static_cast<int32_t>(std::ceil(box.max_x / lattice.interval() - 0.5 * j));
      for (int32_t i = i0 - 2; i <= i1 + 2; ++i) {
        double x, z;
        lattice.Position(i, j, &x, &z);
        if (box.Contains(x, z)) expected.push_back({x, z, world.source().BiomeIndexAt(x, z)});
      }
    }
    SCOPED_TRACE(::testing::Message() << "box at " << min_x << ", " << min_z);
    testing::ExpectSamePoints(points, expected);
    EXPECT_LE(static_cast<double>(points.size()), blender.SamplingPointBound(box));
  }
}

// interpolation = 1, at a column: find its triangle of the jittered mesh by brute force (rhombus
// (i, j) split into (i, j), (i+1, j), (i, j+1) and (i+1, j), (i+1, j+1), (i, j+1)), blend the
// kernel at the three vertices (the per-column method's BlendPoint there) and combine them by the
// column's barycentric coordinates.
TEST(ScatteredBlenderTest, MeshInterpolationIsBarycentricOverTheKernelAtTheVertices) {
  for (double lattice_shape : {0.0, 1.0}) {
    WorldSpec spec = DefaultWorldSpec();
    spec.blender.params["lattice"] = lattice_shape;
    spec.blender.params["jitter"] = 0.3;
    const std::shared_ptr<const World> kernel = *World::Create(spec);
    spec.blender.params["interpolation"] = 1;
    const std::shared_ptr<const World> mesh = *World::Create(spec);
    const JitteredLattice& lattice =
        dynamic_cast<const ScatteredBlender&>(mesh->blender()).lattice();
    int borders = 0;
    for (uint64_t k = 0; k < 3000 && borders < 80; ++k) {
      const double x = static_cast<double>(testing::TestCoordinate(k, 60, -5000, 5000)) + 0.5;
      const double z = static_cast<double>(testing::TestCoordinate(k, 61, -5000, 5000)) + 0.25;
      std::vector<std::pair<int, float>> got;
      mesh->blender().BlendPoint(x, z, nullptr, &got);
      if (got.size() < 2) continue;
      ++borders;
      const int32_t jc = static_cast<int32_t>(std::floor(z / lattice.row_height()));
      const int32_t ic =
          static_cast<int32_t>(std::floor(x / lattice.interval() - lattice.row_shift() * jc));
      bool found = false;
      std::map<int, double> expected;
      for (int32_t j = jc - 3; j <= jc + 3 && !found; ++j) {
        for (int32_t i = ic - 4; i <= ic + 4 && !found; ++i) {
          for (const auto& t :
               {std::array<std::pair<int32_t, int32_t>, 3>{{{i, j}, {i + 1, j}, {i, j + 1}}},
                std::array<std::pair<int32_t, int32_t>, 3>{
                    {{i + 1, j}, {i + 1, j + 1}, {i, j + 1}}}}) {
            double px[3], pz[3];
            for (int c = 0; c < 3; ++c) lattice.Position(t[c].first, t[c].second, &px[c], &pz[c]);
            const double det =
                (px[1] - px[0]) * (pz[2] - pz[0]) - (px[2] - px[0]) * (pz[1] - pz[0]);
            ASSERT_GT(det, 0.0) << "a folded triangle";
            const double l1 = ((x - px[0]) * (pz[2] - pz[0]) - (px[2] - px[0]) * (z - pz[0])) / det;
            const double l2 = ((px[1] - px[0]) * (z - pz[0]) - (x - px[0]) * (pz[1] - pz[0])) / det;
            const double l[3] = {1 - l1 - l2, l1, l2};
            if (std::min({l[0], l[1], l[2]}) < 0.0) continue;
            found = true;
            for (int c = 0; c < 3; ++c) {
              std::vector<std::pair<int, float>> w;
              kernel->blender().BlendPoint(px[c], pz[c], nullptr, &w);
              for (const auto& [biome, value] : w) expected[biome] += l[c] * value;
            }
            break;
          }
        }
      }
      ASSERT_TRUE(found) << "no triangle holds (" << x << ", " << z << ")";
      size_t nonzero = 0;
      for (const auto& [biome, w] : expected) nonzero += static_cast<float>(w) != 0.0f;
      ASSERT_EQ(got.size(), nonzero) << x << ", " << z;
      for (const auto& [biome, w] : got) {
        EXPECT_NEAR(w, expected[biome], 1e-6) << "biome " << biome << " at " << x << ", " << z;
      }
    }
    EXPECT_EQ(borders, 80);
  }
}

// Biome weights at (x, z) as a map (biome -> weight), through the point query.
std::map<int, double> WeightsAt(const World& world, double x, double z) {
  std::vector<std::pair<int, float>> w;
  world.blender().BlendPoint(x, z, nullptr, &w);
  std::map<int, double> out;
  for (const auto& [biome, value] : w) out[biome] = value;
  return out;
}

// Border points of the default world (two or more biomes under the per-column kernel).
std::vector<std::array<double, 2>> BorderPoints(const World& kernel, int count, uint64_t stream) {
  std::vector<std::array<double, 2>> points;
  for (uint64_t k = 0; points.size() < static_cast<size_t>(count) && k < 20000; ++k) {
    const double x = static_cast<double>(testing::TestCoordinate(k, stream, -5000, 5000)) + 0.37;
    const double z =
        static_cast<double>(testing::TestCoordinate(k, stream + 1, -5000, 5000)) + 0.61;
    if (WeightsAt(kernel, x, z).size() >= 2) points.push_back({x, z});
  }
  return points;
}

// The largest change of slope between neighbouring steps along lines through border points (the
// second difference over the step, per biome): a crease (a C0 join) shows as the jump of the
// gradient across it, a C1 join as the step times the curvature. Lines run in every direction,
// so they cross triangle edges and the smooth interpolation's inner split edges alike.
double LargestSlopeJump(const World& world, const std::vector<std::array<double, 2>>& centres,
                        double step) {
  constexpr int kSteps = 300;
  double largest = 0.0;
  for (size_t c = 0; c < centres.size(); ++c) {
    const double angle = 2.399963 * static_cast<double>(c);  // golden angle: every direction
    const double dx = std::cos(angle) * step, dz = std::sin(angle) * step;
    std::vector<std::map<int, double>> line;
    for (int k = -kSteps / 2; k <= kSteps / 2; ++k) {
      line.push_back(WeightsAt(world, centres[c][0] + k * dx, centres[c][1] + k * dz));
    }
    for (size_t k = 1; k + 1 < line.size(); ++k) {
      std::map<int, double> biomes = line[k];
      biomes.insert(line[k - 1].begin(), line[k - 1].end());
      biomes.insert(line[k + 1].begin(), line[k + 1].end());
      for (const auto& entry : biomes) {
        const int biome = entry.first;  // Not a structured binding: clang 14 cannot capture one.
        const auto at = [&](size_t n) {
          auto it = line[n].find(biome);
          return it == line[n].end() ? 0.0 : it->second;
        };
        largest = std::max(largest, std::abs(at(k + 1) - 2.0 * at(k) + at(k - 1)) / step);
      }
    }
  }
  return largest;
}

// interpolation = 2 is C1: along lines in every direction the largest change of slope between
// steps halves with the step (it is the step times the curvature), where the linear mesh
// (interpolation = 1) keeps its jumps at triangle edges whatever the step.
TEST(ScatteredBlenderTest, SmoothMeshInterpolationHasNoCreases) {
  WorldSpec spec = DefaultWorldSpec();
  const std::shared_ptr<const World> kernel = *World::Create(spec);
  spec.blender.params["interpolation"] = 1;
  const std::shared_ptr<const World> linear = *World::Create(spec);
  spec.blender.params["interpolation"] = 2;
  const std::shared_ptr<const World> smooth = *World::Create(spec);
  const std::vector<std::array<double, 2>> centres = BorderPoints(*kernel, 40, 70);
  ASSERT_EQ(centres.size(), 40u);
  double linear_jump[2], smooth_jump[2];
  for (int k = 0; k < 2; ++k) {
    const double step = k == 0 ? 0.04 : 0.02;
    linear_jump[k] = LargestSlopeJump(*linear, centres, step);
    smooth_jump[k] = LargestSlopeJump(*smooth, centres, step);
    std::printf("largest slope jump at step %g: linear mesh %.3g, smooth mesh %.3g\n", step,
                linear_jump[k], smooth_jump[k]);
  }
  EXPECT_GT(linear_jump[1], 5e-3);
  EXPECT_GT(linear_jump[1], 0.8 * linear_jump[0]) << "the linear mesh's creases";
  EXPECT_LT(smooth_jump[1], 0.6 * smooth_jump[0]) << "a crease in the smooth mesh";
  EXPECT_LT(smooth_jump[1], 1e-3);
}

// interpolation = 2 interpolates the kernel blend's value and slope at the lattice points: at a
// vertex its weights are the per-column kernel's there, and its gradients are the kernel blend's
// wherever no biome's ordinate would dip below 0 (powell_sabin.h's LimitVertexGradients, pinned by
// its own test, changes the others); they always sum to 0 over the biomes. Gradients by central
// differences of the point query.
TEST(ScatteredBlenderTest, SmoothMeshTakesTheKernelBlendsValueAndSlopeAtVertices) {
  WorldSpec spec = DefaultWorldSpec();
  const std::shared_ptr<const World> kernel = *World::Create(spec);
  spec.blender.params["interpolation"] = 2;
  const std::shared_ptr<const World> smooth = *World::Create(spec);
  const JitteredLattice& lattice =
      dynamic_cast<const ScatteredBlender&>(smooth->blender()).lattice();
  constexpr double h = 1e-3;
  const auto gradient = [&](const World& world, double x, double z) {
    std::map<int, std::array<double, 2>> g;
    for (int axis = 0; axis < 2; ++axis) {
      const double ex = axis == 0 ? h : 0.0, ez = axis == 0 ? 0.0 : h;
      for (const auto& [biome, w] : WeightsAt(world, x + ex, z + ez)) g[biome][axis] += w / (2 * h);
      for (const auto& [biome, w] : WeightsAt(world, x - ex, z - ez)) g[biome][axis] -= w / (2 * h);
    }
    return g;
  };
  int vertices = 0, exact = 0;
  for (const auto& [bx, bz] : BorderPoints(*kernel, 60, 80)) {
    const int32_t j = static_cast<int32_t>(std::floor(bz / lattice.row_height()));
    const int32_t i =
        static_cast<int32_t>(std::floor(bx / lattice.interval() - lattice.row_shift() * j));
    double x, z;
    lattice.Position(i, j, &x, &z);
    const std::map<int, double> expected = WeightsAt(*kernel, x, z);
    if (expected.size() < 2) continue;
    ++vertices;
    const std::map<int, double> got = WeightsAt(*smooth, x, z);
    ASSERT_EQ(got.size(), expected.size()) << x << ", " << z;
    for (const auto& [biome, w] : expected) EXPECT_NEAR(got.at(biome), w, 1e-6) << x << ", " << z;
    const auto want = gradient(*kernel, x, z), have = gradient(*smooth, x, z);
    std::array<double, 2> sum = {0.0, 0.0};
    double largest_difference = 0.0;
    for (const auto& [biome, g] : have) {
      for (int axis = 0; axis < 2; ++axis) {
        sum[axis] += g[axis];
        const double other = want.contains(biome) ? want.at(biome)[axis] : 0.0;
        largest_difference = std::max(largest_difference, std::abs(g[axis] - other));
      }
    }
    EXPECT_NEAR(sum[0], 0.0, 1e-4) << x << ", " << z;
    EXPECT_NEAR(sum[1], 0.0, 1e-4) << x << ", " << z;
    exact += largest_difference < 1e-4;
  }
  std::printf("%d vertices, %d with the kernel blend's slope for every biome\n", vertices, exact);
  EXPECT_GE(vertices, 30);
  EXPECT_GE(exact, vertices * 2 / 3);
}

// The jitter bound that keeps the mesh valid is enforced, per lattice shape.
TEST(ScatteredBlenderTest, MeshInterpolationRefusesAJitterThatFoldsTriangles) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender.params["interpolation"] = 1;
  spec.blender.params["jitter"] = 0.43;
  EXPECT_TRUE(ValidateWorldSpec(spec).ok()) << ValidateWorldSpec(spec);
  spec.blender.params["jitter"] = 0.45;
  EXPECT_THAT(std::string(ValidateWorldSpec(spec).message()),
              ::testing::HasSubstr("scattered.jitter = 0.45 is above 0.43"));
  spec.blender.params["lattice"] = 1;
  spec.blender.params["jitter"] = 0.4;
  EXPECT_THAT(std::string(ValidateWorldSpec(spec).message()),
              ::testing::HasSubstr("scattered.jitter = 0.4 is above 0.35"));
  spec.blender.params["interpolation"] = 2;  // The smooth interpolation uses the same mesh.
  EXPECT_THAT(std::string(ValidateWorldSpec(spec).message()),
              ::testing::HasSubstr("scattered.jitter = 0.4 is above 0.35, the most that keeps the "
                                   "jittered mesh valid for scattered.interpolation = 2"));
  spec.blender.params["interpolation"] = 3;
  EXPECT_FALSE(ValidateWorldSpec(spec).ok());
}

}  // namespace
}  // namespace worldgen
