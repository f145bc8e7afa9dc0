#include "engine/triangular_lattice.h"

#include <algorithm>
#include <cmath>

#include "engine/hash.h"

namespace worldgen {
namespace {

// Hex distance between the origin and vertex (di, dj) in these axial coordinates, where the six
// neighbours are (+-1, 0), (0, +-1), (1, -1) and (-1, 1).
int32_t HexDistance(int32_t di, int32_t dj) {
  int32_t a = di < 0 ? -di : di;
  int32_t b = dj < 0 ? -dj : dj;
  int32_t c = di + dj < 0 ? -(di + dj) : di + dj;
  return std::max(a, std::max(b, c));
}

}  // namespace

TriangularLattice::TriangularLattice(uint64_t seed, double interval, double jitter_fraction)
    : seed_(seed),
      interval_(interval),
      jitter_(interval * jitter_fraction),
      row_height_(interval * (kSqrt3 * 0.5)) {}

void TriangularLattice::Position(int32_t i, int32_t j, double* x, double* z) const {
  // A direction drawn uniformly from the unit disc by rejection (bounded retries), then normalized.
  // Only integer hashing, multiplication and sqrt (correctly rounded in IEEE) are involved.
  double ux = 1.0, uz = 0.0;
  for (uint64_t attempt = 0; attempt < 8; ++attempt) {
    uint64_t h = HashCoords(seed_, i, j, attempt);
    double a = static_cast<double>(h & 0xffffffffULL) * (2.0 / 4294967296.0) - 1.0;
    double b = static_cast<double>(h >> 32) * (2.0 / 4294967296.0) - 1.0;
    double len2 = a * a + b * b;
    if (len2 > 0.01 && len2 <= 1.0) {
      double inv = 1.0 / std::sqrt(len2);
      ux = a * inv;
      uz = b * inv;
      break;
    }
  }
  *x = interval_ * (static_cast<double>(i) + 0.5 * static_cast<double>(j)) + jitter_ * ux;
  *z = row_height_ * static_cast<double>(j) + jitter_ * uz;
}

LatticeIndex TriangularLattice::NearestVertex(double x, double z) const {
  double fj = z / row_height_;
  double fi = x / interval_ - 0.5 * fj;
  int32_t i0 = static_cast<int32_t>(std::floor(fi));
  int32_t j0 = static_cast<int32_t>(std::floor(fj));
  // The nearest vertex is a corner of the rhombus (i0..i0+1, j0..j0+1) that contains the point.
  LatticeIndex best{i0, j0};
  double best_d2 = -1.0;
  for (int32_t dj = 0; dj <= 1; ++dj) {
    for (int32_t di = 0; di <= 1; ++di) {
      double vx = interval_ * (static_cast<double>(i0 + di) + 0.5 * static_cast<double>(j0 + dj));
      double vz = row_height_ * static_cast<double>(j0 + dj);
      double d2 = (x - vx) * (x - vx) + (z - vz) * (z - vz);
      if (best_d2 < 0.0 || d2 < best_d2) {
        best = {i0 + di, j0 + dj};
        best_d2 = d2;
      }
    }
  }
  return best;
}

std::vector<LatticeOffset> TriangularLattice::SearchOffsets(double reach) const {
  // A vertex's jittered position within `reach` of the query means its unjittered position is within
  // reach + jitter of the query, hence within `bound` of the query's nearest vertex. A slack of 1e-9
  // of an interval keeps rounding from ever dropping a vertex on the boundary.
  double bound = reach + max_vertex_distance() + jitter_ + interval_ * 1e-9;
  double bound_sq = bound * bound;
  // Layer k's vertices are at least k * row_height_ from the centre (the inradius of its hexagon).
  int32_t layers = static_cast<int32_t>(std::ceil(bound / row_height_)) + 1;
  std::vector<LatticeOffset> offsets;
  for (int32_t k = 0; k <= layers; ++k) {
    bool layer_reaches = false;
    for (int32_t dj = -k; dj <= k; ++dj) {
      for (int32_t di = -k; di <= k; ++di) {
        if (HexDistance(di, dj) != k) continue;
        double ox = interval_ * (static_cast<double>(di) + 0.5 * static_cast<double>(dj));
        double oz = row_height_ * static_cast<double>(dj);
        if (ox * ox + oz * oz <= bound_sq) {
          offsets.push_back({di, dj});
          layer_reaches = true;
        }
      }
    }
    if (!layer_reaches && k > 0) break;  // Every farther layer is farther still.
  }
  std::sort(offsets.begin(), offsets.end(), [](const LatticeOffset& a, const LatticeOffset& b) {
    return a.dj != b.dj ? a.dj < b.dj : a.di < b.di;
  });
  return offsets;
}

}  // namespace worldgen
