// Powell-Sabin split triangles: the C1 piecewise-quadratic interpolant the scattered method's
// smooth mesh interpolation (interpolation = 2) evaluates on its jittered triangles.
//
// Each triangle (v0, v1, v2) of a triangulation is split at an interior point z (its incentre)
// and at one point r_k on each edge: where the segment between the split points of the two
// triangles sharing the edge crosses it (with incentres that crossing is inside the edge). The six
// sub-triangles (v_k, r_m, z) each carry a quadratic in Bernstein form. Its six control values
// ("ordinates") are fixed by each vertex's value f and gradient g alone:
//   at v_k:                  f_k
//   at the midpoint of v_k p: f_k + g_k . (p - v_k) / 2, for p = r_m or z (the tangent plane at
//   v_k) at r_m (edge v_a v_b, r_m = (1 - mu) v_a + mu v_b):
//                            (1 - mu) ord(mid(v_a, r_m)) + mu ord(mid(v_b, r_m))
//   at the midpoint of r_m z: (1 - mu) ord(mid(v_a, z)) + mu ord(mid(v_b, z))
//   at z (z = sum_k beta_k v_k): sum_k beta_k ord(mid(v_k, z))
// which makes the pieces join C1 inside the triangle and across its edges (Powell and Sabin,
// 1977), and the value and gradient at a vertex f_k and g_k.
//
// Every ordinate is a convex combination of the vertex ordinates f_k and f_k + g_k . (p - v_k)/2
// (mu and beta are in (0, 1)). Fed with a partition of unity (weights per biome that are >= 0 and
// sum to 1, gradients that sum to 0) whose vertex ordinates are >= 0, which the caller ensures
// (LimitVertexGradients, then VertexGradientScale for what rounding leaves), every ordinate of
// every biome is >= 0 and the biomes' ordinates sum to 1; the Bernstein basis is >= 0 and sums to
// 1, so the interpolated weights are in [0, 1] and sum to 1 by construction.
//
// The result at a point is linear in the nine vertex quantities (f_k, g_k.x, g_k.z): Coefficients
// gives the nine factors, so a caller mixes whole per-biome vectors at once.
//
// Thread safety: free functions of their arguments.
#ifndef WORLDGEN_ENGINE_POWELL_SABIN_H_
#define WORLDGEN_ENGINE_POWELL_SABIN_H_

#include <array>
#include <span>
#include <utility>

namespace worldgen {

using Point2 = std::array<double, 2>;  // {x, z}

// The incentre of the triangle (a, b, c): its split point z, and z's barycentric coordinates.
std::pair<Point2, std::array<double, 3>> Incentre(const Point2& a, const Point2& b,
                                                  const Point2& c);

// The edge p -> q's split point: where the line through z1 and z2 (the split points of the two
// triangles sharing the edge) crosses it, as the fraction mu along p -> q. The caller passes each
// edge's ends and triangles in one fixed order, so both triangles get the same bits.
double EdgeSplit(const Point2& p, const Point2& q, const Point2& z1, const Point2& z2);

// A vertex's gradients made fit for the interpolant, in place. Per biome b, g_b is scaled by the
// largest s_b in [0, 1] for which f_b + s_b g_b . (p - v) / 2 >= 0 at every split point p around
// the vertex (a biome on the fringe of its reach, weight near 0, would otherwise dip below 0);
// what that removes no longer sums to 0 over the biomes, so its sum is then taken from every
// biome in proportion to its weight (g_b -= f_b * sum_c g_c / sum_c f_c), which keeps the
// gradients summing to 0. Only the fringe biomes' slopes change, and the others' barely (by their
// weight times the fringe's removed slope), where one scale for the whole vertex would flatten
// every biome there. A biome whose weight is 0 gets gradient 0. `f`, `gx`, `gz` per biome.
void LimitVertexGradients(const Point2& v, std::span<const float> f, std::span<float> gx,
                          std::span<float> gz, std::span<const Point2> split_points);

// The largest s in [0, 1] for which f_b + s g_b . (p - v) / 2 >= 0 for every biome b and every
// split point p around the vertex v (the vertex's ordinates stay non-negative). `f`, `gx`, `gz`
// are the vertex's weights and gradient per biome, entry by entry.
double VertexGradientScale(const Point2& v, std::span<const float> f, std::span<const float> gx,
                           std::span<const float> gz, std::span<const Point2> split_points);

// One split triangle. Edge k is the edge opposite v[k], from v[k + 1] to v[k + 2] (indices mod
// 3), split at r[k] with weights w[k] on (v[k + 1], v[k + 2]) (1 - mu and mu, from EdgeSplit).
// scale[k] multiplies vertex k's gradient (VertexGradientScale).
struct SplitTriangle {
  std::array<Point2, 3> v;
  Point2 z;
  std::array<double, 3> beta;
  std::array<Point2, 3> r;
  std::array<std::array<double, 2>, 3> w;
  std::array<double, 3> scale;
};

// The factors of the nine vertex quantities at (x, z), which lies in the triangle (a point a
// rounding outside is evaluated on its nearest sub-triangle): coefficient[3 * k] multiplies f_k,
// [3 * k + 1] g_k.x and [3 * k + 2] g_k.z.
std::array<double, 9> Coefficients(const SplitTriangle& t, double x, double z);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_POWELL_SABIN_H_
