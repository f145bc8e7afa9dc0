// 3D scattered blending (issue 25's engine part): the jittered body-centred cubic lattice, the
// gather, the kernel's arithmetic against brute force, cells against points bit for bit, and the
// vertical radius.
#include "engine/volume_blender.h"

#include "engine/world.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

int FloorMod(int64_t v, int m) { return static_cast<int>(((v % m) + m) % m); }

// Three biomes in slanted layers with wavy borders: borders in every orientation.
class LayeredSource final : public VolumeSource {
 public:
  int BiomeIndexAt(double x, double y, double z) const override {
    const double band = x / 37.0 + 1.3 * std::sin(z / 23.0) + y / 19.0;
    return FloorMod(static_cast<int64_t>(std::floor(band)), 3);
  }
};

// Biome 0 below y = 0, biome 1 from y = 0 up.
class SplitAtZero final : public VolumeSource {
 public:
  int BiomeIndexAt(double, double y, double) const override { return y < 0.0 ? 0 : 1; }
};

class OneBiome final : public VolumeSource {
 public:
  int BiomeIndexAt(double, double, double) const override { return 2; }
};

VolumeBlendParams Params(double jitter = 0.35) {
  VolumeBlendParams p;
  p.sampling_interval = 8.0;
  p.jitter = jitter;
  p.blend_radius = 24.0;
  p.vertical_blend_radius = 8.0;
  return p;
}

// Kernel-space distance from (x, ys, z) to the nearest jittered point, by brute force.
double NearestPoint(const JitteredBccLattice& lattice, double x, double ys, double z) {
  const double g = lattice.interval();
  const int32_t i = static_cast<int32_t>(std::floor(x / g));
  const int32_t j = static_cast<int32_t>(std::floor(ys / g));
  const int32_t k = static_cast<int32_t>(std::floor(z / g));
  double best = 1e300;
  for (int32_t dj = -2; dj <= 2; ++dj) {
    for (int32_t dk = -2; dk <= 2; ++dk) {
      for (int32_t di = -2; di <= 2; ++di) {
        for (int32_t c = 0; c < 2; ++c) {
          double px, py, pz;
          lattice.Position({i + di, j + dj, k + dk, c}, &px, &py, &pz);
          best = std::min(best, std::hypot(px - x, py * lattice.y_scale() - ys, pz - z));
        }
      }
    }
  }
  return best;
}

// Each biome's kernel sum at (x, y, z), by brute force over a window of the lattice (kernel
// space, radius 24, the tests' worlds' radius): sum_{its points} max(0, r^2 - d^2)^2.
std::map<int, double> KernelSumsByBiome(const JitteredBccLattice& lattice,
                                        const VolumeSource& source, double x, double y, double z) {
  const double s = lattice.y_scale();
  const int32_t i = static_cast<int32_t>(std::floor(x / 8)), k = static_cast<int32_t>(z / 8);
  const int32_t j = static_cast<int32_t>(std::floor(y * s / 8));
  std::map<int, double> sums;
  for (int32_t dj = -5; dj <= 5; ++dj) {
    for (int32_t dk = -5; dk <= 5; ++dk) {
      for (int32_t di = -5; di <= 5; ++di) {
        for (int32_t c = 0; c < 2; ++c) {
          double px, py, pz;
          lattice.Position({i + di, j + dj, k + dk, c}, &px, &py, &pz);
          const double d2 = (px - x) * (px - x) + (pz - z) * (pz - z) + (py - y) * (py - y) * s * s;
          sums[source.BiomeIndexAt(px, py, pz)] += std::pow(std::max(0.0, 24.0 * 24.0 - d2), 2);
        }
      }
    }
  }
  return sums;
}

TEST(VolumeBlenderTest, TheLatticeIsBodyCentredCubicAndEveryPointMovesByTheJitter) {
  const JitteredBccLattice plain(7, 8.0, 4.0, 0.0), jittered(7, 8.0, 4.0, 0.35);
  EXPECT_DOUBLE_EQ(plain.y_scale(), 2.0);
  double x, y, z;
  plain.Position({1, 2, 3, 1}, &x, &y, &z);
  EXPECT_DOUBLE_EQ(x, 12.0);
  EXPECT_DOUBLE_EQ(y, 10.0);  // vertical_interval * 2.5
  EXPECT_DOUBLE_EQ(z, 28.0);
  double largest = 0.0;
  for (uint64_t n = 0; n < 400; ++n) {
    const BccIndex p = {static_cast<int32_t>(testing::TestCoordinate(n, 1, -1000, 1000)),
                        static_cast<int32_t>(testing::TestCoordinate(n, 2, -1000, 1000)),
                        static_cast<int32_t>(testing::TestCoordinate(n, 3, -1000, 1000)),
                        static_cast<int32_t>(n % 2)};
    double px, py, pz, jx, jy, jz;
    plain.Position(p, &px, &py, &pz);
    jittered.Position(p, &jx, &jy, &jz);
    EXPECT_NEAR(std::hypot(jx - px, (jy - py) * 2.0, jz - pz), 0.35 * 8.0, 1e-9);
    // Every point of space is within the covering radius of the plain lattice.
    const double sx = static_cast<double>(testing::TestCoordinate(n, 4, -9000, 9000)) * 0.37;
    const double sy = static_cast<double>(testing::TestCoordinate(n, 5, -9000, 9000)) * 0.29;
    const double sz = static_cast<double>(testing::TestCoordinate(n, 6, -9000, 9000)) * 0.41;
    const double d = NearestPoint(plain, sx, sy, sz);
    EXPECT_LE(d, 8.0 * JitteredBccLattice::kCoveringRadius + 1e-9);
    largest = std::max(largest, d);
    EXPECT_LE(NearestPoint(jittered, sx, sy, sz),
              8.0 * (JitteredBccLattice::kCoveringRadius + 0.35) + 1e-9);
  }
  // And no closer than a BCC lattice's: a plain cubic lattice of the same interval would leave
  // points up to 0.866 intervals away, a denser one less than half an interval.
  EXPECT_GT(largest, 0.5 * 8.0);
}

// PositionRow's variants (and the dispatched PositionRow) against Position, bit for bit: rows of
// every length up to a few vectors, both kinds of point, at the origin, far out and at both ends of
// int32_t. About half the draws miss the ball, so lanes take from 1 to many attempts. Nothing past
// `count` is written.
TEST(VolumeBlenderTest, LatticeRowsMatchPositionInEveryVariant) {
  std::vector<BccRowVariant> variants;
  for (const BccRowVariant& v : BccRowVariants()) {
    if (v.supported) variants.push_back(v);
  }
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(BccRowVariants().back().name, "baseline");
  const JitteredBccLattice lattice(0x3d, 8.0, 4.0, 0.35);
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t starts[][3] = {
      {0, 0, 0}, {-5, -17, 3}, {98765, -4, -123457}, {kMin, kMax, kMin}, {kMax - 30, kMin, kMax}};
  const auto bits = [](double v) { return std::bit_cast<uint64_t>(v); };
  for (const auto& start : starts) {
    // Plain variables, not a structured binding: the lambdas below capture them, which clang 14
    // (the fuzz build) does not allow for bindings.
    const int32_t i_begin = start[0], j = start[1], k = start[2];
    for (int32_t c = 0; c < 2; ++c) {
      for (int32_t count = 0; count <= 31; ++count) {
        const auto check = [&](const char* name, auto run) {
          std::vector<double> x(count + 9, -1.5), y(count + 9, -1.5), z(count + 9, -1.5);
          run(x.data(), y.data(), z.data());
          for (int32_t n = 0; n < count; ++n) {
            double px, py, pz;
            lattice.Position({i_begin + n, j, k, c}, &px, &py, &pz);
            ASSERT_TRUE(bits(x[n]) == bits(px) && bits(y[n]) == bits(py) && bits(z[n]) == bits(pz))
                << name << " point (" << i_begin + n << ", " << j << ", " << k << ", " << c
                << "): " << x[n] << " " << y[n] << " " << z[n] << " vs " << px << " " << py << " "
                << pz;
          }
          for (size_t n = count; n < x.size(); ++n) {
            ASSERT_TRUE(x[n] == -1.5 && y[n] == -1.5 && z[n] == -1.5) << name << " wrote past";
          }
        };
        check("dispatched", [&](double* x, double* y, double* z) {
          lattice.PositionRow(i_begin, count, j, k, c, x, y, z);
        });
        for (const BccRowVariant& v : variants) {
          check(v.name, [&](double* x, double* y, double* z) {
            v.run(lattice.geometry(), i_begin, count, j, k, c, x, y, z);
          });
        }
      }
    }
  }
}

// Uncached and through a cache (cold, then warm), for a block, points (the reach a ball, whose top
// and bottom layers the cached gather narrows) and thin boxes at many heights.
TEST(VolumeBlenderTest, GatherHoldsExactlyThePointsThatReachTheBoxInCanonicalOrder) {
  const LayeredSource source;
  const ScatteredVolumeBlender blender(11, Params(), source);
  const ScatteredVolumeBlender cached_blender(11, Params(), source, nullptr, {}, /*cache_uid=*/7);
  const JitteredBccLattice& lattice = blender.lattice();
  const double s = lattice.y_scale();
  std::vector<VolumeBox> boxes = {{-20, 5, 40, -5, 20, 47}, {0, 0, 0, 0, 0, 0}};
  for (uint64_t n = 0; n < 24; ++n) {
    const double x = static_cast<double>(testing::TestCoordinate(n, 1, -2000, 2000)) * 0.37;
    const double y = static_cast<double>(testing::TestCoordinate(n, 2, -400, 400)) * 0.13;
    const double z = static_cast<double>(testing::TestCoordinate(n, 3, -2000, 2000)) * 0.41;
    const double wide = static_cast<double>(n % 3) * 7.0, tall = static_cast<double>(n % 4);
    boxes.push_back({x, y, z, x + wide, y + tall, z + (n % 2 == 0 ? 0.0 : 16.0)});
  }
  BiomeSampleCache cache(64 << 20);
  for (const VolumeBox& box : boxes) {
    SCOPED_TRACE(::testing::Message()
                 << "box " << box.min_x << " " << box.min_y << " " << box.min_z << " .. "
                 << box.max_x << " " << box.max_y << " " << box.max_z);
    std::vector<VolumeSample> expected;
    const auto lo = [](double v) { return static_cast<int32_t>(std::floor(v / 8.0)) - 5; };
    const auto hi = [](double v) { return static_cast<int32_t>(std::ceil(v / 8.0)) + 5; };
    for (int32_t j = lo(box.min_y * s); j <= hi(box.max_y * s); ++j) {
      for (int32_t k = lo(box.min_z); k <= hi(box.max_z); ++k) {
        for (int32_t i = lo(box.min_x); i <= hi(box.max_x); ++i) {
          for (int32_t c = 0; c < 2; ++c) {
            double x, y, z;
            lattice.Position({i, j, k, c}, &x, &y, &z);
            const double ys = y * s;
            const double dx = std::max({0.0, box.min_x - x, x - box.max_x});
            const double dy = std::max({0.0, box.min_y * s - ys, ys - box.max_y * s});
            const double dz = std::max({0.0, box.min_z - z, z - box.max_z});
            if (dx * dx + dy * dy + dz * dz < 24.0 * 24.0) {
              expected.push_back({x, ys, z, static_cast<uint16_t>(source.BiomeIndexAt(x, y, z))});
            }
          }
        }
      }
    }
    std::vector<VolumeSample> plain, cold, warm;
    blender.GatherSamples(box, &plain);
    cached_blender.GatherSamples(box, &cold, &cache);
    cached_blender.GatherSamples(box, &warm, &cache);
    for (const std::vector<VolumeSample>* got : {&plain, &cold, &warm}) {
      ASSERT_EQ(got->size(), expected.size());
      for (size_t n = 0; n < got->size(); ++n) {
        EXPECT_EQ((*got)[n].x, expected[n].x);
        EXPECT_EQ((*got)[n].y, expected[n].y);
        EXPECT_EQ((*got)[n].z, expected[n].z);
        EXPECT_EQ((*got)[n].biome, expected[n].biome);
      }
    }
  }
}

// Each biome's weight is sum_{its points} max(0, r^2 - d^2)^2 / sum_{all points} (brute force over
// a window of the lattice, in kernel space), a partition of unity.
TEST(VolumeBlenderTest, WeightsAreTheNormalizedKernelSumsOverTheLattice) {
  const LayeredSource source;
  const ScatteredVolumeBlender blender(11, Params(), source);
  const JitteredBccLattice& lattice = blender.lattice();
  int borders = 0;
  for (uint64_t n = 0; n < 60; ++n) {
    const double x = static_cast<double>(testing::TestCoordinate(n, 7, -3000, 3000));
    const double y = static_cast<double>(testing::TestCoordinate(n, 8, -200, 200));
    const double z = static_cast<double>(testing::TestCoordinate(n, 9, -3000, 3000));
    std::map<int, double> sums = KernelSumsByBiome(lattice, source, x, y, z);
    double total = 0.0;
    for (const auto& [biome, w] : sums) total += w;
    std::vector<std::pair<int, float>> got;
    blender.BlendPoint(x, y, z, &got);
    borders += got.size() >= 2;
    double sum = 0.0;
    for (const auto& [biome, w] : got) {
      EXPECT_NEAR(w, sums[biome] / total, 1e-6) << x << ", " << y << ", " << z;
      EXPECT_GT(w, 0.0f);
      EXPECT_LE(w, 1.0f);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
    for (const auto& [biome, s] : sums) {
      if (static_cast<float>(s / total) != 0.0f) {
        EXPECT_TRUE(
            std::any_of(got.begin(), got.end(), [b = biome](auto e) { return e.first == b; }))
            << "biome " << biome << " missing at " << x << ", " << y << ", " << z;
      }
    }
  }
  EXPECT_GE(borders, 20);
}

TEST(VolumeBlenderTest, CellsEqualPointsBitForBitAtEveryCellSize) {
  const LayeredSource source;
  const ScatteredVolumeBlender blender(11, Params(), source);
  for (int cell : {1, 4}) {
    const int n = cell == 1 ? 8 : 4;
    for (const auto& [x0, y0, z0] :
         {std::array<int64_t, 3>{-40, -16, 64}, std::array<int64_t, 3>{160, 32, -48}}) {
      std::vector<IndexedLayer> layers;
      const bool single = blender.BlendCells(x0, y0, z0, n, n, n, cell, &layers);
      ASSERT_FALSE(single);
      for (size_t l = 1; l < layers.size(); ++l) EXPECT_LT(layers[l - 1].biome, layers[l].biome);
      for (int b = 0; b < n; ++b) {
        for (int d = 0; d < n; ++d) {
          for (int a = 0; a < n; ++a) {
            std::vector<std::pair<int, float>> point;
            blender.BlendPoint(static_cast<double>(x0 + cell * a),
                               static_cast<double>(y0 + cell * b),
                               static_cast<double>(z0 + cell * d), &point);
            std::map<int, float> expected(point.begin(), point.end());
            const size_t at = (static_cast<size_t>(b) * n + d) * n + a;
            for (const IndexedLayer& layer : layers) {
              const float want = expected.contains(layer.biome) ? expected[layer.biome] : 0.0f;
              ASSERT_EQ(testing::FloatBits(layer.weights[at]), testing::FloatBits(want))
                  << "cell " << cell << " (" << a << ", " << b << ", " << d << ") biome "
                  << layer.biome;
            }
          }
        }
      }
    }
  }
}

// The vertical radius is the kernel's reach up and down: with biome 1 from y = 0 up, a point more
// than vertical_blend_radius below 0 has none of it, and one less than that below has some.
TEST(VolumeBlenderTest, TheVerticalRadiusIsTheReachUpAndDown) {
  const SplitAtZero source;
  VolumeBlendParams params = Params();
  params.vertical_blend_radius = 6.0;
  const ScatteredVolumeBlender blender(3, params, source);
  for (uint64_t n = 0; n < 20; ++n) {
    const double x = static_cast<double>(testing::TestCoordinate(n, 10, -3000, 3000));
    const double z = static_cast<double>(testing::TestCoordinate(n, 11, -3000, 3000));
    std::vector<std::pair<int, float>> w;
    blender.BlendPoint(x, -6.0, z, &w);
    EXPECT_THAT(w, ::testing::ElementsAre(std::pair<int, float>{0, 1.0f})) << x << ", " << z;
    blender.BlendPoint(x, 6.0, z, &w);
    EXPECT_THAT(w, ::testing::ElementsAre(std::pair<int, float>{1, 1.0f})) << x << ", " << z;
    blender.BlendPoint(x, -3.0, z, &w);
    EXPECT_EQ(w.size(), 2u) << x << ", " << z;
  }
}

TEST(VolumeBlenderTest, OneBiomeIsExactlyOneLayerOfOnes) {
  const OneBiome source;
  const ScatteredVolumeBlender blender(5, Params(), source);
  std::vector<IndexedLayer> layers;
  EXPECT_TRUE(blender.BlendCells(0, 0, 0, 4, 96, 4, 4, &layers));
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].biome, 2);
  EXPECT_EQ(layers[0].weights, std::vector<float>(4 * 96 * 4, 1.0f));
}

TEST(VolumeBlenderTest, ParametersAreValidated) {
  EXPECT_TRUE(ScatteredVolumeBlender::Validate(Params()).ok());
  VolumeBlendParams p = Params();
  p.blend_radius = 8.0;  // Below 8 * (0.559 + 0.35 + 0.25) = 9.27.
  EXPECT_THAT(std::string(ScatteredVolumeBlender::Validate(p).message()),
              ::testing::HasSubstr("caves.blending.blend_radius = 8 is out of range: [9.27214"));
  p = Params();
  p.vertical_blend_radius = 30.0;
  EXPECT_THAT(std::string(ScatteredVolumeBlender::Validate(p).message()),
              ::testing::HasSubstr("caves.blending.vertical_blend_radius = 30 is out of range"));
  // Cost bounds: at most 8 intervals of radius, and layers at least a block apart (vertical
  // radius >= radius / interval). Each side of each bound.
  p = Params();
  p.blend_radius = 64.0;
  EXPECT_TRUE(ScatteredVolumeBlender::Validate(p).ok());
  p.blend_radius = 64.5;
  EXPECT_THAT(std::string(ScatteredVolumeBlender::Validate(p).message()),
              ::testing::HasSubstr("blend_radius = 64.5 is out of range: [9.27214, 64]"));
  p = Params();
  p.vertical_blend_radius = 3.0;  // 24 / 8: layers exactly a block apart.
  EXPECT_TRUE(ScatteredVolumeBlender::Validate(p).ok());
  p.vertical_blend_radius = 2.9;
  EXPECT_THAT(
      std::string(ScatteredVolumeBlender::Validate(p).message()),
      ::testing::HasSubstr("vertical_blend_radius = 2.9 is out of range: [3, blend_radius"));
  p = Params();
  p.sampling_interval = 256.0;
  p.blend_radius = 1024.0;
  p.vertical_blend_radius = 1.0;  // 1024 / 256 = 4 blocks at least.
  EXPECT_THAT(std::string(ScatteredVolumeBlender::Validate(p).message()),
              ::testing::HasSubstr("vertical_blend_radius = 1 is out of range: [4,"));
  p.vertical_blend_radius = 4.0;
  EXPECT_TRUE(ScatteredVolumeBlender::Validate(p).ok());
  p = Params();
  p.jitter = std::nan("");
  EXPECT_FALSE(ScatteredVolumeBlender::Validate(p).ok());
  p = Params();
  p.sampling_interval = 0.5;
  EXPECT_FALSE(ScatteredVolumeBlender::Validate(p).ok());
}

// A world's 3D map (CaveBiomeSource): the 2D map is the same as without the cave biomes, for both
// source kinds; above every band the 3D map is the surface biome; in the bands the nearest
// climate point wins among the surface biome and the cave biomes of that height.
TEST(CaveBiomeSourceTest, CaveBiomesLiveInTheirBandsAndLeaveThe2DMapAlone) {
  for (BiomeSourceKind kind : {BiomeSourceKind::kClimate, BiomeSourceKind::kNoiseMax}) {
    WorldSpec spec = testing::CaveWorldSpec();
    spec.biome_source = kind;
    const std::shared_ptr<const World> caves = *World::Create(spec);
    spec.biomes.resize(spec.biomes.size() - 2);
    const std::shared_ptr<const World> flat = *World::Create(spec);
    ASSERT_NE(caves->volume_blender(), nullptr);
    EXPECT_EQ(flat->volume_blender(), nullptr);
    for (uint64_t n = 0; n < 2000; ++n) {
      const double x = static_cast<double>(testing::TestCoordinate(n, 20, -20000, 20000)) + 0.5;
      const double z = static_cast<double>(testing::TestCoordinate(n, 21, -20000, 20000)) + 0.5;
      ASSERT_EQ(caves->SourceBiomeAt(x, z), flat->SourceBiomeAt(x, z)) << x << ", " << z;
      std::vector<uint16_t> batch(1);
      caves->source().BiomeIndices(&x, &z, 1, batch.data());
      ASSERT_EQ(batch[0], caves->source().BiomeIndexAt(x, z));
    }
  }
  const std::shared_ptr<const World> world = *World::Create(testing::CaveWorldSpec());
  const auto& source = dynamic_cast<const CaveBiomeSource&>(*world->volume_source());
  const auto& biomes = world->spec().biomes;  // Sorted by id: lush caves 11, deep dark 12.
  ASSERT_EQ(biomes[11].name, "lush_caves");
  std::map<int, int> seen;
  for (uint64_t n = 0; n < 4000; ++n) {
    const double x = static_cast<double>(testing::TestCoordinate(n, 22, -5000, 5000));
    const double y = static_cast<double>(testing::TestCoordinate(n, 23, -80, 40));
    const double z = static_cast<double>(testing::TestCoordinate(n, 24, -5000, 5000));
    const int above = world->source().BiomeIndexAt(x, z);
    const int got = source.BiomeIndexAt(x, y, z);
    ++seen[got];
    // The rule, recomputed.
    std::vector<int> candidates = {above};
    if (y >= -64 && y < 0) candidates.push_back(11);
    if (y >= -64 && y < -32) candidates.push_back(12);
    int expected = above;
    if (candidates.size() > 1) {
      const double t = source.TemperatureAt(x, y, z), h = source.HumidityAt(x, y, z);
      double best = 1e300;
      for (int c : candidates) {
        const double dt = t - biomes[c].temperature, dh = h - biomes[c].humidity;
        if (dt * dt + dh * dh < best) best = dt * dt + dh * dh, expected = c;
      }
    }
    ASSERT_EQ(got, expected) << x << ", " << y << ", " << z;
  }
  EXPECT_GT(seen[11], 100) << "lush caves appear";
  EXPECT_GT(seen[12], 20) << "the deep dark appears";
}

// The world's 3D blender over its cave map: a partition of unity across a cave border, cells
// equal to points.
TEST(CaveBiomeSourceTest, TheWorldBlendsItsCavesIn3D) {
  const std::shared_ptr<const World> world = *World::Create(testing::CaveWorldSpec());
  const ScatteredVolumeBlender& blender = *world->volume_blender();
  int mixed = 0;
  for (int64_t x0 = 0; x0 < 256 && mixed < 3; x0 += 16) {
    std::vector<IndexedLayer> layers;
    if (blender.BlendCells(x0, -64, 0, 4, 24, 4, 4, &layers)) continue;
    ++mixed;
    std::vector<double> sum(4 * 24 * 4, 0.0);
    for (const IndexedLayer& layer : layers) {
      for (size_t c = 0; c < sum.size(); ++c) {
        ASSERT_GE(layer.weights[c], 0.0f);
        sum[c] += layer.weights[c];
      }
    }
    for (double v : sum) EXPECT_NEAR(v, 1.0, 1e-6);
    std::vector<std::pair<int, float>> point;
    blender.BlendPoint(static_cast<double>(x0 + 8), -60.0, 4.0, &point);
    const size_t at = (static_cast<size_t>(1) * 4 + 1) * 4 + 2;  // cell (2, 1, 1)
    for (const IndexedLayer& layer : layers) {
      float want = 0.0f;
      for (const auto& [biome, w] : point) want = biome == layer.biome ? w : want;
      EXPECT_EQ(testing::FloatBits(layer.weights[at]), testing::FloatBits(want));
    }
  }
  EXPECT_EQ(mixed, 3);
}

// Over the surface: a cave biome's weight is its kernel share, and the rest of the samples' share
// goes to the column's 2D weights (brute force over a window of the lattice); above the caves'
// reach the 3D answer is the 2D one bit for bit, in cells and in points.
TEST(CaveBiomeSourceTest, CaveSharesAreKernelSharesAndTheRestIsThe2DBlend) {
  const std::shared_ptr<const World> world = *World::Create(testing::CaveWorldSpec());
  const ScatteredVolumeBlender& blender = *world->volume_blender();
  const JitteredBccLattice& lattice = blender.lattice();
  const VolumeSource& source = *world->volume_source();
  int with_caves = 0;
  for (uint64_t n = 0; n < 80; ++n) {
    const double x = static_cast<double>(testing::TestCoordinate(n, 30, -3000, 3000));
    const double y = static_cast<double>(testing::TestCoordinate(n, 31, -70, 10));
    const double z = static_cast<double>(testing::TestCoordinate(n, 32, -3000, 3000));
    std::map<int, double> caves;
    double surface = 0.0, total = 0.0;
    for (const auto& [biome, w] : KernelSumsByBiome(lattice, source, x, y, z)) {
      if (world->spec().biomes[static_cast<size_t>(biome)].cave) {
        caves[biome] = w;
      } else {
        surface += w;
      }
      total += w;
    }
    with_caves += !caves.empty();
    std::map<int, double> expected;
    for (const auto& [biome, w] : caves) expected[biome] = w / total;
    std::vector<std::pair<int, float>> column;
    world->blender().BlendPoint(x, z, nullptr, &column);
    for (const auto& [biome, w] : column) expected[biome] += surface / total * w;
    std::vector<std::pair<int, float>> got;
    blender.BlendPoint(x, y, z, &got);
    double sum = 0.0;
    for (const auto& [biome, w] : got) {
      EXPECT_NEAR(w, expected[biome], 1e-6) << biome << " at " << x << ", " << y << ", " << z;
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  EXPECT_GE(with_caves, 20);
  // Above y = 0 + 8 (the caves' top and the vertical radius), the 2D blend, bit for bit.
  for (int64_t x0 = 0; x0 < 512; x0 += 64) {
    std::vector<IndexedLayer> layers;
    blender.BlendCells(x0, 9, -x0, 4, 2, 4, 4, &layers);
    for (int d = 0; d < 4; ++d) {
      for (int a = 0; a < 4; ++a) {
        std::vector<std::pair<int, float>> column, point;
        world->blender().BlendPoint(static_cast<double>(x0 + 4 * a),
                                    static_cast<double>(-x0 + 4 * d), nullptr, &column);
        blender.BlendPoint(static_cast<double>(x0 + 4 * a), 13.0, static_cast<double>(-x0 + 4 * d),
                           &point);
        EXPECT_EQ(point, column);
        for (const IndexedLayer& layer : layers) {
          float want = 0.0f;
          for (const auto& [biome, w] : column) want = biome == layer.biome ? w : want;
          EXPECT_EQ(testing::FloatBits(layer.weights[(4u + d) * 4 + a]), testing::FloatBits(want));
        }
      }
    }
  }
}

}  // namespace
}  // namespace worldgen
