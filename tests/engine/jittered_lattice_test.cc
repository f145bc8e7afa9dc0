#include "engine/jittered_lattice.h"

#include <algorithm>
#include <cmath>
#include <utility>

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

}  // namespace
}  // namespace worldgen
