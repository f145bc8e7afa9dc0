#include "engine/triangular_lattice.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

TEST(TriangularLatticeTest, JitterHasFixedMagnitude) {
  TriangularLattice lattice(42, 8.0, 0.35);
  for (int32_t j = -20; j <= 20; ++j) {
    for (int32_t i = -20; i <= 20; ++i) {
      double x, z;
      lattice.Position(i, j, &x, &z);
      double ux = 8.0 * (i + 0.5 * j), uz = 8.0 * TriangularLattice::kSqrt3 / 2 * j;
      EXPECT_NEAR(std::hypot(x - ux, z - uz), 8.0 * 0.35, 1e-9);
    }
  }
}

TEST(TriangularLatticeTest, NearestVertexMatchesBruteForce) {
  TriangularLattice lattice(1, 5.0, 0.2);
  for (int k = 0; k < 5000; ++k) {
    double x = std::fmod(k * 12.9898, 400.0) - 200.0, z = std::fmod(k * 78.233, 400.0) - 200.0;
    LatticeIndex v = lattice.NearestVertex(x, z);
    auto dist = [&](int32_t i, int32_t j) {
      return std::hypot(x - 5.0 * (i + 0.5 * j), z - 5.0 * TriangularLattice::kSqrt3 / 2 * j);
    };
    double best = 1e300;
    for (int32_t j = v.j - 3; j <= v.j + 3; ++j) {
      for (int32_t i = v.i - 3; i <= v.i + 3; ++i) best = std::min(best, dist(i, j));
    }
    EXPECT_LE(dist(v.i, v.j), best + 1e-12);
    EXPECT_LE(dist(v.i, v.j), lattice.max_vertex_distance() + 1e-9);
  }
}

}  // namespace
}  // namespace worldgen
