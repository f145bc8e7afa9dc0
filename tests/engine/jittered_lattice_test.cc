#include "engine/jittered_lattice.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

using Shape = JitteredLattice::Shape;

// The unjittered vertex (i, j) of an interval-`g` lattice of `shape`, from the header's formulas.
std::pair<double, double> Vertex(Shape shape, double g, int32_t i, int32_t j) {
  if (shape == Shape::kSquare) return {g * i, g * j};
  return {g * (i + 0.5 * j), g * JitteredLattice::kSqrt3 / 2 * j};
}

TEST(JitteredLatticeTest, JitterHasFixedMagnitude) {
  for (Shape shape : {Shape::kTriangular, Shape::kSquare}) {
    JitteredLattice lattice(42, 8.0, 0.35, shape);
    for (int32_t j = -20; j <= 20; ++j) {
      for (int32_t i = -20; i <= 20; ++i) {
        double x, z;
        lattice.Position(i, j, &x, &z);
        const auto [ux, uz] = Vertex(shape, 8.0, i, j);
        EXPECT_NEAR(std::hypot(x - ux, z - uz), 8.0 * 0.35, 1e-9);
      }
    }
  }
}

TEST(JitteredLatticeTest, NearestVertexMatchesBruteForce) {
  for (Shape shape : {Shape::kTriangular, Shape::kSquare}) {
    JitteredLattice lattice(1, 5.0, 0.2, shape);
    double farthest = 0.0;
    for (int k = 0; k < 5000; ++k) {
      double x = std::fmod(k * 12.9898, 400.0) - 200.0, z = std::fmod(k * 78.233, 400.0) - 200.0;
      LatticeIndex v = lattice.NearestVertex(x, z);
      auto dist = [&](int32_t i, int32_t j) {
        const auto [vx, vz] = Vertex(shape, 5.0, i, j);
        return std::hypot(x - vx, z - vz);
      };
      double best = 1e300;
      for (int32_t j = v.j - 3; j <= v.j + 3; ++j) {
        for (int32_t i = v.i - 3; i <= v.i + 3; ++i) best = std::min(best, dist(i, j));
      }
      EXPECT_LE(dist(v.i, v.j), best + 1e-12);
      EXPECT_LE(dist(v.i, v.j), lattice.max_vertex_distance() + 1e-9);
      farthest = std::max(farthest, dist(v.i, v.j));
    }
    // The bound is tight: some points come close to it (5/sqrt(3) = 2.89, 5/sqrt(2) = 3.54).
    EXPECT_GT(farthest, 0.95 * lattice.max_vertex_distance());
  }
}

uint64_t Bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// PositionRow's variants (and the dispatched PositionRow) against Position, bit for bit: rows of
// every length up to a few vectors, at the origin, far out and at both ends of int32_t, on both
// shapes. A quarter of vertices miss their first draw and 6% their second, so the lanes of a
// vector stop at different attempts. Nothing past `count` is written.
TEST(JitteredLatticeTest, PositionRowMatchesPositionInEveryVariant) {
  std::vector<LatticeRowVariant> variants;
  for (const LatticeRowVariant& v : LatticeRowVariants()) {
    if (v.supported) variants.push_back(v);
  }
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(LatticeRowVariants().back().name, "baseline");
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const std::vector<std::pair<int32_t, int32_t>> starts = {
      {0, 0}, {-7, 3}, {-40, -41}, {123457, -98765}, {kMin, kMin}, {kMax - 40, kMax}, {-3, kMax}};
  for (Shape shape : {Shape::kTriangular, Shape::kSquare}) {
    for (uint64_t seed : {uint64_t{1}, uint64_t{0xfeedULL}}) {
      const JitteredLattice lattice(seed, shape == Shape::kSquare ? 4.0 : 8.0, 0.4, shape);
      for (const auto& start : starts) {
        // Plain variables, not a structured binding: the lambdas below capture them, which clang
        // 14 (the fuzz build) does not allow for bindings.
        const int32_t i_begin = start.first, j = start.second;
        for (int32_t count = 0; count <= 41; ++count) {
          std::vector<double> want_x(count), want_z(count);
          for (int32_t k = 0; k < count; ++k)
            lattice.Position(i_begin + k, j, &want_x[k], &want_z[k]);
          const auto check = [&](const std::string& name, auto run) {
            std::vector<double> x(count + 9, -1.5), z(count + 9, -1.5);
            run(x.data(), z.data());
            for (int32_t k = 0; k < count; ++k) {
              ASSERT_EQ(Bits(x[k]), Bits(want_x[k]))
                  << name << " x of vertex (" << i_begin + k << ", " << j << ") " << x[k] << " vs "
                  << want_x[k];
              ASSERT_EQ(Bits(z[k]), Bits(want_z[k]))
                  << name << " z of vertex (" << i_begin + k << ", " << j << ")";
            }
            for (size_t k = count; k < x.size(); ++k) {
              ASSERT_EQ(x[k], -1.5) << name << " wrote past the row";
              ASSERT_EQ(z[k], -1.5) << name << " wrote past the row";
            }
          };
          check("dispatched",
                [&](double* x, double* z) { lattice.PositionRow(i_begin, count, j, x, z); });
          for (const LatticeRowVariant& v : variants) {
            check(v.name, [&](double* x, double* z) {
              v.run(lattice.geometry(), i_begin, count, j, x, z);
            });
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace worldgen
