#include "engine/jittered_lattice.h"

#include <cmath>

#include "engine/hash.h"
#include "engine/rejection_draw.h"

namespace worldgen {
namespace {

// Attempts of the rejection draw in Position (a miss has probability 1 - pi/4 + 0.01 pi).
constexpr uint64_t kAttempts = 8;
// An attempt's candidate direction (a, b) is its hash's low and high 32 bits mapped to [-1, 1).
constexpr double kUnitScale = 2.0 / 4294967296.0;

// The scalar reference: Position of vertex (i, j) of a lattice of geometry g.
void PositionOf(const JitteredLattice::Geometry& g, int32_t i, int32_t j, double* x, double* z) {
  // A direction drawn uniformly from the unit disc by rejection (bounded retries), then normalized.
  // Only integer hashing, multiplication and sqrt (correctly rounded in IEEE) are involved.
  // Attempt k's hash is HashCoords(seed, i, j, k); the part before the salt is shared.
  const uint64_t prefix = HashCoordsPrefix(g.seed_mix, static_cast<uint64_t>(int64_t{i}),
                                           static_cast<uint64_t>(int64_t{j}));
  double ux = 1.0, uz = 0.0;
  for (uint64_t attempt = 0; attempt < kAttempts; ++attempt) {
    uint64_t h = Mix64(prefix ^ attempt);
    double a = static_cast<double>(h & 0xffffffffULL) * kUnitScale - 1.0;
    double b = static_cast<double>(h >> 32) * kUnitScale - 1.0;
    double len2 = a * a + b * b;
    if (len2 > 0.01 && len2 <= 1.0) {
      double inv = 1.0 / std::sqrt(len2);
      ux = a * inv;
      uz = b * inv;
      break;
    }
  }
  *x = g.interval * (static_cast<double>(i) + g.row_shift * static_cast<double>(j)) + g.jitter * ux;
  *z = g.row_height * static_cast<double>(j) + g.jitter * uz;
}

// PositionRow's vector form: the operations on each lane are PositionOf's in its order, so the
// bits are the same; FirstAcceptedDraw keeps each lane's first hit (78% of 4-lane vectors stop
// after two attempts), and a lane that misses them all keeps PositionOf's direction (1, 0).
#define WORLDGEN_LATTICE_INLINE inline __attribute__((always_inline))

// `sqrt` is the variant's correctly rounded vector square root.
template <int L, typename Sqrt>
WORLDGEN_LATTICE_INLINE void Row(const JitteredLattice::Geometry& g, int32_t i_begin, int32_t count,
                                 int32_t j, double* x, double* z, Sqrt sqrt) {
  using D = typename simd::Lanes<L>::D;
  using U = typename simd::Lanes<L>::U;
  using simd::Splat;
  U lane;
  D lane_d;
  for (int l = 0; l < L; ++l) lane[l] = static_cast<uint64_t>(l), lane_d[l] = l;
  const U j_bits = Splat<U>(static_cast<uint64_t>(int64_t{j}));
  const D one = Splat<D>(1.0), zero = Splat<D>(0.0), scale = Splat<D>(kUnitScale);
  const D jitter = Splat<D>(g.jitter), interval = Splat<D>(g.interval);
  const D shift = Splat<D>(g.row_shift * static_cast<double>(j));
  const D row_z = Splat<D>(g.row_height * static_cast<double>(j));
  for (int32_t k = 0; k < count; k += L) {
    // Lanes past `count` (in the last vector) compute garbage without UB and are not stored.
    const int64_t i0 = int64_t{i_begin} + k;
    const U prefix =
        HashCoordsPrefix(g.seed_mix, Splat<U>(static_cast<uint64_t>(i0)) + lane, j_bits);
    D u[2] = {one, zero};
    const D len2 = FirstAcceptedDraw<L, 2>(
        prefix, kAttempts,
        [&](U h, D(&c)[2]) {
          c[0] = simd::ExactDouble<L>(h & 0xffffffffULL) * scale - one;
          c[1] = simd::ExactDouble<L>(h >> 32) * scale - one;
        },
        u);
    const D inv = one / sqrt(len2);
    const D vx =
        interval * (Splat<D>(static_cast<double>(i0)) + lane_d + shift) + jitter * (u[0] * inv);
    const D vz = row_z + jitter * (u[1] * inv);
    if (count - k >= L) {
      simd::Store(x + k, vx);
      simd::Store(z + k, vz);
    } else {
      for (int l = 0; l < count - k; ++l) x[k + l] = vx[l], z[k + l] = vz[l];
    }
  }
}

// The baseline runs PositionOf vertex by vertex: SSE2 has no 64-bit multiply, and the hash's
// emulated on two registers of 2 lanes is slower than the scalar one (BM_LatticeRow).
void RowBaseline(const JitteredLattice::Geometry& g, int32_t i_begin, int32_t count, int32_t j,
                 double* x, double* z) {
  for (int32_t k = 0; k < count; ++k) PositionOf(g, i_begin + k, j, x + k, z + k);
}

#if WORLDGEN_SIMD_DISPATCH
// AVX-512 draws 4 vertices per vector too, in 256-bit registers: what it adds is the hash's 64-bit
// lane multiply (vpmullq), which AVX2 emulates from 32-bit ones. Eight lanes ran at 89 M vertices/s
// on a Zen 4 EPYC where four run at 185 M (BM_LatticeRow; AVX2 117 M): Zen 4 splits a 512-bit
// operation into two 256-bit halves, so eight lanes buy no throughput there, and a vector waits for
// the slowest of its draws (2.54 attempts for eight lanes, 2.30 for four).
__attribute__((target("avx512f,avx512dq,avx512vl"), flatten)) void RowAvx512(
    const JitteredLattice::Geometry& g, int32_t i_begin, int32_t count, int32_t j, double* x,
    double* z) {
  Row<4>(g, i_begin, count, j, x, z, simd::Sqrt4Lanes{});
}
__attribute__((target("avx2"), flatten)) void RowAvx2(const JitteredLattice::Geometry& g,
                                                      int32_t i_begin, int32_t count, int32_t j,
                                                      double* x, double* z) {
  Row<4>(g, i_begin, count, j, x, z, simd::Sqrt4Lanes{});
}
#endif

const simd::Dispatcher<JitteredLattice::PositionRowFn>& RowVariants() {
  static const simd::Dispatcher<JitteredLattice::PositionRowFn> dispatcher(
      WORLDGEN_SIMD_VARIANT_FN(RowAvx512), WORLDGEN_SIMD_VARIANT_FN(RowAvx2), &RowBaseline);
  return dispatcher;
}

}  // namespace

JitteredLattice::JitteredLattice(uint64_t seed, double interval, double jitter_fraction,
                                 Shape shape)
    : shape_(shape),
      g_{.seed_mix = Mix64(seed ^ kHashSeedSalt),
         .interval = interval,
         .jitter = interval * jitter_fraction,
         .row_height = shape == Shape::kTriangular ? interval * (kSqrt3 * 0.5) : interval,
         .row_shift = shape == Shape::kTriangular ? 0.5 : 0.0} {}

void JitteredLattice::Position(int32_t i, int32_t j, double* x, double* z) const {
  PositionOf(g_, i, j, x, z);
}

void JitteredLattice::PositionRow(int32_t i_begin, int32_t count, int32_t j, double* x,
                                  double* z) const {
  RowVariants().chosen().run(g_, i_begin, count, j, x, z);
}

std::span<const LatticeRowVariant> LatticeRowVariants() { return RowVariants().variants(); }

absl::string_view DispatchedLatticeRowVariant() { return RowVariants().chosen().name; }

LatticeIndex JitteredLattice::NearestVertex(double x, double z) const {
  double fj = z / g_.row_height;
  double fi = x / g_.interval - g_.row_shift * fj;
  int32_t i0 = static_cast<int32_t>(std::floor(fi));
  int32_t j0 = static_cast<int32_t>(std::floor(fj));
  // The nearest vertex is a corner of the rhombus (square) (i0..i0+1, j0..j0+1) that contains the
  // point.
  LatticeIndex best{i0, j0};
  double best_d2 = -1.0;
  for (int32_t dj = 0; dj <= 1; ++dj) {
    for (int32_t di = 0; di <= 1; ++di) {
      double vx = g_.interval *
                  (static_cast<double>(i0 + di) + g_.row_shift * static_cast<double>(j0 + dj));
      double vz = g_.row_height * static_cast<double>(j0 + dj);
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
