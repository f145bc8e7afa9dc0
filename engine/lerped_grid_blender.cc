#include "engine/lerped_grid_blender.h"

#include <algorithm>
#include <array>
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
    {.name = "interpolation", .default_value = 0.0, .min = 0.0, .max = 1.0, .integer = true},
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

// The uniform cubic B-spline basis at fraction f of the cell [g, g + 1]: the weights of vertices
// g - 1, g, g + 1, g + 2. Each is >= 0 on [0, 1] and they sum to 1 (up to rounding), so any
// interpolant built from them keeps the vertex weights' range and partition of unity; the curve
// is C2 across vertices.
inline std::array<double, 4> CubicBSpline(double f) {
  const double g = 1.0 - f, f2 = f * f, f3 = f2 * f;
  return {g * g * g / 6.0, (3.0 * f3 - 6.0 * f2 + 4.0) / 6.0,
          (-3.0 * f3 + 3.0 * f2 + 3.0 * f + 1.0) / 6.0, f3 / 6.0};
}

// Slot k of the tensor-product B-spline over 4 x 4 vertices: vertex (a, b) of the stencil (a along
// x) at base + (b * row + a) * slots + k, weights bx[a] * bz[b]. The one expression both paths use:
// rows summed in b order, each row in a order.
inline double BSpline(const float* base, size_t row, size_t slots, size_t k,
                      const std::array<double, 4>& bx, const std::array<double, 4>& bz) {
  double sum = 0.0;
  for (size_t b = 0; b < 4; ++b) {
    const float* r = base + b * row * slots + k;
    const double along =
        bx[0] * r[0] + bx[1] * r[slots] + bx[2] * r[2 * slots] + bx[3] * r[3 * slots];
    sum += bz[b] * along;
  }
  return sum;
}

}  // namespace

const BlenderMethod LerpedGridBlender::kMethod = {BlenderKind::kLerpedGrid, "lerped_grid", kParams,
                                                  &Validate, &Make};

LerpedGridBlender::LerpedGridBlender(const WorldSpec& spec, const BiomeSource& source,
                                     uint64_t world_uid)
    : interval_(BlenderParam(spec, "interval")),
      blend_radius_(BlenderParam(spec, "blend_radius")),
      bspline_(BlenderParam(spec, "interpolation") == 1.0),
      grid_(source, static_cast<int>(interval_), BiomeRadiiSquared(spec, blend_radius_),
            world_uid) {}

std::vector<BlenderFigure> LerpedGridBlender::Describe() const {
  return {{"interval", interval_},
          {"blend_radius", blend_radius_},
          {"interpolation", bspline_ ? 1.0 : 0.0},
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
  // Vertices from the cell of the first column (one before it for the B-spline) to one past the
  // cell of the last (two past for the B-spline).
  const int64_t pad = bspline_ ? 1 : 0;
  const int64_t gx0 = FloorDiv(x0, g) - pad, gz0 = FloorDiv(z0, g) - pad;
  const int nx = static_cast<int>(FloorDiv(x0 + size - 1, g) - gx0 + 2 + pad);
  const int nz = static_cast<int>(FloorDiv(z0 + size - 1, g) - gz0 + 2 + pad);
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
      // The cell's first vertex (the stencil's first for the B-spline).
      const size_t i = static_cast<size_t>(gx - pad - gx0), j = static_cast<size_t>(gz - pad - gz0);
      const float* a = vertex.data() + (j * nx + i) * slots;
      const size_t col = static_cast<size_t>(lz) * size + lx;
      if (bspline_) {
        const std::array<double, 4> bx = CubicBSpline(fx), bz = CubicBSpline(fz);
        for (size_t k = 0; k < slots; ++k) {
          dense[k][col] = static_cast<float>(BSpline(a, static_cast<size_t>(nx), slots, k, bx, bz));
        }
        continue;
      }
      const float* b = a + slots;
      const float* c = a + static_cast<size_t>(nx) * slots;
      const float* d = c + slots;
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
  const int span = bspline_ ? 4 : 2;
  const int64_t first = bspline_ ? 1 : 0;
  if (!VertexWeights(gx - first, gz - first, span, span, cache, &biomes, &vertex)) {
    weights->emplace_back(biomes.empty() ? 0 : biomes[0], 1.0f);
    return;
  }
  const size_t slots = biomes.size();
  if (bspline_) {
    const std::array<double, 4> bx = CubicBSpline(fx), bz = CubicBSpline(fz);
    for (size_t k = 0; k < slots; ++k) {
      const float w = static_cast<float>(BSpline(vertex.data(), 4, slots, k, bx, bz));
      if (w != 0.0f) weights->emplace_back(biomes[k], w);
    }
    return;
  }
  for (size_t k = 0; k < slots; ++k) {
    const float w = static_cast<float>(Bilinear(vertex[k], vertex[slots + k], vertex[2 * slots + k],
                                                vertex[3 * slots + k], fx, fz));
    if (w != 0.0f) weights->emplace_back(biomes[k], w);
  }
}

}  // namespace worldgen
