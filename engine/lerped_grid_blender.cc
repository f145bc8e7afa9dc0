#include "engine/lerped_grid_blender.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/convoluted_grid_blender.h"
#include "engine/floor_div.h"
#include "engine/sparse_convolution.h"

namespace worldgen {
namespace {

constexpr BlenderParamDef kParams[] = {
    {.name = "interval", .default_value = 8.0, .min = 1.0, .max = 256.0, .integer = true},
    {.name = "blend_radius", .default_value = 24.0, .min = 1.0, .max = 1024.0},
};

absl::Status Validate(const WorldSpec& spec) { return ValidateGridRadii(spec, "lerped_grid"); }

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source,
                              uint64_t world_uid) {
  return std::make_unique<LerpedGridBlender>(spec, source, world_uid);
}

// Bilinear interpolation of the corner values a (gx, gz), b (gx + 1, gz), c (gx, gz + 1),
// d (gx + 1, gz + 1) at fractions fx, fz: the one expression both paths use.
inline double Bilinear(double a, double b, double c, double d, double fx, double fz) {
  const double top = a + (b - a) * fx;
  const double bottom = c + (d - c) * fx;
  return top + (bottom - top) * fz;
}

}  // namespace

const BlenderMethod LerpedGridBlender::kMethod = {BlenderKind::kLerpedGrid, "lerped_grid", kParams,
                                                  &Validate, &Make};

LerpedGridBlender::LerpedGridBlender(const WorldSpec& spec, const BiomeSource& source,
                                     uint64_t world_uid)
    : interval_(BlenderParam(spec, "interval")),
      blend_radius_(BlenderParam(spec, "blend_radius")),
      grid_(source, static_cast<int>(interval_), BiomeRadiiSquared(spec, blend_radius_),
            world_uid) {}

std::vector<BlenderFigure> LerpedGridBlender::Describe() const {
  return {{"interval", interval_},
          {"blend_radius", blend_radius_},
          {"min_blend_radius", MinSquareGridRadius(grid_.spacing())},
          {"max_biome_radius", grid_.max_radius()}};
}

bool LerpedGridBlender::VertexWeights(int64_t gx0, int64_t gz0, int nx, int nz,
                                      BiomeSampleCache* cache, std::vector<int>* biomes,
                                      std::vector<float>* out) const {
  const double g = interval_;
  std::vector<KernelSample> samples;
  grid_.Gather(static_cast<double>(gx0) * g, static_cast<double>(gz0) * g,
               static_cast<double>(gx0 + nx - 1) * g, static_cast<double>(gz0 + nz - 1) * g, cache,
               &samples);
  biomes->clear();
  out->clear();
  for (const KernelSample& s : samples) biomes->push_back(s.biome);
  std::sort(biomes->begin(), biomes->end());
  biomes->erase(std::unique(biomes->begin(), biomes->end()), biomes->end());
  if (biomes->size() <= 1) return false;
  const size_t slots = biomes->size();
  out->assign(static_cast<size_t>(nx) * static_cast<size_t>(nz) * slots, 0.0f);
  std::vector<std::pair<int, float>> at_vertex;
  for (int j = 0; j < nz; ++j) {
    for (int i = 0; i < nx; ++i) {
      ConvolvePoint(samples, static_cast<double>(gx0 + i) * g, static_cast<double>(gz0 + j) * g,
                    &at_vertex);
      float* dense = out->data() + (static_cast<size_t>(j) * nx + i) * slots;
      for (const auto& [biome, w] : at_vertex) {
        dense[std::lower_bound(biomes->begin(), biomes->end(), biome) - biomes->begin()] = w;
      }
    }
  }
  return true;
}

bool LerpedGridBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                     std::vector<IndexedLayer>* layers) const {
  layers->clear();
  const int64_t g = static_cast<int64_t>(interval_);
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  const int64_t gx0 = FloorDiv(x0, g), gz0 = FloorDiv(z0, g);
  const int nx = static_cast<int>(FloorDiv(x0 + size - 1, g) - gx0 + 2);
  const int nz = static_cast<int>(FloorDiv(z0 + size - 1, g) - gz0 + 2);
  std::vector<int> biomes;
  std::vector<float> vertex;
  if (!VertexWeights(gx0, gz0, nx, nz, cache, &biomes, &vertex)) {
    layers->push_back({biomes.empty() ? 0 : biomes[0], std::vector<float>(columns, 1.0f)});
    return true;
  }
  const size_t slots = biomes.size();
  std::vector<std::vector<float>> dense(slots, std::vector<float>(columns));
  for (int lz = 0; lz < size; ++lz) {
    const int64_t gz = FloorDiv(z0 + lz, g);
    const double fz =
        (static_cast<double>(z0 + lz) - static_cast<double>(gz) * interval_) / interval_;
    for (int lx = 0; lx < size; ++lx) {
      const int64_t gx = FloorDiv(x0 + lx, g);
      const double fx =
          (static_cast<double>(x0 + lx) - static_cast<double>(gx) * interval_) / interval_;
      const size_t i = static_cast<size_t>(gx - gx0), j = static_cast<size_t>(gz - gz0);
      const float* a = vertex.data() + (j * nx + i) * slots;
      const float* b = a + slots;
      const float* c = a + static_cast<size_t>(nx) * slots;
      const float* d = c + slots;
      const size_t col = static_cast<size_t>(lz) * size + lx;
      for (size_t k = 0; k < slots; ++k) {
        dense[k][col] = static_cast<float>(Bilinear(a[k], b[k], c[k], d[k], fx, fz));
      }
    }
  }
  for (size_t k = 0; k < slots; ++k) {
    if (std::any_of(dense[k].begin(), dense[k].end(), [](float v) { return v != 0.0f; })) {
      layers->push_back({biomes[k], std::move(dense[k])});
    }
  }
  return false;
}

void LerpedGridBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                   std::vector<std::pair<int, float>>* weights) const {
  weights->clear();
  const int64_t gx = static_cast<int64_t>(std::floor(x / interval_));
  const int64_t gz = static_cast<int64_t>(std::floor(z / interval_));
  const double fx = (x - static_cast<double>(gx) * interval_) / interval_;
  const double fz = (z - static_cast<double>(gz) * interval_) / interval_;
  std::vector<int> biomes;
  std::vector<float> vertex;
  if (!VertexWeights(gx, gz, 2, 2, cache, &biomes, &vertex)) {
    weights->emplace_back(biomes.empty() ? 0 : biomes[0], 1.0f);
    return;
  }
  const size_t slots = biomes.size();
  for (size_t k = 0; k < slots; ++k) {
    const float w = static_cast<float>(Bilinear(vertex[k], vertex[slots + k], vertex[2 * slots + k],
                                                vertex[3 * slots + k], fx, fz));
    if (w != 0.0f) weights->emplace_back(biomes[k], w);
  }
}

}  // namespace worldgen
