#include "engine/parameter_voronoi_blender.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_format.h"
#include "engine/chunk.h"

namespace worldgen {
namespace {

constexpr double kMinRadius = 0.001;
constexpr double kMaxRadius = 1.0;

constexpr BlenderParamDef kParams[] = {
    {.name = "climate_radius", .default_value = 0.05, .min = kMinRadius, .max = kMaxRadius},
    {.name = "auto_radius_fraction", .default_value = 0.0, .min = 0.0, .max = 0.5},
};

absl::Status Validate(const WorldSpec& spec) {
  // It blends the climate (temperature, humidity) read at every column: a world whose raw map
  // comes from another source would be blended from a map it does not show (its source_biome,
  // heights and borders follow the other map).
  if (spec.biome_source != BiomeSourceKind::kClimate) {
    return absl::InvalidArgumentError(
        "parameter_voronoi blends the climate map and needs biome_source = climate; this world's "
        "raw map comes from biome_source = noise_max, which has no climate to blend: choose the "
        "climate source or another method");
  }
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    if (spec.biomes[k].cave.has_value()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "biomes[%d] (id %u) is a cave biome, and parameter_voronoi blends every biome's climate "
          "point into the 2D map, where cave biomes never are: choose another method for a world "
          "with caves",
          k, spec.biomes[k].id));
    }
  }
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    const double r = b.parameter_radius;
    if (r != 0.0 && !(r >= kMinRadius && r <= kMaxRadius)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("biomes[%d] (id %u).parameter_radius = %g is outside [%g, %g] (0 = "
                          "parameter_voronoi.climate_radius or the automatic radius)",
                          k, b.id, r, kMinRadius, kMaxRadius));
    }
  }
  // Two biomes on one point have no dividing line (B - A = 0).
  for (size_t i = 0; i < spec.biomes.size(); ++i) {
    for (size_t j = i + 1; j < spec.biomes.size(); ++j) {
      const BiomeSpec& a = spec.biomes[i];
      const BiomeSpec& b = spec.biomes[j];
      if (a.temperature == b.temperature && a.humidity == b.humidity) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "biomes[%d] (id %u) and biomes[%d] (id %u) share the climate point (%g, %g): "
            "parameter_voronoi needs distinct points (two equal points have no dividing line)",
            i, a.id, j, b.id, a.temperature, a.humidity));
      }
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource&, uint64_t) {
  return std::make_unique<ParameterVoronoiBlender>(spec);
}

// The climate axes of a spec's biomes, (temperature, humidity) per biome.
std::vector<double> ClimatePoints(const WorldSpec& spec) {
  std::vector<double> coords;
  coords.reserve(spec.biomes.size() * 2);
  for (const BiomeSpec& b : spec.biomes) {
    coords.push_back(b.temperature);
    coords.push_back(b.humidity);
  }
  return coords;
}

inline double Fade(double t) { return std::min(1.0, t * t * (3.0 - 2.0 * t)); }

}  // namespace

const BlenderMethod ParameterVoronoiBlender::kMethod = {
    BlenderKind::kParameterVoronoi, "parameter_voronoi", kParams, &Validate, &Make};

ParameterSpace::ParameterSpace(int dims, std::vector<double> coords, std::vector<double> radii)
    : dims_(dims), coords_(std::move(coords)), radii_(std::move(radii)) {
  for (double r : radii_) max_radius_ = std::max(max_radius_, r);
}

void ParameterSpace::Candidates(const double* input, std::vector<int>* out) const {
  out->clear();
  const int n = size();
  // Two passes (nearest distance, then the points in reach) recompute each distance rather than
  // storing it: cheaper for the usual dozen biomes.
  double nearest_sq = std::numeric_limits<double>::infinity();
  auto distance_sq = [&](int k) {
    const double* p = point(k);
    double d2 = 0.0;
    for (int a = 0; a < dims_; ++a) {
      const double d = input[a] - p[a];
      d2 += d * d;
    }
    return d2;
  };
  for (int k = 0; k < n; ++k) nearest_sq = std::min(nearest_sq, distance_sq(k));
  const double reach = 4.0 * max_radius_ + std::sqrt(nearest_sq) + kCullMargin;
  const double reach_sq = reach * reach;
  for (int k = 0; k < n; ++k) {
    if (distance_sq(k) <= reach_sq) out->push_back(k);
  }
}

void ParameterSpace::Weights(const double* input, std::span<const int> candidates,
                             std::vector<double>* out) const {
  const size_t n = candidates.size();
  out->assign(n, 1.0);
  std::vector<double>& w = *out;
  for (size_t i = 0; i < n; ++i) {
    const double* a = point(candidates[i]);
    for (size_t j = i + 1; j < n; ++j) {
      if (w[i] == 0.0 && w[j] == 0.0) continue;  // Both factors would multiply 0: no change.
      const double* b = point(candidates[j]);
      double dot = 0.0, length_sq = 0.0;
      for (int d = 0; d < dims_; ++d) {
        const double along = b[d] - a[d];
        dot += (input[d] - (a[d] + b[d]) * 0.5) * along;
        length_sq += along * along;
      }
      const double f = dot / std::sqrt(length_sq);
      const double pair_radius = (radius(candidates[i]) + radius(candidates[j])) * 0.5;
      const double h = Fade(std::clamp(f / pair_radius, -1.0, 1.0) * 0.5 + 0.5);
      w[j] *= h;
      w[i] *= 1.0 - h;
    }
  }
  double total = 0.0;
  for (double v : w) total += v;
  for (double& v : w) v /= total;
}

std::vector<double> ParameterVoronoiBlender::BiomeRadii(const WorldSpec& spec) {
  const double climate_radius = BlenderParam(spec, "climate_radius");
  const double fraction = BlenderParam(spec, "auto_radius_fraction");
  const std::vector<double> coords = ClimatePoints(spec);
  const size_t n = spec.biomes.size();
  std::vector<double> radii(n, climate_radius);
  for (size_t k = 0; k < n; ++k) {
    if (spec.biomes[k].parameter_radius > 0.0) {
      radii[k] = spec.biomes[k].parameter_radius;
      continue;
    }
    if (fraction <= 0.0 || n < 2) continue;
    double nearest_sq = std::numeric_limits<double>::infinity();
    for (size_t o = 0; o < n; ++o) {
      if (o == k) continue;
      const double dt = coords[2 * o] - coords[2 * k];
      const double dh = coords[2 * o + 1] - coords[2 * k + 1];
      nearest_sq = std::min(nearest_sq, dt * dt + dh * dh);
    }
    radii[k] = fraction * std::sqrt(nearest_sq);
  }
  return radii;
}

ParameterVoronoiBlender::ParameterVoronoiBlender(const WorldSpec& spec)
    : climate_(spec),
      climate_radius_(BlenderParam(spec, "climate_radius")),
      auto_radius_fraction_(BlenderParam(spec, "auto_radius_fraction")),
      space_(2, ClimatePoints(spec), BiomeRadii(spec)) {}

std::vector<BlenderFigure> ParameterVoronoiBlender::Describe() const {
  double min_radius = space_.max_radius();
  for (int k = 0; k < space_.size(); ++k) min_radius = std::min(min_radius, space_.radius(k));
  return {{"climate_radius", climate_radius_},
          {"auto_radius_fraction", auto_radius_fraction_},
          {"min_biome_radius", min_radius},
          {"max_biome_radius", space_.max_radius()}};
}

void ParameterVoronoiBlender::WeightsAtClimate(double temperature, double humidity,
                                               std::vector<int>* candidates,
                                               std::vector<double>* scratch,
                                               std::vector<std::pair<int, float>>* weights) const {
  const double input[2] = {temperature, humidity};
  space_.Candidates(input, candidates);
  space_.Weights(input, *candidates, scratch);
  weights->clear();
  for (size_t i = 0; i < candidates->size(); ++i) {
    const float w = static_cast<float>((*scratch)[i]);
    if (w != 0.0f) weights->emplace_back((*candidates)[i], w);
  }
}

bool ParameterVoronoiBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache*,
                                           std::vector<IndexedLayer>* layers) const {
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  std::vector<double> xs(columns), zs(columns), temperature(columns), humidity(columns);
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
      xs[col] = static_cast<double>(x0 + lx);
      zs[col] = static_cast<double>(z0 + lz);
    }
  }
  climate_.ClimateAt(xs.data(), zs.data(), columns, temperature.data(), humidity.data());
  LayerAccumulator accumulator(space_.size(), columns);
  std::vector<int> candidates;
  std::vector<double> scratch;
  std::vector<std::pair<int, float>> at_column;
  for (size_t col = 0; col < columns; ++col) {
    WeightsAtClimate(temperature[col], humidity[col], &candidates, &scratch, &at_column);
    accumulator.Add(col, at_column);
  }
  // One layer: every column's only non-zero weight was w / w, exactly 1.
  return accumulator.MoveTo(layers) == 1;
}

void ParameterVoronoiBlender::BlendPoint(double x, double z, BiomeSampleCache*,
                                         std::vector<std::pair<int, float>>* weights) const {
  std::vector<int> candidates;
  std::vector<double> scratch;
  WeightsAtClimate(climate_.TemperatureAt(x, z), climate_.HumidityAt(x, z), &candidates, &scratch,
                   weights);
}

}  // namespace worldgen
