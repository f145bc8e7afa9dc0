#include "engine/jittered_bcc_lattice.h"

#include <cmath>

#include "engine/hash.h"

namespace worldgen {
namespace {

// Attempts of the rejection draw in Position (a miss has probability about 1 - pi/6).
constexpr uint64_t kAttempts = 12;

double Unit(uint64_t bits21) { return static_cast<double>(bits21) * (2.0 / 2097152.0) - 1.0; }

}  // namespace

JitteredBccLattice::JitteredBccLattice(uint64_t seed, double interval, double vertical_interval,
                                       double jitter_fraction)
    : seed_mix_(Mix64(seed ^ kHashSeedSalt)),
      interval_(interval),
      vertical_interval_(vertical_interval),
      y_scale_(interval / vertical_interval),
      jitter_(interval * jitter_fraction) {}

void JitteredBccLattice::Position(const BccIndex& p, double* x, double* y, double* z) const {
  // A direction drawn uniformly from the unit ball by rejection (bounded retries), then
  // normalized: integer hashing, multiplication and sqrt (correctly rounded) only.
  const uint64_t prefix = HashCoordsPrefix(
      seed_mix_, static_cast<uint64_t>(int64_t{p.i}) * 2 + static_cast<uint64_t>(p.c),
      static_cast<uint64_t>(int64_t{p.j}));
  const uint64_t cell = Mix64(prefix ^ static_cast<uint64_t>(int64_t{p.k}) * 0xd6e8feb86659fd93ULL);
  double ux = 1.0, uy = 0.0, uz = 0.0;
  for (uint64_t attempt = 0; attempt < kAttempts; ++attempt) {
    const uint64_t h = Mix64(cell ^ attempt);
    const double a = Unit(h & 0x1fffff), b = Unit((h >> 21) & 0x1fffff),
                 d = Unit((h >> 42) & 0x1fffff);
    const double len2 = a * a + b * b + d * d;
    if (len2 > 0.01 && len2 <= 1.0) {
      const double inv = 1.0 / std::sqrt(len2);
      ux = a * inv, uy = b * inv, uz = d * inv;
      break;
    }
  }
  const double half = 0.5 * static_cast<double>(p.c);
  *x = interval_ * (static_cast<double>(p.i) + half) + jitter_ * ux;
  *y = vertical_interval_ * (static_cast<double>(p.j) + half) + jitter_ * uy / y_scale_;
  *z = interval_ * (static_cast<double>(p.k) + half) + jitter_ * uz;
}

}  // namespace worldgen
