#include "engine/noise.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>

#include "absl/container/inlined_vector.h"
#include "engine/hash.h"
#include "engine/simd.h"

namespace worldgen {
namespace {

// Skew and unskew factors between the square grid and the triangular simplex grid:
// (sqrt(3) - 1) / 2 and (3 - sqrt(3)) / 6, written out so no libm call is involved.
constexpr double kSkew = 0.36602540378443865;
constexpr double kUnskew = 0.21132486540518713;

// Unit gradients at 7.5 + 15k degrees: 24 directions, none axis-aligned, so the noise has no
// preferred axis.
constexpr double kGradients[24][2] = {
    {0.9914448613738104, 0.13052619222005157},   {0.9238795325112867, 0.3826834323650898},
    {0.7933533402912352, 0.6087614290087207},    {0.6087614290087207, 0.7933533402912352},
    {0.38268343236508984, 0.9238795325112867},   {0.1305261922200517, 0.9914448613738104},
    {-0.1305261922200516, 0.9914448613738104},   {-0.3826834323650897, 0.9238795325112867},
    {-0.6087614290087207, 0.7933533402912352},   {-0.793353340291235, 0.6087614290087209},
    {-0.9238795325112867, 0.3826834323650899},   {-0.9914448613738104, 0.13052619222005157},
    {-0.9914448613738105, -0.13052619222005132}, {-0.9238795325112868, -0.38268343236508967},
    {-0.7933533402912352, -0.6087614290087207},  {-0.6087614290087209, -0.7933533402912349},
    {-0.3826834323650895, -0.9238795325112868},  {-0.13052619222005163, -0.9914448613738104},
    {0.13052619222005127, -0.9914448613738105},  {0.38268343236509, -0.9238795325112866},
    {0.6087614290087205, -0.7933533402912352},   {0.7933533402912349, -0.6087614290087209},
    {0.9238795325112868, -0.38268343236508956},  {0.9914448613738104, -0.13052619222005168},
};

// kGradients' components as separate tables, for vector lookups.
struct GradientComponents {
  double x[24];
  double z[24];
};
constexpr GradientComponents SplitGradients() {
  GradientComponents c{};
  for (int k = 0; k < 24; ++k) {
    c.x[k] = kGradients[k][0];
    c.z[k] = kGradients[k][1];
  }
  return c;
}
alignas(64) constexpr GradientComponents kGradientComponents = SplitGradients();

// Scales the raw sum of the three corner contributions to [-1, 1] (measured raw maximum ~0.0100 for
// this gradient set; see noise_test.cc).
constexpr double kOutputScale = 98.0;

// A floored coordinate as a lattice index. Outside int64_t's range (and for NaN) the conversion
// would be undefined; it gives INT64_MIN there, which is what x86's conversion instruction
// returns, so no result changes.
inline int64_t CellIndex(double floored) {
  return floored >= -9223372036854775808.0 && floored < 9223372036854775808.0
             ? static_cast<int64_t>(floored)
             : std::numeric_limits<int64_t>::min();
}

// Contribution of one simplex corner at offset (dx, dz) from the sample point.
inline double Corner(uint64_t seed, int64_t ci, int64_t cj, double dx, double dz) {
  double falloff = 0.5 - dx * dx - dz * dz;
  if (falloff <= 0.0) return 0.0;
  const double* g = kGradients[HashCoords(seed, ci, cj) % 24];
  double f2 = falloff * falloff;
  return f2 * f2 * (g[0] * dx + g[1] * dz);
}

}  // namespace

double SimplexNoise2D(uint64_t seed, double x, double z) {
  // Find the skewed cell and the simplex (triangle) within it.
  double skew = (x + z) * kSkew;
  double fi = std::floor(x + skew);
  double fj = std::floor(z + skew);
  int64_t i = CellIndex(fi);
  int64_t j = CellIndex(fj);
  double unskew = (fi + fj) * kUnskew;
  double dx0 = x - (fi - unskew);
  double dz0 = z - (fj - unskew);
  int64_t step_i = dx0 > dz0 ? 1 : 0;
  int64_t step_j = 1 - step_i;
  double dx1 = dx0 - static_cast<double>(step_i) + kUnskew;
  double dz1 = dz0 - static_cast<double>(step_j) + kUnskew;
  double dx2 = dx0 - 1.0 + 2.0 * kUnskew;
  double dz2 = dz0 - 1.0 + 2.0 * kUnskew;

  double sum = Corner(seed, i, j, dx0, dz0);
  sum += Corner(seed, i + step_i, j + step_j, dx1, dz1);
  sum += Corner(seed, i + 1, j + 1, dx2, dz2);
  double value = sum * kOutputScale;
  return value > 1.0 ? 1.0 : (value < -1.0 ? -1.0 : value);
}

double FractalNoise2D(uint64_t seed, double x, double z, double frequency, int octaves,
                      double lacunarity, double gain) {
  double sum = 0.0;
  double amplitude = 1.0;
  double amplitude_total = 0.0;
  double f = frequency;
  for (int octave = 0; octave < octaves; ++octave) {
    sum +=
        amplitude * SimplexNoise2D(DeriveSeed(seed, static_cast<uint64_t>(octave)), x * f, z * f);
    amplitude_total += amplitude;
    amplitude *= gain;
    f *= lacunarity;
  }
  return sum / amplitude_total;
}

namespace {

// Skew and unskew factors of the cubic grid in 3D: 1/3 and 1/6.
constexpr double kSkew3 = 1.0 / 3.0;
constexpr double kUnskew3 = 1.0 / 6.0;
constexpr double kInvSqrt2 = 0.7071067811865476;
// The 12 edge midpoints of the cube, normalized.
constexpr double kGradients3[12][3] = {
    {kInvSqrt2, kInvSqrt2, 0},   {-kInvSqrt2, kInvSqrt2, 0},  {kInvSqrt2, -kInvSqrt2, 0},
    {-kInvSqrt2, -kInvSqrt2, 0}, {kInvSqrt2, 0, kInvSqrt2},   {-kInvSqrt2, 0, kInvSqrt2},
    {kInvSqrt2, 0, -kInvSqrt2},  {-kInvSqrt2, 0, -kInvSqrt2}, {0, kInvSqrt2, kInvSqrt2},
    {0, -kInvSqrt2, kInvSqrt2},  {0, kInvSqrt2, -kInvSqrt2},  {0, -kInvSqrt2, -kInvSqrt2},
};
// Scales the raw sum of the four corner contributions to [-1, 1] (measured raw maximum about
// 0.0091 for this gradient set and falloff, so about 0.91 after scaling; the clamp below keeps any
// rarer peak in range; noise_test.cc checks the range).
constexpr double kOutputScale3 = 100.0;

// A point's simplex in 3D, which does not depend on the seed: its four corners' lattice
// coordinates, offsets and falloffs (the corner contributes only where its falloff is positive).
struct Simplex3 {
  int64_t ci[4], cj[4], ck[4];
  double dx[4], dy[4], dz[4];
  double falloff[4];
};

inline Simplex3 Simplex3At(double x, double y, double z) {
  Simplex3 s;
  const double skew = (x + y + z) * kSkew3;
  const double fi = std::floor(x + skew), fj = std::floor(y + skew), fk = std::floor(z + skew);
  const int64_t i = CellIndex(fi), j = CellIndex(fj), k = CellIndex(fk);
  const double unskew = (fi + fj + fk) * kUnskew3;
  const double x0 = x - (fi - unskew), y0 = y - (fj - unskew), z0 = z - (fk - unskew);
  // The tetrahedron: corners stepped along the axes in decreasing order of the offsets, ties
  // going to x before y before z. Written as comparisons rather than branches: which of the six
  // tetrahedra a point falls in is a coin toss the branch predictor loses.
  const bool x_y = x0 >= y0, x_z = x0 >= z0, y_z = y0 >= z0;
  const int64_t i1 = x_y & x_z, j1 = !x_y & y_z, k1 = !x_z & !y_z;
  const int64_t i2 = x_y | x_z, j2 = !x_y | y_z, k2 = !x_z | !y_z;
  const auto corner = [&](int c, int64_t di, int64_t dj, int64_t dk, double dx, double dy,
                          double dz) {
    s.ci[c] = i + di, s.cj[c] = j + dj, s.ck[c] = k + dk;
    s.dx[c] = dx, s.dy[c] = dy, s.dz[c] = dz;
    s.falloff[c] = 0.5 - dx * dx - dy * dy - dz * dz;
  };
  corner(0, 0, 0, 0, x0, y0, z0);
  corner(1, i1, j1, k1, x0 - static_cast<double>(i1) + kUnskew3,
         y0 - static_cast<double>(j1) + kUnskew3, z0 - static_cast<double>(k1) + kUnskew3);
  corner(2, i2, j2, k2, x0 - static_cast<double>(i2) + 2.0 * kUnskew3,
         y0 - static_cast<double>(j2) + 2.0 * kUnskew3,
         z0 - static_cast<double>(k2) + 2.0 * kUnskew3);
  corner(3, 1, 1, 1, x0 - 1.0 + 3.0 * kUnskew3, y0 - 1.0 + 3.0 * kUnskew3,
         z0 - 1.0 + 3.0 * kUnskew3);
  return s;
}

// The index into kGradients3 of corner (i, j, k) under the seed whose mix is `seed_mix`.
inline int Gradient3Index(uint64_t seed_mix, int64_t i, int64_t j, int64_t k) {
  return static_cast<int>(HashCoordsFromSeedMix(seed_mix, static_cast<uint64_t>(i),
                                                static_cast<uint64_t>(j),
                                                static_cast<uint64_t>(k)) %
                          12);
}

// SimplexNoise3D of the seed whose mix is `seed_mix` at the point of `s`; gradient(seed_mix, i, j,
// k) is Gradient3Index's value, computed or remembered.
template <typename Gradient>
inline double Simplex3Value(const Simplex3& s, uint64_t seed_mix, Gradient gradient) {
  const auto corner = [&](int c) {
    const double falloff = s.falloff[c];
    if (falloff <= 0.0) return 0.0;
    const double* g = kGradients3[gradient(seed_mix, s.ci[c], s.cj[c], s.ck[c])];
    const double f2 = falloff * falloff;
    return f2 * f2 * (g[0] * s.dx[c] + g[1] * s.dy[c] + g[2] * s.dz[c]);
  };
  double sum = corner(0);  // Not 0.0 + corner(0): a first corner of -0.0 keeps its sign.
  sum += corner(1);
  sum += corner(2);
  sum += corner(3);
  const double value = sum * kOutputScale3;
  return value > 1.0 ? 1.0 : (value < -1.0 ? -1.0 : value);
}

// Simplex3Value for a fractal sum, without a branch per corner: a corner whose falloff is not
// positive weighs +0.0 instead of returning +0.0, so its contribution is +0.0 or -0.0 and the value
// differs from Simplex3Value's at most in the sign of a zero. A fractal sum starts at +0.0 and
// never becomes -0.0 (adding a zero of either sign to +0.0 gives +0.0), so that sign never reaches
// it: the fractal is Simplex3Value's bit for bit.
template <typename Gradient>
inline double Simplex3FractalTerm(const Simplex3& s, uint64_t seed_mix, Gradient gradient) {
  const auto corner = [&](int c) {
    const double falloff = s.falloff[c] > 0.0 ? s.falloff[c] : 0.0;
    const double* g = kGradients3[gradient(seed_mix, s.ci[c], s.cj[c], s.ck[c])];
    const double f2 = falloff * falloff;
    return f2 * f2 * (g[0] * s.dx[c] + g[1] * s.dy[c] + g[2] * s.dz[c]);
  };
  double sum = corner(0);
  sum += corner(1);
  sum += corner(2);
  sum += corner(3);
  const double value = sum * kOutputScale3;
  return value > 1.0 ? 1.0 : (value < -1.0 ? -1.0 : value);
}

}  // namespace

double SimplexNoise3D(uint64_t seed, double x, double y, double z) {
  return Simplex3Value(Simplex3At(x, y, z), Mix64(seed ^ kHashSeedSalt), &Gradient3Index);
}

double FractalNoise3D(uint64_t seed, double x, double y, double z, double frequency, int octaves,
                      double lacunarity, double gain) {
  double out;
  FractalNoise3DMulti(&seed, 1, x, y, z, frequency, octaves, &out, lacunarity, gain);
  return out;
}

namespace {

// FractalNoise3DMulti at the points (xs[k], ys[k], zs[k]) into out[k * seed_count + s], with
// gradient(seed_mix, i, j, k) giving each corner's gradient index.
template <typename Gradient>
void FractalNoise3DPoints(const uint64_t* seeds, size_t seed_count, const double* xs,
                          const double* ys, const double* zs, size_t n, double frequency,
                          int octaves, double* out, double lacunarity, double gain,
                          Gradient gradient) {
  constexpr size_t kSeeds = 8;
  for (size_t first = 0; first < seed_count; first += kSeeds) {
    const size_t count = std::min(kSeeds, seed_count - first);
    // Each seed's octave mixes, the same for every point.
    absl::InlinedVector<uint64_t, kSeeds * 8> mixes(static_cast<size_t>(octaves) * kSeeds);
    for (int octave = 0; octave < octaves; ++octave) {
      for (size_t s = 0; s < count; ++s) {
        const uint64_t seed = DeriveSeed(seeds[first + s], static_cast<uint64_t>(octave));
        mixes[static_cast<size_t>(octave) * kSeeds + s] = Mix64(seed ^ kHashSeedSalt);
      }
    }
    for (size_t k = 0; k < n; ++k) {
      double sum[kSeeds] = {};
      double amplitude = 1.0, amplitude_total = 0.0, f = frequency;
      for (int octave = 0; octave < octaves; ++octave) {
        const Simplex3 simplex = Simplex3At(xs[k] * f, ys[k] * f, zs[k] * f);
        for (size_t s = 0; s < count; ++s) {
          sum[s] +=
              amplitude * Simplex3FractalTerm(
                              simplex, mixes[static_cast<size_t>(octave) * kSeeds + s], gradient);
        }
        amplitude_total += amplitude;
        amplitude *= gain;
        f *= lacunarity;
      }
      for (size_t s = 0; s < count; ++s) out[k * seed_count + first + s] = sum[s] / amplitude_total;
    }
  }
}

// Gradient indices of recently used corners, direct-mapped on the low bits of the corner and the
// seed's mix, one table per thread. Points close together (a cache tile's, a chunk gather's) share
// most corners at cave frequencies, and a corner's hash costs eight 64-bit multiplies.
class Gradient3Memo {
 public:
  int operator()(uint64_t seed_mix, int64_t i, int64_t j, int64_t k) {
    const uint64_t slot = (static_cast<uint64_t>(i) & 7) | (static_cast<uint64_t>(j) & 7) << 3 |
                          (static_cast<uint64_t>(k) & 7) << 6 | (seed_mix & 3) << 9;
    Entry& e = entries_[slot ^ ((seed_mix >> 2) & (kEntries - 1))];
    if (!e.valid || e.i != i || e.j != j || e.k != k || e.seed_mix != seed_mix) {
      e = {seed_mix, i, j, k, static_cast<int8_t>(Gradient3Index(seed_mix, i, j, k)), true};
    }
    return e.gradient;
  }

 private:
  static constexpr size_t kEntries = 2048;
  struct Entry {
    uint64_t seed_mix;
    int64_t i, j, k;
    int8_t gradient;
    bool valid;
  };
  Entry entries_[kEntries] = {};
};

}  // namespace

void FractalNoise3DMulti(const uint64_t* seeds, size_t seed_count, double x, double y, double z,
                         double frequency, int octaves, double* out, double lacunarity,
                         double gain) {
  FractalNoise3DPoints(seeds, seed_count, &x, &y, &z, 1, frequency, octaves, out, lacunarity, gain,
                       &Gradient3Index);
}

namespace {

// FractalNoise3DMultiBatch point by point, each corner's gradient remembered in a per-thread
// table: the baseline variant (and AVX2's, see Noise3DBatches).
void Noise3DBatchScalar(const uint64_t* seeds, size_t seed_count, const double* xs,
                        const double* ys, const double* zs, size_t n, double frequency, int octaves,
                        double* out, double lacunarity, double gain) {
  // On the heap: a thread_local table of 80 KiB would sit in every thread's static TLS block,
  // which glibc carves out of each thread's stack, threads that never blend included (the metrics
  // server's civetweb workers run on ~100 KiB stacks and overflowed).
  thread_local std::unique_ptr<Gradient3Memo> memo;
  if (memo == nullptr) memo = std::make_unique<Gradient3Memo>();
  Gradient3Memo* const table = memo.get();
  FractalNoise3DPoints(seeds, seed_count, xs, ys, zs, n, frequency, octaves, out, lacunarity, gain,
                       [table](uint64_t seed_mix, int64_t i, int64_t j, int64_t k) {
                         return (*table)(seed_mix, i, j, k);
                       });
}

}  // namespace

namespace {

// The batch's helpers must be inlined into each variant to be compiled for its ISA. Being always
// inlined they never pass vectors across a call, so GCC's -Wpsabi notes about 32- and 64-byte
// vector arguments (a different ABI with and without AVX) do not apply; engine/CMakeLists.txt turns
// them off for this file.
#define WORLDGEN_NOISE_INLINE inline __attribute__((always_inline))

// 1.5 * 2^52: adding it to |v| < 2^51 leaves v rounded to an integer in the low mantissa bits.
constexpr double kRoundMagic = 6755399441055744.0;
// A batch point whose scaled coordinates (x * f, z * f) stay below 2^49 in magnitude in every
// octave has skewed coordinates below 2^51, where Floor is exact. Anything else (huge, infinite,
// NaN) is recomputed by the scalar path, whose float-to-integer conversion the vector code does not
// imitate.
constexpr double kBatchCoordinateLimit = 562949953421312.0;  // 2^49

// Octaves up to this frequency (cycles per block) look gradients up through VertexGradients when a
// vector's points are too far apart for one gradient patch. Above it neighbouring columns rarely
// share vertices within the table's reach, and hashing directly on a change of triangle is faster
// (measured with blend_bench's BM_HeightNoise).
constexpr double kCacheMaxFrequency = 0.5;

// A gradient patch covers 4 x 4 lattice vertices: the cells (i, j) with i - base_i, j - base_j in
// [0, 2] and their corners. Vertex (base_i + a, base_j + b) is entry a + 4 * b.
constexpr int kPatchSide = 4;
constexpr int kPatchVertices = kPatchSide * kPatchSide;
constexpr uint64_t kPatchMaxCellOffset = kPatchSide - 2;
// Vectors that skip the patch after one whose points were too far apart for it, or after a patch
// that served fewer than kPatchMinUses vectors before it had to move.
constexpr int kPatchRetryVectors = 7;
constexpr int kPatchMinUses = 4;

using simd::Lanes;
using simd::Load;
using simd::Splat;
using simd::Store;

// The instruction sets the batch is compiled for. kAvx512 uses 8 lanes and a few AVX-512
// instructions the vector extensions do not express (floor, double-to-integer, mask tests); the
// others use 4 lanes and portable code only.
enum class Isa { kBaseline, kAvx2, kAvx512 };

template <Isa kIsa>
inline constexpr int kLanesOf = kIsa == Isa::kAvx512 ? 8 : 4;

// v with lane l moved to lane l ^ kHalf: one step of a reduction over the lanes.
template <int kHalf, typename V>
WORLDGEN_NOISE_INLINE V SwapHalves(V v) {
  using Index = decltype(v < v);
  if constexpr (sizeof(V) / sizeof(v[0]) == 8) {
    return simd::Shuffle(v, Index{0 ^ kHalf, 1 ^ kHalf, 2 ^ kHalf, 3 ^ kHalf, 4 ^ kHalf, 5 ^ kHalf,
                                  6 ^ kHalf, 7 ^ kHalf});
  } else {
    static_assert(sizeof(V) / sizeof(v[0]) == 4);
    return simd::Shuffle(v, Index{0 ^ kHalf, 1 ^ kHalf, 2 ^ kHalf, 3 ^ kHalf});
  }
}

// The bitwise OR of all lanes, by halving shuffles (no lane extraction).
template <typename V>
WORLDGEN_NOISE_INLINE auto OrLanes(V v) {
  if constexpr (sizeof(V) / sizeof(v[0]) == 8) v |= SwapHalves<4>(v);
  v |= SwapHalves<2>(v);
  v |= SwapHalves<1>(v);
  return v[0];
}

// True if every lane of the mask is set.
template <typename V>
WORLDGEN_NOISE_INLINE bool AllLanes(V mask) {
  if constexpr (sizeof(V) / sizeof(mask[0]) == 8) mask &= SwapHalves<4>(mask);
  mask &= SwapHalves<2>(mask);
  mask &= SwapHalves<1>(mask);
  return mask[0] != 0;
}

// std::floor of each lane, and the same value as an integer; exact for |v| < 2^51. v + kRoundMagic
// is an integer next to v (whichever way the rounding mode rounds), so subtracting the constant
// again gives that integer exactly and one comparison corrects it down to floor(v). Its bits minus
// the constant's bits are the same integer in two's complement.
template <int L>
WORLDGEN_NOISE_INLINE typename Lanes<L>::D Floor(typename Lanes<L>::D v,
                                                 typename Lanes<L>::U* integer) {
  using D = typename Lanes<L>::D;
  using I = typename Lanes<L>::I;
  using U = typename Lanes<L>::U;
  const D magic = Splat<D>(kRoundMagic);
  const D shifted = v + magic;
  D r = shifted - magic;
  const I rounded_up = r > v;  // -1 where true.
  r = rounded_up ? r - Splat<D>(1.0) : r;
  *integer = __builtin_bit_cast(U, shifted) - __builtin_bit_cast(U, magic) +
             __builtin_bit_cast(U, rounded_up);
  return v == Splat<D>(0.0) ? v : r;  // The constant turns -0.0 into +0.0; std::floor keeps -0.0.
}

#if WORLDGEN_SIMD_DISPATCH
// AVX-512 forms of Floor and of the patch test, for the AVX-512 variant only. Not always_inline:
// the generic helpers that call them are compiled for the baseline target, where GCC refuses to
// force them in; the variant is `flatten`, which inlines them once everything sits in its body.
#define WORLDGEN_NOISE_AVX512 inline __attribute__((target("avx512f,avx512dq,avx512vl")))

// std::floor of each lane (vrndscalepd rounds toward -infinity exactly, keeping -0.0) and the same
// value as an integer (exact: it is an integer below 2^51 in range; 2^63 as bits otherwise).
WORLDGEN_NOISE_AVX512 Lanes<8>::D Floor8(Lanes<8>::D v, Lanes<8>::U* integer) {
  const __m512d x = __builtin_bit_cast(__m512d, v);
  // The masked form with every lane selected: the unmasked one trips GCC 12's uninitialized
  // warning.
  const __m512d r =
      _mm512_mask_roundscale_pd(x, 0xff, x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  *integer = __builtin_bit_cast(Lanes<8>::U, _mm512_cvttpd_epi64(r));
  return __builtin_bit_cast(Lanes<8>::D, r);
}

// True if every lane has di <= limit and dj <= limit (unsigned).
WORLDGEN_NOISE_AVX512 bool AllWithin8(Lanes<8>::U di, Lanes<8>::U dj, uint64_t limit) {
  const __m512i l = _mm512_set1_epi64(static_cast<long long>(limit));
  return (_mm512_cmple_epu64_mask(__builtin_bit_cast(__m512i, di), l) &
          _mm512_cmple_epu64_mask(__builtin_bit_cast(__m512i, dj), l)) == 0xff;
}

// q % 3 in every lane, for q < 2^62 (a hash shifted right by 2 or more), without a division: the
// 32-, 16-, 8-, 4- and 2-bit halves of q are folded into a sum (each half's weight a power of 4,
// so 1 mod 3) that ends below 6, then one conditional subtraction.
template <typename U>
WORLDGEN_NOISE_INLINE U Mod3(U q) {
  q = (q & 0xffffffffULL) + (q >> 32);
  q = (q & 0xffffULL) + (q >> 16);
  q = (q & 0xffULL) + (q >> 8);
  q = (q & 0xfULL) + (q >> 4);
  q = (q & 3ULL) + (q >> 2);
  q = (q & 3ULL) + (q >> 2);
  q = (q & 3ULL) + (q >> 2);
  return q >= 3ULL ? q - 3ULL : q;
}

// The gradient of vertex (i[l], j[l]) in every lane: kGradients[HashCoords(seed, i, j) % 24], with
// seed_mix = Mix64(seed ^ kHashSeedSalt). The hash is HashCoords' own operations on 8 lanes
// (vpmullq); h % 24 = 8 * ((h >> 3) % 3) + (h & 7).
WORLDGEN_NOISE_AVX512 void HashedGradients8(uint64_t seed_mix, Lanes<8>::U i, Lanes<8>::U j,
                                            Lanes<8>::D* gx, Lanes<8>::D* gz) {
  using U = Lanes<8>::U;
  using I = Lanes<8>::I;
  using D = Lanes<8>::D;
  const U h = HashCoordsFromSeedMix(seed_mix, i, j);
  const U q = Mod3(h >> 3);
  const I index = __builtin_bit_cast(I, (q << 3) + (h & 7ULL));
  const I high = index >= int64_t{16};
  const double* x = kGradientComponents.x;
  const double* z = kGradientComponents.z;
  *gx = high ? simd::Shuffle(Load<D>(x + 16), index)
             : simd::Shuffle(Load<D>(x), Load<D>(x + 8), index);
  *gz = high ? simd::Shuffle(Load<D>(z + 16), index)
             : simd::Shuffle(Load<D>(z), Load<D>(z + 8), index);
}
#endif

// The seed-independent part of one octave of SimplexNoise2D at L points: the skewed cell (i, j),
// which triangle of it (x_first: the middle corner is (i + 1, j)), each corner's offset from the
// point and its weight w = falloff^4, or 0 where falloff <= 0.
//
// A corner's contribution is then w * (gx * dx + gz * dz), the scalar's f2 * f2 * (g . d) with the
// product f2 * f2 shared by every seed. Where the scalar returns +0.0 (falloff <= 0) this gives
// +0.0 or -0.0; the sign of a zero never reaches FractalNoise2D's result: a zero contribution
// leaves the simplex sum's value unchanged (up to the sign of a zero sum), clamping and scaling
// keep it, and the fractal sum starts at +0.0, which adding either zero leaves +0.0.
template <int L>
struct Geometry {
  using D = typename Lanes<L>::D;
  using I = typename Lanes<L>::I;
  using U = typename Lanes<L>::U;
  U i, j;
  I x_first;
  D dx0, dz0, dx1, dz1, dx2, dz2;
  D w0, w1, w2;
};

template <int L>
WORLDGEN_NOISE_INLINE typename Lanes<L>::D CornerWeight(typename Lanes<L>::D dx,
                                                        typename Lanes<L>::D dz) {
  using D = typename Lanes<L>::D;
  const D falloff = Splat<D>(0.5) - dx * dx - dz * dz;
  const D f2 = falloff * falloff;
  return falloff <= Splat<D>(0.0) ? Splat<D>(0.0) : f2 * f2;
}

// SimplexNoise2D's geometry at the points (x * f, z * f): same operations, same order.
template <Isa kIsa, int L = kLanesOf<kIsa>>
WORLDGEN_NOISE_INLINE void ComputeGeometry(typename Lanes<L>::D x, typename Lanes<L>::D z, double f,
                                           Geometry<L>* g) {
  using D = typename Lanes<L>::D;
  const D sx = x * Splat<D>(f);
  const D sz = z * Splat<D>(f);
  const D skew = (sx + sz) * Splat<D>(kSkew);
  D fi, fj;
#if WORLDGEN_SIMD_DISPATCH
  if constexpr (kIsa == Isa::kAvx512) {
    fi = Floor8(sx + skew, &g->i);
    fj = Floor8(sz + skew, &g->j);
  } else
#endif
  {
    fi = Floor<L>(sx + skew, &g->i);
    fj = Floor<L>(sz + skew, &g->j);
  }
  const D unskew = (fi + fj) * Splat<D>(kUnskew);
  const D dx0 = sx - (fi - unskew);
  const D dz0 = sz - (fj - unskew);
  const D zero = Splat<D>(0.0), one = Splat<D>(1.0);
  g->x_first = dx0 > dz0;
  g->dx0 = dx0;
  g->dz0 = dz0;
  g->dx1 = dx0 - (g->x_first ? one : zero) + Splat<D>(kUnskew);
  g->dz1 = dz0 - (g->x_first ? zero : one) + Splat<D>(kUnskew);
  g->dx2 = dx0 - one + Splat<D>(2.0 * kUnskew);
  g->dz2 = dz0 - one + Splat<D>(2.0 * kUnskew);
  g->w0 = CornerWeight<L>(g->dx0, g->dz0);
  g->w1 = CornerWeight<L>(g->dx1, g->dz1);
  g->w2 = CornerWeight<L>(g->dx2, g->dz2);
}

// One seed's SimplexNoise2D at the geometry's points given the three corners' gradients: the corner
// sum in the scalar's order, scaled and clamped.
template <int L>
WORLDGEN_NOISE_INLINE typename Lanes<L>::D SimplexValue(
    const Geometry<L>& g, typename Lanes<L>::D gx0, typename Lanes<L>::D gz0,
    typename Lanes<L>::D gx1, typename Lanes<L>::D gz1, typename Lanes<L>::D gx2,
    typename Lanes<L>::D gz2) {
  using D = typename Lanes<L>::D;
  D sum = g.w0 * (gx0 * g.dx0 + gz0 * g.dz0);
  sum += g.w1 * (gx1 * g.dx1 + gz1 * g.dz1);
  sum += g.w2 * (gx2 * g.dx2 + gz2 * g.dz2);
  const D value = sum * Splat<D>(kOutputScale);
  const D one = Splat<D>(1.0), minus_one = Splat<D>(-1.0);
  return value > one ? one : (value < minus_one ? minus_one : value);
}

// Lanes l of table[index[l]], index in [0, 16). With kPermute the table sits in registers and one
// (8 lanes) or two (4 lanes) two-source permutes select from it: AVX-512's vpermt2pd.
template <int L, bool kPermute>
WORLDGEN_NOISE_INLINE typename Lanes<L>::D Lookup16(const double* table,
                                                    typename Lanes<L>::I index) {
  using D = typename Lanes<L>::D;
  using I = typename Lanes<L>::I;
  if constexpr (kPermute && L == 8) {
    return simd::Shuffle(Load<D>(table), Load<D>(table + 8), index);
  } else if constexpr (kPermute && L == 4) {
    const D low = simd::Shuffle(Load<D>(table), Load<D>(table + 4), index);
    const D high = simd::Shuffle(Load<D>(table + 8), Load<D>(table + 12), index);
    return (index & Splat<I>(int64_t{8})) != Splat<I>(int64_t{0}) ? high : low;
  } else {
    D v;
    for (int l = 0; l < L; ++l) v[l] = table[index[l]];
    return v;
  }
}

// Gradients of recently hashed lattice vertices, direct-mapped on the low bits of (i, j) and the
// seed's slot in its pass. For vectors whose points are too far apart for a patch: at height-noise
// frequencies a chunk's columns touch a few dozen vertices, each shared by many columns.
class VertexGradients {
 public:
  VertexGradients() {
    for (Entry& e : entries_) e.tag = -1;  // Matches no (octave, slot): every slot starts empty.
  }

  // Row of kGradients for vertex (i, j) under `seed`, whose (octave, slot) is `tag` >= 0. Unsigned
  // coordinates wrap exactly like SimplexNoise2D's int64 ones, without UB.
  WORLDGEN_NOISE_INLINE const double* Get(uint64_t seed, int32_t tag, uint64_t i, uint64_t j) {
    Entry& e = entries_[((i & 15) | (j & 15) << 4) ^ ((static_cast<uint64_t>(tag) * 37) & 255)];
    if (e.i != i || e.j != j || e.tag != tag) {
      e.i = i;
      e.j = j;
      e.tag = tag;
      e.gradient = static_cast<uint32_t>(
          HashCoords(seed, static_cast<int64_t>(i), static_cast<int64_t>(j)) % 24);
    }
    return kGradients[e.gradient];
  }

 private:
  struct Entry {
    uint64_t i = 0;
    uint64_t j = 0;
    int32_t tag = -1;
    uint32_t gradient = 0;
  };
  Entry entries_[256];
};

// The gradients of one pass's seeds at the vertices of a 4 x 4 patch: `built` has bit e set once
// entry e holds every seed's gradient. The AVX-512 variant hashes all 16 entries when the patch is
// first used (BuildPatch8); the others hash, vector by vector, the entries its lanes need.
struct GradientPatch {
  bool placed = false;
  int uses = 0;  // Vectors served since it was placed.
  uint64_t base_i = 0, base_j = 0;
  uint32_t built = 0;
  alignas(64) double gx[kNoiseSeedsPerPass][kPatchVertices];
  alignas(64) double gz[kNoiseSeedsPerPass][kPatchVertices];
};

#if WORLDGEN_SIMD_DISPATCH
constexpr uint32_t kAllPatchEntries = (uint32_t{1} << kPatchVertices) - 1;

// Every entry of a placed patch, for each of the pass's seeds: entries 0-7 and 8-15 (vertex
// (base_i + e % 4, base_j + e / 4)) hashed 8 lanes at a time, the same gradients the per-entry path
// looks up.
WORLDGEN_NOISE_AVX512 void BuildPatch8(const uint64_t* octave_seeds, size_t seed_count,
                                       GradientPatch* patch) {
  using U = Lanes<8>::U;
  using D = Lanes<8>::D;
  static_assert(kPatchSide == 4 && kPatchVertices == 16);
  const U i = Splat<U>(patch->base_i) + U{0, 1, 2, 3, 0, 1, 2, 3};
  const U j_low = Splat<U>(patch->base_j) + U{0, 0, 0, 0, 1, 1, 1, 1};  // Rows 0-1; 2-3 below.
  for (size_t t = 0; t < seed_count; ++t) {
    const uint64_t seed_mix = Mix64(octave_seeds[t] ^ kHashSeedSalt);
    for (int half = 0; half < 2; ++half) {
      D gx, gz;
      HashedGradients8(seed_mix, i, j_low + Splat<U>(2 * static_cast<uint64_t>(half)), &gx, &gz);
      Store(patch->gx[t] + 8 * half, gx);
      Store(patch->gz[t] + 8 * half, gz);
    }
  }
  patch->built = kAllPatchEntries;
}
#endif

// One pass: FractalNoise2D of seeds[0..seed_count) (at most kNoiseSeedsPerPass) at every point,
// out[s * stride + k] for point k, before the division by the amplitude total (which the caller
// applies). Octave by octave over all points, so each octave's patch serves every point.
template <Isa kIsa>
WORLDGEN_NOISE_INLINE void FractalSumsPass(const uint64_t* seeds, size_t seed_count,
                                           const double* xs, const double* zs, size_t n,
                                           double frequency, int octaves, double max_frequency,
                                           double lacunarity, double gain, double* out,
                                           size_t stride, std::optional<VertexGradients>* cache) {
  constexpr int L = kLanesOf<kIsa>;
  constexpr bool kPermute = kIsa == Isa::kAvx512;
  using D = typename Lanes<L>::D;
  using I = typename Lanes<L>::I;
  using U = typename Lanes<L>::U;
  for (size_t s = 0; s < seed_count; ++s) {
    for (size_t k = 0; k < n; ++k) out[s * stride + k] = 0.0;
  }
  // The last, partial vector's points, padded with copies of its first point.
  double tail_x[L], tail_z[L];
  const size_t tail_start = n / L * L;
  for (size_t l = 0; l < static_cast<size_t>(L); ++l) {
    const size_t k = tail_start + l < n ? tail_start + l : tail_start;
    tail_x[l] = k < n ? xs[k] : 0.0;
    tail_z[l] = k < n ? zs[k] : 0.0;
  }
  GradientPatch patch;
  uint64_t octave_seeds[kNoiseSeedsPerPass];
  double amplitude = 1.0;
  double f = frequency;
  for (int octave = 0; octave < octaves; ++octave) {
    for (size_t s = 0; s < seed_count; ++s) {
      octave_seeds[s] = DeriveSeed(seeds[s], static_cast<uint64_t>(octave));
    }
    patch.placed = false;
    // After a vector whose points span more than a patch, the next few (of the same octave, so
    // likely as spread out) go straight to the per-lane path.
    int skip_patch = 0;
    const D a = Splat<D>(amplitude);
    // FractalNoise2D's sum += amplitude * noise, for seed s at the vector starting at `start`.
    auto add_octave = [&](size_t s, size_t start, size_t count, D value) {
      double* sum = out + s * stride + start;
      if (count == L) {
        Store(sum, Load<D>(sum) + a * value);
      } else {
        double partial[L] = {};
        std::memcpy(partial, sum, count * sizeof(double));
        const D updated = Load<D>(partial) + a * value;
        std::memcpy(partial, &updated, sizeof partial);
        std::memcpy(sum, partial, count * sizeof(double));
      }
    };
    // Each lane's three corners as entries of the placed patch.
    auto corner_entries = [&](const Geometry<L>& geometry, I* l0, I* l1, I* l2) {
      *l0 = __builtin_bit_cast(I, (geometry.i - patch.base_i) + ((geometry.j - patch.base_j) << 2));
      *l1 = *l0 + (geometry.x_first ? Splat<I>(int64_t{1}) : Splat<I>(int64_t{kPatchSide}));
      *l2 = *l0 + Splat<I>(int64_t{kPatchSide + 1});
    };
    // Seed s's value at the geometry's points from the patch, its lanes' corners at entries l0,
    // l1, l2.
    auto patch_value = [&](size_t s, const Geometry<L>& geometry, I l0, I l1, I l2) {
      const double* gx = patch.gx[s];
      const double* gz = patch.gz[s];
      return SimplexValue<L>(geometry, Lookup16<L, kPermute>(gx, l0), Lookup16<L, kPermute>(gz, l0),
                             Lookup16<L, kPermute>(gx, l1), Lookup16<L, kPermute>(gz, l1),
                             Lookup16<L, kPermute>(gx, l2), Lookup16<L, kPermute>(gz, l2));
    };
    for (size_t start = 0; start < n; start += L) {
      const size_t count = n - start < static_cast<size_t>(L) ? n - start : L;
      D x = count == L ? Load<D>(xs + start) : Load<D>(tail_x);
      D z = count == L ? Load<D>(zs + start) : Load<D>(tail_z);
      Geometry<L> g;
      ComputeGeometry<kIsa>(x, z, f, &g);
      bool in_patch = false;
      if (patch.placed) {
        const U di = g.i - patch.base_i, dj = g.j - patch.base_j;
#if WORLDGEN_SIMD_DISPATCH
        if constexpr (kIsa == Isa::kAvx512) {
          in_patch = AllWithin8(di, dj, kPatchMaxCellOffset);
        } else
#endif
        {
          in_patch = AllLanes((di <= kPatchMaxCellOffset) & (dj <= kPatchMaxCellOffset));
        }
      }
#if WORLDGEN_SIMD_DISPATCH
      if constexpr (kIsa == Isa::kAvx512) {
        // The common case on its own, every entry of the patch already hashed: taken apart from
        // the rare paths below, it no longer spills the geometry to the stack for their sake
        // (BM_SourceTile about 10% faster, BM_ChunkWithHeights about 2%).
        if (in_patch && patch.built == kAllPatchEntries) {
          ++patch.uses;
          if (skip_patch > 0) --skip_patch;
          I l0, l1, l2;
          corner_entries(g, &l0, &l1, &l2);
          for (size_t s = 0; s < seed_count; ++s) {
            add_octave(s, start, count, patch_value(s, g, l0, l1, l2));
          }
          continue;
        }
      }
#endif
      if (!in_patch && patch.placed && patch.uses < kPatchMinUses && skip_patch == 0) {
        skip_patch = kPatchRetryVectors;  // Patches last only a few vectors: not worth moving.
      }
      const bool try_patch = skip_patch == 0;
      if (skip_patch > 0) --skip_patch;
      for (int attempt = 0; !in_patch && try_patch && attempt < 2; ++attempt) {
        // Move the patch to this vector's lowest cell if its cells span at most 3 x 3.
        int64_t min_i = static_cast<int64_t>(g.i[0]), max_i = min_i;
        int64_t min_j = static_cast<int64_t>(g.j[0]), max_j = min_j;
        for (int l = 1; l < L; ++l) {
          const int64_t i = static_cast<int64_t>(g.i[l]), j = static_cast<int64_t>(g.j[l]);
          min_i = i < min_i ? i : min_i;
          max_i = i > max_i ? i : max_i;
          min_j = j < min_j ? j : min_j;
          max_j = j > max_j ? j : max_j;
        }
        if (static_cast<uint64_t>(max_i) - static_cast<uint64_t>(min_i) <= kPatchMaxCellOffset &&
            static_cast<uint64_t>(max_j) - static_cast<uint64_t>(min_j) <= kPatchMaxCellOffset) {
          patch.placed = true;
          patch.base_i = static_cast<uint64_t>(min_i);
          patch.base_j = static_cast<uint64_t>(min_j);
          patch.built = 0;
          patch.uses = 0;
          in_patch = true;
          break;
        }
        if (attempt == 1) break;
        // Points outside the vector range (whose results the scalar path replaces) have arbitrary
        // cells; give them an in-range point of the vector (or the origin) and retry.
        const D limit = Splat<D>(kBatchCoordinateLimit);
        const D mx = x * Splat<D>(max_frequency), mz = z * Splat<D>(max_frequency);
        const I in_range = (mx < limit) & (mx > -limit) & (mz < limit) & (mz > -limit);
        if (AllLanes(in_range)) {
          skip_patch = kPatchRetryVectors;
          break;
        }
        double px = 0.0, pz = 0.0;
        for (int l = L - 1; l >= 0; --l) {
          if (in_range[l] != 0) {
            px = x[l];
            pz = z[l];
          }
        }
        x = in_range ? x : Splat<D>(px);
        z = in_range ? z : Splat<D>(pz);
        ComputeGeometry<kIsa>(x, z, f, &g);
      }
      // Each lane's corners as patch entries, and the entries' gradients hashed where missing.
      I l0 = Splat<I>(int64_t{0}), l1 = l0, l2 = l0;
      if (in_patch) {
        ++patch.uses;
        corner_entries(g, &l0, &l1, &l2);
#if WORLDGEN_SIMD_DISPATCH
        if constexpr (kIsa == Isa::kAvx512) {
          // All 16 entries at once, 8 lanes per hash (HashedGradients8), when the patch is placed:
          // cheaper than finding, vector by vector, which entries the lanes need (a reduction
          // across the lanes on every vector).
          if (patch.built != kAllPatchEntries) {
            BuildPatch8(octave_seeds, seed_count, &patch);
          }
        } else
#endif
        {
          const U one = Splat<U>(uint64_t{1});
          const U bits = (one << __builtin_bit_cast(U, l0)) | (one << __builtin_bit_cast(U, l1)) |
                         (one << __builtin_bit_cast(U, l2));
          const uint64_t needed = OrLanes(bits);
          uint32_t missing = static_cast<uint32_t>(needed) & ~patch.built;
          patch.built |= missing;
          while (missing != 0) {
            const int e = __builtin_ctz(missing);
            missing &= missing - 1;
            const int64_t vi =
                static_cast<int64_t>(patch.base_i + static_cast<uint64_t>(e % kPatchSide));
            const int64_t vj =
                static_cast<int64_t>(patch.base_j + static_cast<uint64_t>(e / kPatchSide));
            for (size_t t = 0; t < seed_count; ++t) {
              const double* gradient = kGradients[HashCoords(octave_seeds[t], vi, vj) % 24];
              patch.gx[t][e] = gradient[0];
              patch.gz[t][e] = gradient[1];
            }
          }
        }
      }
      for (size_t s = 0; s < seed_count; ++s) {
        D value;
        if (in_patch) {
          value = patch_value(s, g, l0, l1, l2);
        }
#if WORLDGEN_SIMD_DISPATCH
        else if constexpr (kIsa == Isa::kAvx512) {
          // Points too far apart for a patch: every lane's three corners hashed at once.
          const uint64_t seed_mix = Mix64(octave_seeds[s] ^ kHashSeedSalt);
          const U x_first = __builtin_bit_cast(U, g.x_first);  // All ones where true.
          const U one = Splat<U>(uint64_t{1});
          D gx0, gz0, gx1, gz1, gx2, gz2;
          HashedGradients8(seed_mix, g.i, g.j, &gx0, &gz0);
          HashedGradients8(seed_mix, g.i - x_first, g.j + one + x_first, &gx1, &gz1);
          HashedGradients8(seed_mix, g.i + one, g.j + one, &gx2, &gz2);
          value = SimplexValue<L>(g, gx0, gz0, gx1, gz1, gx2, gz2);
        }
#endif
        else {
          // Points too far apart for a patch: each lane's corners, reusing the previous lane's
          // gradients while the triangle stays the same.
          alignas(64) double gx[3][L], gz[3][L];
          const int32_t tag =
              octave * static_cast<int32_t>(kNoiseSeedsPerPass) + static_cast<int32_t>(s);
          const uint64_t seed = octave_seeds[s];
          const bool cached = std::fabs(f) <= kCacheMaxFrequency;
          uint64_t last_i = 0, last_j = 0;
          int64_t last_x_first = 1;  // Not a mask value: the first lane always looks up.
          const double* g0 = kGradients[0];
          const double* g1 = kGradients[0];
          const double* g2 = kGradients[0];
          for (int l = 0; l < L; ++l) {
            const uint64_t i = g.i[l], j = g.j[l];
            const int64_t x_first = g.x_first[l];
            if (i != last_i || j != last_j || x_first != last_x_first) {
              last_i = i;
              last_j = j;
              last_x_first = x_first;
              const uint64_t step_i = x_first != 0 ? 1 : 0;
              const uint64_t i1 = i + step_i, j1 = j + (1 - step_i);
              if (cached) {
                if (!cache->has_value()) cache->emplace();
                g0 = (*cache)->Get(seed, tag, i, j);
                g1 = (*cache)->Get(seed, tag, i1, j1);
                g2 = (*cache)->Get(seed, tag, i + 1, j + 1);
              } else {
                g0 = kGradients[HashCoords(seed, static_cast<int64_t>(i), static_cast<int64_t>(j)) %
                                24];
                g1 = kGradients[HashCoords(seed, static_cast<int64_t>(i1),
                                           static_cast<int64_t>(j1)) %
                                24];
                g2 = kGradients[HashCoords(seed, static_cast<int64_t>(i + 1),
                                           static_cast<int64_t>(j + 1)) %
                                24];
              }
            }
            gx[0][l] = g0[0];
            gz[0][l] = g0[1];
            gx[1][l] = g1[0];
            gz[1][l] = g1[1];
            gx[2][l] = g2[0];
            gz[2][l] = g2[1];
          }
          value = SimplexValue<L>(g, Load<D>(gx[0]), Load<D>(gz[0]), Load<D>(gx[1]), Load<D>(gz[1]),
                                  Load<D>(gx[2]), Load<D>(gz[2]));
        }
        add_octave(s, start, count, value);
      }
    }
    amplitude *= gain;
    f *= lacunarity;
  }
}

// Whether point k of every coordinate array, times max_frequency, stays where the vectors' floor
// is exact (false for NaN).
template <typename... Coords>
WORLDGEN_NOISE_INLINE bool InBatchRange(size_t k, double max_frequency, const Coords*... coords) {
  return (... && (std::fabs(coords[k] * max_frequency) < kBatchCoordinateLimit));
}

// Whether points k .. k + L - 1 of every coordinate array are all InBatchRange: the same test, L
// lanes at a time. |v| < limit compares the bits of |v| (the sign cleared) as integers: for
// non-negative doubles their order is the integers' order, and a NaN's bits exceed the limit's, so
// NaN fails here as in the scalar test. (GCC 12 turns a vector compare of doubles whose mask is
// combined with another into lane-by-lane scalar compares.)
template <int L, typename... Coords>
WORLDGEN_NOISE_INLINE bool AllInBatchRange(size_t k, double max_frequency,
                                           const Coords*... coords) {
  using D = typename Lanes<L>::D;
  using U = typename Lanes<L>::U;
  const D m = Splat<D>(max_frequency);
  const U magnitude = Splat<U>(~(uint64_t{1} << 63));
  const U limit = Splat<U>(std::bit_cast<uint64_t>(kBatchCoordinateLimit));
  const U in_range =
      (... &
       __builtin_bit_cast(U, (__builtin_bit_cast(U, Load<D>(coords + k) * m) & magnitude) < limit));
  return AllLanes(in_range);
}

// Calls `recompute(k)` for each point k < n that is not InBatchRange, testing L points at a time
// first: a point out of range is rare, and testing point by point cost the height noise some 8% of
// its time.
template <int L, typename Recompute, typename... Coords>
WORLDGEN_NOISE_INLINE void ForEachOutOfBatchRange(size_t n, double max_frequency,
                                                  Recompute recompute, const Coords*... coords) {
  for (size_t block = 0; block < n; block += L) {
    const size_t end = n - block < static_cast<size_t>(L) ? n : block + L;
    if (end - block == static_cast<size_t>(L) &&
        AllInBatchRange<L>(block, max_frequency, coords...)) {
      continue;
    }
    for (size_t k = block; k < end; ++k) {
      if (!InBatchRange(k, max_frequency, coords...)) recompute(k);
    }
  }
}

template <Isa kIsa>
WORLDGEN_NOISE_INLINE void MultiBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                                      const double* zs, size_t n, double frequency, int octaves,
                                      double* out, double lacunarity, double gain) {
  // The divisor and the largest octave frequency, computed as FractalNoise2D computes them.
  double amplitude_total = 0.0, max_frequency = std::fabs(frequency);
  {
    double amplitude = 1.0, f = frequency;
    for (int octave = 0; octave < octaves; ++octave) {
      amplitude_total += amplitude;
      amplitude *= gain;
      if (!(std::fabs(f) <= max_frequency)) max_frequency = std::fabs(f);
      f *= lacunarity;
    }
  }
  // Outside the contract (no octaves), or no point can be in range (a NaN or infinite frequency):
  // whatever the scalar code answers.
  if (octaves < 1 || !(max_frequency <= 1.7976931348623157e308)) {
    for (size_t s = 0; s < seed_count; ++s) {
      for (size_t k = 0; k < n; ++k) {
        out[s * n + k] =
            FractalNoise2D(seeds[s], xs[k], zs[k], frequency, octaves, lacunarity, gain);
      }
    }
    return;
  }
  for (size_t first = 0; first < seed_count; first += kNoiseSeedsPerPass) {
    std::optional<VertexGradients> cache;  // Built on first use. Its tags name a seed by its slot.
    const size_t count =
        seed_count - first < kNoiseSeedsPerPass ? seed_count - first : kNoiseSeedsPerPass;
    double* sums = out + first * n;
    FractalSumsPass<kIsa>(seeds + first, count, xs, zs, n, frequency, octaves, max_frequency,
                          lacunarity, gain, sums, n, &cache);
    // FractalNoise2D's sum / amplitude_total, vector by vector.
    constexpr int L = kLanesOf<kIsa>;
    using D = typename Lanes<L>::D;
    const D total = Splat<D>(amplitude_total);
    size_t k = 0;
    for (; k + L <= count * n; k += L) Store(sums + k, Load<D>(sums + k) / total);
    for (; k < count * n; ++k) sums[k] = sums[k] / amplitude_total;
  }
  // Points outside the vector range got an arbitrary (but UB-free) result; the scalar one replaces
  // it.
  ForEachOutOfBatchRange<kLanesOf<kIsa>>(
      n, max_frequency,
      [&](size_t k) {
        for (size_t s = 0; s < seed_count; ++s) {
          out[s * n + k] =
              FractalNoise2D(seeds[s], xs[k], zs[k], frequency, octaves, lacunarity, gain);
        }
      },
      xs, zs);
}

#if WORLDGEN_SIMD_DISPATCH
__attribute__((target("avx512f,avx512dq,avx512vl"), flatten)) void MultiBatchAvx512(
    const uint64_t* seeds, size_t seed_count, const double* xs, const double* zs, size_t n,
    double frequency, int octaves, double* out, double lacunarity, double gain) {
  MultiBatch<Isa::kAvx512>(seeds, seed_count, xs, zs, n, frequency, octaves, out, lacunarity, gain);
}
__attribute__((target("avx2"))) void MultiBatchAvx2(const uint64_t* seeds, size_t seed_count,
                                                    const double* xs, const double* zs, size_t n,
                                                    double frequency, int octaves, double* out,
                                                    double lacunarity, double gain) {
  MultiBatch<Isa::kAvx2>(seeds, seed_count, xs, zs, n, frequency, octaves, out, lacunarity, gain);
}
#endif
void MultiBatchBaseline(const uint64_t* seeds, size_t seed_count, const double* xs,
                        const double* zs, size_t n, double frequency, int octaves, double* out,
                        double lacunarity, double gain) {
  MultiBatch<Isa::kBaseline>(seeds, seed_count, xs, zs, n, frequency, octaves, out, lacunarity,
                             gain);
}

const simd::Dispatcher<NoiseBatchFn>& NoiseBatches() {
  static const simd::Dispatcher<NoiseBatchFn> dispatcher(WORLDGEN_SIMD_VARIANT_FN(MultiBatchAvx512),
                                                         WORLDGEN_SIMD_VARIANT_FN(MultiBatchAvx2),
                                                         &MultiBatchBaseline);
  return dispatcher;
}

#if WORLDGEN_SIMD_DISPATCH
// kGradients3's components as separate tables of 16 (the last four unused), for vector lookups.
struct Gradient3Components {
  double x[16], y[16], z[16];
};
constexpr Gradient3Components SplitGradients3() {
  Gradient3Components c{};
  for (int k = 0; k < 12; ++k) {
    c.x[k] = kGradients3[k][0];
    c.y[k] = kGradients3[k][1];
    c.z[k] = kGradients3[k][2];
  }
  return c;
}
alignas(64) constexpr Gradient3Components kGradient3Components = SplitGradients3();

// Lanes l of table[index[l]], index in [0, 12) (a table of 16): one two-source permute.
WORLDGEN_NOISE_AVX512 Lanes<8>::D Lookup12(const double* table, Lanes<8>::I index) {
  using D = Lanes<8>::D;
  return simd::Shuffle(Load<D>(table), Load<D>(table + 8), index);
}

// One octave of SimplexNoise3D's seed-independent part at 8 points (Simplex3At's operations in
// its order, lane by lane): each corner's lattice coordinates, offsets and weight falloff^4, +0.0
// where falloff <= 0 (Simplex3FractalTerm's rule).
struct Simplex3Lanes {
  Lanes<8>::U ci[4], cj[4], ck[4];
  Lanes<8>::D dx[4], dy[4], dz[4];
  Lanes<8>::D weight[4];
};

WORLDGEN_NOISE_AVX512 void ComputeSimplex3(Lanes<8>::D x, Lanes<8>::D y, Lanes<8>::D z,
                                           Simplex3Lanes* s) {
  using D = Lanes<8>::D;
  using I = Lanes<8>::I;
  using U = Lanes<8>::U;
  const D skew = (x + y + z) * Splat<D>(kSkew3);
  U i, j, k;
  const D fi = Floor8(x + skew, &i), fj = Floor8(y + skew, &j), fk = Floor8(z + skew, &k);
  const D unskew = (fi + fj + fk) * Splat<D>(kUnskew3);
  const D x0 = x - (fi - unskew), y0 = y - (fj - unskew), z0 = z - (fk - unskew);
  // Masks are -1 (all bits) where true: a corner's step is -mask as an integer, 1.0 or 0.0 as a
  // double.
  const I x_y = x0 >= y0, x_z = x0 >= z0, y_z = y0 >= z0;
  const I i1 = x_y & x_z, j1 = ~x_y & y_z, k1 = ~x_z & ~y_z;
  const I i2 = x_y | x_z, j2 = ~x_y | y_z, k2 = ~x_z | ~y_z;
  const D one = Splat<D>(1.0), zero = Splat<D>(0.0);
  const auto step = [&](I mask) { return mask ? one : zero; };
  const auto corner = [&](int c, I di, I dj, I dk, D dx, D dy, D dz) {
    s->ci[c] = i - __builtin_bit_cast(U, di);
    s->cj[c] = j - __builtin_bit_cast(U, dj);
    s->ck[c] = k - __builtin_bit_cast(U, dk);
    s->dx[c] = dx, s->dy[c] = dy, s->dz[c] = dz;
    const D falloff = Splat<D>(0.5) - dx * dx - dy * dy - dz * dz;
    const D positive = falloff > zero ? falloff : zero;
    const D f2 = positive * positive;
    s->weight[c] = f2 * f2;
  };
  const I none = Splat<I>(int64_t{0}), all = Splat<I>(int64_t{-1});
  corner(0, none, none, none, x0, y0, z0);
  corner(1, i1, j1, k1, x0 - step(i1) + Splat<D>(kUnskew3), y0 - step(j1) + Splat<D>(kUnskew3),
         z0 - step(k1) + Splat<D>(kUnskew3));
  corner(2, i2, j2, k2, x0 - step(i2) + Splat<D>(2.0 * kUnskew3),
         y0 - step(j2) + Splat<D>(2.0 * kUnskew3), z0 - step(k2) + Splat<D>(2.0 * kUnskew3));
  corner(3, all, all, all, x0 - one + Splat<D>(3.0 * kUnskew3), y0 - one + Splat<D>(3.0 * kUnskew3),
         z0 - one + Splat<D>(3.0 * kUnskew3));
}

// Simplex3FractalTerm at 8 points for the seed whose mix is `seed_mix`: each corner's gradient
// index hashed in every lane (Gradient3Index's operations; h % 12 = 4 * ((h >> 2) % 3) + (h & 3)),
// the corner sum in the scalar's order, scaled and clamped.
WORLDGEN_NOISE_AVX512 Lanes<8>::D Simplex3Term(const Simplex3Lanes& s, uint64_t seed_mix) {
  using D = Lanes<8>::D;
  using I = Lanes<8>::I;
  using U = Lanes<8>::U;
  const auto corner = [&](int c) {
    const U h = Mix64Of(HashCoordsPrefix(seed_mix, s.ci[c], s.cj[c]) ^ s.ck[c]);
    const U q = Mod3(h >> 2);
    const I index = __builtin_bit_cast(I, (q << 2) + (h & 3ULL));
    const D gx = Lookup12(kGradient3Components.x, index);
    const D gy = Lookup12(kGradient3Components.y, index);
    const D gz = Lookup12(kGradient3Components.z, index);
    return s.weight[c] * (gx * s.dx[c] + gy * s.dy[c] + gz * s.dz[c]);
  };
  D sum = corner(0);
  sum += corner(1);
  sum += corner(2);
  sum += corner(3);
  const D value = sum * Splat<D>(kOutputScale3);
  const D one = Splat<D>(1.0), minus_one = Splat<D>(-1.0);
  return value > one ? one : (value < minus_one ? minus_one : value);
}

// One pass of up to 8 seeds of Noise3DBatch: each octave's seed mixes, amplitude and frequency, the
// amplitudes' total, and the seeds in the pass.
struct Noise3DPass {
  const uint64_t (*mixes)[8];
  const double* amplitudes;
  const double* frequencies;
  int octaves;
  double amplitude_total;
  size_t count;
};

// A pass over the n points, 8 at a time, into out[k * stride + c] for its seed c; kCount is the
// pass's seed count when the caller knows it, else 0.
template <size_t kCount>
WORLDGEN_NOISE_INLINE void Noise3DPassSums(const Noise3DPass& pass, const double* xs,
                                           const double* ys, const double* zs, size_t n,
                                           double* out, size_t stride) {
  constexpr int L = 8;
  using D = Lanes<L>::D;
  const size_t count = kCount != 0 ? kCount : pass.count;
  const D total = Splat<D>(pass.amplitude_total);
  for (size_t k0 = 0; k0 < n; k0 += L) {
    D x, y, z;
    if (k0 + L <= n) {
      x = Load<D>(xs + k0), y = Load<D>(ys + k0), z = Load<D>(zs + k0);
    } else {
      // The last vector repeats its last point in the lanes past n.
      alignas(64) double px[L], py[L], pz[L];
      for (int l = 0; l < L; ++l) {
        const size_t k = std::min(k0 + static_cast<size_t>(l), n - 1);
        px[l] = xs[k], py[l] = ys[k], pz[l] = zs[k];
      }
      x = Load<D>(px), y = Load<D>(py), z = Load<D>(pz);
    }
    D sums[kCount != 0 ? kCount : 8];
    for (size_t c = 0; c < count; ++c) sums[c] = Splat<D>(0.0);
    for (int octave = 0; octave < pass.octaves; ++octave) {
      const D f = Splat<D>(pass.frequencies[octave]);
      Simplex3Lanes simplex;
      ComputeSimplex3(x * f, y * f, z * f, &simplex);
      const D amplitude = Splat<D>(pass.amplitudes[octave]);
      for (size_t c = 0; c < count; ++c) {
        sums[c] += amplitude * Simplex3Term(simplex, pass.mixes[octave][c]);
      }
    }
    for (size_t c = 0; c < count; ++c) {
      alignas(64) double values[L];
      Store(values, sums[c] / total);
      for (int l = 0; l < L && k0 + static_cast<size_t>(l) < n; ++l) {
        out[(k0 + static_cast<size_t>(l)) * stride + c] = values[l];
      }
    }
  }
}

// FractalNoise3DMultiBatch 8 points at a time: FractalNoise3DPoints' operations in every lane.
// A point whose coordinates times the largest octave frequency reach 2^49 (where the vector floor
// stops being exact), or are not finite, is recomputed by the scalar path, as are all points when
// the octave count or a frequency is outside what the vectors handle.
WORLDGEN_NOISE_AVX512 void Noise3DBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                                        const double* ys, const double* zs, size_t n,
                                        double frequency, int octaves, double* out,
                                        double lacunarity, double gain) {
  // Outside what the vectors handle (no octaves, more than the tables hold): the scalar path.
  if (octaves < 1 || octaves > 16) {
    Noise3DBatchScalar(seeds, seed_count, xs, ys, zs, n, frequency, octaves, out, lacunarity, gain);
    return;
  }
  // Each octave's amplitude and frequency, their total and the largest frequency, computed as
  // FractalNoise3DPoints computes them.
  double amplitudes[16], frequencies[16], amplitude_total = 0.0;
  double max_frequency = std::fabs(frequency);
  {
    double amplitude = 1.0, f = frequency;
    for (int octave = 0; octave < octaves; ++octave) {
      amplitudes[octave] = amplitude, frequencies[octave] = f;
      if (!(std::fabs(f) <= max_frequency)) max_frequency = std::fabs(f);
      amplitude_total += amplitude;
      amplitude *= gain;
      f *= lacunarity;
    }
  }
  // No point can be in range (a NaN or infinite frequency): the scalar path.
  if (!(max_frequency <= 1.7976931348623157e308)) {
    Noise3DBatchScalar(seeds, seed_count, xs, ys, zs, n, frequency, octaves, out, lacunarity, gain);
    return;
  }
  constexpr size_t kSeeds = 8;
  for (size_t first = 0; first < seed_count; first += kSeeds) {
    const size_t count = std::min(kSeeds, seed_count - first);
    uint64_t mixes[16][kSeeds];
    for (int octave = 0; octave < octaves; ++octave) {
      for (size_t c = 0; c < count; ++c) {
        mixes[octave][c] =
            Mix64(DeriveSeed(seeds[first + c], static_cast<uint64_t>(octave)) ^ kHashSeedSalt);
      }
    }
    const Noise3DPass pass{.mixes = mixes,
                           .amplitudes = amplitudes,
                           .frequencies = frequencies,
                           .octaves = octaves,
                           .amplitude_total = amplitude_total,
                           .count = count};
    double* const pass_out = out + first;
    // One or two seeds (a cave climate's two fields) with the count known: the sums stay in
    // registers.
    if (count == 1) {
      Noise3DPassSums<1>(pass, xs, ys, zs, n, pass_out, seed_count);
    } else if (count == 2) {
      Noise3DPassSums<2>(pass, xs, ys, zs, n, pass_out, seed_count);
    } else {
      Noise3DPassSums<0>(pass, xs, ys, zs, n, pass_out, seed_count);
    }
  }
  ForEachOutOfBatchRange<8>(
      n, max_frequency,
      [&](size_t k) {
        Noise3DBatchScalar(seeds, seed_count, xs + k, ys + k, zs + k, 1, frequency, octaves,
                           out + k * seed_count, lacunarity, gain);
      },
      xs, ys, zs);
}

__attribute__((target("avx512f,avx512dq,avx512vl"), flatten)) void Noise3DBatchAvx512(
    const uint64_t* seeds, size_t seed_count, const double* xs, const double* ys, const double* zs,
    size_t n, double frequency, int octaves, double* out, double lacunarity, double gain) {
  Noise3DBatch(seeds, seed_count, xs, ys, zs, n, frequency, octaves, out, lacunarity, gain);
}
#endif

// AVX2 runs the scalar path: four lanes with its emulated 64-bit multiplies hashed 8.6 M points/s
// against the scalar's 9.7 M (BM_CaveNoise, AMD EPYC Zen 4), which remembers most corners'
// gradients instead of hashing them.
const simd::Dispatcher<Noise3DBatchFn>& Noise3DBatches() {
  static const simd::Dispatcher<Noise3DBatchFn> dispatcher(
      WORLDGEN_SIMD_VARIANT_FN(Noise3DBatchAvx512), &Noise3DBatchScalar, &Noise3DBatchScalar);
  return dispatcher;
}

}  // namespace

void FractalNoise3DMultiBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                              const double* ys, const double* zs, size_t n, double frequency,
                              int octaves, double* out, double lacunarity, double gain) {
  Noise3DBatches().chosen().run(seeds, seed_count, xs, ys, zs, n, frequency, octaves, out,
                                lacunarity, gain);
}

std::span<const Noise3DBatchVariant> Noise3DBatchVariants() { return Noise3DBatches().variants(); }

void FractalNoise2DMultiBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                              const double* zs, size_t n, double frequency, int octaves,
                              double* out, double lacunarity, double gain) {
  NoiseBatches().chosen().run(seeds, seed_count, xs, zs, n, frequency, octaves, out, lacunarity,
                              gain);
}

void FractalNoise2DBatch(uint64_t seed, const double* xs, const double* zs, size_t n,
                         double frequency, int octaves, double* out, double lacunarity,
                         double gain) {
  NoiseBatches().chosen().run(&seed, 1, xs, zs, n, frequency, octaves, out, lacunarity, gain);
}

std::span<const NoiseBatchVariant> NoiseBatchVariants() { return NoiseBatches().variants(); }

absl::string_view DispatchedNoiseBatchVariant() { return NoiseBatches().chosen().name; }

}  // namespace worldgen
