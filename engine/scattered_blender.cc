#include "engine/scattered_blender.h"

#include <algorithm>
#include <cmath>

#include "engine/floor_div.h"
#include "engine/hash.h"
#include "engine/kernel_row.h"

namespace worldgen {
namespace {

constexpr uint64_t kLatticeStream = 0x1a77;

// Blend radius may be at most this many sampling intervals: keeps points per column bounded.
constexpr double kMaxRadiusInIntervals = 32.0;

constexpr BlenderParamDef kParams[] = {
    {.name = "sampling_interval", .default_value = 8.0, .min = 1.0, .max = 256.0},
    {.name = "jitter", .default_value = 0.35, .min = 0.0, .max = 0.5},
    {.name = "blend_radius", .default_value = 24.0, .min = 1.0, .max = 1024.0},
};

absl::Status Validate(const WorldSpec& spec) {
  const double interval = BlenderParam(spec, "sampling_interval");
  const double min_radius = ScatteredBlender::MinBlendRadius(interval, BlenderParam(spec, "jitter"));
  return ValidateKernelRadii(spec, "scattered", min_radius,
                             std::min(1024.0, kMaxRadiusInIntervals * interval),
                             "a radius must cover the lattice's largest gap (sampling_interval * "
                             "(1/sqrt(3) + jitter + 1/4)) and span at most 32 intervals");
}

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid) {
  return std::make_unique<ScatteredBlender>(spec, source, world_uid);
}

}  // namespace

const BlenderMethod ScatteredBlender::kMethod = {
    BlenderKind::kScattered, "scattered", kParams, &Validate, &Make};

ScatteredBlender::ScatteredBlender(const WorldSpec& spec, const BiomeSource& source,
                                   uint64_t world_uid)
    : source_(source),
      world_uid_(world_uid),
      sampling_interval_(BlenderParam(spec, "sampling_interval")),
      jitter_fraction_(BlenderParam(spec, "jitter")),
      blend_radius_(BlenderParam(spec, "blend_radius")),
      lattice_(DeriveSeed(spec.seed, kLatticeStream), sampling_interval_, jitter_fraction_),
      radius_sq_(BiomeRadiiSquared(spec, blend_radius_)) {
  for (double r_sq : radius_sq_) max_radius_ = std::max(max_radius_, std::sqrt(r_sq));
  point_offsets_ =
      std::make_shared<const std::vector<LatticeOffset>>(lattice_.SearchOffsets(max_radius_));
}

double ScatteredBlender::MinBlendRadius(double sampling_interval, double jitter) {
  return sampling_interval * (1.0 / TriangularLattice::kSqrt3 + jitter + 0.25);
}

std::vector<BlenderFigure> ScatteredBlender::Describe() const {
  return {{"sampling_interval", sampling_interval_},
          {"jitter", jitter_fraction_},
          {"blend_radius", blend_radius_},
          {"min_blend_radius", MinBlendRadius(sampling_interval_, jitter_fraction_)},
          {"max_biome_radius", max_radius_}};
}

std::shared_ptr<const std::vector<LatticeOffset>> ScatteredBlender::OffsetsForReach(
    double half_diagonal) const {
  if (half_diagonal <= 0.0) return point_offsets_;
  // Memoized per whole block of extent, computed for the rounded-up extent (a superset is harmless:
  // the exact culling happens per point).
  int64_t key = static_cast<int64_t>(std::ceil(half_diagonal));
  std::lock_guard<std::mutex> lock(offsets_mu_);
  auto& slot = offsets_by_extent_[key];
  if (slot == nullptr) {
    slot = std::make_shared<const std::vector<LatticeOffset>>(
        lattice_.SearchOffsets(max_radius_ + static_cast<double>(key)));
  }
  return slot;
}

void ScatteredBlender::ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  double xs[n * n], zs[n * n];
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      lattice_.Position(tile_i * n + a, tile_j * n + b, &xs[b * n + a], &zs[b * n + a]);
    }
  }
  source_.BiomeIndices(xs, zs, n * n, tile->biome);
}

void ScatteredBlender::AssignBiomes(BiomeSampleCache* cache, const std::vector<LatticeIndex>& indices,
                                    std::vector<KernelSample>* samples) const {
  if (cache == nullptr) {
    SampleSourceBiomes(source_, *samples);
  } else {
    constexpr int32_t n = BiomeTile::kTileSize;
    std::shared_ptr<const BiomeTile> tile;
    BiomeTileKey tile_key;
    for (size_t k = 0; k < samples->size(); ++k) {
      const LatticeIndex v = indices[k];
      BiomeTileKey key{world_uid_, static_cast<int32_t>(FloorDiv(v.i, n)),
                       static_cast<int32_t>(FloorDiv(v.j, n))};
      if (tile == nullptr || !(key == tile_key)) {
        tile = cache->GetOrCompute(key, [&](BiomeTile& t) { ComputeTile(key.tile_i, key.tile_j, &t); });
        tile_key = key;
      }
      (*samples)[k].biome = tile->biome[(v.j - key.tile_j * n) * n + (v.i - key.tile_i * n)];
    }
  }
  for (KernelSample& s : *samples) s.radius_sq = radius_sq_[s.biome];
}

void ScatteredBlender::GatherSamples(double min_x, double min_z, double max_x, double max_z,
                                     BiomeSampleCache* cache, std::vector<KernelSample>* out,
                                     std::vector<LatticeIndex>* indices) const {
  out->clear();
  std::vector<LatticeIndex> own_indices;
  if (indices == nullptr) indices = &own_indices;
  indices->clear();
  double half_x = 0.5 * (max_x - min_x);
  double half_z = 0.5 * (max_z - min_z);
  auto offsets = OffsetsForReach(std::sqrt(half_x * half_x + half_z * half_z));
  LatticeIndex base = lattice_.NearestVertex(min_x + half_x, min_z + half_z);
  double reach_sq = max_radius_ * max_radius_;
  for (const LatticeOffset& off : *offsets) {
    KernelSample s;
    const LatticeIndex v{base.i + off.di, base.j + off.dj};
    lattice_.Position(v.i, v.j, &s.x, &s.z);
    // Distance from the point to the box. Rounding is monotonic, so this never exceeds the computed
    // distance to any column inside the box: no point that can weigh on a column is culled.
    double dx = std::max(0.0, std::max(min_x - s.x, s.x - max_x));
    double dz = std::max(0.0, std::max(min_z - s.z, s.z - max_z));
    if (dx * dx + dz * dz < reach_sq) {
      out->push_back(s);
      indices->push_back(v);
    }
  }
  AssignBiomes(cache, *indices, out);
}

bool ScatteredBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                    std::vector<IndexedLayer>* layers) const {
  std::vector<KernelSample> samples;
  GatherSamples(static_cast<double>(x0), static_cast<double>(z0), static_cast<double>(x0 + size - 1),
                static_cast<double>(z0 + size - 1), cache, &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void ScatteredBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                  std::vector<std::pair<int, float>>* weights) const {
  std::vector<KernelSample> samples;
  GatherSamples(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

}  // namespace worldgen
