// The Powell-Sabin split triangles on a hand-built pair of triangles: the interpolant takes the
// vertex data, reproduces linear functions, joins C1 across the shared edge, and the gradient
// scale keeps ordinates non-negative.
#include "engine/powell_sabin.h"

#include <array>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

// Vertex data per vertex: value, gradient x, gradient z.
using Data = std::array<std::array<double, 3>, 4>;

// Two triangles sharing the edge b-c: (a, b, c) and (b, d, c). The edge b-c is split where the
// segment between their incentres crosses it; the outer edges at their midpoints.
struct Pair {
  Point2 a{0.0, 0.0}, b{4.0, 0.5}, c{1.0, 3.5}, d{6.5, 5.5};
  SplitTriangle first, second;

  Pair() {
    const auto [z1, beta1] = Incentre(a, b, c);
    const auto [z2, beta2] = Incentre(b, d, c);
    const double mu = EdgeSplit(b, c, z1, z2);
    const Point2 r = {b[0] + mu * (c[0] - b[0]), b[1] + mu * (c[1] - b[1])};
    const auto mid = [](const Point2& p, const Point2& q) {
      return Point2{(p[0] + q[0]) / 2, (p[1] + q[1]) / 2};
    };
    first = {{a, b, c},
             z1,
             beta1,
             {r, mid(c, a), mid(a, b)},
             {{{1 - mu, mu}, {0.5, 0.5}, {0.5, 0.5}}},
             {1.0, 1.0, 1.0}};
    second = {{b, d, c},
              z2,
              beta2,
              {mid(d, c), r, mid(b, d)},
              {{{0.5, 0.5}, {mu, 1 - mu}, {0.5, 0.5}}},
              {1.0, 1.0, 1.0}};
  }

  // The interpolant at (x, z) from vertex data (a, b, c, d), on the triangle holding the point
  // (`side`: 0 first, 1 second).
  double At(const Data& data, int side, double x, double z) const {
    const SplitTriangle& t = side == 0 ? first : second;
    const std::array<int, 3> vertex =
        side == 0 ? std::array<int, 3>{0, 1, 2} : std::array<int, 3>{1, 3, 2};
    const std::array<double, 9> c = Coefficients(t, x, z);
    double sum = 0.0;
    for (int k = 0; k < 3; ++k) {
      for (int q = 0; q < 3; ++q) sum += c[3 * k + q] * data[vertex[k]][q];
    }
    return sum;
  }
};

TEST(PowellSabinTest, TakesTheVertexDataAndReproducesLinearFunctions) {
  const Pair pair;
  const auto linear = [](const Point2& p) { return 0.3 + 0.05 * p[0] - 0.02 * p[1]; };
  Data data;
  const Point2 vertices[] = {pair.a, pair.b, pair.c, pair.d};
  for (int v = 0; v < 4; ++v) data[v] = {linear(vertices[v]), 0.05, -0.02};
  for (int side = 0; side < 2; ++side) {
    const SplitTriangle& t = side == 0 ? pair.first : pair.second;
    for (int k = 0; k < 3; ++k) {
      const Point2& v = t.v[k];
      EXPECT_NEAR(pair.At(data, side, v[0], v[1]), linear(v), 1e-12);
    }
    // Points all over the triangle, every sub-triangle among them.
    for (int s = 1; s < 10; ++s) {
      for (int u = 1; s + u < 10; ++u) {
        const double l1 = s / 10.0, l2 = u / 10.0, l0 = 1 - l1 - l2;
        const Point2 p = {l0 * t.v[0][0] + l1 * t.v[1][0] + l2 * t.v[2][0],
                          l0 * t.v[0][1] + l1 * t.v[1][1] + l2 * t.v[2][1]};
        EXPECT_NEAR(pair.At(data, side, p[0], p[1]), linear(p), 1e-12) << p[0] << ", " << p[1];
      }
    }
  }
}

// Along lines in every direction through both triangles, the largest change of slope between
// steps (the second difference over the step): a crease anywhere (the shared edge, the split
// edges inside) keeps it at the crease's jump whatever the step, a C1 join halves it with the step.
double LargestSlopeJump(const Pair& pair, const Data& data, double step) {
  const auto side_of = [&](double x, double z) {
    for (int side = 0; side < 2; ++side) {
      const SplitTriangle& t = side == 0 ? pair.first : pair.second;
      bool inside = true;
      for (int k = 0; k < 3; ++k) {
        const Point2& p = t.v[k];
        const Point2& q = t.v[(k + 1) % 3];
        const double cross = (q[0] - p[0]) * (z - p[1]) - (q[1] - p[1]) * (x - p[0]);
        inside = inside && cross > 0.0;  // Both triangles are counter-clockwise.
      }
      if (inside) return side;
    }
    return -1;
  };
  double largest = 0.0;
  const Point2 centres[] = {{2.5, 2.0}, {3.0, 1.5}, {2.0, 2.5}, {1.8, 1.2}, {4.0, 3.5}};
  for (const Point2& centre : centres) {
    for (int d = 0; d < 24; ++d) {
      const double angle = 3.14159265358979 * d / 24;
      const double dx = std::cos(angle) * step, dz = std::sin(angle) * step;
      std::vector<double> line;
      const int steps = static_cast<int>(1.5 / step);
      for (int k = -steps; k <= steps; ++k) {
        const double x = centre[0] + k * dx, z = centre[1] + k * dz;
        const int side = side_of(x, z);
        if (side < 0) {
          line.clear();
          continue;
        }
        line.push_back(pair.At(data, side, x, z));
        const size_t n = line.size();
        if (n >= 3) {
          largest =
              std::max(largest, std::abs(line[n - 1] - 2.0 * line[n - 2] + line[n - 3]) / step);
        }
      }
    }
  }
  return largest;
}

TEST(PowellSabinTest, IsC1EverywhereAndContinuousAcrossTheSharedEdge) {
  const Pair pair;
  // Arbitrary vertex data: no function behind it.
  const Data data = {{{0.2, 0.3, -0.1}, {0.9, -0.2, 0.25}, {0.4, 0.05, 0.4}, {0.1, -0.3, -0.2}}};
  const double coarse = LargestSlopeJump(pair, data, 2e-3);
  const double fine = LargestSlopeJump(pair, data, 1e-3);
  EXPECT_GT(coarse, 0.0);
  EXPECT_LT(fine, 0.6 * coarse) << "a crease: " << coarse << " then " << fine;
  EXPECT_LT(fine, 1e-2);
  // The shared edge, from both triangles: one value.
  for (int s = 1; s < 20; ++s) {
    const double t = s / 20.0;
    const Point2 q = {pair.b[0] + t * (pair.c[0] - pair.b[0]),
                      pair.b[1] + t * (pair.c[1] - pair.b[1])};
    EXPECT_NEAR(pair.At(data, 0, q[0], q[1]), pair.At(data, 1, q[0], q[1]), 1e-12);
  }
}

TEST(PowellSabinTest, GradientScaleKeepsEveryOrdinateNonNegative) {
  const Point2 v = {0.0, 0.0};
  const std::vector<Point2> around = {{2.0, 0.0}, {0.0, 2.0}, {-2.0, -1.0}};
  // Biome 0 falls only towards (-2, -1): 0.1 + s * 0.5 * (0.2 * -2 + 0.1 * -1) >= 0 gives s = 0.4;
  // biome 1 allows 4.5.
  const std::vector<float> f = {0.1f, 0.9f}, gx = {0.2f, -0.2f}, gz = {0.1f, -0.1f};
  const double s = VertexGradientScale(v, f, gx, gz, around);
  EXPECT_NEAR(s, 0.1 / 0.25, 1e-6);
  for (size_t b = 0; b < f.size(); ++b) {
    for (const Point2& p : around) {
      EXPECT_GE(f[b] + s * 0.5 * (gx[b] * p[0] + gz[b] * p[1]), -1e-7);
    }
  }
  // Gradients that keep every ordinate >= 0 are not scaled; a zero weight that would fall is.
  EXPECT_EQ(VertexGradientScale(v, std::vector<float>{0.5f}, std::vector<float>{0.01f},
                                std::vector<float>{0.0f}, around),
            1.0);
  EXPECT_EQ(VertexGradientScale(v, std::vector<float>{0.0f}, std::vector<float>{0.01f},
                                std::vector<float>{0.0f}, around),
            0.0);
}

// A biome on the fringe (weight 0.01, rising towards +x) would dip below 0 towards (-2, 0): its
// slope is halved (0.01 + s * 0.5 * 0.02 * -2 = 0 at s = 0.5); the 0.01 removed is taken from both
// biomes by weight, so the gradients still sum to 0; what that leaves below 0 (biome 0 towards
// (-2, 0): 0.01 - 0.0101) the vertex's scale takes back.
TEST(PowellSabinTest, LimitVertexGradientsScalesTheFringeBiomeAndKeepsTheSumZero) {
  const Point2 v = {0.0, 0.0};
  const std::vector<Point2> around = {{2.0, 0.0}, {-2.0, 0.0}, {0.0, 2.0}};
  const std::vector<float> f = {0.01f, 0.99f};
  std::vector<float> gx = {0.02f, -0.02f}, gz = {0.0f, 0.0f};
  LimitVertexGradients(v, f, gx, gz, around);
  EXPECT_NEAR(gx[0], 0.0101, 1e-7);
  EXPECT_NEAR(gx[1], -0.0101, 1e-7);
  EXPECT_NEAR(gx[0] + gx[1], 0.0, 1e-9);
  EXPECT_EQ(gz[0], 0.0f);
  EXPECT_EQ(gz[1], 0.0f);
  EXPECT_NEAR(VertexGradientScale(v, f, gx, gz, around), 0.01 / 0.0101, 1e-5);
  // Nothing to limit: unchanged.
  std::vector<float> hx = {0.001f, -0.001f}, hz = {0.002f, -0.002f};
  LimitVertexGradients(v, std::vector<float>{0.5f, 0.5f}, hx, hz, around);
  EXPECT_EQ(hx, (std::vector<float>{0.001f, -0.001f}));
  EXPECT_EQ(hz, (std::vector<float>{0.002f, -0.002f}));
}

}  // namespace
}  // namespace worldgen
