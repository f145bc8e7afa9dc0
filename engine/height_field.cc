#include "engine/height_field.h"

#include "engine/hash.h"
#include "engine/noise.h"

namespace worldgen {
namespace {
constexpr uint64_t kHeightStream = 0x4e16;
}  // namespace

HeightField::HeightField(const WorldSpec& spec) {
  params_.reserve(spec.biomes.size());
  uint64_t height_seed = DeriveSeed(spec.seed, kHeightStream);
  for (const BiomeSpec& b : spec.biomes) {
    params_.push_back(
        {DeriveSeed(height_seed, b.id), b.height_base, b.height_amplitude, b.height_frequency});
  }
}

double HeightField::BiomeHeight(int biome_index, double x, double z) const {
  const BiomeHeightParams& p = params_[static_cast<size_t>(biome_index)];
  return p.base + p.amplitude * FractalNoise2D(p.seed, x, z, p.frequency, kOctaves);
}

void HeightField::BiomeHeights(int biome_index, const double* xs, const double* zs, size_t n,
                               double* out) const {
  const BiomeHeightParams& p = params_[static_cast<size_t>(biome_index)];
  FractalNoise2DBatch(p.seed, xs, zs, n, p.frequency, kOctaves, out);
  for (size_t k = 0; k < n; ++k) out[k] = p.base + p.amplitude * out[k];
}

}  // namespace worldgen
