#include "engine/jittered_lattice.h"

#include <cmath>

#include "engine/hash.h"

namespace worldgen {
namespace {

// Attempts of the rejection draw in Position (a miss has probability 1 - pi/4 + 0.01 pi).
constexpr uint64_t kAttempts = 8;

}  // namespace

JitteredLattice::JitteredLattice(uint64_t seed, double interval, double jitter_fraction,
                                 Shape shape)
    : seed_mix_(Mix64(seed ^ kHashSeedSalt)),
      shape_(shape),
      interval_(interval),
      jitter_(interval * jitter_fraction),
      row_height_(shape == Shape::kTriangular ? interval * (kSqrt3 * 0.5) : interval),
      row_shift_(shape == Shape::kTriangular ? 0.5 : 0.0) {}

void JitteredLattice::Position(int32_t i, int32_t j, double* x, double* z) const {
  // A direction drawn uniformly from the unit disc by rejection (bounded retries), then normalized.
  // Only integer hashing, multiplication and sqrt (correctly rounded in IEEE) are involved.
  // Attempt k's hash is HashCoords(seed, i, j, k); the part before the salt is shared.
  const uint64_t prefix = HashCoordsPrefix(seed_mix_, static_cast<uint64_t>(int64_t{i}),
                                           static_cast<uint64_t>(int64_t{j}));
  double ux = 1.0, uz = 0.0;
  for (uint64_t attempt = 0; attempt < kAttempts; ++attempt) {
    uint64_t h = Mix64(prefix ^ attempt);
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
  *x = interval_ * (static_cast<double>(i) + row_shift_ * static_cast<double>(j)) + jitter_ * ux;
  *z = row_height_ * static_cast<double>(j) + jitter_ * uz;
}

LatticeIndex JitteredLattice::NearestVertex(double x, double z) const {
  double fj = z / row_height_;
  double fi = x / interval_ - row_shift_ * fj;
  int32_t i0 = static_cast<int32_t>(std::floor(fi));
  int32_t j0 = static_cast<int32_t>(std::floor(fj));
  // The nearest vertex is a corner of the rhombus (square) (i0..i0+1, j0..j0+1) that contains the
  // point.
  LatticeIndex best{i0, j0};
  double best_d2 = -1.0;
  for (int32_t dj = 0; dj <= 1; ++dj) {
    for (int32_t di = 0; di <= 1; ++di) {
      double vx =
          interval_ * (static_cast<double>(i0 + di) + row_shift_ * static_cast<double>(j0 + dj));
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

}  // namespace worldgen
