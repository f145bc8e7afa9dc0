#include "engine/jittered_cells_blender.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>

#include "absl/strings/str_format.h"
#include "engine/chunk.h"
#include "engine/floor_div.h"
#include "engine/hash.h"
#include "engine/noise.h"

namespace worldgen {
namespace {

constexpr uint64_t kJitterStream = 0xce11;
constexpr uint64_t kCellBiomeStream = 0xce12;
constexpr uint64_t kWarpXStream = 0x3a7f;
constexpr uint64_t kWarpZStream = 0x3a80;

// A column considers at most about (2 reach / cell_size + 2)^2 cells; 4 cell sizes of overlap keeps
// that near 100.
constexpr double kMaxOverlapInCells = 4.0;

constexpr BlenderParamDef kParams[] = {
    {.name = "cell_size", .default_value = 64.0, .min = 4.0, .max = 1024.0, .integer = true},
    {.name = "jitter", .default_value = 0.4, .min = 0.0, .max = 0.5},
    {.name = "overlap", .default_value = 24.0, .min = 0.5, .max = 4096.0},
    {.name = "warp_amplitude", .default_value = 16.0, .min = 0.0, .max = 1024.0},
    {.name = "warp_frequency", .default_value = 1.0 / 128.0, .min = 1e-6, .max = 1.0},
    {.name = "warp_octaves", .default_value = 3.0, .min = 1.0, .max = 8.0, .integer = true},
    {.name = "uniform_biomes", .default_value = 0.0, .min = 0.0, .max = 1.0, .integer = true},
    {.name = "curve_25", .default_value = 0.84375, .min = 0.0, .max = 1.0},
    {.name = "curve_50", .default_value = 0.5, .min = 0.0, .max = 1.0},
    {.name = "curve_75", .default_value = 0.15625, .min = 0.0, .max = 1.0},
};

absl::Status Validate(const WorldSpec& spec) {
  const double cell = BlenderParam(spec, "cell_size");
  const double overlap = BlenderParam(spec, "overlap");
  if (overlap > kMaxOverlapInCells * cell) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "jittered_cells.overlap = %g is more than %g cell sizes (cell_size = %g): a column would "
        "weigh too many cells",
        overlap, kMaxOverlapInCells, cell));
  }
  const double c25 = BlenderParam(spec, "curve_25"), c50 = BlenderParam(spec, "curve_50"),
               c75 = BlenderParam(spec, "curve_75");
  if (!(c25 >= c50 && c50 >= c75)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "jittered_cells curve (1, curve_25 = %g, curve_50 = %g, curve_75 = %g, 0) must not "
        "increase: a farther cell never weighs more than a nearer one",
        c25, c50, c75));
  }
  return absl::OkStatus();
}

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source,
                              uint64_t world_uid) {
  return std::make_unique<JitteredCellsBlender>(spec, source, world_uid);
}

// A uniform double in [0, 1) from a hash's top 53 bits.
inline double UnitInterval(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace

const BlenderMethod JitteredCellsBlender::kMethod = {BlenderKind::kJitteredCells, "jittered_cells",
                                                     kParams, &Validate, &Make};

JitteredCellsBlender::JitteredCellsBlender(const WorldSpec& spec, const BiomeSource& source,
                                           uint64_t world_uid)
    : source_(source),
      world_uid_(world_uid),
      biome_count_(static_cast<int>(spec.biomes.size())),
      cell_size_(BlenderParam(spec, "cell_size")),
      jitter_(BlenderParam(spec, "jitter")),
      overlap_(BlenderParam(spec, "overlap")),
      warp_amplitude_(BlenderParam(spec, "warp_amplitude")),
      warp_frequency_(BlenderParam(spec, "warp_frequency")),
      warp_octaves_(static_cast<int>(BlenderParam(spec, "warp_octaves"))),
      uniform_biomes_(BlenderParam(spec, "uniform_biomes") != 0.0),
      surface_biomes_(SurfaceBiomes(spec)),
      curve_25_(BlenderParam(spec, "curve_25")),
      curve_50_(BlenderParam(spec, "curve_50")),
      curve_75_(BlenderParam(spec, "curve_75")),
      reach_(std::sqrt(2.0) * (0.5 + jitter_) * cell_size_ + overlap_),
      jitter_seed_(DeriveSeed(spec.seed, kJitterStream)),
      biome_seed_(DeriveSeed(spec.seed, kCellBiomeStream)),
      warp_x_seed_(DeriveSeed(spec.seed, kWarpXStream)),
      warp_z_seed_(DeriveSeed(spec.seed, kWarpZStream)) {
  const double knots[5] = {1.0, curve_25_, curve_50_, curve_75_, 0.0};
  for (int k = 0; k <= kCurveTableSize; ++k) {
    const int segment = std::min(3, k * 4 / kCurveTableSize);
    const double f = static_cast<double>(k * 4 - segment * kCurveTableSize) / kCurveTableSize;
    curve_table_[static_cast<size_t>(k)] =
        knots[segment] + (knots[segment + 1] - knots[segment]) * f;
  }
}

std::vector<BlenderFigure> JitteredCellsBlender::Describe() const {
  return {{"cell_size", cell_size_},
          {"jitter", jitter_},
          {"overlap", overlap_},
          {"warp_amplitude", warp_amplitude_},
          {"warp_frequency", warp_frequency_},
          {"warp_octaves", static_cast<double>(warp_octaves_)},
          {"uniform_biomes", uniform_biomes_ ? 1.0 : 0.0},
          {"curve_25", curve_25_},
          {"curve_50", curve_50_},
          {"curve_75", curve_75_},
          {"search_reach", reach_}};
}

std::pair<double, double> JitteredCellsBlender::CellPoint(int64_t i, int64_t j) const {
  const double u = UnitInterval(HashCoords(jitter_seed_, i, j, 0));
  const double v = UnitInterval(HashCoords(jitter_seed_, i, j, 1));
  return {(static_cast<double>(i) + 0.5 + jitter_ * (2.0 * u - 1.0)) * cell_size_,
          (static_cast<double>(j) + 0.5 + jitter_ * (2.0 * v - 1.0)) * cell_size_};
}

int JitteredCellsBlender::UncachedCellBiome(int64_t i, int64_t j) const {
  if (uniform_biomes_) {
    return surface_biomes_[HashCoords(biome_seed_, i, j) % surface_biomes_.size()];
  }
  const auto [x, z] = CellPoint(i, j);
  return source_.BiomeIndexAt(x, z);
}

void JitteredCellsBlender::ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  double x[BiomeTile::kVertices], z[BiomeTile::kVertices];
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      const int64_t i = static_cast<int64_t>(tile_i) * n + a,
                    j = static_cast<int64_t>(tile_j) * n + b;
      if (uniform_biomes_) {
        tile->biome[b * n + a] = static_cast<uint16_t>(UncachedCellBiome(i, j));
      } else {
        std::tie(x[b * n + a], z[b * n + a]) = CellPoint(i, j);
      }
    }
  }
  // One batched source call for the tile: BiomeIndices answers exactly as BiomeIndexAt does.
  if (!uniform_biomes_) source_.BiomeIndices(x, z, n * n, tile->biome);
}

int JitteredCellsBlender::CellBiome(int64_t i, int64_t j, BiomeSampleCache* cache) const {
  if (cache == nullptr) return UncachedCellBiome(i, j);
  constexpr int32_t n = BiomeTile::kTileSize;
  const BiomeTileKey key{world_uid_, static_cast<int32_t>(FloorDiv(i, n)),
                         static_cast<int32_t>(FloorDiv(j, n))};
  int biome = 0;
  cache->Visit(
      key, [&](BiomeTile& t) { ComputeTile(key.tile_i, key.tile_j, &t); },
      [&](const BiomeTile& tile) {
        biome = tile.biome[(j - static_cast<int64_t>(key.tile_j) * n) * n +
                           (i - static_cast<int64_t>(key.tile_i) * n)];
      });
  return biome;
}

void JitteredCellsBlender::SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                                          std::vector<SamplingPoint>* out) const {
  out->clear();
  // Cell k's point lies in [(k + 1/2 - jitter) s, (k + 1/2 + jitter) s] on each axis.
  const auto first = [this](double lo) {
    return static_cast<int64_t>(std::floor(lo / cell_size_ - 0.5 - jitter_));
  };
  const auto last = [this](double hi) {
    return static_cast<int64_t>(std::ceil(hi / cell_size_ - 0.5 + jitter_));
  };
  thread_local CellWindow window;
  FillWindow(first(box.min_x), last(box.max_x), first(box.min_z), last(box.max_z), cache, &window);
  for (size_t c = 0; c < window.x.size(); ++c) {
    if (box.Contains(window.x[c], window.z[c])) {
      out->push_back({window.x[c], window.z[c], window.biome[c]});
    }
  }
}

double JitteredCellsBlender::SamplingPointBound(const BlockBox& box) const {
  const auto cells = [this](double lo, double hi) {
    return std::ceil((hi - lo) / cell_size_ + 2.0 * jitter_) + 2.0;
  };
  return cells(box.min_x, box.max_x) * cells(box.min_z, box.max_z);
}

double JitteredCellsBlender::Curve(double t) const {
  if (!(t < 1.0)) return 0.0;
  const double f = std::max(0.0, t) * kCurveTableSize;
  const int k = static_cast<int>(f);
  const double a = curve_table_[static_cast<size_t>(k)];
  const double b = curve_table_[static_cast<size_t>(k) + 1];
  return a + (b - a) * (f - static_cast<double>(k));
}

std::pair<double, double> JitteredCellsBlender::WarpedPosition(double x, double z) const {
  if (warp_amplitude_ == 0.0) return {x, z};
  return {x + warp_amplitude_ * FractalNoise2D(warp_x_seed_, x, z, warp_frequency_, warp_octaves_),
          z + warp_amplitude_ * FractalNoise2D(warp_z_seed_, x, z, warp_frequency_, warp_octaves_)};
}

void JitteredCellsBlender::CellRange(double p, int extra_cells, int64_t* lo, int64_t* hi) const {
  // Cell k's point lies in [(k + 1/2 - jitter) s, (k + 1/2 + jitter) s] on this axis.
  *lo = static_cast<int64_t>(std::floor((p - reach_) / cell_size_ - 0.5 - jitter_)) - extra_cells;
  *hi =
      static_cast<int64_t>(std::floor((p + reach_) / cell_size_ - 0.5 + jitter_)) + 1 + extra_cells;
}

void JitteredCellsBlender::FillWindow(int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                      BiomeSampleCache* cache, CellWindow* window) const {
  window->i0 = i0;
  window->j0 = j0;
  window->ni = i1 - i0 + 1;
  window->nj = j1 - j0 + 1;
  const size_t cells = static_cast<size_t>(window->ni * window->nj);
  window->x.resize(cells);
  window->z.resize(cells);
  window->biome.resize(cells);
  size_t c = 0;
  for (int64_t j = j0; j <= j1; ++j) {
    for (int64_t i = i0; i <= i1; ++i, ++c) {
      std::tie(window->x[c], window->z[c]) = CellPoint(i, j);
      if (cache == nullptr) window->biome[c] = UncachedCellBiome(i, j);
    }
  }
  if (cache == nullptr) return;
  // Each tile visited once for the whole window.
  thread_local std::vector<int64_t> lo, hi;  // Reused: no allocation per window.
  lo.assign(static_cast<size_t>(window->nj), i0);
  hi.assign(lo.size(), i1);
  VisitTileRows(
      *cache, world_uid_, j0, lo, hi,
      [this](int32_t ti, int32_t tj, BiomeTile& t) { ComputeTile(ti, tj, &t); },
      [&](const BiomeTile& tile, const TileRowSpan& span) {
        const size_t first = static_cast<size_t>((span.j - j0) * window->ni + (span.i_begin - i0));
        for (int64_t a = 0; a <= span.i_end - span.i_begin; ++a) {
          window->biome[first + static_cast<size_t>(a)] = tile.biome[span.index + a];
        }
      });
}

void JitteredCellsBlender::WeightsInWindow(const CellWindow& window, double px, double pz,
                                           int extra_cells, std::vector<double>* distances,
                                           std::vector<std::pair<int, double>>* sums,
                                           std::vector<std::pair<int, float>>* weights) const {
  int64_t i_lo, i_hi, j_lo, j_hi;
  CellRange(px, extra_cells, &i_lo, &i_hi);
  CellRange(pz, extra_cells, &j_lo, &j_hi);
  distances->clear();
  double nearest = std::numeric_limits<double>::infinity();
  for (int64_t j = j_lo; j <= j_hi; ++j) {
    for (int64_t i = i_lo; i <= i_hi; ++i) {
      const size_t c = static_cast<size_t>((j - window.j0) * window.ni + (i - window.i0));
      const double dx = px - window.x[c], dz = pz - window.z[c];
      const double d = std::sqrt(dx * dx + dz * dz);
      distances->push_back(d);
      nearest = std::min(nearest, d);
    }
  }
  sums->clear();
  size_t n = 0;
  for (int64_t j = j_lo; j <= j_hi; ++j) {
    for (int64_t i = i_lo; i <= i_hi; ++i, ++n) {
      const double w = Curve(((*distances)[n] - nearest) / overlap_);
      if (w == 0.0) continue;
      const int biome =
          window.biome[static_cast<size_t>((j - window.j0) * window.ni + (i - window.i0))];
      auto it = std::find_if(sums->begin(), sums->end(),
                             [biome](const std::pair<int, double>& s) { return s.first == biome; });
      if (it == sums->end()) {
        sums->emplace_back(biome, w);
      } else {
        it->second += w;
      }
    }
  }
  std::sort(sums->begin(), sums->end());
  double total = 0.0;
  for (const auto& [biome, w] : *sums) total += w;
  weights->clear();
  for (const auto& [biome, w] : *sums) {
    const float v = static_cast<float>(w / total);
    if (v != 0.0f) weights->emplace_back(biome, v);
  }
}

void JitteredCellsBlender::WeightsAtWarped(double px, double pz, int extra_cells,
                                           BiomeSampleCache* cache,
                                           std::vector<std::pair<int, float>>* weights) const {
  int64_t i_lo, i_hi, j_lo, j_hi;
  CellRange(px, extra_cells, &i_lo, &i_hi);
  CellRange(pz, extra_cells, &j_lo, &j_hi);
  // Reused: a point query allocates nothing once warm.
  thread_local CellWindow window;
  thread_local std::vector<double> distances;
  thread_local std::vector<std::pair<int, double>> sums;
  FillWindow(i_lo, i_hi, j_lo, j_hi, cache, &window);
  WeightsInWindow(window, px, pz, extra_cells, &distances, &sums, weights);
}

void JitteredCellsBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                      std::vector<std::pair<int, float>>* weights) const {
  const auto [px, pz] = WarpedPosition(x, z);
  WeightsAtWarped(px, pz, 0, cache, weights);
}

bool JitteredCellsBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                        std::vector<IndexedLayer>* layers) const {
  layers->clear();
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  std::vector<double> px(columns), pz(columns);
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
      px[col] = static_cast<double>(x0 + lx);
      pz[col] = static_cast<double>(z0 + lz);
    }
  }
  if (warp_amplitude_ != 0.0) {
    // WarpedPosition's expressions, with the noise batched (bit-identical to FractalNoise2D).
    std::vector<double> nx(columns), nz(columns);
    FractalNoise2DBatch(warp_x_seed_, px.data(), pz.data(), columns, warp_frequency_, warp_octaves_,
                        nx.data());
    FractalNoise2DBatch(warp_z_seed_, px.data(), pz.data(), columns, warp_frequency_, warp_octaves_,
                        nz.data());
    for (size_t col = 0; col < columns; ++col) {
      px[col] = px[col] + warp_amplitude_ * nx[col];
      pz[col] = pz[col] + warp_amplitude_ * nz[col];
    }
  }
  // Every cell any column of the block can weigh (CellRange is monotone in p).
  int64_t i_lo, i_hi, j_lo, j_hi, unused;
  CellRange(*std::min_element(px.begin(), px.end()), 0, &i_lo, &unused);
  CellRange(*std::max_element(px.begin(), px.end()), 0, &unused, &i_hi);
  CellRange(*std::min_element(pz.begin(), pz.end()), 0, &j_lo, &unused);
  CellRange(*std::max_element(pz.begin(), pz.end()), 0, &unused, &j_hi);
  thread_local CellWindow window;  // Reused: no allocation per chunk once warm.
  FillWindow(i_lo, i_hi, j_lo, j_hi, cache, &window);
  if (std::all_of(window.biome.begin(), window.biome.end(),
                  [&](int b) { return b == window.biome[0]; })) {
    layers->push_back({window.biome[0], std::vector<float>(columns, 1.0f)});
    return true;
  }
  LayerAccumulator accumulator(biome_count_, columns);
  thread_local std::vector<double> distances;
  thread_local std::vector<std::pair<int, double>> sums;
  thread_local std::vector<std::pair<int, float>> at_column;
  for (size_t col = 0; col < columns; ++col) {
    WeightsInWindow(window, px[col], pz[col], 0, &distances, &sums, &at_column);
    accumulator.Add(col, at_column);
  }
  // One layer: every column's only non-zero weight was w / w, exactly 1.
  return accumulator.MoveTo(layers) == 1;
}

}  // namespace worldgen
