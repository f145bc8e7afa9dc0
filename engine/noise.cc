#include "engine/noise.h"

#include <cmath>
#include <cstring>

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

// Scales the raw sum of the three corner contributions to [-1, 1] (measured raw maximum ~0.0100 for
// this gradient set; see noise_test.cc).
constexpr double kOutputScale = 98.0;

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
  int64_t i = static_cast<int64_t>(fi);
  int64_t j = static_cast<int64_t>(fj);
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
    sum += amplitude * SimplexNoise2D(DeriveSeed(seed, static_cast<uint64_t>(octave)), x * f, z * f);
    amplitude_total += amplitude;
    amplitude *= gain;
    f *= lacunarity;
  }
  return sum / amplitude_total;
}

namespace {

using simd::Double4;
using simd::Int64x4;
using simd::Uint64x4;

// The batch's helpers must be inlined into each dispatch clone to be compiled for its ISA. Being
// always inlined they never pass vectors across a call, so GCC's -Wpsabi notes about 32-byte vector
// arguments (a different ABI with and without AVX) do not apply; engine/CMakeLists.txt turns them
// off for this file.
#define WORLDGEN_NOISE_INLINE inline __attribute__((always_inline))

// 1.5 * 2^52: adding it to |v| < 2^51 leaves v rounded to an integer in the low mantissa bits.
constexpr double kRoundMagic = 6755399441055744.0;
// A batch point whose scaled coordinates (x * f, z * f) stay below 2^49 in magnitude in every
// octave has skewed coordinates below 2^51, where Floor4 is exact. Anything else (huge, infinite,
// NaN) is recomputed by the scalar path, whose float-to-integer conversion the vector code does not
// imitate.
constexpr double kBatchCoordinateLimit = 562949953421312.0;  // 2^49

// Octaves up to this frequency (cycles per block) look gradients up through VertexGradients. Above
// it neighbouring columns rarely share vertices within the table's reach, and hashing directly on a
// change of triangle is faster (measured with blend_bench's BM_HeightNoise).
constexpr double kCacheMaxFrequency = 0.5;

// Points per block of a batch: the block's scratch arrays (7 KiB, and 6 KiB of VertexGradients)
// live on the stack.
constexpr size_t kBlock = 64;

// One octave's simplex per point of a block, and the padded copy of a last, partial block.
struct BlockScratch {
  double x[kBlock];
  double z[kBlock];
  double sum[kBlock];
  // The skewed cell, which triangle of it (-1 where the middle corner is (i + 1, j), 0 where it is
  // (i, j + 1)), the offset to the cell's origin and the three corners' gradients.
  uint64_t cell_i[kBlock];
  uint64_t cell_j[kBlock];
  int64_t x_first[kBlock];
  double dx0[kBlock];
  double dz0[kBlock];
  double gx[3][kBlock];
  double gz[3][kBlock];
};

// Gradients of recently hashed lattice vertices, direct-mapped on the low bits of (i, j). Hashing
// is most of a simplex evaluation's cost, and at height-noise frequencies a chunk's columns touch a
// few dozen vertices, each shared by up to six triangles and many columns, so most lookups hit.
class VertexGradients {
 public:
  VertexGradients() {
    for (Entry& e : entries_) e.octave = -1;  // Matches no octave: every slot starts empty.
  }

  // Row of kGradients for vertex (i, j) of octave `octave`, whose noise seed is `seed`. Unsigned
  // coordinates wrap exactly like SimplexNoise2D's int64 ones, without UB.
  WORLDGEN_NOISE_INLINE const double* Get(uint64_t seed, int octave, uint64_t i, uint64_t j) {
    Entry& e = entries_[(i & 15) | (j & 15) << 4];
    if (e.i != i || e.j != j || e.octave != octave) {
      e.i = i;
      e.j = j;
      e.octave = octave;
      e.gradient = static_cast<uint32_t>(
          HashCoords(seed, static_cast<int64_t>(i), static_cast<int64_t>(j)) % 24);
    }
    return kGradients[e.gradient];
  }

 private:
  struct Entry {
    uint64_t i = 0;
    uint64_t j = 0;
    int32_t octave = -1;
    uint32_t gradient = 0;
  };
  Entry entries_[256];
};

WORLDGEN_NOISE_INLINE Double4 Splat(double v) { return Double4{v, v, v, v}; }

template <typename V, typename T>
WORLDGEN_NOISE_INLINE V Load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename V, typename T>
WORLDGEN_NOISE_INLINE void Store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// std::floor of each lane, and the same value as an integer; exact for |v| < 2^51. v + kRoundMagic
// is an integer next to v (whichever way the rounding mode rounds), so subtracting the constant
// again gives that integer exactly and one comparison corrects it down to floor(v). Its bits minus
// the constant's bits are the same integer in two's complement.
WORLDGEN_NOISE_INLINE Double4 Floor4(Double4 v, Uint64x4* integer) {
  const Double4 magic = Splat(kRoundMagic);
  const Double4 shifted = v + magic;
  Double4 r = shifted - magic;
  const Int64x4 rounded_up = r > v;  // -1 where true.
  r = rounded_up ? r - Splat(1.0) : r;
  *integer = __builtin_bit_cast(Uint64x4, shifted) - __builtin_bit_cast(Uint64x4, magic) +
             __builtin_bit_cast(Uint64x4, rounded_up);
  return v == Splat(0.0) ? v : r;  // The constant turns -0.0 into +0.0; std::floor keeps -0.0.
}

// Corner() for four points at once. Every lane computes the contribution (its gradient is valid
// even where it is not needed) and the comparison keeps Corner's `falloff <= 0` exit: exactly +0.0.
WORLDGEN_NOISE_INLINE Double4 Corner4(Double4 dx, Double4 dz, Double4 gx, Double4 gz) {
  const Double4 falloff = Splat(0.5) - dx * dx - dz * dz;
  const Double4 f2 = falloff * falloff;
  const Double4 contribution = f2 * f2 * (gx * dx + gz * dz);
  return falloff <= Splat(0.0) ? Splat(0.0) : contribution;
}

// One octave of SimplexNoise2D at the points (xs[l], zs[l]), l < lanes (a multiple of 4, at most
// kBlock), added to sums[l] as FractalNoise2D adds it: sum += amplitude * noise(seed, x *
// frequency, z * frequency). Same operations, same order.
template <bool kCacheVertices>
WORLDGEN_NOISE_INLINE void AddOctave(uint64_t seed, int octave, double frequency, double amplitude,
                                     const double* xs, const double* zs, size_t lanes, double* sums,
                                     VertexGradients* gradients, BlockScratch* s) {
  const Double4 f = Splat(frequency);
  // Pass 1, vector: the skewed cell, the triangle and the offset to the cell's origin.
  for (size_t l = 0; l < lanes; l += 4) {
    const Double4 x = Load<Double4>(xs + l) * f;
    const Double4 z = Load<Double4>(zs + l) * f;
    const Double4 skew = (x + z) * Splat(kSkew);
    Uint64x4 i, j;
    const Double4 fi = Floor4(x + skew, &i);
    const Double4 fj = Floor4(z + skew, &j);
    const Double4 unskew = (fi + fj) * Splat(kUnskew);
    const Double4 dx0 = x - (fi - unskew);
    const Double4 dz0 = z - (fj - unskew);
    Store(s->cell_i + l, i);
    Store(s->cell_j + l, j);
    Store(s->x_first + l, Int64x4(dx0 > dz0));
    Store(s->dx0 + l, dx0);
    Store(s->dz0 + l, dz0);
  }
  // Pass 2, scalar: the corners' gradients. Neighbouring points mostly lie in the same triangle, so
  // its gradients are kept until the triangle changes.
  uint64_t last_i = 0, last_j = 0;
  int64_t last_x_first = 1;  // Not a mask value: the first point always looks up.
  const double* g0 = kGradients[0];
  const double* g1 = kGradients[0];
  const double* g2 = kGradients[0];
  for (size_t l = 0; l < lanes; ++l) {
    const uint64_t i = s->cell_i[l], j = s->cell_j[l];
    const int64_t x_first = s->x_first[l];
    if (i != last_i || j != last_j || x_first != last_x_first) {
      last_i = i;
      last_j = j;
      last_x_first = x_first;
      const uint64_t step_i = x_first != 0 ? 1 : 0;
      if constexpr (kCacheVertices) {
        g0 = gradients->Get(seed, octave, i, j);
        g1 = gradients->Get(seed, octave, i + step_i, j + (1 - step_i));
        g2 = gradients->Get(seed, octave, i + 1, j + 1);
      } else {
        g0 = kGradients[HashCoords(seed, static_cast<int64_t>(i), static_cast<int64_t>(j)) % 24];
        g1 = kGradients[HashCoords(seed, static_cast<int64_t>(i + step_i),
                                   static_cast<int64_t>(j + (1 - step_i))) %
                        24];
        g2 = kGradients[HashCoords(seed, static_cast<int64_t>(i + 1), static_cast<int64_t>(j + 1)) %
                        24];
      }
    }
    s->gx[0][l] = g0[0];
    s->gz[0][l] = g0[1];
    s->gx[1][l] = g1[0];
    s->gz[1][l] = g1[1];
    s->gx[2][l] = g2[0];
    s->gz[2][l] = g2[1];
  }
  // Pass 3, vector: the three corners, clamped and scaled, into the fractal sum.
  const Double4 zero = Splat(0.0), one = Splat(1.0), minus_one = Splat(-1.0);
  const Double4 a = Splat(amplitude);
  for (size_t l = 0; l < lanes; l += 4) {
    const Double4 dx0 = Load<Double4>(s->dx0 + l);
    const Double4 dz0 = Load<Double4>(s->dz0 + l);
    const Int64x4 x_first = Load<Int64x4>(s->x_first + l);
    const Double4 dx1 = dx0 - (x_first ? one : zero) + Splat(kUnskew);
    const Double4 dz1 = dz0 - (x_first ? zero : one) + Splat(kUnskew);
    const Double4 dx2 = dx0 - one + Splat(2.0 * kUnskew);
    const Double4 dz2 = dz0 - one + Splat(2.0 * kUnskew);
    Double4 sum = Corner4(dx0, dz0, Load<Double4>(s->gx[0] + l), Load<Double4>(s->gz[0] + l));
    sum += Corner4(dx1, dz1, Load<Double4>(s->gx[1] + l), Load<Double4>(s->gz[1] + l));
    sum += Corner4(dx2, dz2, Load<Double4>(s->gx[2] + l), Load<Double4>(s->gz[2] + l));
    Double4 value = sum * Splat(kOutputScale);
    value = value > one ? one : (value < minus_one ? minus_one : value);
    Store(sums + l, Load<Double4>(sums + l) + a * value);
  }
}

WORLDGEN_NOISE_INLINE bool InBatchRange(double x, double z, double max_frequency) {
  return std::fabs(x * max_frequency) < kBatchCoordinateLimit &&
         std::fabs(z * max_frequency) < kBatchCoordinateLimit;  // False for NaN.
}

// Octave by octave over the whole batch, so each octave's vertex gradients serve every point.
WORLDGEN_NOISE_INLINE void FractalNoiseBatch(uint64_t seed, const double* xs, const double* zs,
                                             size_t n, double frequency, int octaves, double* out,
                                             double lacunarity, double gain) {
  if (octaves < 1) {  // Outside the contract; whatever the scalar code answers.
    for (size_t k = 0; k < n; ++k) {
      out[k] = FractalNoise2D(seed, xs[k], zs[k], frequency, octaves, lacunarity, gain);
    }
    return;
  }
  // The divisor and the largest octave frequency, computed as FractalNoise2D computes them.
  // A NaN frequency stays NaN, so every point takes the scalar path.
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
  BlockScratch s;
  VertexGradients gradients;
  for (size_t k = 0; k < n; ++k) out[k] = 0.0;  // `out` holds the fractal sums until the end.
  double amplitude = 1.0;
  double f = frequency;
  for (int octave = 0; octave < octaves; ++octave) {
    const uint64_t octave_seed = DeriveSeed(seed, static_cast<uint64_t>(octave));
    for (size_t start = 0; start < n; start += kBlock) {
      const size_t count = n - start < kBlock ? n - start : kBlock;
      const size_t lanes = (count + 3) & ~size_t{3};
      const double* x = xs + start;
      const double* z = zs + start;
      double* sum = out + start;
      if (lanes != count) {  // The last block, padded to whole vectors with points (0, 0).
        for (size_t l = 0; l < lanes; ++l) {
          s.x[l] = l < count ? x[l] : 0.0;
          s.z[l] = l < count ? z[l] : 0.0;
          s.sum[l] = l < count ? sum[l] : 0.0;
        }
        x = s.x;
        z = s.z;
        sum = s.sum;
      }
      if (std::fabs(f) <= kCacheMaxFrequency) {
        AddOctave<true>(octave_seed, octave, f, amplitude, x, z, lanes, sum, &gradients, &s);
      } else {
        AddOctave<false>(octave_seed, octave, f, amplitude, x, z, lanes, sum, &gradients, &s);
      }
      if (sum == s.sum) {
        for (size_t l = 0; l < count; ++l) out[start + l] = s.sum[l];
      }
    }
    amplitude *= gain;
    f *= lacunarity;
  }
  for (size_t k = 0; k < n; ++k) {
    // The octave of the largest frequency decides the range. Points outside it got an arbitrary
    // (but UB-free) vector result; the scalar one replaces it.
    out[k] = InBatchRange(xs[k], zs[k], max_frequency)
                 ? out[k] / amplitude_total
                 : FractalNoise2D(seed, xs[k], zs[k], frequency, octaves, lacunarity, gain);
  }
}

}  // namespace

WORLDGEN_TARGET_CLONES
void FractalNoise2DBatch(uint64_t seed, const double* xs, const double* zs, size_t n,
                         double frequency, int octaves, double* out, double lacunarity,
                         double gain) {
  FractalNoiseBatch(seed, xs, zs, n, frequency, octaves, out, lacunarity, gain);
}

void FractalNoise2DBatchBaseline(uint64_t seed, const double* xs, const double* zs, size_t n,
                                 double frequency, int octaves, double* out, double lacunarity,
                                 double gain) {
  FractalNoiseBatch(seed, xs, zs, n, frequency, octaves, out, lacunarity, gain);
}

}  // namespace worldgen
