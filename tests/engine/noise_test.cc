#include "engine/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ios>
#include <limits>
#include <string>
#include <vector>

#include "engine/hash.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

TEST(NoiseTest, StaysWithinUnitRangeAndUsesIt) {
  double lo = 0.0, hi = 0.0;
  for (int a = 0; a < 300; ++a) {
    for (int b = 0; b < 300; ++b) {
      double v = SimplexNoise2D(11, a * 0.071 - 9.3, b * 0.067 + 4.1);
      ASSERT_GE(v, -1.0);
      ASSERT_LE(v, 1.0);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  EXPECT_LT(lo, -0.6);
  EXPECT_GT(hi, 0.6);
}

TEST(NoiseTest, IsAPureFunctionOfSeedAndPosition) {
  for (int k = 0; k < 1000; ++k) {
    double x = k * 1.37 - 500.0, z = k * -0.91 + 77.0;
    double a = SimplexNoise2D(5, x, z), b = SimplexNoise2D(5, x, z);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  }
  EXPECT_NE(SimplexNoise2D(1, 0.3, 0.7), SimplexNoise2D(2, 0.3, 0.7));
}

TEST(NoiseTest, IsContinuous) {
  // Gradient noise with a quartic falloff has a bounded derivative: tiny steps give tiny changes.
  for (int k = 0; k < 2000; ++k) {
    double x = k * 0.173, z = k * 0.311 - 40.0;
    EXPECT_LT(std::fabs(SimplexNoise2D(3, x, z) - SimplexNoise2D(3, x + 1e-4, z)), 1e-2);
    EXPECT_LT(std::fabs(SimplexNoise2D(3, x, z) - SimplexNoise2D(3, x, z + 1e-4)), 1e-2);
  }
}

TEST(NoiseTest, GoldenValues) {
  // Pinned outputs: changing the noise changes every world, so it must be a deliberate act.
  EXPECT_EQ(SimplexNoise2D(0, 0.0, 0.0), 0.0);
  const double expected[] = {-0x1.7f53125a2ed78p-1, -0x1.194f3b784b003p-2, -0x1.4e6adccd88f57p-2};
  const double inputs[][2] = {{0.25, 0.5}, {-13.7, 42.01}, {1e6 + 0.5, -2.5e6 + 0.25}};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(SimplexNoise2D(0x5eed, inputs[k][0], inputs[k][1]), expected[k]) << k;
  }
}

TEST(Noise3DTest, StaysWithinUnitRangeAndUsesIt) {
  double lo = 0.0, hi = 0.0;
  for (int a = 0; a < 60; ++a) {
    for (int b = 0; b < 60; ++b) {
      for (int c = 0; c < 60; ++c) {
        const double v = SimplexNoise3D(11, a * 0.071 - 9.3, b * 0.067 + 4.1, c * 0.083 - 1.7);
        ASSERT_GE(v, -1.0);
        ASSERT_LE(v, 1.0);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  EXPECT_LT(lo, -0.6);
  EXPECT_GT(hi, 0.6);
}

// Continuous: the quartic falloff reaches zero before a corner's influence leaves its simplices
// (radius^2 0.5), so tiny steps across simplex faces give tiny changes, on every axis.
TEST(Noise3DTest, IsContinuousAndAPureFunction) {
  double largest = 0.0;
  for (int k = 0; k < 20000; ++k) {
    const double x = k * 0.0173, y = k * 0.0311 - 40.0, z = k * -0.0127 + 3.0;
    const double v = SimplexNoise3D(3, x, y, z);
    EXPECT_EQ(v, SimplexNoise3D(3, x, y, z));
    largest = std::max({largest, std::fabs(v - SimplexNoise3D(3, x + 1e-6, y, z)),
                        std::fabs(v - SimplexNoise3D(3, x, y + 1e-6, z)),
                        std::fabs(v - SimplexNoise3D(3, x, y, z + 1e-6))});
  }
  EXPECT_LT(largest, 1e-4);
  EXPECT_NE(SimplexNoise3D(1, 0.3, 0.7, 0.1), SimplexNoise3D(2, 0.3, 0.7, 0.1));
}

TEST(Noise3DTest, GoldenValues) {
  // Pinned outputs: changing the noise changes every 3D world.
  EXPECT_EQ(SimplexNoise3D(0, 0.0, 0.0, 0.0), 0.0);
  const double inputs[][3] = {{0.25, 0.5, 0.125}, {-13.7, 42.01, 7.3}, {1e6 + 0.5, -64.0, 3e5}};
  const double expected[] = {-0x1.808b8d9c1d4d4p-3, -0x1.8928d70f863eap-1, 0x1.391b1062439d6p-3};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(SimplexNoise3D(0x5eed, inputs[k][0], inputs[k][1], inputs[k][2]), expected[k]) << k;
  }
  const double f = FractalNoise3D(9, 10.5, -3.25, 99.0, 0.02, 3);
  EXPECT_GE(f, -1.0);
  EXPECT_LE(f, 1.0);
  EXPECT_EQ(f, (SimplexNoise3D(DeriveSeed(9, 0), 0.21, -0.065, 1.98) +
                0.5 * SimplexNoise3D(DeriveSeed(9, 1), 0.42, -0.13, 3.96) +
                0.25 * SimplexNoise3D(DeriveSeed(9, 2), 0.84, -0.26, 7.92)) /
                   1.75);
}

// FractalNoise3DMulti (and FractalNoise3D, which runs through it) is the octave sum of the pinned
// SimplexNoise3D for every seed, bit for bit: more seeds than one pass takes, any octave count,
// lacunarity and gain, points on and off the simplex grid's planes.
TEST(Noise3DTest, MultiSeedFractalIsTheOctaveSumOfEachSeed) {
  const auto octave_sum = [](uint64_t seed, double x, double y, double z, double frequency,
                             int octaves, double lacunarity, double gain) {
    double sum = 0.0, amplitude = 1.0, amplitude_total = 0.0, f = frequency;
    for (int o = 0; o < octaves; ++o) {
      sum += amplitude *
             SimplexNoise3D(DeriveSeed(seed, static_cast<uint64_t>(o)), x * f, y * f, z * f);
      amplitude_total += amplitude;
      amplitude *= gain;
      f *= lacunarity;
    }
    return sum / amplitude_total;
  };
  uint64_t seeds[11];
  for (uint64_t s = 0; s < 11; ++s) seeds[s] = HashCoords(77, static_cast<int64_t>(s), 1);
  int checked = 0;
  for (int k = 0; k < 400; ++k) {
    const double x = k % 5 == 0 ? 0.0 : (k * 37.3 - 7000.0) * (k % 3 == 0 ? 1.0 : 0.013);
    const double y = k % 7 == 0 ? -64.0 : k * -1.7 + 100.0;
    const double z = k % 11 == 0 ? x : k * 19.1 - 3000.0;
    const int octaves = 1 + k % 4;
    const double lacunarity = k % 2 == 0 ? 2.0 : 1.7, gain = k % 3 == 0 ? 0.5 : 0.61;
    const size_t count = 1 + static_cast<size_t>(k) % 11;
    double out[11];
    FractalNoise3DMulti(seeds, count, x, y, z, 0.015, octaves, out, lacunarity, gain);
    for (size_t s = 0; s < count; ++s) {
      const double expected = octave_sum(seeds[s], x, y, z, 0.015, octaves, lacunarity, gain);
      ASSERT_EQ(std::memcmp(&out[s], &expected, sizeof expected), 0) << k << " seed " << s;
      const double single = FractalNoise3D(seeds[s], x, y, z, 0.015, octaves, lacunarity, gain);
      ASSERT_EQ(std::memcmp(&single, &expected, sizeof expected), 0) << k << " seed " << s;
      ++checked;
    }
  }
  EXPECT_GT(checked, 2000);
}

// `batch` (any Noise3DBatchFn) gives FractalNoise3DMulti's bits at every point: batches of points
// close together (most corners remembered) and far apart (every corner new), one batch after
// another under other seeds, frequencies and octave counts (a per-thread table then holds corners
// of other seeds at the same coordinates), more seeds than one pass takes, batch sizes that leave
// part of a vector, points on the lattice's planes and corners (ties between the tetrahedra;
// exact integers), and points the vectors leave to the scalar path (huge, infinite, NaN). Returns
// the values checked.
int CheckNoise3DBatch(const char* name, Noise3DBatchFn* batch_fn) {
  uint64_t seeds[12];  // Batches take up to 11 from seeds or seeds + 1.
  for (uint64_t s = 0; s < 12; ++s) seeds[s] = HashCoords(78, static_cast<int64_t>(s), 2);
  int checked = 0;
  for (int batch = 0; batch < 30; ++batch) {
    const double spread = batch % 3 == 0 ? 9000.0 : (batch % 3 == 1 ? 60.0 : 3.0);
    const size_t count = 1 + static_cast<size_t>(batch) * 5 % 11;
    const int octaves = 1 + batch % 4;
    const double frequency = batch % 2 == 0 ? 0.015 : 0.07;
    const double lacunarity = batch % 4 == 3 ? 1.7 : 2.0, gain = batch % 5 == 4 ? 0.61 : 0.5;
    const uint64_t* batch_seeds = seeds + batch % 2;  // Alternate seed sets share 10 seeds.
    const size_t n = 150 + static_cast<size_t>(batch % 8);
    std::vector<double> xs(n), ys(n), zs(n);
    for (size_t k = 0; k < n; ++k) {
      const double u = static_cast<double>(HashCoords(batch, static_cast<int64_t>(k), 0) >> 11);
      const double v = static_cast<double>(HashCoords(batch, static_cast<int64_t>(k), 1) >> 11);
      const double w = static_cast<double>(HashCoords(batch, static_cast<int64_t>(k), 2) >> 11);
      constexpr double kUnit = 1.0 / 9007199254740992.0;
      xs[k] = (u * kUnit - 0.5) * spread + 1000.0 * batch;
      ys[k] = (v * kUnit - 0.5) * spread - 30.0;
      zs[k] = (w * kUnit - 0.5) * spread;
      if (batch % 5 == 3 && k % 3 == 0) {
        // Whole blocks, some with equal coordinates: ties between the tetrahedra.
        xs[k] = std::round(xs[k]), ys[k] = std::round(ys[k]), zs[k] = std::round(zs[k]);
        if (k % 9 == 0) ys[k] = xs[k], zs[k] = -xs[k];
      }
    }
    if (batch == 7) {
      const double inf = std::numeric_limits<double>::infinity();
      xs[3] = 1e300, ys[10] = -inf, zs[11] = std::numeric_limits<double>::quiet_NaN();
      xs[20] = 4e16, zs[21] = -3e15;  // Beyond the vectors' exact floor at these frequencies.
    }
    std::vector<double> out(n * count);
    batch_fn(batch_seeds, count, xs.data(), ys.data(), zs.data(), n, frequency, octaves, out.data(),
             lacunarity, gain);
    for (size_t k = 0; k < n; ++k) {
      double expected[11];
      FractalNoise3DMulti(batch_seeds, count, xs[k], ys[k], zs[k], frequency, octaves, expected,
                          lacunarity, gain);
      for (size_t s = 0; s < count; ++s) {
        EXPECT_EQ(std::memcmp(&out[k * count + s], &expected[s], sizeof(double)), 0)
            << name << ": batch " << batch << " point " << k << " seed " << s << " (" << xs[k]
            << ", " << ys[k] << ", " << zs[k] << "): " << out[k * count + s] << " against "
            << expected[s];
        if (std::memcmp(&out[k * count + s], &expected[s], sizeof(double)) != 0) return checked;
        ++checked;
      }
    }
  }
  return checked;
}

// Every variant of FractalNoise3DMultiBatch this CPU runs, and the dispatched function.
TEST(Noise3DTest, EveryBatchVariantMatchesThePerPointFractal) {
  int variants_run = 0;
  for (const Noise3DBatchVariant& variant : Noise3DBatchVariants()) {
    if (!variant.supported) continue;
    ++variants_run;
    EXPECT_GT(CheckNoise3DBatch(variant.name, variant.run), 10000) << variant.name;
  }
  EXPECT_GE(variants_run, 1);
  EXPECT_GT(CheckNoise3DBatch("FractalNoise3DMultiBatch", &FractalNoise3DMultiBatch), 10000);
}

TEST(NoiseTest, FractalNoiseStaysInRange) {
  for (int k = 0; k < 5000; ++k) {
    double v = FractalNoise2D(9, k * 7.3, k * -3.1, 1.0 / 300.0, 4);
    ASSERT_GE(v, -1.0);
    ASSERT_LE(v, 1.0);
  }
}

// The batches are checked against FractalNoise2D (the scalar reference) in every compiled variant
// this CPU can run, and through the dispatcher (FractalNoise2DBatch / FractalNoise2DMultiBatch).
using BatchVariant = NoiseBatchVariant;

std::vector<BatchVariant> RunnableVariants() {
  std::vector<BatchVariant> variants = {{"dispatched", true, &FractalNoise2DMultiBatch}};
  for (const NoiseBatchVariant& v : NoiseBatchVariants()) {
    if (v.supported) variants.push_back(v);
  }
  return variants;
}
const std::vector<BatchVariant> kBatchVariants = RunnableVariants();

TEST(NoiseTest, EveryVariantIsTestedAndTheBaselineRunsEverywhere) {
  ASSERT_FALSE(NoiseBatchVariants().empty());
  EXPECT_STREQ(NoiseBatchVariants().back().name, "baseline");
  EXPECT_TRUE(NoiseBatchVariants().back().supported);
  bool dispatched_known = false;
  for (const NoiseBatchVariant& v : NoiseBatchVariants()) {
    dispatched_known |= std::string(v.name) == DispatchedNoiseBatchVariant();
  }
  EXPECT_TRUE(dispatched_known) << DispatchedNoiseBatchVariant();
}

uint64_t Bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// A deterministic pseudo-random double in [0, 1) for case k.
double Unit(uint64_t k, uint64_t stream) {
  return static_cast<double>(
             HashCoords(0xba7c, static_cast<int64_t>(k), static_cast<int64_t>(stream)) >> 11) *
         (1.0 / 9007199254740992.0);
}

::testing::AssertionResult BatchMatchesScalar(const BatchVariant& variant, uint64_t seed,
                                              const std::vector<double>& xs,
                                              const std::vector<double>& zs, double frequency,
                                              int octaves, double lacunarity = 2.0,
                                              double gain = 0.5) {
  const size_t n = xs.size();
  const double guard = 12345.0;  // One slot past the end: the batch must not write there.
  std::vector<double> out(n + 1, guard);
  variant.run(&seed, 1, xs.data(), zs.data(), n, frequency, octaves, out.data(), lacunarity, gain);
  for (size_t k = 0; k < n; ++k) {
    const double expected =
        FractalNoise2D(seed, xs[k], zs[k], frequency, octaves, lacunarity, gain);
    if (Bits(out[k]) != Bits(expected)) {
      return ::testing::AssertionFailure()
             << std::hexfloat << variant.name << ": point " << k << " of " << n << " (" << xs[k]
             << ", " << zs[k] << "), seed " << seed << ", frequency " << frequency << ", octaves "
             << octaves << ", lacunarity " << lacunarity << ", gain " << gain << ": batch "
             << out[k] << ", scalar " << expected;
    }
  }
  if (Bits(out[n]) != Bits(guard)) {
    return ::testing::AssertionFailure() << variant.name << " wrote past point " << n;
  }
  return ::testing::AssertionSuccess();
}

// Points of one test batch: rows of integer columns as chunks ask for them, scattered points
// anywhere in the world (|x|, |z| up to 2^25) and near the origin, and points on simplex edges
// (x == z), on exact integers and half-integers of the skewed grid (z == -x), signed zeros and
// subnormals.
void MakePoints(int kind, size_t n, uint64_t trial, std::vector<double>* xs,
                std::vector<double>* zs) {
  const double world = 33554432.0;  // 2^25
  xs->resize(n);
  zs->resize(n);
  const double row_x = std::floor((2.0 * Unit(trial, 1) - 1.0) * world);
  const double row_z = std::floor((2.0 * Unit(trial, 2) - 1.0) * world);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t key = trial * 64 + k;
    double& x = (*xs)[k];
    double& z = (*zs)[k];
    switch (kind) {
      case 0:  // A row of columns.
        x = row_x + static_cast<double>(k);
        z = row_z;
        break;
      case 1:  // Anywhere in the world, non-integer.
        x = (2.0 * Unit(key, 3) - 1.0) * world;
        z = (2.0 * Unit(key, 4) - 1.0) * world;
        break;
      case 2:  // Near the origin, non-integer.
        x = (2.0 * Unit(key, 5) - 1.0) * 64.0;
        z = (2.0 * Unit(key, 6) - 1.0) * 64.0;
        break;
      default: {  // Edges and exact values.
        const double half = std::floor((2.0 * Unit(key, 7) - 1.0) * 512.0) * 0.5;
        const double special[] = {0.0, -0.0, 5e-324, -5e-324, 1.0,   -1.0,
                                  0.5, -0.5, half,   -half,   world, -world};
        const double a = special[HashCoords(trial, static_cast<int64_t>(k), 8) % 12];
        const double b = special[HashCoords(trial, static_cast<int64_t>(k), 9) % 12];
        switch (HashCoords(trial, static_cast<int64_t>(k), 10) % 4) {
          case 0:
            x = a;
            z = b;
            break;
          case 1:
            x = half;
            z = -half;
            break;
          case 2:
            x = half;
            z = half;
            break;
          default:
            x = a + Unit(key, 11);
            z = x;
            break;
        }
      }
    }
  }
}

TEST(NoiseTest, BatchEqualsScalarBitForBit) {
  const uint64_t seeds[] = {0, 0x5eed, 0xdeadbeefcafef00dULL};
  const double frequencies[] = {1e-9, 0.006, 1.0 / 300.0, 0.0137, 0.25, 1.0, 3.7};
  const int octave_counts[] = {1, 2, 4, 7, 16};
  std::vector<double> xs, zs;
  uint64_t trial = 0;
  for (const BatchVariant& variant : kBatchVariants) {
    for (uint64_t seed : seeds) {
      for (double frequency : frequencies) {
        for (int octaves : octave_counts) {
          for (size_t n = 0; n <= 37; ++n) {  // Every tail length, and more than one vector.
            for (int kind = 0; kind < 4; ++kind) {
              MakePoints(kind, n, ++trial, &xs, &zs);
              ASSERT_TRUE(BatchMatchesScalar(variant, seed, xs, zs, frequency, octaves))
                  << "kind " << kind;
            }
          }
        }
      }
    }
  }
}

// Long runs cross the batch's internal blocks; rows in both directions and columns (z varying).
TEST(NoiseTest, BatchEqualsScalarOverLongRuns) {
  for (const BatchVariant& variant : kBatchVariants) {
    for (double frequency : {0.007, 0.1, 1.0}) {
      for (size_t n : {63u, 64u, 65u, 129u, 1000u}) {
        std::vector<double> row_x(n), row_z(n, -321.0), back_x(n), col_x(n, 77.0), col_z(n);
        for (size_t k = 0; k < n; ++k) {
          row_x[k] = -500.0 + static_cast<double>(k);
          back_x[k] = 500.0 - static_cast<double>(k);
          col_z[k] = 1234.0 + static_cast<double>(k);
        }
        EXPECT_TRUE(BatchMatchesScalar(variant, 7, row_x, row_z, frequency, 4));
        EXPECT_TRUE(BatchMatchesScalar(variant, 7, back_x, row_z, frequency, 4));
        EXPECT_TRUE(BatchMatchesScalar(variant, 7, col_x, col_z, frequency, 4));
      }
    }
  }
}

// Points the vector path does not take (beyond its range, infinite, NaN) and the points around its
// limit still give the scalar function's exact bits, and do not disturb their neighbours.
TEST(NoiseTest, BatchEqualsScalarOutsideTheVectorRange) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double limit = 562949953421312.0;  // 2^49
  const double odd[] = {
      nan,         inf,   -inf,   1e300,       -1e300,         0x1p60,      -0x1p63,
      0x1p64,      limit, -limit, limit - 1.0, -(limit - 0.5), 2.0 * limit, 4.0 * limit - 0.5,
      0x1p52 + 1.0};
  for (const BatchVariant& variant : kBatchVariants) {
    for (double frequency : {1.0, 0.01, 0.0, -0.5, 1e300, inf, nan}) {
      for (int octaves : {1, 4}) {
        for (size_t slot = 0; slot < 15; ++slot) {
          // 150 points: one odd value in the first, second or third internal block.
          std::vector<double> xs(150), zs(150);
          for (size_t k = 0; k < 150; ++k) {
            xs[k] = 10.0 * static_cast<double>(k) + 0.25;
            zs[k] = -3.5;
          }
          const size_t at = (slot * 11) % 150;
          (slot % 2 == 0 ? xs : zs)[at] = odd[slot];
          ASSERT_TRUE(BatchMatchesScalar(variant, 99, xs, zs, frequency, octaves))
              << "odd value " << odd[slot] << " at " << at;
        }
      }
    }
  }
}

// Lacunarity and gain other than (2, 0.5), including a lacunarity below 1 (frequencies falling with
// each octave, so the first octave decides the vector path's range) and gains above 1/2.
TEST(NoiseTest, BatchEqualsScalarForAnyLacunarityAndGain) {
  const double pairs[][2] = {{1.0, 1.0}, {1.7, 0.6}, {2.5, 0.35}, {3.0, 0.9}, {0.5, 0.5}};
  std::vector<double> xs, zs;
  uint64_t trial = 5000;
  for (const BatchVariant& variant : kBatchVariants) {
    for (const auto& [lacunarity, gain] : pairs) {
      for (double frequency : {0.002, 0.03, 0.7}) {
        for (int octaves : {1, 3, 6}) {
          for (size_t n : {5u, 37u, 70u}) {
            for (int kind = 0; kind < 4; ++kind) {
              MakePoints(kind, n, ++trial, &xs, &zs);
              ASSERT_TRUE(
                  BatchMatchesScalar(variant, 0x77, xs, zs, frequency, octaves, lacunarity, gain))
                  << "kind " << kind;
            }
          }
        }
      }
    }
  }
}

// The general fractal sum at (2, 0.5) is the classic one: each octave's factor is exact.
TEST(NoiseTest, DefaultLacunarityAndGainAreTwoAndOneHalf) {
  for (int k = 0; k < 500; ++k) {
    const double x = k * 13.7 - 2000.0, z = k * -5.3 + 100.0;
    double sum = 0.0, amplitude = 1.0, total = 0.0, f = 0.004;
    for (int octave = 0; octave < 3; ++octave) {
      sum +=
          amplitude * SimplexNoise2D(DeriveSeed(42, static_cast<uint64_t>(octave)), x * f, z * f);
      total += amplitude;
      amplitude /= 2.0;
      f += f;
    }
    ASSERT_EQ(Bits(FractalNoise2D(42, x, z, 0.004, 3)), Bits(sum / total)) << k;
    ASSERT_EQ(Bits(FractalNoise2D(42, x, z, 0.004, 3, 2.0, 0.5)), Bits(sum / total)) << k;
  }
  EXPECT_NE(FractalNoise2D(42, 10.5, 20.5, 0.004, 3, 2.5, 0.5),
            FractalNoise2D(42, 10.5, 20.5, 0.004, 3));
  EXPECT_NE(FractalNoise2D(42, 10.5, 20.5, 0.004, 3, 2.0, 0.7),
            FractalNoise2D(42, 10.5, 20.5, 0.004, 3));
}

// Several seeds in one call: each seed's block of the output is its own FractalNoise2D, bit for
// bit, for seed counts below, at and above one pass (kNoiseSeedsPerPass), every point kind, runs of
// neighbouring points and odd values (NaN, infinities, huge, -0.0) among them.
::testing::AssertionResult MultiBatchMatchesScalar(const BatchVariant& variant,
                                                   const std::vector<uint64_t>& seeds,
                                                   const std::vector<double>& xs,
                                                   const std::vector<double>& zs, double frequency,
                                                   int octaves, double lacunarity, double gain) {
  const size_t n = xs.size();
  const double guard = -777.0;
  std::vector<double> out(seeds.size() * n + 1, guard);
  variant.run(seeds.data(), seeds.size(), xs.data(), zs.data(), n, frequency, octaves, out.data(),
              lacunarity, gain);
  for (size_t s = 0; s < seeds.size(); ++s) {
    for (size_t k = 0; k < n; ++k) {
      const double expected =
          FractalNoise2D(seeds[s], xs[k], zs[k], frequency, octaves, lacunarity, gain);
      if (Bits(out[s * n + k]) != Bits(expected)) {
        return ::testing::AssertionFailure()
               << std::hexfloat << variant.name << ": seed " << s << " of " << seeds.size()
               << ", point " << k << " of " << n << " (" << xs[k] << ", " << zs[k]
               << "), frequency " << frequency << ", octaves " << octaves << ": batch "
               << out[s * n + k] << ", scalar " << expected;
      }
    }
  }
  if (Bits(out[seeds.size() * n]) != Bits(guard)) {
    return ::testing::AssertionFailure() << variant.name << " wrote past the end";
  }
  return ::testing::AssertionSuccess();
}

TEST(NoiseTest, MultiBatchEqualsScalarForEverySeed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double odd[] = {nan, inf, -inf, 1e300, -0.0, 0x1p60};
  const double settings[][4] = {// frequency, octaves, lacunarity, gain
                                {0.00173, 3, 2.0, 0.5}, {0.01, 4, 2.0, 0.5}, {0.2, 2, 2.0, 0.5},
                                {0.9, 3, 1.7, 0.6},     {3.7, 1, 2.0, 0.5},  {0.004, 5, 2.7, 0.62}};
  std::vector<double> xs, zs;
  uint64_t trial = 9000;
  for (const BatchVariant& variant : kBatchVariants) {
    for (size_t seed_count : {1u, 2u, 4u, 7u, 8u, 9u, 17u}) {
      std::vector<uint64_t> seeds(seed_count);
      for (size_t s = 0; s < seed_count; ++s)
        seeds[s] = HashCoords(seed_count, 3, static_cast<int64_t>(s));
      for (const auto& setting : settings) {
        for (size_t n : {0u, 1u, 7u, 8u, 13u, 64u, 256u, 300u}) {
          for (int kind = 0; kind < 6; ++kind) {
            ++trial;
            if (kind < 4) {
              MakePoints(kind, n, trial, &xs, &zs);
            } else {  // A tile of jittered lattice points, some of them odd (kind 5).
              xs.resize(n);
              zs.resize(n);
              const double x0 = std::floor((2.0 * Unit(trial, 20) - 1.0) * 1e6);
              const double z0 = std::floor((2.0 * Unit(trial, 21) - 1.0) * 1e6);
              for (size_t k = 0; k < n; ++k) {
                xs[k] = x0 + 8.0 * static_cast<double>(k % 16) + 3.0 * Unit(trial * 512 + k, 22);
                zs[k] = z0 + 8.0 * static_cast<double>(k / 16) + 3.0 * Unit(trial * 512 + k, 23);
                if (kind == 5 && HashCoords(trial, static_cast<int64_t>(k), 24) % 29 == 0) {
                  (k % 2 == 0 ? xs : zs)[k] =
                      odd[HashCoords(trial, static_cast<int64_t>(k), 25) % 6];
                }
              }
            }
            ASSERT_TRUE(MultiBatchMatchesScalar(variant, seeds, xs, zs, setting[0],
                                                static_cast<int>(setting[1]), setting[2],
                                                setting[3]))
                << "kind " << kind;
          }
        }
      }
    }
  }
}

TEST(NoiseTest, BatchOfZeroOctavesMatchesScalar) {
  std::vector<double> xs = {1.5, -2.0, 3.0}, zs = {0.0, 4.0, -1.25};
  for (const BatchVariant& variant : kBatchVariants) {
    EXPECT_TRUE(BatchMatchesScalar(variant, 3, xs, zs, 0.01, 0));
  }
}

}  // namespace
}  // namespace worldgen
