#include "engine/blender.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/chunk.h"
#include "engine/convoluted_grid_blender.h"
#include "engine/full_resolution_blender.h"
#include "engine/jittered_cells_blender.h"
#include "engine/lerped_grid_blender.h"
#include "engine/parameter_voronoi_blender.h"
#include "engine/scattered_blender.h"

namespace worldgen {
namespace {

// One entry per method, in BlenderKind order (checked by MethodOf).
const BlenderMethod* const kMethods[] = {
    &ScatteredBlender::kMethod,  &FullResolutionBlender::kMethod,   &ConvolutedGridBlender::kMethod,
    &LerpedGridBlender::kMethod, &ParameterVoronoiBlender::kMethod, &JitteredCellsBlender::kMethod,
};

bool InRange(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

std::span<const BlenderMethod* const> BlenderMethods() { return kMethods; }

const BlenderMethod& MethodOf(BlenderKind kind) {
  const size_t index = static_cast<size_t>(kind);
  if (index >= std::size(kMethods) || kMethods[index]->kind != kind) {
    std::fprintf(stderr, "worldgen: BlenderKind %d has no method entry\n", static_cast<int>(kind));
    std::abort();
  }
  return *kMethods[index];
}

const BlenderMethod* FindMethod(absl::string_view name) {
  for (const BlenderMethod* m : kMethods) {
    if (m->name == name) return m;
  }
  return nullptr;
}

absl::string_view BlenderName(BlenderKind kind) { return MethodOf(kind).name; }

const BlenderParamDef* FindParam(const BlenderMethod& method, absl::string_view name) {
  for (const BlenderParamDef& def : method.params) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

double BlenderParam(const WorldSpec& spec, absl::string_view name) {
  const BlenderMethod& method = MethodOf(spec.blender.kind);
  const BlenderParamDef* def = FindParam(method, name);
  if (def == nullptr) {
    std::fprintf(stderr, "worldgen: %.*s declares no parameter %.*s\n",
                 static_cast<int>(method.name.size()), method.name.data(),
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  auto it = spec.blender.params.find(std::string(name));
  return it == spec.blender.params.end() ? def->default_value : it->second;
}

absl::Status ValidateBlenderSpec(const WorldSpec& spec) {
  const size_t index = static_cast<size_t>(spec.blender.kind);
  if (index >= std::size(kMethods)) {
    return absl::InvalidArgumentError(absl::StrFormat("blender = %d is not a known blending method",
                                                      static_cast<int>(spec.blender.kind)));
  }
  const BlenderMethod& method = MethodOf(spec.blender.kind);
  for (const auto& [name, value] : spec.blender.params) {
    const BlenderParamDef* def = FindParam(method, name);
    if (def == nullptr) {
      std::vector<absl::string_view> names;
      for (const BlenderParamDef& d : method.params) names.push_back(d.name);
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.%s is not a parameter of the %s blender (its parameters: %s)", method.name,
          name.substr(0, 64), method.name, absl::StrJoin(names, ", ")));
    }
    if (!InRange(value, def->min, def->max)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.%s = %g is outside [%g, %g]", method.name, name, value, def->min, def->max));
    }
    if (def->integer && value != std::floor(value)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.%s = %g must be a whole number", method.name, name, value));
    }
  }
  return method.validate(spec);
}

std::unique_ptr<Blender> MakeBlender(const WorldSpec& spec, const BiomeSource& source,
                                     uint64_t world_uid) {
  return MethodOf(spec.blender.kind).make(spec, source, world_uid);
}

void Blender::BlendColumnGrid(int64_t x0, int64_t z0, int nx, int nz, int step,
                              BiomeSampleCache* cache,
                              std::vector<std::vector<std::pair<int, float>>>* columns) const {
  columns->resize(static_cast<size_t>(nx) * static_cast<size_t>(nz));
  const int64_t span = int64_t{step} * (std::max(nx, nz) - 1) + 1;
  if (span > kMaxChunkSize) {
    for (int d = 0; d < nz; ++d) {
      for (int a = 0; a < nx; ++a) {
        BlendPoint(static_cast<double>(x0 + int64_t{step} * a),
                   static_cast<double>(z0 + int64_t{step} * d), cache,
                   &(*columns)[static_cast<size_t>(d) * nx + a]);
      }
    }
    return;
  }
  const int size = static_cast<int>(span);
  thread_local std::vector<IndexedLayer> layers;
  BlendColumns(x0, z0, size, cache, &layers);
  for (int d = 0; d < nz; ++d) {
    for (int a = 0; a < nx; ++a) {
      ColumnWeights(layers, static_cast<size_t>(ColumnIndex(size, step * a, step * d)),
                    &(*columns)[static_cast<size_t>(d) * nx + a]);
    }
  }
}

void ColumnWeights(std::span<const IndexedLayer> layers, size_t at,
                   std::vector<std::pair<int, float>>* column) {
  column->clear();
  for (const IndexedLayer& layer : layers) {
    if (layer.weights[at] != 0.0f) column->emplace_back(layer.biome, layer.weights[at]);
  }
}

void LayerAccumulator::Add(size_t column, const std::vector<std::pair<int, float>>& weights) {
  for (const auto& [biome, w] : weights) {
    std::vector<float>& layer = dense_[static_cast<size_t>(biome)];
    if (layer.empty()) layer.assign(columns_, 0.0f);
    layer[column] = w;
  }
}

size_t LayerAccumulator::MoveTo(std::vector<IndexedLayer>* layers) {
  layers->clear();
  for (size_t k = 0; k < dense_.size(); ++k) {
    if (!dense_[k].empty()) layers->push_back({static_cast<int>(k), std::move(dense_[k])});
  }
  return layers->size();
}

void StackColumns(std::span<const std::vector<std::pair<int, float>>> columns, size_t rows,
                  int biome_count, std::vector<IndexedLayer>* layers) {
  LayerAccumulator row(biome_count, columns.size());
  for (size_t c = 0; c < columns.size(); ++c) row.Add(c, columns[c]);
  row.MoveTo(layers);
  for (IndexedLayer& layer : *layers) {
    std::vector<float> stacked(rows * columns.size());
    for (size_t r = 0; r < rows; ++r) {
      std::copy(layer.weights.begin(), layer.weights.end(),
                stacked.begin() + static_cast<std::ptrdiff_t>(r * columns.size()));
    }
    layer.weights = std::move(stacked);
  }
}

int OneBiomeColumns(std::span<const std::vector<std::pair<int, float>>> columns) {
  if (columns.empty() || columns[0].size() != 1) return -1;
  const std::pair<int, float> one{columns[0][0].first, 1.0f};
  for (const std::vector<std::pair<int, float>>& column : columns) {
    if (column.size() != 1 || column[0] != one) return -1;
  }
  return one.first;
}

absl::Status ValidateKernelRadii(const WorldSpec& spec, absl::string_view method, double min_radius,
                                 double max_radius, absl::string_view rule) {
  const double radius = BlenderParam(spec, "blend_radius");
  if (!InRange(radius, min_radius, max_radius)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.blend_radius = %g is outside [%g, %g]: %s", method, radius, min_radius,
                        max_radius, rule));
  }
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    if (b.blend_radius != 0.0 && !InRange(b.blend_radius, min_radius, max_radius)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "biomes[%d] (id %u).blend_radius = %g is outside [%g, %g] (0 = %s.blend_radius): %s", k,
          b.id, b.blend_radius, min_radius, max_radius, method, rule));
    }
  }
  return absl::OkStatus();
}

std::vector<double> BiomeRadiiSquared(const WorldSpec& spec, double default_radius) {
  std::vector<double> radius_sq;
  radius_sq.reserve(spec.biomes.size());
  for (const BiomeSpec& b : spec.biomes) {
    const double r = b.blend_radius > 0.0 ? b.blend_radius : default_radius;
    radius_sq.push_back(r * r);
  }
  return radius_sq;
}

}  // namespace worldgen
