#include "engine/biome_source.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/hash.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::TestCoordinate;

// seed 001's demo map: four biomes, noise-max source at its defaults.
WorldSpec NoiseMaxSpec4() {
  WorldSpec spec = DefaultWorldSpec();
  spec.biome_source = BiomeSourceKind::kNoiseMax;
  spec.biomes.resize(4);
  return spec;
}

// Points as the blenders ask for them: rows of lattice points, scattered non-integer points, and a
// few far out; in runs of every length up to more than one internal block.
void MakePoints(uint64_t trial, size_t n, std::vector<double>* xs, std::vector<double>* zs) {
  xs->resize(n);
  zs->resize(n);
  const double x0 = static_cast<double>(TestCoordinate(trial, 1, -30000000, 30000000));
  const double z0 = static_cast<double>(TestCoordinate(trial, 2, -30000000, 30000000));
  for (size_t k = 0; k < n; ++k) {
    switch (trial % 3) {
      case 0:
        (*xs)[k] = x0 + 8.0 * static_cast<double>(k % 8) + 0.37 * static_cast<double>(k);
        (*zs)[k] = z0 + 6.9 * static_cast<double>(k / 8);
        break;
      case 1:
        (*xs)[k] = static_cast<double>(TestCoordinate(trial * 1000 + k, 3, -5000, 5000)) * 0.731;
        (*zs)[k] = static_cast<double>(TestCoordinate(trial * 1000 + k, 4, -5000, 5000)) * 1.113;
        break;
      default:
        (*xs)[k] = x0 * 0.5 + 1.5 * static_cast<double>(k);
        (*zs)[k] = -z0;
    }
  }
}

void ExpectBatchEqualsPointByPoint(const BiomeSource& source) {
  std::vector<double> xs, zs;
  for (uint64_t trial = 0; trial < 90; ++trial) {
    const size_t n = static_cast<size_t>(trial % 30) * 5;  // 0..145: tails and several blocks.
    MakePoints(trial, n, &xs, &zs);
    std::vector<uint16_t> out(n + 1, 0xbeef);
    source.BiomeIndices(xs.data(), zs.data(), n, out.data());
    for (size_t k = 0; k < n; ++k) {
      ASSERT_EQ(out[k], source.BiomeIndexAt(xs[k], zs[k])) << "trial " << trial << " point " << k;
    }
    ASSERT_EQ(out[n], 0xbeef) << "wrote past the end";
  }
}

TEST(BiomeSourceTest, NoiseMaxBatchEqualsPointByPoint) {
  WorldSpec spec = NoiseMaxSpec4();
  ExpectBatchEqualsPointByPoint(NoiseMaxBiomeSource(spec));
  spec.noise_max = {.frequency = 0.01, .octaves = 5, .lacunarity = 2.7, .gain = 0.62};
  ExpectBatchEqualsPointByPoint(NoiseMaxBiomeSource(spec));
}

TEST(BiomeSourceTest, ClimateBatchEqualsPointByPoint) {
  ExpectBatchEqualsPointByPoint(ClimateBiomeSource(DefaultWorldSpec()));
}

// The highest field wins, every biome wins somewhere, and the map has regions (neighbouring points
// mostly agree at the demo's frequency).
TEST(BiomeSourceTest, NoiseMaxPicksTheHighestField) {
  const WorldSpec spec = NoiseMaxSpec4();
  NoiseMaxBiomeSource source(spec);
  std::vector<int> wins(4, 0);
  int same_as_neighbour = 0;
  for (uint64_t k = 0; k < 4000; ++k) {
    const double x = static_cast<double>(TestCoordinate(k, 5, -20000, 20000)) + 0.5;
    const double z = static_cast<double>(TestCoordinate(k, 6, -20000, 20000)) - 0.25;
    const int b = source.BiomeIndexAt(x, z);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, 4);
    for (int other = 0; other < 4; ++other) {
      ASSERT_LE(source.FieldAt(other, x, z), source.FieldAt(b, x, z));
      if (other < b) {
        ASSERT_LT(source.FieldAt(other, x, z), source.FieldAt(b, x, z))
            << "ties go to the lower index";
      }
    }
    ++wins[b];
    same_as_neighbour += source.BiomeIndexAt(x + 8.0, z) == b;
  }
  for (int b = 0; b < 4; ++b) EXPECT_GT(wins[b], 500) << "biome " << b;
  EXPECT_GT(same_as_neighbour, 3600);
}

// A biome's field depends on the world seed and its own id only: adding a biome changes no other
// field, and a different seed changes them.
TEST(BiomeSourceTest, NoiseMaxFieldsAreKeyedByBiomeId) {
  const WorldSpec four = NoiseMaxSpec4();
  WorldSpec five = DefaultWorldSpec();
  five.biome_source = BiomeSourceKind::kNoiseMax;
  five.biomes.resize(5);
  WorldSpec reseeded = four;
  reseeded.seed ^= 1;
  NoiseMaxBiomeSource a(four), b(five), c(reseeded);
  for (int k = 0; k < 100; ++k) {
    const double x = k * 97.3 - 3000.0, z = k * -41.9 + 700.0;
    for (int biome = 0; biome < 4; ++biome) {
      ASSERT_EQ(a.FieldAt(biome, x, z), b.FieldAt(biome, x, z));
      ASSERT_NE(a.FieldAt(biome, x, z), c.FieldAt(biome, x, z));
    }
  }
}

TEST(BiomeSourceTest, MakeBiomeSourceFollowsTheSpec) {
  EXPECT_NE(dynamic_cast<NoiseMaxBiomeSource*>(MakeBiomeSource(NoiseMaxSpec4()).get()), nullptr);
  EXPECT_NE(dynamic_cast<ClimateBiomeSource*>(MakeBiomeSource(DefaultWorldSpec()).get()), nullptr);
}

}  // namespace
}  // namespace worldgen
