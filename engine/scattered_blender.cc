#include "engine/scattered_blender.h"

#include <algorithm>
#include <cmath>

#include "absl/container/inlined_vector.h"
#include "engine/floor_div.h"
#include "engine/hash.h"

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

void ScatteredBlender::ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      lattice_.Position(tile_i * n + a, tile_j * n + b, &tile->x[b * n + a], &tile->z[b * n + a]);
    }
  }
  source_.BiomeIndices(tile->x, tile->z, n * n, tile->biome);
}

void ScatteredBlender::GatherSamples(double min_x, double min_z, double max_x, double max_z,
                                     BiomeSampleCache* cache, std::vector<KernelSample>* out,
                                     std::vector<LatticeIndex>* indices) const {
  out->clear();
  if (indices != nullptr) indices->clear();
  const double reach_sq = max_radius_ * max_radius_;
  // A vertex whose jittered position is within max_radius_ of the box has its unjittered position
  // within max_radius_ + jitter of it; one block of slack absorbs every rounding below, so the
  // (j, i) ranges hold every vertex the exact test accepts.
  const double pad = max_radius_ + lattice_.jitter() + 1.0;
  const double interval = lattice_.interval();
  const double row_height = interval * (TriangularLattice::kSqrt3 * 0.5);
  const int32_t j0 = static_cast<int32_t>(std::floor((min_z - pad) / row_height));
  const int32_t j1 = static_cast<int32_t>(std::ceil((max_z + pad) / row_height));
  // Candidates are written unconditionally and kept by advancing `count`: no branch per vertex, so
  // the loads of many vertices (tiles are mostly outside the CPU caches) are in flight at once.
  size_t count = 0;
  auto push = [&](int32_t i, int32_t j, double x, double z, uint16_t biome) {
    // Distance from the point to the box. Rounding is monotonic, so this never exceeds the computed
    // distance to any column inside the box: no point that can weigh on a column is culled.
    const double dx = std::max(0.0, std::max(min_x - x, x - max_x));
    const double dz = std::max(0.0, std::max(min_z - z, z - max_z));
    (*out)[count] = {x, z, 0.0, biome};
    if (indices != nullptr) (*indices)[count] = {i, j};
    count += dx * dx + dz * dz < reach_sq;
  };
  auto reserve = [&](int32_t i0, int32_t i1) {
    const size_t need = count + static_cast<size_t>(i1 - i0 + 1);
    if (out->size() < need) out->resize(2 * need);
    if (indices != nullptr && indices->size() < need) indices->resize(2 * need);
  };
  constexpr int32_t n = BiomeTile::kTileSize;
  struct Fetched {
    BiomeTileKey key;
    std::shared_ptr<const BiomeTile> tile;
  };
  absl::InlinedVector<Fetched, 12> fetched;  // Each tile is looked up in the cache once.
  // Canonical order: rows j ascending, i ascending within a row.
  for (int32_t j = j0; j <= j1; ++j) {
    const double shift = 0.5 * static_cast<double>(j);
    const int32_t i0 = static_cast<int32_t>(std::floor((min_x - pad) / interval - shift));
    const int32_t i1 = static_cast<int32_t>(std::ceil((max_x + pad) / interval - shift));
    reserve(i0, i1);
    if (cache == nullptr) {
      for (int32_t i = i0; i <= i1; ++i) {
        double x, z;
        lattice_.Position(i, j, &x, &z);
        push(i, j, x, z, 0);
      }
      continue;
    }
    const int32_t tj = static_cast<int32_t>(FloorDiv(j, n));
    const int32_t row = (j - tj * n) * n;
    for (int32_t ti = static_cast<int32_t>(FloorDiv(i0, n)); ti <= FloorDiv(i1, n); ++ti) {
      const BiomeTileKey key{world_uid_, ti, tj};
      const BiomeTile* tile = nullptr;
      for (const Fetched& f : fetched) {
        if (f.key == key) tile = f.tile.get();
      }
      if (tile == nullptr) {
        fetched.push_back(
            {key, cache->GetOrCompute(key, [&](BiomeTile& t) { ComputeTile(ti, tj, &t); })});
        tile = fetched.back().tile.get();
      }
      const int32_t a0 = std::max(i0 - ti * n, 0), a1 = std::min(i1 - ti * n, n - 1);
      for (int32_t a = a0; a <= a1; ++a) {
        push(ti * n + a, j, tile->x[row + a], tile->z[row + a], tile->biome[row + a]);
      }
    }
  }
  out->resize(count);
  if (indices != nullptr) indices->resize(count);
  if (cache == nullptr) SampleSourceBiomes(source_, *out);
  for (KernelSample& s : *out) s.radius_sq = radius_sq_[s.biome];
}

bool ScatteredBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                    std::vector<IndexedLayer>* layers) const {
  thread_local std::vector<KernelSample> samples;  // Reused: no allocation per chunk.
  GatherSamples(static_cast<double>(x0), static_cast<double>(z0), static_cast<double>(x0 + size - 1),
                static_cast<double>(z0 + size - 1), cache, &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void ScatteredBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                  std::vector<std::pair<int, float>>* weights) const {
  thread_local std::vector<KernelSample> samples;
  GatherSamples(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

}  // namespace worldgen
