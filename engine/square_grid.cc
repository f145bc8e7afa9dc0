#include "engine/square_grid.h"

#include <algorithm>
#include <cmath>

#include "engine/floor_div.h"

namespace worldgen {

SquareGrid::SquareGrid(const BiomeSource& source, int spacing, std::vector<double> radius_sq,
                       uint64_t world_uid)
    : source_(source), spacing_(spacing), radius_sq_(std::move(radius_sq)), world_uid_(world_uid) {
  for (double r_sq : radius_sq_) max_radius_ = std::max(max_radius_, std::sqrt(r_sq));
}

void SquareGrid::ComputeTile(int32_t tile_x, int32_t tile_z, BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  const double g = spacing_;
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      tile->x[b * n + a] = static_cast<double>(static_cast<int64_t>(tile_x) * n + a) * g;
      tile->z[b * n + a] = static_cast<double>(static_cast<int64_t>(tile_z) * n + b) * g;
    }
  }
  source_.BiomeIndices(tile->x, tile->z, n * n, tile->biome);
}

void SquareGrid::Gather(double min_x, double min_z, double max_x, double max_z,
                        BiomeSampleCache* cache, std::vector<KernelSample>* out) const {
  out->clear();
  const double g = spacing_, reach = max_radius_, reach_sq = reach * reach;
  const int64_t gx0 = static_cast<int64_t>(std::floor((min_x - reach) / g));
  const int64_t gx1 = static_cast<int64_t>(std::ceil((max_x + reach) / g));
  const int64_t gz0 = static_cast<int64_t>(std::floor((min_z - reach) / g));
  const int64_t gz1 = static_cast<int64_t>(std::ceil((max_z + reach) / g));
  constexpr int32_t n = BiomeTile::kTileSize;
  std::shared_ptr<const BiomeTile> tile;
  BiomeTileKey tile_key;
  for (int64_t gz = gz0; gz <= gz1; ++gz) {
    const double z = static_cast<double>(gz) * g;
    const double dz = std::max(0.0, std::max(min_z - z, z - max_z));
    for (int64_t gx = gx0; gx <= gx1; ++gx) {
      const double x = static_cast<double>(gx) * g;
      const double dx = std::max(0.0, std::max(min_x - x, x - max_x));
      // Distance to the box, as the scattered lattice culls: never more than to any column inside.
      if (!(dx * dx + dz * dz < reach_sq)) continue;
      KernelSample s;
      s.x = x;
      s.z = z;
      if (cache != nullptr) {
        BiomeTileKey key{world_uid_, static_cast<int32_t>(FloorDiv(gx, n)),
                         static_cast<int32_t>(FloorDiv(gz, n))};
        if (tile == nullptr || !(key == tile_key)) {
          tile = cache->GetOrCompute(key,
                                     [&](BiomeTile& t) { ComputeTile(key.tile_i, key.tile_j, &t); });
          tile_key = key;
        }
        s.biome = tile->biome[(gz - static_cast<int64_t>(key.tile_j) * n) * n +
                              (gx - static_cast<int64_t>(key.tile_i) * n)];
      }
      out->push_back(s);
    }
  }
  if (cache == nullptr) SampleSourceBiomes(source_, *out);
  for (KernelSample& s : *out) s.radius_sq = radius_sq_[s.biome];
}

double MinSquareGridRadius(int spacing) {
  return static_cast<double>(spacing) * (1.0 / std::sqrt(2.0) + 0.25);
}

SquareGridKernelBlender::SquareGridKernelBlender(BlenderKind kind, int spacing,
                                                 const WorldSpec& spec, const BiomeSource& source,
                                                 uint64_t world_uid)
    : kind_(kind),
      grid_(source, spacing, BiomeRadiiSquared(spec, BlenderParam(spec, "blend_radius")),
            world_uid) {
  for (const BlenderParamDef& def : MethodOf(kind).params) {
    figures_.push_back({std::string(def.name), BlenderParam(spec, def.name)});
  }
  figures_.push_back({"min_blend_radius", MinSquareGridRadius(spacing)});
  figures_.push_back({"max_biome_radius", grid_.max_radius()});
}

bool SquareGridKernelBlender::BlendColumns(int64_t x0, int64_t z0, int size,
                                           BiomeSampleCache* cache,
                                           std::vector<IndexedLayer>* layers) const {
  std::vector<KernelSample> samples;
  grid_.Gather(static_cast<double>(x0), static_cast<double>(z0), static_cast<double>(x0 + size - 1),
               static_cast<double>(z0 + size - 1), cache, &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void SquareGridKernelBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                         std::vector<std::pair<int, float>>* weights) const {
  std::vector<KernelSample> samples;
  grid_.Gather(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

}  // namespace worldgen
