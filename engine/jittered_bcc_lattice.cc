#include "engine/jittered_bcc_lattice.h"

#include <cmath>

#include "engine/hash.h"
#include "engine/rejection_draw.h"

namespace worldgen {
namespace {

// Attempts of the rejection draw in Position (a miss has probability about 1 - pi/6).
constexpr uint64_t kAttempts = 12;
// A draw's components are three 21-bit fields of its hash mapped to [-1, 1).
constexpr double kUnitScale = 2.0 / 2097152.0;
// Mixes the cube's z index into its hash.
constexpr uint64_t kCellMultiplier = 0xd6e8feb86659fd93ULL;

double Unit(uint64_t bits21) { return static_cast<double>(bits21) * kUnitScale - 1.0; }

// The scalar reference: Position of point p of a lattice of geometry g.
void PositionOf(const JitteredBccLattice::Geometry& g, const BccIndex& p, double* x, double* y,
                double* z) {
  // A direction drawn uniformly from the unit ball by rejection (bounded retries), then
  // normalized: integer hashing, multiplication and sqrt (correctly rounded) only.
  const uint64_t prefix = HashCoordsPrefix(
      g.seed_mix, static_cast<uint64_t>(int64_t{p.i}) * 2 + static_cast<uint64_t>(p.c),
      static_cast<uint64_t>(int64_t{p.j}));
  const uint64_t cell = Mix64(prefix ^ static_cast<uint64_t>(int64_t{p.k}) * kCellMultiplier);
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
  *x = g.interval * (static_cast<double>(p.i) + half) + g.jitter * ux;
  *y = g.vertical_interval * (static_cast<double>(p.j) + half) + g.jitter * uy / g.y_scale;
  *z = g.interval * (static_cast<double>(p.k) + half) + g.jitter * uz;
}

// PositionRow's vector form, lanes along i: each lane's operations are PositionOf's in its order,
// so the bits are the same; FirstAcceptedDraw keeps each lane's first hit (a draw misses the ball
// about half the time, so a 4-lane vector makes about 3.3 attempts against PositionOf's 1.9), and
// a lane that misses them all keeps PositionOf's direction (1, 0, 0). `sqrt` is the variant's
// vector square root.
template <int L, typename Sqrt>
inline __attribute__((always_inline)) void Row(const JitteredBccLattice::Geometry& g,
                                               int32_t i_begin, int32_t count, int32_t j, int32_t k,
                                               int32_t c, double* x, double* y, double* z,
                                               Sqrt sqrt) {
  using D = typename simd::Lanes<L>::D;
  using U = typename simd::Lanes<L>::U;
  using simd::Splat;
  U lane2;
  D lane_d;
  for (int l = 0; l < L; ++l) lane2[l] = 2 * static_cast<uint64_t>(l), lane_d[l] = l;
  const U j_bits = Splat<U>(static_cast<uint64_t>(int64_t{j}));
  const U k_term = Splat<U>(static_cast<uint64_t>(int64_t{k}) * kCellMultiplier);
  const D one = Splat<D>(1.0), zero = Splat<D>(0.0), scale = Splat<D>(kUnitScale);
  const D jitter = Splat<D>(g.jitter), interval = Splat<D>(g.interval);
  const double half = 0.5 * static_cast<double>(c);
  const D y_base = Splat<D>(g.vertical_interval * (static_cast<double>(j) + half));
  const D z_base = Splat<D>(g.interval * (static_cast<double>(k) + half));
  const D y_scale = Splat<D>(g.y_scale);
  const auto unit = [&](U bits) { return simd::ExactDouble<L>(bits & 0x1fffffULL) * scale - one; };
  for (int32_t n = 0; n < count; n += L) {
    // Lanes past `count` (in the last vector) compute garbage without UB and are not stored.
    const int64_t i0 = int64_t{i_begin} + n;
    const U ic = Splat<U>(static_cast<uint64_t>(i0) * 2 + static_cast<uint64_t>(c)) + lane2;
    const U cell = Mix64Of(HashCoordsPrefix(g.seed_mix, ic, j_bits) ^ k_term);
    D u[3] = {one, zero, zero};
    const D len2 = FirstAcceptedDraw<L, 3>(
        cell, kAttempts,
        [&](U h, D(&c)[3]) {
          c[0] = unit(h);
          c[1] = unit(h >> 21);
          c[2] = unit(h >> 42);
        },
        u);
    const D inv = one / sqrt(len2);
    const D vx = interval * (Splat<D>(static_cast<double>(i0)) + lane_d + Splat<D>(half)) +
                 jitter * (u[0] * inv);
    const D vy = y_base + jitter * (u[1] * inv) / y_scale;
    const D vz = z_base + jitter * (u[2] * inv);
    if (count - n >= L) {
      simd::Store(x + n, vx);
      simd::Store(y + n, vy);
      simd::Store(z + n, vz);
    } else {
      for (int l = 0; l < count - n; ++l) x[n + l] = vx[l], y[n + l] = vy[l], z[n + l] = vz[l];
    }
  }
}

// The baseline runs PositionOf point by point (SSE2 has no 64-bit multiply; see
// jittered_lattice.cc).
void RowBaseline(const JitteredBccLattice::Geometry& g, int32_t i_begin, int32_t count, int32_t j,
                 int32_t k, int32_t c, double* x, double* y, double* z) {
  for (int32_t n = 0; n < count; ++n) PositionOf(g, {i_begin + n, j, k, c}, x + n, y + n, z + n);
}

#if WORLDGEN_SIMD_DISPATCH
// Four points per vector on AVX-512 as on AVX2, for the reasons jittered_lattice.cc gives; here a
// vector of eight makes about 4.1 attempts (Zen 4: 98 M points/s with four lanes, against 50 M
// with eight and 68 M on AVX2; BM_BccRow).
__attribute__((target("avx512f,avx512dq,avx512vl"), flatten)) void RowAvx512(
    const JitteredBccLattice::Geometry& g, int32_t i_begin, int32_t count, int32_t j, int32_t k,
    int32_t c, double* x, double* y, double* z) {
  Row<4>(g, i_begin, count, j, k, c, x, y, z, simd::Sqrt4Lanes{});
}
__attribute__((target("avx2"), flatten)) void RowAvx2(const JitteredBccLattice::Geometry& g,
                                                      int32_t i_begin, int32_t count, int32_t j,
                                                      int32_t k, int32_t c, double* x, double* y,
                                                      double* z) {
  Row<4>(g, i_begin, count, j, k, c, x, y, z, simd::Sqrt4Lanes{});
}
#endif

const simd::Dispatcher<JitteredBccLattice::PositionRowFn>& RowVariants() {
  static const simd::Dispatcher<JitteredBccLattice::PositionRowFn> dispatcher(
      WORLDGEN_SIMD_VARIANT_FN(RowAvx512), WORLDGEN_SIMD_VARIANT_FN(RowAvx2), &RowBaseline);
  return dispatcher;
}

}  // namespace

JitteredBccLattice::JitteredBccLattice(uint64_t seed, double interval, double vertical_interval,
                                       double jitter_fraction)
    : g_{.seed_mix = Mix64(seed ^ kHashSeedSalt),
         .interval = interval,
         .vertical_interval = vertical_interval,
         .y_scale = interval / vertical_interval,
         .jitter = interval * jitter_fraction} {}

void JitteredBccLattice::Position(const BccIndex& p, double* x, double* y, double* z) const {
  PositionOf(g_, p, x, y, z);
}

void JitteredBccLattice::PositionRow(int32_t i_begin, int32_t count, int32_t j, int32_t k,
                                     int32_t c, double* x, double* y, double* z) const {
  RowVariants().chosen().run(g_, i_begin, count, j, k, c, x, y, z);
}

std::span<const BccRowVariant> BccRowVariants() { return RowVariants().variants(); }

absl::string_view DispatchedBccRowVariant() { return RowVariants().chosen().name; }

}  // namespace worldgen
