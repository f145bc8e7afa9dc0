#include "engine/biome_source.h"

#include "engine/hash.h"
#include "engine/noise.h"

namespace worldgen {
namespace {
// Stream ids separating the world seed's noise fields.
constexpr uint64_t kTemperatureStream = 0x7e3d;
constexpr uint64_t kHumidityStream = 0x4a11;
}  // namespace

ClimateBiomeSource::ClimateBiomeSource(const WorldSpec& spec)
    : temperature_seed_(DeriveSeed(spec.seed, kTemperatureStream)),
      humidity_seed_(DeriveSeed(spec.seed, kHumidityStream)),
      climate_(spec.climate) {
  points_.reserve(spec.biomes.size());
  for (const BiomeSpec& b : spec.biomes) points_.push_back({b.temperature, b.humidity});
}

double ClimateBiomeSource::TemperatureAt(double x, double z) const {
  return FractalNoise2D(temperature_seed_, x, z, climate_.temperature_frequency, climate_.octaves);
}

double ClimateBiomeSource::HumidityAt(double x, double z) const {
  return FractalNoise2D(humidity_seed_, x, z, climate_.humidity_frequency, climate_.octaves);
}

int ClimateBiomeSource::BiomeIndexAt(double x, double z) const {
  double t = TemperatureAt(x, z);
  double h = HumidityAt(x, z);
  int best = 0;
  double best_d2 = 0.0;
  for (size_t k = 0; k < points_.size(); ++k) {
    double dt = t - points_[k].temperature;
    double dh = h - points_[k].humidity;
    double d2 = dt * dt + dh * dh;
    if (k == 0 || d2 < best_d2) {  // Strict '<': ties keep the lower index.
      best = static_cast<int>(k);
      best_d2 = d2;
    }
  }
  return best;
}

std::unique_ptr<BiomeSource> MakeBiomeSource(const WorldSpec& spec) {
  switch (spec.biome_source) {
    case BiomeSourceKind::kClimate:
      return std::make_unique<ClimateBiomeSource>(spec);
  }
  return std::make_unique<ClimateBiomeSource>(spec);
}

}  // namespace worldgen
