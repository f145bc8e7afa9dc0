// Deterministic 2D (and, scalar, 3D) gradient noise (simplex-style) and its fractal sum.
//
// Output is a pure function of (seed, x, z): only IEEE +, -, *, / and floor are used, in a fixed
// order, so the same inputs give bit-identical results on every machine built with
// -ffp-contract=off. All functions are pure and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_NOISE_H_
#define WORLDGEN_ENGINE_NOISE_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/strings/string_view.h"
#include "engine/simd.h"

namespace worldgen {

// Simplex noise on a skewed triangular grid with 24 hashed gradient directions.
// Range: [-1, 1]; continuous with continuous first derivatives; 0 at every grid vertex.
double SimplexNoise2D(uint64_t seed, double x, double z);

// Simplex noise in 3D (skewed cubic grid, tetrahedral simplices) with 12 hashed gradient
// directions (the cube's edge midpoints, normalized). Range [-1, 1]; continuous with continuous
// first derivatives; 0 at every grid vertex. Scalar only (3D biome maps, issue 25).
double SimplexNoise3D(uint64_t seed, double x, double y, double z);

// FractalNoise2D's sum over SimplexNoise3D octaves: same rules and range.
double FractalNoise3D(uint64_t seed, double x, double y, double z, double frequency, int octaves,
                      double lacunarity = 2.0, double gain = 0.5);

// FractalNoise3D of several seeds at one point: out[s] = FractalNoise3D(seeds[s], x, y, z, ...)
// bit for bit. An octave's simplex (corners, offsets, falloffs) does not depend on the seed, so it
// is found once for all of them; each seed adds only its gradients.
void FractalNoise3DMulti(const uint64_t* seeds, size_t seed_count, double x, double y, double z,
                         double frequency, int octaves, double* out, double lacunarity = 2.0,
                         double gain = 0.5);

// FractalNoise3DMulti at n points: out[k * seed_count + s] = FractalNoise3D(seeds[s], xs[k], ys[k],
// zs[k], ...) bit for bit. Each corner's gradient is hashed once while it stays in a small
// per-thread table (points close together share most corners), so a batch of nearby points costs
// far less than a call per point.
void FractalNoise3DMultiBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                              const double* ys, const double* zs, size_t n, double frequency,
                              int octaves, double* out, double lacunarity = 2.0, double gain = 0.5);

// Fractal Brownian motion: `octaves` layers of SimplexNoise2D, each at `lacunarity` times the
// frequency and `gain` times the amplitude of the previous one, divided by the sum of the
// amplitudes so the result stays in [-1, 1]. `frequency` is in cycles per world unit. Requires 1 <=
// octaves <= 16 and gain > 0. With the defaults (2, 0.5) the octave factors are exact powers of
// two.
double FractalNoise2D(uint64_t seed, double x, double z, double frequency, int octaves,
                      double lacunarity = 2.0, double gain = 0.5);

// FractalNoise2D at n points: out[k] = FractalNoise2D(seed, xs[k], zs[k], frequency, octaves,
// lacunarity, gain) bit for bit, for every input (non-finite and huge coordinates included).
// FractalNoise2DMultiBatch with one seed. `out` must not overlap `xs` or `zs`.
void FractalNoise2DBatch(uint64_t seed, const double* xs, const double* zs, size_t n,
                         double frequency, int octaves, double* out, double lacunarity = 2.0,
                         double gain = 0.5);

// Seeds whose fields FractalNoise2DMultiBatch computes in one pass over the points; more seeds are
// processed in passes of this many.
inline constexpr size_t kNoiseSeedsPerPass = 8;

// FractalNoise2D of several seeds sharing frequency, octaves, lacunarity and gain, at n points:
// out[s * n + k] = FractalNoise2D(seeds[s], xs[k], zs[k], frequency, octaves, lacunarity, gain)
// bit for bit, for every input. The simplex geometry (cell, triangle, corner offsets and falloffs)
// of a point does not depend on the seed, so it is computed once per octave for up to
// kNoiseSeedsPerPass seeds; each seed adds only its gradients. Vectorized across points (8 lanes
// with AVX-512, 4 with AVX2 or the SSE2 baseline, chosen at startup). Where a vector's points lie
// within 3x3 cells, gradients come from a 4x4 patch of hashed lattice vertices shared by
// neighbouring points (rows of columns, cache tiles: the cheapest input); elsewhere each lane's
// corners are hashed (8 lanes at once with AVX-512). `out` (seed_count * n doubles) must not
// overlap the inputs.
void FractalNoise2DMultiBatch(const uint64_t* seeds, size_t seed_count, const double* xs,
                              const double* zs, size_t n, double frequency, int octaves,
                              double* out, double lacunarity = 2.0, double gain = 0.5);

// The compiled variants of FractalNoise2DMultiBatch, best first; the dispatcher runs the first one
// the CPU supports. Exposed so tests check every variant the machine can run.
using NoiseBatchFn = void(const uint64_t* seeds, size_t seed_count, const double* xs,
                          const double* zs, size_t n, double frequency, int octaves, double* out,
                          double lacunarity, double gain);
using NoiseBatchVariant = simd::Variant<NoiseBatchFn>;
std::span<const NoiseBatchVariant> NoiseBatchVariants();
absl::string_view DispatchedNoiseBatchVariant();

// The compiled variants of FractalNoise3DMultiBatch, best first (the same names and support as
// NoiseBatchVariants): AVX-512, 8 points per vector, each corner's gradient hashed in every lane;
// AVX2 and the baseline, point by point with each corner's gradient remembered (faster than four
// lanes hashing with AVX2's emulated 64-bit multiplies).
using Noise3DBatchFn = void(const uint64_t* seeds, size_t seed_count, const double* xs,
                            const double* ys, const double* zs, size_t n, double frequency,
                            int octaves, double* out, double lacunarity, double gain);
using Noise3DBatchVariant = simd::Variant<Noise3DBatchFn>;
std::span<const Noise3DBatchVariant> Noise3DBatchVariants();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_NOISE_H_
