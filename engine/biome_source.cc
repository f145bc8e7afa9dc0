#include "engine/biome_source.h"

#include <algorithm>

#include "engine/hash.h"
#include "engine/noise.h"

namespace worldgen {
namespace {
// Stream ids separating the world seed's noise fields.
constexpr uint64_t kTemperatureStream = 0x7e3d;
constexpr uint64_t kHumidityStream = 0x4a11;
constexpr uint64_t kNoiseMaxStream = 0x3a9f;
constexpr uint64_t kCaveTemperatureStream = 0xca7e;
constexpr uint64_t kCaveHumidityStream = 0xca71;

// Points per batched noise call: the per-block noise values live on the stack. One cache tile
// (BiomeTile's 16 x 16 vertices).
constexpr size_t kBatch = 256;
}  // namespace

void BiomeSource::BiomeIndices(const double* xs, const double* zs, size_t n, uint16_t* out) const {
  for (size_t k = 0; k < n; ++k) out[k] = static_cast<uint16_t>(BiomeIndexAt(xs[k], zs[k]));
}

ClimateBiomeSource::ClimateBiomeSource(const WorldSpec& spec)
    : temperature_seed_(DeriveSeed(spec.seed, kTemperatureStream)),
      humidity_seed_(DeriveSeed(spec.seed, kHumidityStream)),
      climate_(spec.climate) {
  for (const uint16_t k : SurfaceBiomes(spec)) {
    const BiomeSpec& b = spec.biomes[k];
    points_.push_back({b.temperature, b.humidity, static_cast<int>(k)});
  }
}

double ClimateBiomeSource::TemperatureAt(double x, double z) const {
  return FractalNoise2D(temperature_seed_, x, z, climate_.temperature_frequency, climate_.octaves);
}

double ClimateBiomeSource::HumidityAt(double x, double z) const {
  return FractalNoise2D(humidity_seed_, x, z, climate_.humidity_frequency, climate_.octaves);
}

void ClimateBiomeSource::ClimateAt(const double* xs, const double* zs, size_t n,
                                   double* temperature, double* humidity) const {
  FractalNoise2DBatch(temperature_seed_, xs, zs, n, climate_.temperature_frequency,
                      climate_.octaves, temperature);
  FractalNoise2DBatch(humidity_seed_, xs, zs, n, climate_.humidity_frequency, climate_.octaves,
                      humidity);
}

int ClimateBiomeSource::Nearest(double t, double h) const {
  int best = 0;
  double best_d2 = 0.0;
  for (size_t k = 0; k < points_.size(); ++k) {
    double dt = t - points_[k].temperature;
    double dh = h - points_[k].humidity;
    double d2 = dt * dt + dh * dh;
    if (k == 0 || d2 < best_d2) {  // Strict '<': ties keep the lower index.
      best = points_[k].index;
      best_d2 = d2;
    }
  }
  return best;
}

int ClimateBiomeSource::BiomeIndexAt(double x, double z) const {
  return Nearest(TemperatureAt(x, z), HumidityAt(x, z));
}

void ClimateBiomeSource::BiomeIndices(const double* xs, const double* zs, size_t n,
                                      uint16_t* out) const {
  double t[kBatch], h[kBatch];
  for (size_t start = 0; start < n; start += kBatch) {
    const size_t count = std::min(kBatch, n - start);
    FractalNoise2DBatch(temperature_seed_, xs + start, zs + start, count,
                        climate_.temperature_frequency, climate_.octaves, t);
    FractalNoise2DBatch(humidity_seed_, xs + start, zs + start, count, climate_.humidity_frequency,
                        climate_.octaves, h);
    for (size_t k = 0; k < count; ++k) out[start + k] = static_cast<uint16_t>(Nearest(t[k], h[k]));
  }
}

NoiseMaxBiomeSource::NoiseMaxBiomeSource(const WorldSpec& spec) : params_(spec.noise_max) {
  const uint64_t base = DeriveSeed(spec.seed, kNoiseMaxStream);
  seeds_.reserve(spec.biomes.size());
  for (const BiomeSpec& b : spec.biomes) seeds_.push_back(DeriveSeed(base, b.id));
  surface_ = SurfaceBiomes(spec);
  for (const uint16_t k : surface_) surface_seeds_.push_back(seeds_[k]);
}

double NoiseMaxBiomeSource::FieldAt(int index, double x, double z) const {
  return FractalNoise2D(seeds_[static_cast<size_t>(index)], x, z, params_.frequency,
                        params_.octaves, params_.lacunarity, params_.gain);
}

int NoiseMaxBiomeSource::BiomeIndexAt(double x, double z) const {
  int best = surface_[0];
  double best_value = FieldAt(best, x, z);
  for (size_t k = 1; k < surface_.size(); ++k) {
    const double v = FieldAt(surface_[k], x, z);
    if (v > best_value) {  // Strict '>': ties keep the lower index.
      best = surface_[k];
      best_value = v;
    }
  }
  return best;
}

void NoiseMaxBiomeSource::BiomeIndices(const double* xs, const double* zs, size_t n,
                                       uint16_t* out) const {
  // Every field shares frequency, octaves, lacunarity and gain, so one multi-seed batch serves up
  // to kNoiseSeedsPerPass biomes. The comparison is BiomeIndexAt's, biome by biome in index order.
  double best_value[kBatch], values[kNoiseSeedsPerPass * kBatch];
  for (size_t start = 0; start < n; start += kBatch) {
    const size_t count = std::min(kBatch, n - start);
    uint16_t* best = out + start;
    for (size_t first = 0; first < surface_seeds_.size(); first += kNoiseSeedsPerPass) {
      const size_t fields = std::min(kNoiseSeedsPerPass, surface_seeds_.size() - first);
      FractalNoise2DMultiBatch(surface_seeds_.data() + first, fields, xs + start, zs + start, count,
                               params_.frequency, params_.octaves, values, params_.lacunarity,
                               params_.gain);
      for (size_t f = 0; f < fields; ++f) {
        const size_t k = first + f;
        const double* value = values + f * count;
        if (k == 0) {
          std::fill(best, best + count, surface_[0]);
          std::copy(value, value + count, best_value);
          continue;
        }
        for (size_t p = 0; p < count; ++p) {
          if (value[p] > best_value[p]) {  // Strict '>': ties keep the lower index.
            best[p] = surface_[k];
            best_value[p] = value[p];
          }
        }
      }
    }
  }
}

CaveBiomeSource::CaveBiomeSource(const WorldSpec& spec, const BiomeSource& surface)
    : surface_(surface),
      temperature_seed_(DeriveSeed(spec.seed, kCaveTemperatureStream)),
      humidity_seed_(DeriveSeed(spec.seed, kCaveHumidityStream)),
      caves_spec_(spec.caves) {
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    points_.push_back({b.temperature, b.humidity});
    if (b.cave.has_value()) caves_.push_back({static_cast<int>(k), b.cave->y_min, b.cave->y_max});
  }
}

double CaveBiomeSource::TemperatureAt(double x, double y, double z) const {
  return FractalNoise3D(temperature_seed_, x, y, z, caves_spec_.frequency, caves_spec_.octaves);
}

double CaveBiomeSource::HumidityAt(double x, double y, double z) const {
  return FractalNoise3D(humidity_seed_, x, y, z, caves_spec_.frequency, caves_spec_.octaves);
}

bool CaveBiomeSource::MayHoldCaves(double lo, double hi) const {
  return std::any_of(caves_.begin(), caves_.end(),
                     [&](const Cave& c) { return !(hi < c.y_min || lo >= c.y_max); });
}

void VolumeSource::CaveIndicesAt(const double* xs, const double* ys, const double* zs, size_t n,
                                 int* out) const {
  for (size_t k = 0; k < n; ++k) out[k] = BiomeIndexAt(xs[k], ys[k], zs[k]);
}

bool CaveBiomeSource::InSomeBand(double y) const {
  return std::any_of(caves_.begin(), caves_.end(),
                     [y](const Cave& c) { return y >= c.y_min && y < c.y_max; });
}

int CaveBiomeSource::Pick(int above, double y, double t, double h) const {
  const auto distance = [&](int index) {
    const double dt = t - points_[static_cast<size_t>(index)].first;
    const double dh = h - points_[static_cast<size_t>(index)].second;
    return dt * dt + dh * dh;
  };
  int best = above;
  double best_d2 = distance(above);
  for (const Cave& c : caves_) {
    if (!(y >= c.y_min && y < c.y_max)) continue;
    const double d2 = distance(c.index);
    if (d2 < best_d2) best = c.index, best_d2 = d2;  // Strict: ties keep the earlier.
  }
  return best;
}

int CaveBiomeSource::BiomeIndexAt(double x, double y, double z) const {
  const int above = surface_.BiomeIndexAt(x, z);
  if (!InSomeBand(y)) return above;
  // Temperature and humidity, bit for bit TemperatureAt and HumidityAt, sharing their simplices.
  const uint64_t seeds[2] = {temperature_seed_, humidity_seed_};
  double climate[2];
  FractalNoise3DMulti(seeds, 2, x, y, z, caves_spec_.frequency, caves_spec_.octaves, climate);
  return Pick(above, y, climate[0], climate[1]);
}

void CaveBiomeSource::CaveIndicesAt(const double* xs, const double* ys, const double* zs, size_t n,
                                    int* out) const {
  // The points inside some band, whose surface biomes are read in one batch.
  // Their climates too, in one batch of the 3D noise (BiomeIndexAt's, bit for bit).
  thread_local std::vector<double> band_x, band_y, band_z, climate;
  thread_local std::vector<size_t> band_at;
  thread_local std::vector<uint16_t> above;
  band_x.clear();
  band_y.clear();
  band_z.clear();
  band_at.clear();
  for (size_t k = 0; k < n; ++k) {
    out[k] = -1;
    if (!InSomeBand(ys[k])) continue;
    band_at.push_back(k);
    band_x.push_back(xs[k]);
    band_y.push_back(ys[k]);
    band_z.push_back(zs[k]);
  }
  const size_t m = band_at.size();
  above.resize(m);
  surface_.BiomeIndices(band_x.data(), band_z.data(), m, above.data());
  const uint64_t seeds[2] = {temperature_seed_, humidity_seed_};
  climate.resize(2 * m);
  FractalNoise3DMultiBatch(seeds, 2, band_x.data(), band_y.data(), band_z.data(), m,
                           caves_spec_.frequency, caves_spec_.octaves, climate.data());
  for (size_t t = 0; t < m; ++t) {
    const int best = Pick(above[t], band_y[t], climate[2 * t], climate[2 * t + 1]);
    out[band_at[t]] = best == above[t] ? -1 : best;  // The 2D map never gives a cave biome.
  }
}

std::unique_ptr<BiomeSource> MakeBiomeSource(const WorldSpec& spec) {
  switch (spec.biome_source) {
    case BiomeSourceKind::kClimate:
      return std::make_unique<ClimateBiomeSource>(spec);
    case BiomeSourceKind::kNoiseMax:
      return std::make_unique<NoiseMaxBiomeSource>(spec);
  }
  return std::make_unique<ClimateBiomeSource>(spec);
}

}  // namespace worldgen
