#include "engine/kernel_row.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/hash.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

double Unit(uint64_t k, uint64_t stream) {
  return static_cast<double>(HashCoords(99, static_cast<int64_t>(k), static_cast<int64_t>(stream)) >> 11) *
         (1.0 / 9007199254740992.0);
}

// The dispatched (vector) kernel and the scalar reference agree bit-for-bit, for every length
// (including tails that are not a multiple of the vector width) and for columns in and out of reach.
TEST(KernelRowTest, VectorKernelEqualsScalarReferenceBitForBit) {
  for (size_t n : {1u, 3u, 4u, 5u, 16u, 31u, 64u, 256u}) {
    for (uint64_t trial = 0; trial < 50; ++trial) {
      std::vector<double> xs(n), acc_v(n), tot_v(n), acc_s(n), tot_s(n);
      for (size_t i = 0; i < n; ++i) {
        xs[i] = -5000.0 + static_cast<double>(i) + 1e-3 * Unit(trial, i);
        acc_v[i] = acc_s[i] = 1e5 * Unit(trial, 1000 + i);
        tot_v[i] = tot_s[i] = acc_v[i] + 1e5 * Unit(trial, 2000 + i);
      }
      for (int sample = 0; sample < 40; ++sample) {
        double px = -5000.0 - 30.0 + (n + 60.0) * Unit(trial, 3000 + sample);
        double dz = 30.0 * Unit(trial, 4000 + sample);
        double r_sq = 576.0 + 100.0 * Unit(trial, 5000 + sample);
        AccumulateSampleRow(xs.data(), n, px, dz * dz, r_sq, acc_v.data(), tot_v.data());
        AccumulateSampleRowScalar(xs.data(), n, px, dz * dz, r_sq, acc_s.data(), tot_s.data());
      }
      ASSERT_EQ(std::memcmp(acc_v.data(), acc_s.data(), n * sizeof(double)), 0) << "n=" << n;
      ASSERT_EQ(std::memcmp(tot_v.data(), tot_s.data(), n * sizeof(double)), 0) << "n=" << n;
    }
  }
}

TEST(KernelRowTest, OutOfReachColumnsGainExactlyZero) {
  std::vector<double> xs = {0, 1, 2, 3, 4, 5, 6, 7}, acc(8, 0.0), total(8, 0.0);
  // Radius 3 around x = 0 (dz = 0): columns 0..2 in reach, 3 exactly on the rim, the rest beyond.
  AccumulateSampleRow(xs.data(), xs.size(), 0.0, 0.0, 9.0, acc.data(), total.data());
  EXPECT_EQ(acc[0], 81.0);
  EXPECT_EQ(acc[1], 64.0);
  EXPECT_EQ(acc[2], 25.0);
  for (size_t i = 3; i < 8; ++i) {
    EXPECT_EQ(acc[i], 0.0);
    EXPECT_FALSE(std::signbit(acc[i]));
  }
}

}  // namespace
}  // namespace worldgen
