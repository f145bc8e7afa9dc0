#include "engine/coast.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/chunk.h"

namespace worldgen {
namespace {

// Squared distance standing for "no column of the other class in this window": beyond any cap.
constexpr double kFar = 1e12;

// Exact squared Euclidean distance transform along one line: d[q] = min over p of (q − p)² + f[p]
// for q in [0, n), f holding exact integers (kFar where a line has no feature). The lower envelope
// of the parabolas (Felzenszwalb and Huttenlocher); v and bound are scratch of n and n + 1 values.
// Every value is an integer below 2^53, so the result is exact.
void SquaredDistances1D(const double* f, int n, double* d, int* v, double* bound) {
  int k = 0;
  v[0] = 0;
  bound[0] = -std::numeric_limits<double>::infinity();
  bound[1] = std::numeric_limits<double>::infinity();
  for (int q = 1; q < n; ++q) {
    // Drop the parabolas the new one lies below from where they would start to be the lowest
    // (bound[0] is −∞, so k stays ≥ 0).
    double s;
    while (true) {
      const int p = v[k];
      s = ((f[q] + double(q) * q) - (f[p] + double(p) * p)) / (2.0 * (q - p));
      if (s > bound[k]) break;
      --k;
    }
    ++k;
    v[k] = q;
    bound[k] = s;
    bound[k + 1] = std::numeric_limits<double>::infinity();
  }
  k = 0;
  for (int q = 0; q < n; ++q) {
    while (bound[k + 1] < q) ++k;
    const double dq = q - v[k];
    d[q] = dq * dq + f[v[k]];
  }
}

}  // namespace

CoastalHeights::CoastalHeights(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid)
    : source_(source),
      column_tiles_uid_(world_uid | kColumnTilesBit),
      sea_level_(spec.heights.sea_level),
      width_(spec.heights.coast_width),
      shore_slope_(spec.heights.shore_slope),
      pad_(static_cast<int>(std::ceil(spec.heights.coast_width + 0.5))) {
  double land_margin = std::numeric_limits<double>::infinity();
  double water_margin = std::numeric_limits<double>::infinity();
  for (const BiomeSpec& b : spec.biomes) {
    const bool land = b.surface == BiomeSurface::kLand;
    land_.push_back(land ? 1 : 0);
    if (land) {
      land_margin = std::min(land_margin, b.height_base - b.height_amplitude - sea_level_);
    } else {
      water_margin = std::min(water_margin, sea_level_ - b.height_base - b.height_amplitude);
    }
  }
  // A world without land (or water) never uses that side's margin except in the slope's cap.
  if (std::isfinite(land_margin)) land_margin_ = land_margin;
  if (std::isfinite(water_margin)) water_margin_ = water_margin;
}

void CoastalHeights::Add(int biome_index, double weight, double height, CoastSums* sums) const {
  if (IsLand(biome_index)) {
    sums->land_weight += weight;
    sums->land_relief += weight * (height - sea_level_);
  } else {
    sums->water_weight += weight;
    sums->water_depth += weight * (sea_level_ - height);
  }
}

double CoastalHeights::Capped(double d2, bool land) const {
  const double d = std::min(std::sqrt(d2) - 0.5, width_);
  return land ? d : -d;
}

size_t CoastalHeights::ReadClasses(int64_t x0, int64_t z0, int n, BiomeSampleCache* cache,
                                   std::vector<uint8_t>* land) const {
  const size_t side = static_cast<size_t>(n);
  land->resize(side * side);
  if (cache == nullptr) {
    std::vector<double> xs(side), zs(side);
    std::vector<uint16_t> biomes(side);
    for (size_t r = 0; r < side; ++r) {
      for (size_t i = 0; i < side; ++i) {
        xs[i] = static_cast<double>(x0 + static_cast<int64_t>(i));
        zs[i] = static_cast<double>(z0 + static_cast<int64_t>(r));
      }
      source_.BiomeIndices(xs.data(), zs.data(), side, biomes.data());
      for (size_t i = 0; i < side; ++i) (*land)[r * side + i] = IsLand(biomes[i]) ? 1 : 0;
    }
  } else {
    constexpr int kTile = BiomeTile::kTileSize;
    const std::vector<int64_t> lo(side, x0), hi(side, x0 + n - 1);
    VisitTileRows(
        *cache, column_tiles_uid_, z0, lo, hi,
        [this](int32_t ti, int32_t tj, BiomeTile& tile) {
          double xs[BiomeTile::kVertices], zs[BiomeTile::kVertices];
          for (int v = 0; v < BiomeTile::kVertices; ++v) {
            xs[v] = static_cast<double>(int64_t{ti} * kTile + v % kTile);
            zs[v] = static_cast<double>(int64_t{tj} * kTile + v / kTile);
            tile.xz[2 * v] = xs[v];
            tile.xz[2 * v + 1] = zs[v];
          }
          source_.BiomeIndices(xs, zs, BiomeTile::kVertices, tile.biome);
        },
        [&](const BiomeTile& tile, const TileRowSpan& span) {
          uint8_t* row = land->data() + static_cast<size_t>(span.j - z0) * side;
          for (int64_t a = span.i_begin; a <= span.i_end; ++a) {
            row[a - x0] = IsLand(tile.biome[span.index + (a - span.i_begin)]) ? 1 : 0;
          }
        });
  }
  return static_cast<size_t>(std::count(land->begin(), land->end(), uint8_t{1}));
}

double CoastalHeights::Smoothed(double sum, bool land) const {
  const double mean = sum / static_cast<double>(kSmoothTaps * kSmoothTaps);
  return land ? std::max(mean, 0.0) : -std::max(-mean, 0.0);
}

double CoastalHeights::SignedDistanceAt(double x, double z, BiomeSampleCache* cache) const {
  // The raw distance at (x, z) + (dx, dz) needs the columns within W + 1/2 of it, all within
  // pad_ + 1 of its nearest column c + (dx, dz).
  const int64_t cx = static_cast<int64_t>(std::floor(x + 0.5));
  const int64_t cz = static_cast<int64_t>(std::floor(z + 0.5));
  const int reach = pad_ + 1 + kSmooth, n = 2 * reach + 1;
  thread_local std::vector<uint8_t> land;
  const size_t land_count = ReadClasses(cx - reach, cz - reach, n, cache, &land);
  const bool one_class = land_count == 0 || land_count == land.size();
  auto class_at = [&](int dx, int dz) {
    return land[static_cast<size_t>(dz + reach) * static_cast<size_t>(n) +
                static_cast<size_t>(dx + reach)];
  };
  // Candidates for the nearest column of each class: the columns with a 4-neighbour of the other
  // class, and those on the window's rim (their neighbours are not read). The nearest column of a
  // class to a point whose nearest column is of the other class is always such a column: a step
  // from any other toward the point stays in the class and comes nearer. The rim is at least
  // pad_ + 1 − 1/2 > W + 1/2 from every point averaged, beyond the cap, so none is missed.
  thread_local std::vector<std::pair<int, int>> candidates[2];
  if (!one_class) {
    candidates[0].clear();
    candidates[1].clear();
    for (int dz = -reach; dz <= reach; ++dz) {
      for (int dx = -reach; dx <= reach; ++dx) {
        const uint8_t own = class_at(dx, dz);
        const bool rim = std::abs(dx) == reach || std::abs(dz) == reach;
        if (rim || class_at(dx - 1, dz) != own || class_at(dx + 1, dz) != own ||
            class_at(dx, dz - 1) != own || class_at(dx, dz + 1) != own) {
          candidates[own].push_back({dx, dz});
        }
      }
    }
  }
  // The raw D at (x + ox, z + oz), whose nearest column is c + (ox, oz).
  auto raw = [&](int ox, int oz) {
    const uint8_t own = class_at(ox, oz);
    if (one_class) return own != 0 ? width_ : -width_;
    const double px = x + ox, pz = z + oz;
    double best = std::numeric_limits<double>::infinity();
    for (auto [dx, dz] : candidates[1 - own]) {
      const double qx = static_cast<double>(cx + dx) - px, qz = static_cast<double>(cz + dz) - pz;
      best = std::min(best, qx * qx + qz * qz);
    }
    return Capped(best, own != 0);
  };
  // The box average, summed as SignedDistances sums it: each row left to right, rows in order.
  double sum = 0.0;
  for (int oz = -kSmooth; oz <= kSmooth; ++oz) {
    double row = 0.0;
    for (int ox = -kSmooth; ox <= kSmooth; ++ox) row += raw(ox, oz);
    sum += row;
  }
  return Smoothed(sum, class_at(0, 0) != 0);
}

void CoastalHeights::SignedDistances(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                     std::vector<double>* out) const {
  const int n = size + 2 * kSmooth;
  std::vector<double> raw;
  RawDistances(x0 - kSmooth, z0 - kSmooth, n, cache, &raw);
  const size_t side = static_cast<size_t>(size);
  std::vector<double> rows(static_cast<size_t>(n) * side);
  for (int z = 0; z < n; ++z) {
    for (int x = 0; x < size; ++x) {
      double row = 0.0;
      for (int d = 0; d < kSmoothTaps; ++d)
        row += raw[static_cast<size_t>(ColumnIndex(n, x + d, z))];
      rows[static_cast<size_t>(z) * side + static_cast<size_t>(x)] = row;
    }
  }
  out->resize(side * side);
  for (int z = 0; z < size; ++z) {
    for (int x = 0; x < size; ++x) {
      double sum = 0.0;
      for (int d = 0; d < kSmoothTaps; ++d) {
        sum += rows[static_cast<size_t>(z + d) * side + static_cast<size_t>(x)];
      }
      // A column's raw D is never 0 (at least 1/2 from the other class): its sign is its class.
      const bool land = raw[static_cast<size_t>(ColumnIndex(n, x + kSmooth, z + kSmooth))] > 0.0;
      (*out)[static_cast<size_t>(ColumnIndex(size, x, z))] = Smoothed(sum, land);
    }
  }
}

void CoastalHeights::RawDistances(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                  std::vector<double>* out) const {
  const int n = size + 2 * pad_;
  const size_t cells = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<uint8_t> land;
  const size_t land_count = ReadClasses(x0 - pad_, z0 - pad_, n, cache, &land);
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  out->resize(columns);
  if (land_count == 0 || land_count == cells) {
    // One class in the whole window: every column is at least W + 1/2 from the other.
    std::fill(out->begin(), out->end(), land_count == 0 ? -width_ : width_);
    return;
  }
  // For each class, the squared distance of every inner column to the nearest column of that
  // class: along z first (per column of the window), then along x over the inner rows.
  std::vector<double> to_class[2];
  std::vector<double> along_z(cells), line(static_cast<size_t>(n)), dist(static_cast<size_t>(n));
  std::vector<int> v(static_cast<size_t>(n));
  std::vector<double> bound(static_cast<size_t>(n) + 1);
  for (uint8_t cls = 0; cls < 2; ++cls) {
    for (int i = 0; i < n; ++i) {
      double gap = kFar;  // Blocks since the last column of the class, top to bottom...
      for (int r = 0; r < n; ++r) {
        const size_t c = static_cast<size_t>(r) * n + i;
        gap = land[c] == cls ? 0.0 : gap + 1.0;
        along_z[c] = gap;
      }
      gap = kFar;  // ...then bottom to top.
      for (int r = n - 1; r >= 0; --r) {
        const size_t c = static_cast<size_t>(r) * n + i;
        gap = land[c] == cls ? 0.0 : gap + 1.0;
        along_z[c] = std::min(along_z[c], gap);
      }
    }
    std::vector<double>& to = to_class[cls];
    to.resize(columns);
    for (int lz = 0; lz < size; ++lz) {
      const size_t row = static_cast<size_t>(lz + pad_) * n;
      for (int i = 0; i < n; ++i) {
        const double g = along_z[row + static_cast<size_t>(i)];
        line[static_cast<size_t>(i)] = g >= kFar ? kFar : g * g;
      }
      SquaredDistances1D(line.data(), n, dist.data(), v.data(), bound.data());
      for (int lx = 0; lx < size; ++lx) {
        to[static_cast<size_t>(ColumnIndex(size, lx, lz))] = dist[static_cast<size_t>(lx + pad_)];
      }
    }
  }
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
      const bool is_land =
          land[static_cast<size_t>(lz + pad_) * n + static_cast<size_t>(lx + pad_)] != 0;
      (*out)[col] = Capped(to_class[is_land ? 0 : 1][col], is_land);
    }
  }
}

float CoastalHeights::Height(const CoastSums& sums, double signed_distance) const {
  const double land = sums.land_relief + sums.water_weight * land_margin_;
  const double water = sums.water_depth + sums.land_weight * water_margin_;
  const double slope = std::min({shore_slope_, 3.0 * land / width_, 3.0 * water / width_});
  const bool on_land = !std::signbit(signed_distance);
  const double t = std::min(std::fabs(signed_distance) / width_, 1.0);
  const double a = on_land ? land : water;
  const double u = 1.0 - t;
  const double rise = a * (t * t * (3.0 - 2.0 * t)) + slope * width_ * (t * u * u);
  float h = static_cast<float>(on_land ? sea_level_ + rise : sea_level_ - rise);
  // Keep the side: a rise below half a float step must not round onto or across the sea level.
  if (on_land && !(static_cast<double>(h) > sea_level_)) {
    h = std::nextafter(static_cast<float>(sea_level_), std::numeric_limits<float>::infinity());
    if (!(static_cast<double>(h) > sea_level_)) {
      h = std::nextafter(h, std::numeric_limits<float>::infinity());
    }
  } else if (!on_land && !(static_cast<double>(h) < sea_level_)) {
    h = std::nextafter(static_cast<float>(sea_level_), -std::numeric_limits<float>::infinity());
    if (!(static_cast<double>(h) < sea_level_)) {
      h = std::nextafter(h, -std::numeric_limits<float>::infinity());
    }
  }
  return h;
}

}  // namespace worldgen
