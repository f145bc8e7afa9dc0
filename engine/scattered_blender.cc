#include "engine/scattered_blender.h"

#include <algorithm>
#include <cmath>

#include "engine/hash.h"
#include "engine/kernel_row.h"

namespace worldgen {
namespace {

constexpr uint64_t kLatticeStream = 0x1a77;

// Floor division for tile coordinates of negative lattice indices.
int32_t FloorDiv(int32_t a, int32_t b) {
  int32_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

ScatteredBlender::ScatteredBlender(const WorldSpec& spec, const BiomeSource& source,
                                   uint64_t world_uid)
    : source_(source),
      world_uid_(world_uid),
      lattice_(DeriveSeed(spec.seed, kLatticeStream), spec.sampling_interval, spec.jitter) {
  radius_sq_.reserve(spec.biomes.size());
  for (const BiomeSpec& b : spec.biomes) {
    double r = b.blend_radius > 0.0 ? b.blend_radius : spec.blend_radius;
    radius_sq_.push_back(r * r);
    max_radius_ = std::max(max_radius_, r);
  }
  point_offsets_ =
      std::make_shared<const std::vector<LatticeOffset>>(lattice_.SearchOffsets(max_radius_));
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
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      double x, z;
      lattice_.Position(tile_i * n + a, tile_j * n + b, &x, &z);
      tile->biome[b * n + a] = static_cast<uint16_t>(source_.BiomeIndexAt(x, z));
    }
  }
}

void ScatteredBlender::AssignBiomes(BiomeSampleCache* cache,
                                    std::vector<LatticeSample>* samples) const {
  if (cache == nullptr) {
    for (LatticeSample& s : *samples) {
      s.biome = static_cast<uint16_t>(source_.BiomeIndexAt(s.x, s.z));
    }
  } else {
    constexpr int32_t n = BiomeTile::kTileSize;
    std::shared_ptr<const BiomeTile> tile;
    BiomeTileKey tile_key;
    for (LatticeSample& s : *samples) {
      BiomeTileKey key{world_uid_, FloorDiv(s.i, n), FloorDiv(s.j, n)};
      if (tile == nullptr || !(key == tile_key)) {
        tile = cache->GetOrCompute(key, [&](BiomeTile& t) { ComputeTile(key.tile_i, key.tile_j, &t); });
        tile_key = key;
      }
      s.biome = tile->biome[(s.j - key.tile_j * n) * n + (s.i - key.tile_i * n)];
    }
  }
  for (LatticeSample& s : *samples) s.radius_sq = radius_sq_[s.biome];
}

void ScatteredBlender::GatherSamples(double min_x, double min_z, double max_x, double max_z,
                                     BiomeSampleCache* cache,
                                     std::vector<LatticeSample>* out) const {
  out->clear();
  double half_x = 0.5 * (max_x - min_x);
  double half_z = 0.5 * (max_z - min_z);
  auto offsets = OffsetsForReach(std::sqrt(half_x * half_x + half_z * half_z));
  LatticeIndex base = lattice_.NearestVertex(min_x + half_x, min_z + half_z);
  double reach_sq = max_radius_ * max_radius_;
  for (const LatticeOffset& off : *offsets) {
    LatticeSample s;
    s.i = base.i + off.di;
    s.j = base.j + off.dj;
    lattice_.Position(s.i, s.j, &s.x, &s.z);
    // Distance from the point to the box. Rounding is monotonic, so this never exceeds the computed
    // distance to any column inside the box: no point that can weigh on a column is culled.
    double dx = std::max(0.0, std::max(min_x - s.x, s.x - max_x));
    double dz = std::max(0.0, std::max(min_z - s.z, s.z - max_z));
    if (dx * dx + dz * dz < reach_sq) out->push_back(s);
  }
  AssignBiomes(cache, out);
}

bool ScatteredBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                    std::vector<IndexedLayer>* layers) const {
  layers->clear();
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  std::vector<LatticeSample> samples;
  double min_x = static_cast<double>(x0), min_z = static_cast<double>(z0);
  double max_x = static_cast<double>(x0 + size - 1), max_z = static_cast<double>(z0 + size - 1);
  GatherSamples(min_x, min_z, max_x, max_z, cache, &samples);

  // Chunk inside one biome: every column's weight is exactly 1, no per-column work needed.
  bool single = std::all_of(samples.begin(), samples.end(), [&](const LatticeSample& s) {
    return s.biome == samples.front().biome;
  });
  if (single) {
    layers->push_back({samples.empty() ? 0 : samples.front().biome, std::vector<float>(columns, 1.0f)});
    return true;
  }

  // Dense slot per biome present among the samples, in ascending biome order.
  std::vector<int> present;
  for (const LatticeSample& s : samples) present.push_back(s.biome);
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  const size_t slots = present.size();
  std::vector<int> slot_of_sample(samples.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    slot_of_sample[k] = static_cast<int>(
        std::lower_bound(present.begin(), present.end(), samples[k].biome) - present.begin());
  }

  std::vector<std::vector<float>> weights(slots, std::vector<float>(columns));
  const size_t n = static_cast<size_t>(size);
  std::vector<double> column_x(n), acc(slots * n), total(n);
  for (size_t lx = 0; lx < n; ++lx) column_x[lx] = static_cast<double>(x0 + static_cast<int64_t>(lx));
  std::vector<size_t> row_samples;
  std::vector<double> row_dz_sq;

  for (size_t lz = 0; lz < n; ++lz) {
    const double z = static_cast<double>(z0 + static_cast<int64_t>(lz));
    // Samples whose kernel reaches this row at all, in canonical order.
    row_samples.clear();
    row_dz_sq.clear();
    for (size_t k = 0; k < samples.size(); ++k) {
      double dz = z - samples[k].z;
      double dz_sq = dz * dz;
      if (dz_sq < samples[k].radius_sq) {
        row_samples.push_back(k);
        row_dz_sq.push_back(dz_sq);
      }
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(total.begin(), total.end(), 0.0);
    // Sample-outer, column-inner: each column still sums its samples in canonical order, and the
    // inner loop vectorizes across columns (kernel_row.h). Samples out of a column's reach add
    // exactly +0.0, which changes no sum.
    for (size_t r = 0; r < row_samples.size(); ++r) {
      const LatticeSample& s = samples[row_samples[r]];
      const double px = s.x, dz_sq = row_dz_sq[r], radius_sq = s.radius_sq;
      double* slot_acc = acc.data() + static_cast<size_t>(slot_of_sample[row_samples[r]]) * n;
      AccumulateSampleRow(column_x.data(), n, px, dz_sq, radius_sq, slot_acc, total.data());
    }
    for (size_t slot = 0; slot < slots; ++slot) {
      const double* slot_acc = acc.data() + slot * n;
      float* out = weights[slot].data() + lz * n;
      for (size_t lx = 0; lx < n; ++lx) out[lx] = static_cast<float>(slot_acc[lx] / total[lx]);
    }
  }

  for (size_t slot = 0; slot < slots; ++slot) {
    const std::vector<float>& w = weights[slot];
    if (std::any_of(w.begin(), w.end(), [](float v) { return v != 0.0f; })) {
      layers->push_back({present[slot], std::move(weights[slot])});
    }
  }
  return false;
}

void ScatteredBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                  std::vector<std::pair<int, float>>* weights) const {
  weights->clear();
  std::vector<LatticeSample> samples;
  GatherSamples(x, z, x, z, cache, &samples);
  // (biome, sum) in order of first appearance; each biome's sum runs in canonical sample order.
  std::vector<std::pair<int, double>> sums;
  double total = 0.0;
  for (const LatticeSample& s : samples) {
    double dx = x - s.x;
    double dz = z - s.z;
    double d_sq = dx * dx + dz * dz;
    if (!(d_sq < s.radius_sq)) continue;  // Would add exactly +0.0.
    double t = s.radius_sq - d_sq;
    double w = t * t;
    auto it = std::find_if(sums.begin(), sums.end(),
                           [&](const std::pair<int, double>& p) { return p.first == s.biome; });
    if (it == sums.end()) {
      sums.emplace_back(s.biome, w);
    } else {
      it->second += w;
    }
    total += w;
  }
  std::sort(sums.begin(), sums.end());
  for (const auto& [biome, sum] : sums) {
    float w = static_cast<float>(sum / total);
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

}  // namespace worldgen
