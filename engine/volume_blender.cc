#include "engine/volume_blender.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "absl/strings/str_format.h"
#include "engine/sparse_convolution.h"

namespace worldgen {

double ScatteredVolumeBlender::MinBlendRadius(double sampling_interval, double jitter) {
  return sampling_interval * (JitteredBccLattice::kCoveringRadius + jitter + 0.25);
}

absl::Status ScatteredVolumeBlender::Validate(const VolumeBlendParams& p) {
  const auto bad = [](const char* name, double value, const char* rule) {
    return absl::InvalidArgumentError(
        absl::StrFormat("caves.blending.%s = %g is out of range: %s", name, value, rule));
  };
  if (!(p.sampling_interval >= 1.0 && p.sampling_interval <= 256.0)) {
    return bad("sampling_interval", p.sampling_interval, "[1, 256] blocks");
  }
  if (!(p.jitter >= 0.0 && p.jitter <= 0.5)) return bad("jitter", p.jitter, "[0, 0.5]");
  const double min_radius = MinBlendRadius(p.sampling_interval, p.jitter);
  if (!(p.blend_radius >= min_radius && p.blend_radius <= 32.0 * p.sampling_interval &&
        p.blend_radius <= 1024.0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "caves.blending.blend_radius = %g is out of range: [%g, %g] (the lattice's largest gap, "
        "sampling_interval * (sqrt(5)/4 + jitter + 1/4), up to 32 intervals)",
        p.blend_radius, min_radius, std::min(1024.0, 32.0 * p.sampling_interval)));
  }
  if (!(p.vertical_blend_radius >= 1.0 && p.vertical_blend_radius <= p.blend_radius)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "caves.blending.vertical_blend_radius = %g is out of range: [1, blend_radius = %g]",
        p.vertical_blend_radius, p.blend_radius));
  }
  return absl::OkStatus();
}

ScatteredVolumeBlender::ScatteredVolumeBlender(uint64_t seed, const VolumeBlendParams& params,
                                               const VolumeSource& source, const Blender* surface,
                                               std::vector<char> is_cave)
    : source_(source),
      surface_(surface),
      is_cave_(std::move(is_cave)),
      lattice_(seed, params.sampling_interval,
               params.sampling_interval * params.vertical_blend_radius / params.blend_radius,
               params.jitter),
      radius_sq_(params.blend_radius * params.blend_radius),
      radius_(params.blend_radius) {}

bool ScatteredVolumeBlender::MayReachCaves(double min_y, double max_y) const {
  // A sample reaching y lies within the vertical radius plus the jitter of it (blocks), and a
  // block of slack covers rounding.
  const double reach = (radius_ + lattice_.jitter()) / lattice_.y_scale() + 1.0;
  return source_.MayHoldCaves(min_y - reach, max_y + reach);
}

void ScatteredVolumeBlender::GatherSamples(const VolumeBox& box,
                                           std::vector<VolumeSample>* out) const {
  out->clear();
  const double g = lattice_.interval(), s = lattice_.y_scale();
  const double min_y = box.min_y * s, max_y = box.max_y * s;
  // A point reaching the box has its jittered position within r of it, so its unjittered one
  // within r + jitter; a block of slack absorbs the rounding of the bounds (the exact test
  // below decides).
  const double reach = radius_ + lattice_.jitter() + 1.0;
  const auto lo = [&](double v) { return static_cast<int32_t>(std::floor((v - reach) / g - 0.5)); };
  const auto hi = [&](double v) { return static_cast<int32_t>(std::ceil((v + reach) / g)); };
  const int32_t i0 = lo(box.min_x), i1 = hi(box.max_x);
  const int32_t j0 = lo(min_y), j1 = hi(max_y);
  const int32_t k0 = lo(box.min_z), k1 = hi(box.max_z);
  for (int32_t j = j0; j <= j1; ++j) {
    for (int32_t k = k0; k <= k1; ++k) {
      for (int32_t i = i0; i <= i1; ++i) {
        for (int32_t c = 0; c < 2; ++c) {
          double x, y, z;
          lattice_.Position({i, j, k, c}, &x, &y, &z);
          const double ys = y * s;
          const double dx = x - std::min(std::max(x, box.min_x), box.max_x);
          const double dy = ys - std::min(std::max(ys, min_y), max_y);
          const double dz = z - std::min(std::max(z, box.min_z), box.max_z);
          if (!(dx * dx + dy * dy + dz * dz < radius_sq_)) continue;
          out->push_back({x, ys, z, static_cast<uint16_t>(source_.BiomeIndexAt(x, y, z))});
        }
      }
    }
  }
}

void ConvolveVolumePoint(std::span<const VolumeSample> samples, double radius_sq, double x,
                         double y_scaled, double z, std::span<const char> is_cave,
                         std::span<const std::pair<int, float>> surface_weights,
                         std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  thread_local std::vector<double> sums;
  thread_local std::vector<int32_t> seen;
  thread_local std::vector<uint16_t> present;
  present.clear();
  const bool over_surface = !is_cave.empty();
  double surface = 0.0;
  for (const VolumeSample& p : samples) {
    const double dx = x - p.x, dy = y_scaled - p.y, dz = z - p.z;
    const double t = ((radius_sq - dz * dz) - dy * dy) - dx * dx;
    if (!(t > 0.0)) continue;  // Would add exactly +0.0.
    const double w = t * t;
    if (over_surface && !is_cave[p.biome]) {
      surface += w;
      continue;
    }
    if (p.biome >= seen.size()) {
      seen.resize(p.biome + 1u, -1);
      sums.resize(p.biome + 1u, 0.0);
    }
    if (seen[p.biome] < 0) {
      seen[p.biome] = 0;
      sums[p.biome] = w;
      present.push_back(p.biome);
    } else {
      sums[p.biome] += w;
    }
  }
  std::sort(present.begin(), present.end());
  double total = surface;  // +0.0 without a surface: the biomes' sums alone, bit for bit.
  for (uint16_t biome : present) total += sums[biome];
  const double share = surface / total;  // Exactly 1 where no cave sample reaches.
  // Merge the sampled biomes and the column's 2D biomes, ascending (a cave biome is never in 2D).
  size_t c = 0, s = 0;
  while (c < present.size() || s < surface_weights.size()) {
    float w;
    int biome;
    if (s == surface_weights.size() ||
        (c < present.size() && present[c] < surface_weights[s].first)) {
      biome = present[c];
      w = static_cast<float>(sums[biome] / total);
      seen[static_cast<size_t>(biome)] = -1;
      ++c;
    } else {
      biome = surface_weights[s].first;
      w = static_cast<float>(share * static_cast<double>(surface_weights[s].second));
      ++s;
    }
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

void ScatteredVolumeBlender::SurfaceColumns(
    int64_t x0, int64_t z0, int nx, int nz, int cell, BiomeSampleCache* cache,
    std::vector<std::vector<std::pair<int, float>>>* columns) const {
  columns->resize(static_cast<size_t>(nx) * static_cast<size_t>(nz));
  for (int d = 0; d < nz; ++d) {
    for (int a = 0; a < nx; ++a) {
      surface_->BlendPoint(static_cast<double>(x0 + int64_t{cell} * a),
                           static_cast<double>(z0 + int64_t{cell} * d), cache,
                           &(*columns)[static_cast<size_t>(d) * nx + a]);
    }
  }
}

bool ScatteredVolumeBlender::BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz,
                                        int cell, std::vector<IndexedLayer>* layers,
                                        BiomeSampleCache* cache) const {
  // Over a surface: the 2D weights of each column (a cell's (x, z)), by point query (the 2D
  // contract makes them the chunk's bits).
  thread_local std::vector<std::vector<std::pair<int, float>>> columns;
  columns.clear();
  if (surface_ != nullptr) SurfaceColumns(x0, z0, nx, nz, cell, cache, &columns);
  return BlendCells(x0, y0, z0, nx, ny, nz, cell, columns, layers);
}

bool ScatteredVolumeBlender::BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz,
                                        int cell,
                                        std::span<const std::vector<std::pair<int, float>>> columns,
                                        std::vector<IndexedLayer>* layers) const {
  const size_t cells = static_cast<size_t>(nx) * static_cast<size_t>(ny) * static_cast<size_t>(nz);
  const double c = static_cast<double>(cell);
  const VolumeBox box = {static_cast<double>(x0),
                         static_cast<double>(y0),
                         static_cast<double>(z0),
                         static_cast<double>(x0) + c * (nx - 1),
                         static_cast<double>(y0) + c * (ny - 1),
                         static_cast<double>(z0) + c * (nz - 1)};
  thread_local std::vector<VolumeSample> samples;
  samples.clear();
  if (surface_ == nullptr || MayReachCaves(box.min_y, box.max_y)) GatherSamples(box, &samples);
  layers->clear();
  const size_t column_count = static_cast<size_t>(nx) * static_cast<size_t>(nz);
  bool caves = false;
  if (surface_ != nullptr) {
    caves = std::any_of(samples.begin(), samples.end(),
                        [&](const VolumeSample& p) { return is_cave_[p.biome] != 0; });
  }
  const bool single =
      surface_ != nullptr
          ? !caves && std::all_of(columns.begin(), columns.begin() + column_count,
                                  [&](const auto& w) {
                                    return w.size() == 1 && w[0].first == columns[0][0].first;
                                  })
          : std::all_of(samples.begin(), samples.end(),
                        [&](const VolumeSample& p) { return p.biome == samples.front().biome; });
  if (single) {
    const int biome =
        surface_ != nullptr ? columns[0][0].first : (samples.empty() ? 0 : samples.front().biome);
    layers->push_back({biome, std::vector<float>(cells, 1.0f)});
    return true;
  }
  int biome_count = 0;
  for (const VolumeSample& p : samples) biome_count = std::max(biome_count, p.biome + 1);
  for (size_t k = 0; surface_ != nullptr && k < column_count; ++k) {
    for (const auto& [biome, w] : columns[k]) biome_count = std::max(biome_count, biome + 1);
  }
  LayerAccumulator accumulator(biome_count, cells);
  std::vector<std::pair<int, float>> weights;
  static const std::vector<std::pair<int, float>> kNoSurface;
  const double s = lattice_.y_scale();
  for (int b = 0; b < ny; ++b) {
    const double y = static_cast<double>(y0 + int64_t{cell} * b) * s;
    for (int d = 0; d < nz; ++d) {
      const double z = static_cast<double>(z0 + int64_t{cell} * d);
      for (int a = 0; a < nx; ++a) {
        const size_t column = static_cast<size_t>(d) * nx + a;
        const size_t at = (static_cast<size_t>(b) * nz + d) * nx + a;
        if (surface_ != nullptr && !caves) {
          accumulator.Add(at, columns[column]);  // No cave sample in reach: the 2D blend.
          continue;
        }
        const double x = static_cast<double>(x0 + int64_t{cell} * a);
        ConvolveVolumePoint(samples, radius_sq_, x, y, z, is_cave_,
                            surface_ != nullptr ? columns[column] : kNoSurface, &weights);
        accumulator.Add(at, weights);
      }
    }
  }
  accumulator.MoveTo(layers);
  return false;
}

void ScatteredVolumeBlender::BlendPoint(double x, double y, double z,
                                        std::vector<std::pair<int, float>>* weights,
                                        BiomeSampleCache* cache) const {
  thread_local std::vector<VolumeSample> samples;
  thread_local std::vector<std::pair<int, float>> column;
  column.clear();
  if (surface_ != nullptr) {
    surface_->BlendPoint(x, z, cache, &column);
    // No cave sample in reach: the 2D weights, as Convolve gives them (share exactly 1).
    if (!MayReachCaves(y, y)) {
      *weights = column;
      return;
    }
  }
  GatherSamples({x, y, z, x, y, z}, &samples);
  ConvolveVolumePoint(samples, radius_sq_, x, y * lattice_.y_scale(), z, is_cave_, column, weights);
}

}  // namespace worldgen
