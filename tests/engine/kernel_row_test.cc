#include "engine/kernel_row.h"

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "engine/hash.h"
#include "engine/simd.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

double Unit(uint64_t k, uint64_t stream) {
  return static_cast<double>(
             HashCoords(99, static_cast<int64_t>(k), static_cast<int64_t>(stream)) >> 11) *
         (1.0 / 9007199254740992.0);
}

// A block's inputs and outputs, run through one kernel.
struct BlockRun {
  std::vector<double> acc, total;
  std::vector<float> weights;
  std::vector<uint8_t> nonzero;
};

BlockRun RunBlock(void (*kernel)(const KernelBlock&), const std::vector<KernelPoint>& points,
                  size_t slots, double x0, double z0, int size, double step = 1.0) {
  const size_t n = static_cast<size_t>(size);
  const size_t stride = KernelStride(n);
  // The points grouped by slot, each slot's in the given order, as the kernel takes them.
  std::vector<KernelPoint> grouped;
  std::vector<size_t> slot_begin = {0};
  for (size_t s = 0; s < slots; ++s) {
    for (const KernelPoint& p : points) {
      if (p.slot == s) grouped.push_back(p);
    }
    slot_begin.push_back(grouped.size());
  }
  BlockRun run;
  // The kernel writes every accumulator and total itself: start from garbage.
  run.acc.assign(slots * n * stride, 1234.5);
  run.total.assign(n * stride, -7.0);
  run.weights.assign(slots * n * n, -1.0f);
  run.nonzero.assign(slots, 7);
  KernelBlock block;
  block.points = grouped.data();
  block.count = grouped.size();
  block.slot_begin = slot_begin.data();
  block.slots = slots;
  block.x0 = x0;
  block.z0 = z0;
  block.step = step;
  block.size = size;
  block.stride = stride;
  block.acc = run.acc.data();
  block.total = run.total.data();
  block.weights = run.weights.data();
  block.nonzero = run.nonzero.data();
  kernel(block);
  // Padded columns are scratch: compare real columns only.
  for (size_t row = 0; row < run.acc.size() / stride; ++row) {
    for (size_t lx = n; lx < stride; ++lx) run.acc[row * stride + lx] = 0.0;
  }
  for (size_t lz = 0; lz < n; ++lz) {
    for (size_t lx = n; lx < stride; ++lx) run.total[lz * stride + lx] = 0.0;
  }
  return run;
}

// Points around a block `extent` blocks wide as the blenders gather them: every column reached,
// some points far beyond the block (adding +0.0 everywhere), radii from the smallest to large,
// slots in any order.
std::vector<KernelPoint> MakePoints(uint64_t trial, double x0, double z0, int extent,
                                    size_t slots) {
  std::vector<KernelPoint> points;
  const double radius = 3.0 + 40.0 * Unit(trial, 1);
  const double reach = radius + 6.0;
  const size_t count = 20 + static_cast<size_t>(120 * Unit(trial, 2));
  for (size_t k = 0; k < count; ++k) {
    KernelPoint p;
    p.x = x0 - reach + (extent + 2 * reach) * Unit(trial * 1000 + k, 3);
    p.z = z0 - reach + (extent + 2 * reach) * Unit(trial * 1000 + k, 4);
    const double r = radius * (0.7 + 0.6 * Unit(trial * 1000 + k, 5));
    p.radius_sq = r * r;
    p.slot = static_cast<uint32_t>(HashCoords(trial, static_cast<int64_t>(k), 6) % slots);
    points.push_back(p);
  }
  // A dense grid of points guarantees every column some weight.
  for (double z = z0 - 1.0; z < z0 + extent + 1.0; z += 2.5) {
    for (double x = x0 - 1.0; x < x0 + extent + 1.0; x += 2.5) {
      points.push_back(
          {x + 0.3, z - 0.2, radius * radius + 9.0, static_cast<uint32_t>(points.size() % slots)});
    }
  }
  return points;
}

// Every compiled variant this CPU can run equals the scalar reference bit for bit: accumulators,
// totals, weights and non-zero flags, for every block size (tails that are not whole vectors
// included), columns 1 and (small blocks: a 3D chunk's cell columns) 4 or 16 apart, many radii and
// point sets.
TEST(KernelRowTest, EveryVariantEqualsTheScalarReferenceBitForBit) {
  int variants_run = 0;
  for (const KernelVariant& variant : KernelVariants()) {
    if (!variant.supported) continue;
    ++variants_run;
    uint64_t trial = 0;
    for (int size : {1, 3, 4, 8, 13, 16, 24, 32, 40, 48, 64}) {
      for (int k = 0; k < 25; ++k) {
        ++trial;
        const double step = size <= 8 ? std::array{1.0, 4.0, 16.0}[k % 3] : 1.0;
        const size_t slots = 1 + trial % 5;
        const double x0 = std::floor(-40000.0 + 80000.0 * Unit(trial, 7));
        const double z0 = std::floor(-40000.0 + 80000.0 * Unit(trial, 8));
        const int extent = static_cast<int>(step) * (size - 1) + 1;
        const auto points = MakePoints(trial, x0, z0, extent, slots);
        const BlockRun expected = RunBlock(&KernelBlockScalar, points, slots, x0, z0, size, step);
        const BlockRun got = RunBlock(variant.run, points, slots, x0, z0, size, step);
        ASSERT_EQ(std::memcmp(got.acc.data(), expected.acc.data(), got.acc.size() * sizeof(double)),
                  0)
            << variant.name << " size " << size << " step " << step << " trial " << trial;
        ASSERT_EQ(
            std::memcmp(got.total.data(), expected.total.data(), got.total.size() * sizeof(double)),
            0)
            << variant.name << " size " << size << " step " << step << " trial " << trial;
        ASSERT_EQ(std::memcmp(got.weights.data(), expected.weights.data(),
                              got.weights.size() * sizeof(float)),
                  0)
            << variant.name << " size " << size << " step " << step << " trial " << trial;
        ASSERT_EQ(got.nonzero, expected.nonzero) << variant.name << " size " << size;
      }
    }
  }
  EXPECT_GE(variants_run, 1);
  // The baseline variant always runs; report what else this machine checked.
  std::printf("kernel variants checked:");
  for (const KernelVariant& v : KernelVariants())
    std::printf(" %s%s", v.name, v.supported ? "" : "(unsupported)");
  std::printf("; dispatched: %s\n", DispatchedKernelVariant().data());
}

// WORLDGEN_SIMD_VARIANT picks a supported variant by name; an unknown or unsupported name leaves
// the dispatcher's own choice and is reported (the server and blend_bench refuse to start with it).
TEST(SimdDispatchTest, TheEnvironmentForcesASupportedVariantAndNamesAnyOther) {
  struct Fake {
    const char* name;
    bool supported;
  };
  const Fake fakes[] = {{"avx512", false}, {"avx2", true}, {"baseline", true}};
  const std::span<const Fake> variants(fakes);
  const char* saved = std::getenv(simd::kForceVariantEnv);
  const std::string restore = saved == nullptr ? "" : saved;
  unsetenv(simd::kForceVariantEnv);
  EXPECT_STREQ(simd::FirstSupported(variants).name, "avx2");
  EXPECT_EQ(simd::ForcedVariantError(variants), "");
  setenv(simd::kForceVariantEnv, "baseline", 1);
  EXPECT_STREQ(simd::FirstSupported(variants).name, "baseline");
  EXPECT_EQ(simd::ForcedVariantError(variants), "");
  setenv(simd::kForceVariantEnv, "avx512", 1);
  EXPECT_STREQ(simd::FirstSupported(variants).name, "avx2");
  EXPECT_EQ(simd::ForcedVariantError(variants),
            "WORLDGEN_SIMD_VARIANT=avx512: this CPU (or build) cannot run it");
  setenv(simd::kForceVariantEnv, "sse9", 1);
  EXPECT_STREQ(simd::FirstSupported(variants).name, "avx2");
  EXPECT_EQ(simd::ForcedVariantError(variants),
            "WORLDGEN_SIMD_VARIANT=sse9 is not a variant of this build (avx512, avx2, baseline)");
  if (saved == nullptr) {
    unsetenv(simd::kForceVariantEnv);
  } else {
    setenv(simd::kForceVariantEnv, restore.c_str(), 1);
  }
}

TEST(KernelRowTest, OutOfReachColumnsGainExactlyZero) {
  // One slot-0 point at x = 0 of radius 3 on the block's row 0, and a slot-1 point everywhere.
  std::vector<KernelPoint> points = {{0.0, 0.0, 9.0, 0}, {4.0, 0.0, 1e6, 1}};
  for (const KernelVariant& variant : KernelVariants()) {
    if (!variant.supported) continue;
    BlockRun run = RunBlock(variant.run, points, 2, 0.0, 0.0, 8);
    EXPECT_EQ(run.acc[0], 81.0) << variant.name;
    EXPECT_EQ(run.acc[1], 64.0);
    EXPECT_EQ(run.acc[2], 25.0);
    for (size_t i = 3; i < 8; ++i) {
      EXPECT_EQ(run.acc[i], 0.0);
      EXPECT_FALSE(std::signbit(run.acc[i]));
    }
    EXPECT_EQ(run.nonzero, (std::vector<uint8_t>{1, 1}));
  }
}

// The 3D kernel's sums through one variant: samples scattered around a block of cells (many beyond
// its reach, some right at its edges), several biomes sharing planes, the samples split into runs.
std::vector<double> RunVolumeBlock(void (*kernel)(const VolumeKernelBlock&), uint64_t trial,
                                   size_t nx, size_t ny, size_t nz, size_t* reached) {
  const double step = static_cast<double>(1 << (trial % 3));
  const double y_step = step * (0.25 + 2.0 * Unit(trial, 10));
  const double radius = 1.5 * step + 30.0 * Unit(trial, 11);
  const double x0 = std::floor(-30000.0 + 60000.0 * Unit(trial, 12));
  const double y0 = std::floor(-300.0 + 600.0 * Unit(trial, 13));
  const double z0 = std::floor(-30000.0 + 60000.0 * Unit(trial, 14));
  std::vector<double> xs(nx), ys(ny), zs(nz);
  for (size_t a = 0; a < nx; ++a) xs[a] = x0 + step * static_cast<double>(a);
  for (size_t b = 0; b < ny; ++b) ys[b] = (y0 + step * static_cast<double>(b)) * (y_step / step);
  for (size_t d = 0; d < nz; ++d) zs[d] = z0 + step * static_cast<double>(d);
  const size_t count = 10 + static_cast<size_t>(200 * Unit(trial, 15));
  std::vector<VolumeSample> samples;
  for (size_t k = 0; k < count; ++k) {
    const auto around = [&](const std::vector<double>& at, uint64_t stream) {
      const double lo = at.front() - radius - 3.0, hi = at.back() + radius + 3.0;
      double v = lo + (hi - lo) * Unit(trial * 1000 + k, stream);
      // Some samples exactly a radius from a cell: the edge where the term is exactly 0.
      if (k % 7 == 0) v = at[k % at.size()] + (k % 2 == 0 ? radius : -radius);
      return v;
    };
    samples.push_back({around(xs, 16), around(ys, 17), around(zs, 18),
                       static_cast<uint16_t>(HashCoords(trial, static_cast<int64_t>(k), 19) % 6)});
  }
  const uint32_t plane_of[6] = {0, 2, 1, 0, 3, 2};
  std::vector<std::span<const VolumeSample>> runs;
  for (size_t begin = 0; begin < samples.size();) {
    const size_t length = std::min(samples.size() - begin, 1 + (begin * 7 + trial) % 40);
    runs.emplace_back(samples.data() + begin, length);
    begin += length;
  }
  const size_t stride = VolumeStride(nx), plane = ny * nz * stride + 5;
  std::vector<double> planes(4 * plane, 0.0);
  kernel({.runs = runs,
          .plane_of = plane_of,
          .radius = radius,
          .xs = xs,
          .ys = ys,
          .zs = zs,
          .planes = planes.data(),
          .plane_size = plane});
  // Padded lanes and the planes' slack are scratch: compare real cells only.
  std::vector<double> cells;
  for (size_t q = 0; q < 4; ++q) {
    for (size_t row = 0; row < ny * nz; ++row) {
      for (size_t a = 0; a < nx; ++a) cells.push_back(planes[q * plane + row * stride + a]);
    }
  }
  *reached = static_cast<size_t>(
      std::count_if(cells.begin(), cells.end(), [](double v) { return v > 0.0; }));
  return cells;
}

// Every compiled variant of the 3D kernel this CPU can run equals the scalar reference bit for
// bit, for rows that are not whole vectors, heights and depths past the kept offsets (nz > 32),
// every cell step, and samples out of reach or exactly at it.
TEST(VolumeKernelTest, EveryVariantEqualsTheScalarReferenceBitForBit) {
  int variants_run = 0;
  for (const VolumeKernelVariant& variant : VolumeKernelVariants()) {
    if (!variant.supported) continue;
    ++variants_run;
    uint64_t trial = 0;
    size_t reached_total = 0;
    for (size_t nx : {1, 2, 3, 4, 5, 8, 16}) {
      for (size_t ny : {1, 4, 16}) {
        for (size_t nz : {1, 2, 3, 4, 8, 40}) {
          for (int k = 0; k < 4; ++k) {
            ++trial;
            size_t reached = 0, expected_reached = 0;
            const std::vector<double> expected =
                RunVolumeBlock(&VolumeKernelSumsScalar, trial, nx, ny, nz, &expected_reached);
            const std::vector<double> got =
                RunVolumeBlock(variant.run, trial, nx, ny, nz, &reached);
            ASSERT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(double)), 0)
                << variant.name << " " << nx << "x" << ny << "x" << nz << " trial " << trial;
            reached_total += reached;
          }
        }
      }
    }
    EXPECT_GT(reached_total, 10000u) << "the trials must reach cells";
  }
  EXPECT_GE(variants_run, 1);
  std::printf("volume kernel variants checked:");
  for (const VolumeKernelVariant& v : VolumeKernelVariants())
    std::printf(" %s%s", v.name, v.supported ? "" : "(unsupported)");
  std::printf("; dispatched: %s\n", DispatchedVolumeKernelVariant().data());
}

TEST(KernelRowTest, NonNegativeIsStdMaxWithZeroBitForBit) {
  // Including the cases where a max instruction and std::max can differ: NaN and signed zeros.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (double t : {-2.5, -0.0, 0.0, 1e-300, 3.0, -inf, inf, nan, -nan, tiny, -tiny}) {
    const double expected = std::max(t, 0.0);
    const double got = NonNegative(t);
    EXPECT_EQ(std::memcmp(&expected, &got, sizeof got), 0) << t;
  }
  // The nearest offset of a point inside, left of and right of 2..5.
  EXPECT_EQ(KernelNearestOffset(3.0, 2.0, 5.0), 0.0);
  EXPECT_EQ(KernelNearestOffset(0.5, 2.0, 5.0), 1.5);
  EXPECT_EQ(KernelNearestOffset(7.0, 2.0, 5.0), 2.0);
}

}  // namespace
}  // namespace worldgen
