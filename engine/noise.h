// Deterministic 2D gradient noise (simplex-style) and its fractal sum.
//
// Output is a pure function of (seed, x, z): only IEEE +, -, *, / and floor are used, in a fixed order,
// so the same inputs give bit-identical results on every machine built with -ffp-contract=off.
// All functions are pure and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_NOISE_H_
#define WORLDGEN_ENGINE_NOISE_H_

#include <cstddef>
#include <cstdint>

namespace worldgen {

// Simplex noise on a skewed triangular grid with 24 hashed gradient directions.
// Range: [-1, 1]; continuous with continuous first derivatives; 0 at every grid vertex.
double SimplexNoise2D(uint64_t seed, double x, double z);

// Fractal Brownian motion: `octaves` layers of SimplexNoise2D, each at `lacunarity` times the frequency
// and `gain` times the amplitude of the previous one, divided by the sum of the amplitudes so the
// result stays in [-1, 1]. `frequency` is in cycles per world unit. Requires 1 <= octaves <= 16 and
// gain > 0. With the defaults (2, 0.5) the octave factors are exact powers of two.
double FractalNoise2D(uint64_t seed, double x, double z, double frequency, int octaves,
                      double lacunarity = 2.0, double gain = 0.5);

// FractalNoise2D at n points: out[k] = FractalNoise2D(seed, xs[k], zs[k], frequency, octaves,
// lacunarity, gain) bit for bit, for every input (non-finite and huge coordinates included). Vectorized across points,
// AVX2 with runtime dispatch and an SSE2 baseline. Gradient hashes are reused between consecutive
// points in the same simplex and between nearby points, so runs of neighbouring points (rows of
// columns) are the cheapest input. `out` must not overlap `xs` or `zs`.
void FractalNoise2DBatch(uint64_t seed, const double* xs, const double* zs, size_t n,
                         double frequency, int octaves, double* out, double lacunarity = 2.0,
                         double gain = 0.5);

// FractalNoise2DBatch compiled for baseline x86-64 only: what the dispatcher runs on a CPU without
// AVX2 (and under ThreadSanitizer). Exposed so tests check that variant on any machine.
void FractalNoise2DBatchBaseline(uint64_t seed, const double* xs, const double* zs, size_t n,
                                 double frequency, int octaves, double* out,
                                 double lacunarity = 2.0, double gain = 0.5);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_NOISE_H_
