#include "engine/noise.h"

#include <cmath>

#include "engine/hash.h"

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

double FractalNoise2D(uint64_t seed, double x, double z, double frequency, int octaves) {
  double sum = 0.0;
  double amplitude = 1.0;
  double amplitude_total = 0.0;
  double f = frequency;
  for (int octave = 0; octave < octaves; ++octave) {
    sum += amplitude * SimplexNoise2D(DeriveSeed(seed, static_cast<uint64_t>(octave)), x * f, z * f);
    amplitude_total += amplitude;
    amplitude *= 0.5;
    f *= 2.0;
  }
  return sum / amplitude_total;
}

}  // namespace worldgen
