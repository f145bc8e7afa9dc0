#include "engine/powell_sabin.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace worldgen {
namespace {

// Barycentric coordinates of (x, z) in the triangle (a, b, c).
std::array<double, 3> BarycentricIn(const Point2& a, const Point2& b, const Point2& c, double x,
                                    double z) {
  const double det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
  const double l1 = ((x - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (z - a[1])) / det;
  const double l2 = ((b[0] - a[0]) * (z - a[1]) - (x - a[0]) * (b[1] - a[1])) / det;
  return {1.0 - l1 - l2, l1, l2};
}

using Ordinate = std::array<double, 9>;  // Factors of (f_k, g_k.x, g_k.z), k = 0..2.

// The ordinate at the midpoint of v_k and p: on vertex k's (scaled) tangent plane.
Ordinate TangentAt(const SplitTriangle& t, int k, const Point2& p) {
  Ordinate o{};
  o[3 * k] = 1.0;
  o[3 * k + 1] = 0.5 * t.scale[k] * (p[0] - t.v[k][0]);
  o[3 * k + 2] = 0.5 * t.scale[k] * (p[1] - t.v[k][1]);
  return o;
}

void AddScaled(const Ordinate& o, double factor, Ordinate* sum) {
  for (size_t q = 0; q < o.size(); ++q) (*sum)[q] += factor * o[q];
}

// The distance from p to q from IEEE operations alone. Not std::hypot: glibc computes it one way
// on x86-64 and another on aarch64, and the two disagree in the last bit for one pair in eight
// (261,805 of 2 M random pairs within 200 blocks), which moved the weights of worlds blended with
// `interpolation: 2` between the architectures. Lattice coordinates are far from overflow, so the
// plain formula loses nothing.
double Distance(const Point2& p, const Point2& q) {
  const double dx = p[0] - q[0], dz = p[1] - q[1];
  return std::sqrt(dx * dx + dz * dz);
}

}  // namespace

std::pair<Point2, std::array<double, 3>> Incentre(const Point2& a, const Point2& b,
                                                  const Point2& c) {
  // Each vertex weighs by the length of the side opposite it.
  const double la = Distance(b, c);
  const double lb = Distance(c, a);
  const double lc = Distance(a, b);
  const double perimeter = la + lb + lc;
  const std::array<double, 3> beta = {la / perimeter, lb / perimeter, lc / perimeter};
  return {{beta[0] * a[0] + beta[1] * b[0] + beta[2] * c[0],
           beta[0] * a[1] + beta[1] * b[1] + beta[2] * c[1]},
          beta};
}

double EdgeSplit(const Point2& p, const Point2& q, const Point2& z1, const Point2& z2) {
  // p + mu (q - p) = z1 + nu (z2 - z1): mu by Cramer's rule.
  const double ex = q[0] - p[0], ez = q[1] - p[1];
  const double dx = z2[0] - z1[0], dz = z2[1] - z1[1];
  const double det = ex * dz - ez * dx;
  return ((z1[0] - p[0]) * dz - (z1[1] - p[1]) * dx) / det;
}

void LimitVertexGradients(const Point2& v, std::span<const float> f, std::span<float> gx,
                          std::span<float> gz, std::span<const Point2> split_points) {
  double removed_x = 0.0, removed_z = 0.0, total = 0.0;
  thread_local std::vector<double> lx, lz;
  lx.assign(f.size(), 0.0);
  lz.assign(f.size(), 0.0);
  for (size_t e = 0; e < f.size(); ++e) {
    double scale = 1.0;
    for (const Point2& p : split_points) {
      const double drop = 0.5 * (static_cast<double>(gx[e]) * (p[0] - v[0]) +
                                 static_cast<double>(gz[e]) * (p[1] - v[1]));
      if (drop < 0.0) scale = std::min(scale, static_cast<double>(f[e]) / -drop);
    }
    lx[e] = std::max(scale, 0.0) * static_cast<double>(gx[e]);
    lz[e] = std::max(scale, 0.0) * static_cast<double>(gz[e]);
    removed_x += lx[e], removed_z += lz[e];
    total += static_cast<double>(f[e]);
  }
  for (size_t e = 0; e < f.size(); ++e) {
    const double share = static_cast<double>(f[e]) / total;
    gx[e] = static_cast<float>(lx[e] - share * removed_x);
    gz[e] = static_cast<float>(lz[e] - share * removed_z);
  }
}

double VertexGradientScale(const Point2& v, std::span<const float> f, std::span<const float> gx,
                           std::span<const float> gz, std::span<const Point2> split_points) {
  double scale = 1.0;
  for (size_t e = 0; e < f.size(); ++e) {
    for (const Point2& p : split_points) {
      const double drop = 0.5 * (static_cast<double>(gx[e]) * (p[0] - v[0]) +
                                 static_cast<double>(gz[e]) * (p[1] - v[1]));
      if (drop < 0.0) scale = std::min(scale, static_cast<double>(f[e]) / -drop);
    }
  }
  return std::max(scale, 0.0);
}

std::array<double, 9> Coefficients(const SplitTriangle& t, double x, double z) {
  // The sub-triangle (v_k, r_m, z) holding the point: the one whose smallest barycentric
  // coordinate is largest (every coordinate >= 0 inside; a point a rounding outside goes to the
  // nearest), its negative coordinates clamped to 0 and the rest scaled to sum to 1.
  double best_min = -std::numeric_limits<double>::infinity();
  int best_k = 0, best_m = 1;
  std::array<double, 3> best{};
  for (int k = 0; k < 3; ++k) {
    for (int m : {(k + 1) % 3, (k + 2) % 3}) {
      const std::array<double, 3> l = BarycentricIn(t.v[k], t.r[m], t.z, x, z);
      const double smallest = std::min({l[0], l[1], l[2]});
      if (smallest > best_min) best_min = smallest, best_k = k, best_m = m, best = l;
    }
  }
  double total = 0.0;
  for (double& l : best) total += (l = std::max(l, 0.0));
  for (double& l : best) l /= total;
  const double u = best[0], v = best[1], w = best[2];
  const int k = best_k, m = best_m;
  // Edge m runs from v[m + 1] to v[m + 2]; k is one end, l the other.
  const bool k_first = k == (m + 1) % 3;
  const int l = k_first ? (m + 2) % 3 : (m + 1) % 3;
  const double wk = k_first ? t.w[m][0] : t.w[m][1];
  const double wl = k_first ? t.w[m][1] : t.w[m][0];

  const Ordinate k_to_r = TangentAt(t, k, t.r[m]), l_to_r = TangentAt(t, l, t.r[m]);
  const Ordinate k_to_z = TangentAt(t, k, t.z), l_to_z = TangentAt(t, l, t.z);
  Ordinate at_v{};
  at_v[3 * k] = 1.0;
  Ordinate at_r{}, r_to_z{}, at_z{};
  AddScaled(k_to_r, wk, &at_r);
  AddScaled(l_to_r, wl, &at_r);
  AddScaled(k_to_z, wk, &r_to_z);
  AddScaled(l_to_z, wl, &r_to_z);
  for (int n = 0; n < 3; ++n) AddScaled(TangentAt(t, n, t.z), t.beta[n], &at_z);

  Ordinate result{};
  AddScaled(at_v, u * u, &result);
  AddScaled(at_r, v * v, &result);
  AddScaled(at_z, w * w, &result);
  AddScaled(k_to_r, 2.0 * u * v, &result);
  AddScaled(k_to_z, 2.0 * u * w, &result);
  AddScaled(r_to_z, 2.0 * v * w, &result);
  return result;
}

}  // namespace worldgen
