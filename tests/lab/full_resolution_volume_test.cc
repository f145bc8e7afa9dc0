// The full-resolution 3D reference (engine/quality/full_resolution_volume.h) on the example cave
// world: a partition of unity in [0, 1], the formula by brute force over every block, the 2D
// blend bit for bit above the caves' reach, and what it refuses.
#include "engine/quality/full_resolution_volume.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/world.h"
#include "gtest/gtest.h"
#include "proto/world_config.h"

namespace worldgen {
namespace {

using quality::FullResolutionVolumeReference;
using Weights = std::vector<std::pair<int, float>>;

std::shared_ptr<const World> CaveWorld() {
  absl::StatusOr<std::vector<WorldSpec>> specs =
      LoadWorldSpecs({std::string(WORLDGEN_SOURCE_DIR) + "/docker/worlds/caves.json"});
  EXPECT_TRUE(specs.ok()) << specs.status();
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(specs->front());
  EXPECT_TRUE(world.ok()) << world.status();
  return *world;
}

// The weights at (x, y, z) straight from the formula: every integer block within the kernel's
// box, the kernel max(0, r^2 - d^2)^2 with y scaled by r / r_v, the 3D map's biome there.
std::map<int, double> BruteForce(const World& world, double x, double y, double z,
                                 double* cave_share) {
  const VolumeBlendParams& p = world.spec().caves.blending;
  const double r = p.blend_radius, scale = p.blend_radius / p.vertical_blend_radius;
  std::map<int, double> sums;
  double surface = 0.0, total = 0.0;
  for (double by = std::floor(y - p.vertical_blend_radius);
       by <= std::ceil(y + p.vertical_blend_radius); ++by) {
    for (double bz = std::floor(z - r); bz <= std::ceil(z + r); ++bz) {
      for (double bx = std::floor(x - r); bx <= std::ceil(x + r); ++bx) {
        const double d2 =
            (bx - x) * (bx - x) + (by - y) * (by - y) * scale * scale + (bz - z) * (bz - z);
        const double k = std::pow(std::max(0.0, r * r - d2), 2);
        if (k == 0.0) continue;
        const int biome = world.volume_source()->BiomeIndexAt(bx, by, bz);
        if (world.spec().biomes[static_cast<size_t>(biome)].cave) {
          sums[biome] += k;
        } else {
          surface += k;
        }
        total += k;
      }
    }
  }
  std::map<int, double> weights;
  for (const auto& [biome, s] : sums) weights[biome] = s / total;
  Weights column;
  world.blender().BlendPoint(x, z, nullptr, &column);
  for (const auto& [biome, w] : column) weights[biome] += surface / total * w;
  *cave_share = 1.0 - surface / total;
  return weights;
}

// A cave-rich stretch of caves.json (lab --slices shows it): x, z in [1984, 2015], y in [-56, -24].
constexpr VolumeBox kBox{1984, -56, 1984, 2015, -24, 2015};

TEST(FullResolutionVolumeTest, WeightsAreAPartitionOfUnityInZeroOne) {
  const std::shared_ptr<const World> world = CaveWorld();
  absl::StatusOr<FullResolutionVolumeReference> reference =
      FullResolutionVolumeReference::Create(*world, kBox);
  ASSERT_TRUE(reference.ok()) << reference.status();
  int mixed = 0, points = 0;
  Weights weights;
  for (double y = kBox.min_y; y <= kBox.max_y; y += 8) {
    for (double z = kBox.min_z; z <= kBox.max_z; z += 5) {
      for (double x = kBox.min_x; x <= kBox.max_x; x += 5) {
        ASSERT_TRUE(reference->BlendPoint(x, y, z, nullptr, &weights).ok());
        SCOPED_TRACE(testing::Message() << x << ", " << y << ", " << z);
        ++points;
        double sum = 0.0, caves = 0.0;
        for (size_t k = 0; k < weights.size(); ++k) {
          if (k > 0) {
            EXPECT_LT(weights[k - 1].first, weights[k].first);
          }
          EXPECT_GT(weights[k].second, 0.0f);
          EXPECT_LE(weights[k].second, 1.0f);
          sum += weights[k].second;
          if (world->spec().biomes[static_cast<size_t>(weights[k].first)].cave) {
            caves += weights[k].second;
          }
        }
        EXPECT_NEAR(sum, 1.0, 1e-6);
        mixed += caves > 0.05 && caves < 0.95;
      }
    }
  }
  // The box straddles cave borders: the property is not only tested where one side is absent.
  EXPECT_GE(mixed, points / 4) << points;
}

TEST(FullResolutionVolumeTest, EqualsTheFormulaByBruteForce) {
  const std::shared_ptr<const World> world = CaveWorld();
  absl::StatusOr<FullResolutionVolumeReference> reference =
      FullResolutionVolumeReference::Create(*world, kBox);
  ASSERT_TRUE(reference.ok()) << reference.status();
  // The first point on a line through the box where caves and surface share the kernel about
  // evenly, so that both parts of the formula count.
  double cave_share = 0.0;
  std::map<int, double> expected;
  double x = kBox.min_x;
  for (; x <= kBox.max_x; x += 3) {
    expected = BruteForce(*world, x, -40, 2000, &cave_share);
    if (cave_share > 0.3 && cave_share < 0.7) break;
  }
  ASSERT_LE(x, kBox.max_x) << "no mixed point on the line";
  Weights got;
  ASSERT_TRUE(reference->BlendPoint(x, -40, 2000, nullptr, &got).ok());
  std::map<int, double> nonzero;
  for (const auto& [biome, w] : expected) {
    if (w != 0.0) nonzero[biome] = w;
  }
  ASSERT_EQ(got.size(), nonzero.size()) << "at x = " << x;
  for (const auto& [biome, w] : got) {
    EXPECT_NEAR(w, nonzero[biome], 1e-6) << "biome " << biome << " at x = " << x;
  }
}

TEST(FullResolutionVolumeTest, AboveTheCavesReachItIsThe2DBlendBitForBit) {
  const std::shared_ptr<const World> world = CaveWorld();
  // The highest band ends below y = 24 and the kernel reaches 8 blocks up.
  absl::StatusOr<FullResolutionVolumeReference> reference =
      FullResolutionVolumeReference::Create(*world, {1984, 32, 1984, 2015, 40, 2015});
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (double x = 1984; x <= 2015; x += 7) {
    Weights got, column;
    ASSERT_TRUE(reference->BlendPoint(x, 32, 2001, nullptr, &got).ok());
    world->blender().BlendPoint(x, 2001, nullptr, &column);
    EXPECT_EQ(got, column) << x;
  }
}

TEST(FullResolutionVolumeTest, RefusesWhatItCannotAnswer) {
  absl::StatusOr<std::shared_ptr<const World>> flat = World::Create(DefaultWorldSpec());
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(FullResolutionVolumeReference::Create(**flat, kBox).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const std::shared_ptr<const World> world = CaveWorld();
  EXPECT_EQ(
      FullResolutionVolumeReference::Create(*world, {0, -64, 0, 1023, 0, 1023}).status().code(),
      absl::StatusCode::kInvalidArgument)
      << "the map of 1071 x 81 x 1071 blocks";
  EXPECT_EQ(FullResolutionVolumeReference::Create(*world, {1, 0, 0, 0, 0, 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<FullResolutionVolumeReference> reference =
      FullResolutionVolumeReference::Create(*world, {0, 0, 0, 3, 3, 3});
  ASSERT_TRUE(reference.ok()) << reference.status();
  Weights weights;
  EXPECT_EQ(reference->BlendPoint(4, 0, 0, nullptr, &weights).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace worldgen
