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
  double x[BiomeTile::kVertices], z[BiomeTile::kVertices];
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      const int32_t v = b * n + a;
      x[v] = tile->xz[2 * v] = static_cast<double>(static_cast<int64_t>(tile_x) * n + a) * g;
      z[v] = tile->xz[2 * v + 1] = static_cast<double>(static_cast<int64_t>(tile_z) * n + b) * g;
    }
  }
  source_.BiomeIndices(x, z, n * n, tile->biome);
}

namespace {

// The vertices a gather reads: row gz0 + r holds gx_lo[r]..gx_hi[r] (none when hi < lo), stored
// from out[row_start[r]] on. Thread-local buffers that only grow: a gather allocates nothing once
// warm.
struct GridRows {
  std::vector<int64_t> gx_lo, gx_hi;
  std::vector<size_t> row_start;
};

GridRows& ClearedRows() {
  thread_local GridRows rows;
  rows.gx_lo.clear();
  rows.gx_hi.clear();
  rows.row_start.clear();
  return rows;
}

// Appends row gz's vertices lo..hi (none when hi < lo) to `rows` and, without biomes, to `out`.
void AddRow(int64_t gz, int64_t lo, int64_t hi, double g, GridRows& rows,
            std::vector<KernelSample>* out) {
  rows.gx_lo.push_back(lo);
  rows.gx_hi.push_back(hi);
  rows.row_start.push_back(out->size());
  for (int64_t gx = lo; gx <= hi; ++gx) {
    KernelSample s;
    s.x = static_cast<double>(gx) * g;
    s.z = static_cast<double>(gz) * g;
    out->push_back(s);
  }
}

}  // namespace

void SquareGrid::Gather(double min_x, double min_z, double max_x, double max_z,
                        BiomeSampleCache* cache, std::vector<KernelSample>* out) const {
  out->clear();
  const double g = spacing_, reach = max_radius_, reach_sq = reach * reach;
  const int64_t gx0 = static_cast<int64_t>(std::floor((min_x - reach) / g));
  const int64_t gx1 = static_cast<int64_t>(std::ceil((max_x + reach) / g));
  const int64_t gz0 = static_cast<int64_t>(std::floor((min_z - reach) / g));
  const int64_t gz1 = static_cast<int64_t>(std::ceil((max_z + reach) / g));
  // The distance to the box falls then rises along a row, so the kept vertices of a row are
  // consecutive.
  GridRows& rows = ClearedRows();
  for (int64_t gz = gz0; gz <= gz1; ++gz) {
    const double z = static_cast<double>(gz) * g;
    const double dz = std::max(0.0, std::max(min_z - z, z - max_z));
    int64_t lo = gx1 + 1, hi = gx1;
    for (int64_t gx = gx0; gx <= gx1; ++gx) {
      const double x = static_cast<double>(gx) * g;
      const double dx = std::max(0.0, std::max(min_x - x, x - max_x));
      // Distance to the box, as the scattered lattice culls: never more than to any column inside.
      if (!(dx * dx + dz * dz < reach_sq)) continue;
      if (lo > gx1) lo = gx;
      hi = gx;
    }
    if (lo > hi) hi = lo - 1;
    AddRow(gz, lo, hi, g, rows, out);
  }
  FillBiomes(gz0, rows.gx_lo, rows.gx_hi, rows.row_start, cache, out);
}

void SquareGrid::FillBiomes(int64_t gz0, std::span<const int64_t> gx_lo,
                            std::span<const int64_t> gx_hi, std::span<const size_t> row_start,
                            BiomeSampleCache* cache, std::vector<KernelSample>* out) const {
  if (cache != nullptr) {
    VisitTileRows(
        *cache, world_uid_, gz0, gx_lo, gx_hi,
        [this](int32_t tx, int32_t tz, BiomeTile& t) { ComputeTile(tx, tz, &t); },
        [&](const BiomeTile& tile, const TileRowSpan& span) {
          const size_t r = static_cast<size_t>(span.j - gz0);
          KernelSample* dst = out->data() + row_start[r] + (span.i_begin - gx_lo[r]);
          for (int64_t a = 0; a <= span.i_end - span.i_begin; ++a) {
            dst[a].biome = tile.biome[span.index + a];
          }
        });
  } else {
    SampleSourceBiomes(source_, *out);
  }
  for (KernelSample& s : *out) s.radius_sq = radius_sq_[s.biome];
}

void SquareGrid::SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                                std::vector<SamplingPoint>* out) const {
  // Only the vertices inside: multiples of the spacing in [min, max) on each axis, which
  // SamplingPointCount counts (and a request's limit bounds). Gathering with the kernel's reach
  // would walk rows as long as the box however few vertices it holds.
  const double g = spacing_;
  const int64_t gx_lo = static_cast<int64_t>(std::ceil(box.min_x / g));
  const int64_t gx_hi = static_cast<int64_t>(std::ceil(box.max_x / g)) - 1;
  const int64_t gz_lo = static_cast<int64_t>(std::ceil(box.min_z / g));
  const int64_t gz_hi = static_cast<int64_t>(std::ceil(box.max_z / g)) - 1;
  thread_local std::vector<KernelSample> samples;
  samples.clear();
  out->clear();
  if (gx_hi < gx_lo || gz_hi < gz_lo) return;
  GridRows& rows = ClearedRows();
  for (int64_t gz = gz_lo; gz <= gz_hi; ++gz) AddRow(gz, gx_lo, gx_hi, g, rows, &samples);
  FillBiomes(gz_lo, rows.gx_lo, rows.gx_hi, rows.row_start, cache, &samples);
  KeepSamplingPointsIn(box, samples, out);
}

double SquareGrid::SamplingPointCount(const BlockBox& box) const {
  // Multiples of the spacing in [min, max) on each axis.
  const double g = spacing_;
  const auto count = [g](double lo, double hi) {
    return std::max(0.0, std::ceil(hi / g) - std::ceil(lo / g));
  };
  return count(box.min_x, box.max_x) * count(box.min_z, box.max_z);
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
  thread_local std::vector<KernelSample> samples;  // Reused: no allocation per chunk.
  grid_.Gather(static_cast<double>(x0), static_cast<double>(z0), static_cast<double>(x0 + size - 1),
               static_cast<double>(z0 + size - 1), cache, &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void SquareGridKernelBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                         std::vector<std::pair<int, float>>* weights) const {
  thread_local std::vector<KernelSample> samples;
  grid_.Gather(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

}  // namespace worldgen
