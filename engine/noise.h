// Deterministic 2D gradient noise (simplex-style) and its fractal sum.
//
// Output is a pure function of (seed, x, z): only IEEE +, -, *, / and floor are used, in a fixed order,
// so the same inputs give bit-identical results on every machine built with -ffp-contract=off.
// All functions are pure and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_NOISE_H_
#define WORLDGEN_ENGINE_NOISE_H_

#include <cstdint>

namespace worldgen {

// Simplex noise on a skewed triangular grid with 24 hashed gradient directions.
// Range: [-1, 1]; continuous with continuous first derivatives; 0 at every grid vertex.
double SimplexNoise2D(uint64_t seed, double x, double z);

// Fractal Brownian motion: `octaves` layers of SimplexNoise2D, each at twice the frequency and half the
// amplitude of the previous one, normalized so the result stays in [-1, 1]. `frequency` is in cycles per
// world unit. Requires 1 <= octaves <= 16.
double FractalNoise2D(uint64_t seed, double x, double z, double frequency, int octaves);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_NOISE_H_
