#include "engine/volume_blender.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "absl/strings/str_format.h"
#include "engine/floor_div.h"
#include "engine/sparse_convolution.h"

namespace worldgen {

namespace {

// The weights of one point from its kernel sums, the one place the surface formula's quotients are
// taken: total = surface + the present biomes' sums in ascending order; a present biome b gets
// sum_of(b) / total and a biome of the column's 2D weights (surface / total) * w2D (exactly w2D
// where no cave sample reaches), merged in ascending biome order (a cave biome is never in 2D:
// every blender keeps them off the surface, BlenderContractTest.CaveBiomesNeverReachTheSurface),
// zeros left out. `present` is ascending.
template <typename Present, typename SumOf>
void ShareOut(const Present& present, SumOf sum_of, double surface,
              std::span<const std::pair<int, float>> column,
              std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  double total = surface;  // +0.0 without a surface: the biomes' sums alone, bit for bit.
  for (const auto biome : present) total += sum_of(biome);
  const double share = surface / total;
  size_t c = 0, s = 0;
  while (c < present.size() || s < column.size()) {
    float w;
    int biome;
    if (s == column.size() || (c < present.size() && present[c] < column[s].first)) {
      biome = present[c];
      w = static_cast<float>(sum_of(biome) / total);
      ++c;
    } else {
      biome = column[s].first;
      w = static_cast<float>(share * static_cast<double>(column[s].second));
      ++s;
    }
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

// ConvolveVolumePoint at every cell of a block at once: VolumeKernelSums scatters each sample, in
// the runs' order, into the cells it reaches, so every cell's sums receive their terms in the
// samples' order, as ConvolveVolumePoint adds them (a sample out of a cell's reach adds exactly
// +0.0, which changes no sum), then ShareOut takes each cell's quotients. The present biomes are
// those of any sample in the runs: one that reaches no cell of a block has a sum of +0.0 there,
// which adds nothing to the total and gets weight 0, which is not listed; so each cell has
// ConvolveVolumePoint's bits. Cell (a, b, d) is at (xs[a], ys[b], zs[d]) (ys in kernel space)
// with index (b * nz + d) * nx + a; `columns` holds the nz * nx columns' 2D weights over a
// surface (empty without); `biome_count` bounds the samples' biomes. Each cell's weights go to
// `accumulator`.
void ConvolveVolumeBlock(std::span<const std::span<const VolumeSample>> runs, double radius,
                         std::span<const double> xs, std::span<const double> ys,
                         std::span<const double> zs, std::span<const char> is_cave,
                         std::span<const std::vector<std::pair<int, float>>> columns,
                         int biome_count, LayerAccumulator* accumulator) {
  const size_t nx = xs.size(), ny = ys.size(), nz = zs.size();
  const size_t stride = VolumeStride(nx);
  const bool over_surface = !is_cave.empty();
  thread_local std::vector<uint32_t> plane_of;
  thread_local std::vector<int> present;
  plane_of.assign(static_cast<size_t>(biome_count), 0);
  present.clear();
  for (std::span<const VolumeSample> run : runs) {
    for (const VolumeSample& p : run) {
      if ((over_surface && !is_cave[p.biome]) || plane_of[p.biome] != 0) continue;
      present.push_back(p.biome);
      plane_of[p.biome] = static_cast<uint32_t>(present.size());
    }
  }
  thread_local std::vector<int> ascending;
  ascending = present;
  std::sort(ascending.begin(), ascending.end());
  thread_local std::vector<std::pair<int, float>> weights;
  static const std::vector<std::pair<int, float>> kNone;
  // Heights in slabs whose planes fit kPlaneBytes (at least one height per slab), so a section of
  // many biomes does not leave a large scratch behind: cells are independent, so a slab's sums
  // are the block's.
  constexpr size_t kPlaneBytes = size_t{4} << 20;
  const size_t row_doubles = (present.size() + 1) * nz * stride;
  const size_t slab = std::clamp<size_t>(kPlaneBytes / sizeof(double) / row_doubles, 1, ny);
  thread_local std::vector<double> store;
  for (size_t b0 = 0; b0 < ny; b0 += slab) {
    const size_t rows = std::min(slab, ny - b0);
    // Planes rounded up to 64 bytes: plane 0 the surface's sums, plane t the t-th present biome's.
    const size_t plane = (rows * nz * stride + 7) / 8 * 8;
    store.assign((present.size() + 1) * plane + 8, 0.0);
    double* planes =
        store.data() + (64 - reinterpret_cast<uintptr_t>(store.data()) % 64) % 64 / sizeof(double);
    VolumeKernelSums({.runs = runs,
                      .plane_of = plane_of.data(),
                      .radius = radius,
                      .xs = xs,
                      .ys = ys.subspan(b0, rows),
                      .zs = zs,
                      .planes = planes,
                      .plane_size = plane});
    for (size_t b = 0; b < rows; ++b) {
      for (size_t d = 0; d < nz; ++d) {
        for (size_t a = 0; a < nx; ++a) {
          const size_t at = (b * nz + d) * stride + a;
          ShareOut(
              ascending,
              [&](int biome) { return planes[plane_of[static_cast<size_t>(biome)] * plane + at]; },
              planes[at], over_surface ? columns[d * nx + a] : kNone, &weights);
          accumulator->Add(((b0 + b) * nz + d) * nx + a, weights);
        }
      }
    }
  }
}

}  // namespace

double ScatteredVolumeBlender::MinBlendRadius(double sampling_interval, double jitter) {
  return sampling_interval * (JitteredBccLattice::kCoveringRadius + jitter + 0.25);
}

double ScatteredVolumeBlender::MinVerticalBlendRadius(double sampling_interval,
                                                      double blend_radius) {
  return std::max(1.0, blend_radius / sampling_interval);
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
  const double max_radius = std::min(1024.0, kMaxRadiusIntervals * p.sampling_interval);
  if (!(p.blend_radius >= min_radius && p.blend_radius <= max_radius)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "caves.blending.blend_radius = %g is out of range: [%g, %g] (the lattice's largest gap, "
        "sampling_interval * (sqrt(5)/4 + jitter + 1/4), up to %g intervals: a 3D kernel's "
        "points grow as the cube of its radius in intervals)",
        p.blend_radius, min_radius, max_radius, kMaxRadiusIntervals));
  }
  const double min_vertical = MinVerticalBlendRadius(p.sampling_interval, p.blend_radius);
  if (!(p.vertical_blend_radius >= min_vertical && p.vertical_blend_radius <= p.blend_radius)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "caves.blending.vertical_blend_radius = %g is out of range: [%g, blend_radius = %g] (at "
        "least 1 and blend_radius / sampling_interval, so that the lattice's layers, "
        "sampling_interval * vertical_blend_radius / blend_radius apart, are at least a block "
        "apart)",
        p.vertical_blend_radius, min_vertical, p.blend_radius));
  }
  return absl::OkStatus();
}

ScatteredVolumeBlender::ScatteredVolumeBlender(uint64_t seed, const VolumeBlendParams& params,
                                               const VolumeSource& source, const Blender* surface,
                                               std::vector<char> is_cave, uint64_t cache_uid)
    : source_(source),
      surface_(surface),
      is_cave_(std::move(is_cave)),
      cache_uid_(cache_uid),
      lattice_(seed, params.sampling_interval,
               params.sampling_interval * params.vertical_blend_radius / params.blend_radius,
               params.jitter),
      radius_sq_(params.blend_radius * params.blend_radius),
      radius_(params.blend_radius) {
  if (surface_ != nullptr) is_cave_.push_back(0);  // surface_marker(): counts as the surface.
}

bool ScatteredVolumeBlender::MayReachCaves(double min_y, double max_y) const {
  // A sample reaching y lies within the vertical radius plus the jitter of it (blocks), and a
  // block of slack covers rounding.
  const double reach = (radius_ + lattice_.jitter()) / lattice_.y_scale() + 1.0;
  return source_.MayHoldCaves(min_y - reach, max_y + reach);
}

std::pair<int32_t, int32_t> ScatteredVolumeBlender::RowRange(double lo, double hi,
                                                             double radius) const {
  // A point reaching [lo, hi] has its jittered position within the radius of it, so its
  // unjittered one within radius + jitter; a block of slack absorbs the rounding of the bounds
  // (the exact tests decide).
  const double g = lattice_.interval(), reach = radius + lattice_.jitter() + 1.0;
  return {static_cast<int32_t>(std::floor((lo - reach) / g - 0.5)),
          static_cast<int32_t>(std::ceil((hi + reach) / g))};
}

void ScatteredVolumeBlender::Classify(const double* xs, const double* ys, const double* zs,
                                      size_t n, uint16_t* out) const {
  thread_local std::vector<int> biomes;
  biomes.resize(n);
  if (surface_ != nullptr) {
    source_.CaveIndicesAt(xs, ys, zs, n, biomes.data());
    const int marker = surface_marker();
    for (size_t t = 0; t < n; ++t) {
      const int b = biomes[t];
      out[t] = static_cast<uint16_t>(
          b >= 0 && b < marker && is_cave_[static_cast<size_t>(b)] ? b : marker);
    }
  } else {
    for (size_t t = 0; t < n; ++t)
      out[t] = static_cast<uint16_t>(source_.BiomeIndexAt(xs[t], ys[t], zs[t]));
  }
}

void ScatteredVolumeBlender::FillTile(int32_t ti, int32_t tj, int32_t tk, BiomeTile* tile) const {
  constexpr int kPoints = kTile3 * kTile3 * kTile3 * 2;
  double xs[kPoints], ys[kPoints], zs[kPoints];
  for (int l = 0; l < kTile3; ++l) {
    for (int b = 0; b < kTile3; ++b) {
      for (int c = 0; c < 2; ++c) {
        double rx[kTile3], ry[kTile3], rz[kTile3];
        lattice_.PositionRow(ti * kTile3, kTile3, tj * kTile3 + l, tk * kTile3 + b, c, rx, ry, rz);
        for (int a = 0; a < kTile3; ++a) {
          const int v = ((l * kTile3 + b) * kTile3 + a) * 2 + c;
          xs[v] = rx[a], ys[v] = ry[a], zs[v] = rz[a];
          tile->xz[2 * v] = xs[v];
          tile->xz[2 * v + 1] = zs[v];
          tile->xz[2 * kPoints + v] = ys[v];
        }
      }
    }
  }
  Classify(xs, ys, zs, kPoints, tile->biome);
}

void ScatteredVolumeBlender::GatherInto(const VolumeBox& box, BiomeSampleCache* cache,
                                        Gather* out) const {
  const double g = lattice_.interval(), s = lattice_.y_scale();
  const double min_y = box.min_y * s, max_y = box.max_y * s;
  // Plain variables, not structured bindings: the tile visitor below captures them, which clang
  // 14 (the fuzz build) does not allow for bindings.
  const std::pair<int32_t, int32_t> is = RowRange(box.min_x, box.max_x);
  const std::pair<int32_t, int32_t> js = RowRange(min_y, max_y);
  const std::pair<int32_t, int32_t> ks = RowRange(box.min_z, box.max_z);
  const int32_t i0 = is.first, i1 = is.second, j0 = js.first, j1 = js.second;
  const int32_t k0 = ks.first, k1 = ks.second;
  out->samples.clear();
  out->j0 = j0;
  out->k0 = k0;
  out->rows_j = j1 - j0 + 1;
  out->rows_k = k1 - k0 + 1;
  out->row_start.clear();
  const auto gap = [](double v, double lo, double hi) { return v - std::min(std::max(v, lo), hi); };
  // The exact test: the jittered point within the radius of the box (kernel space).
  const auto reaches = [&](double x, double ys, double z) {
    const double dx = gap(x, box.min_x, box.max_x);
    const double dy = gap(ys, min_y, max_y);
    const double dz = gap(z, box.min_z, box.max_z);
    return dx * dx + dy * dy + dz * dz < radius_sq_;
  };
  if (cache != nullptr && cache_uid_ != 0) {
    // Through the cache: each lattice layer's points copied out of its tiles, then filtered in
    // canonical order exactly as below.
    const size_t width = static_cast<size_t>(i1 - i0 + 1) * 2;
    const size_t depth = static_cast<size_t>(k1 - k0 + 1);
    struct Point {
      double x, y, z;
      uint16_t biome;
    };
    // Layer j's columns and rows: its points lie within the jitter of kernel-space heights
    // [g j, g (j + 1/2)], so at least dy from the box, and reach at most sqrt(r^2 - dy^2)
    // across: the reach is a ball, not a box, and the layers towards its top and bottom read
    // fewer points and tiles (none where dy >= r). dy is one block short of the gap, so its
    // rounding never narrows a layer too far: only points that cannot reach are left out, and
    // the samples are the same.
    //
    // Within a layer, row k's points lie within the jitter of depths [g k, g (k + 1/2)], so at
    // least dz from the box (again a block short), and reach at most sqrt(r^2 - dy^2 - dz^2)
    // across in x: each row reads only the ball's chord, as the 2D gather's rows do.
    struct LayerRange {
      int32_t i0, i1, k0, k1;
      // Row k's columns [first, second] are row_i[rows + (k - k0)] (none if first > second).
      size_t rows;
    };
    thread_local std::vector<std::pair<int32_t, int32_t>> row_i;
    const double jitter = lattice_.jitter();
    const auto layer_range = [&](int32_t j) {
      const double dy =
          std::max({0.0, g * j - jitter - max_y - 1.0, min_y - (g * (j + 0.5) + jitter) - 1.0});
      if (dy >= radius_) return LayerRange{i0, i0 - 1, k0, k0 - 1, row_i.size()};
      const double across = std::sqrt(radius_sq_ - dy * dy);
      const std::pair<int32_t, int32_t> li = RowRange(box.min_x, box.max_x, across);
      const std::pair<int32_t, int32_t> lk = RowRange(box.min_z, box.max_z, across);
      const LayerRange r{std::max(i0, li.first), std::min(i1, li.second), std::max(k0, lk.first),
                         std::min(k1, lk.second), row_i.size()};
      for (int32_t k = r.k0; k <= r.k1; ++k) {
        const double dz = std::max(
            {0.0, g * k - jitter - box.max_z - 1.0, box.min_z - (g * (k + 0.5) + jitter) - 1.0});
        const double left = (radius_sq_ - dy * dy) - dz * dz;
        if (!(left > 0.0)) {
          row_i.emplace_back(r.i0, r.i0 - 1);
          continue;
        }
        const std::pair<int32_t, int32_t> ri = RowRange(box.min_x, box.max_x, std::sqrt(left));
        const int32_t first = std::max(r.i0, ri.first), last = std::min(r.i1, ri.second);
        row_i.emplace_back(first <= last ? std::pair{first, last} : std::pair{r.i0, r.i0 - 1});
      }
      return r;
    };
    // Tiles are cubes of kTile3 layers, rows and columns (FillTile), read a layer of tiles (tj)
    // at a time: that layer's kTile3 lattice layers' ranges, then its tiles in batches of up to
    // kBatch whose index slots and needed lines are prefetched first (BiomeSampleCache::Prefetch,
    // so the visits do not wait for each tile's misses in turn), each tile's rows copied into the
    // layers' scratch, then the layers filtered in canonical order.
    constexpr size_t kBatch = 16;
    constexpr int kPoints = kTile3 * kTile3 * kTile3 * 2;
    // Tile (ti, tj, tk)'s part of lattice layer j's range: its rows b (k) and row b's columns a
    // (i), offsets within the tile.
    const auto tile_rows = [&](const LayerRange& r, int32_t tk) {
      return std::pair<int, int>{std::max(0, r.k0 - tk * kTile3),
                                 std::min(kTile3 - 1, r.k1 - tk * kTile3)};
    };
    const auto row_columns = [&](const LayerRange& r, int32_t ti, int32_t tk, int b) {
      const std::pair<int32_t, int32_t>& cols = row_i[r.rows + (tk * kTile3 + b - r.k0)];
      return std::pair<int, int>{std::max(0, cols.first - ti * kTile3),
                                 std::min(kTile3 - 1, cols.second - ti * kTile3)};
    };
    thread_local std::vector<Point> layers;
    thread_local std::vector<BiomeTileKey> keys;
    thread_local std::vector<LayerRange> ranges;
    for (int32_t tj = static_cast<int32_t>(FloorDiv(j0, kTile3));
         tj <= static_cast<int32_t>(FloorDiv(j1, kTile3)); ++tj) {
      const int32_t jb = std::max(j0, tj * kTile3), je = std::min(j1, tj * kTile3 + kTile3 - 1);
      layers.resize(static_cast<size_t>(je - jb + 1) * width * depth);
      keys.clear();
      ranges.clear();
      row_i.clear();
      int32_t ui0 = i1 + 1, ui1 = i0 - 1, uk0 = k1 + 1, uk1 = k0 - 1;  // The layers' union.
      for (int32_t j = jb; j <= je; ++j) {
        const LayerRange& r = ranges.emplace_back(layer_range(j));
        if (r.i0 > r.i1 || r.k0 > r.k1) continue;
        ui0 = std::min(ui0, r.i0), ui1 = std::max(ui1, r.i1);
        uk0 = std::min(uk0, r.k0), uk1 = std::max(uk1, r.k1);
      }
      // Calls each(j, b, a0, a1, v0) for the rows of tile (ti, tk) in the layers' ranges: lattice
      // layer j, the tile's row b, its columns a0..a1, whose first point is v0.
      const auto for_each_row = [&](int32_t ti, int32_t tk, auto&& each) {
        for (int32_t j = jb; j <= je; ++j) {
          const LayerRange& r = ranges[static_cast<size_t>(j - jb)];
          if (r.i0 > r.i1 || r.k0 > r.k1) continue;
          const auto [b0, b1] = tile_rows(r, tk);
          for (int b = b0; b <= b1; ++b) {
            const auto [a0, a1] = row_columns(r, ti, tk, b);
            if (a0 > a1) continue;
            each(j, b, a0, a1, (((j - tj * kTile3) * kTile3 + b) * kTile3 + a0) * 2);
          }
        }
      };
      // The tiles of the layers' union that hold a row of some layer's range.
      if (ui0 <= ui1 && uk0 <= uk1) {
        for (int32_t tk = static_cast<int32_t>(FloorDiv(uk0, kTile3));
             tk <= static_cast<int32_t>(FloorDiv(uk1, kTile3)); ++tk) {
          for (int32_t ti = static_cast<int32_t>(FloorDiv(ui0, kTile3));
               ti <= static_cast<int32_t>(FloorDiv(ui1, kTile3)); ++ti) {
            bool rows = false;
            for_each_row(ti, tk, [&](int32_t, int, int, int, int) { rows = true; });
            if (rows) keys.push_back(BiomeTileKey::Volume(cache_uid_, ti, tj, tk));
          }
        }
      }
      for (size_t first = 0; first < keys.size(); first += kBatch) {
        const std::span<const BiomeTileKey> batch(keys.data() + first,
                                                  std::min(kBatch, keys.size() - first));
        cache->Prefetch(batch, [&](size_t k, const BiomeTile* tile) {
          for_each_row(batch[k].tile_i, batch[k].volume_tile_k(),
                       [&](int32_t, int, int a0, int a1, int v0) {
                         const int v1 = v0 + (a1 - a0) * 2 + 1;
                         for (int d = 2 * v0; d <= 2 * v1 + 1; d += 8) {
                           __builtin_prefetch(&tile->xz[d]);
                         }
                         __builtin_prefetch(&tile->xz[2 * v1 + 1]);
                         __builtin_prefetch(&tile->xz[2 * kPoints + v0]);
                         __builtin_prefetch(&tile->xz[2 * kPoints + v1]);
                         __builtin_prefetch(&tile->biome[v0]);
                       });
        });
        for (const BiomeTileKey& key : batch) {
          const int32_t ti = key.tile_i, tk = key.volume_tile_k();
          cache->Visit(
              key, [&](BiomeTile& tile) { FillTile(ti, tj, tk, &tile); },
              [&](const BiomeTile& tile) {
                for_each_row(ti, tk, [&](int32_t j, int b, int a0, int a1, int v0) {
                  Point* row = layers.data() + static_cast<size_t>(j - jb) * width * depth +
                               static_cast<size_t>(tk * kTile3 + b - k0) * width +
                               static_cast<size_t>(ti * kTile3 + a0 - i0) * 2;
                  for (int v = v0, t = 0; v <= v0 + (a1 - a0) * 2 + 1; ++v, ++t) {
                    row[t] = {tile.xz[2 * v], tile.xz[2 * kPoints + v], tile.xz[2 * v + 1],
                              tile.biome[v]};
                  }
                });
              });
        }
      }
      for (int32_t j = jb; j <= je; ++j) {
        const Point* layer = layers.data() + static_cast<size_t>(j - jb) * width * depth;
        const LayerRange& r = ranges[static_cast<size_t>(j - jb)];
        for (size_t k = 0; k < depth; ++k) {
          out->row_start.push_back(static_cast<uint32_t>(out->samples.size()));
          const int32_t row = k0 + static_cast<int32_t>(k);
          if (row < r.k0 || row > r.k1) continue;
          const std::pair<int32_t, int32_t>& cols = row_i[r.rows + (row - r.k0)];
          for (size_t t = static_cast<size_t>(cols.first - i0) * 2;
               t < static_cast<size_t>(cols.second - i0 + 1) * 2; ++t) {
            const Point& p = layer[k * width + t];
            const double ys = p.y * s;
            if (reaches(p.x, ys, p.z)) out->samples.push_back({p.x, ys, p.z, p.biome});
          }
        }
      }
    }
    out->row_start.push_back(static_cast<uint32_t>(out->samples.size()));
    return;
  }
  // An unjittered point farther than r + jitter (and a block of slack) from the box cannot reach
  // it: skipped before its position is hashed.
  const double far = radius_ + lattice_.jitter() + 1.0, far_sq = far * far;
  thread_local std::vector<double> xs, block_y, zs, row_x[2], row_y[2], row_z[2];
  xs.clear();
  block_y.clear();
  zs.clear();
  for (int32_t j = j0; j <= j1; ++j) {
    for (int32_t k = k0; k <= k1; ++k) {
      out->row_start.push_back(static_cast<uint32_t>(out->samples.size()));
      const auto near = [&](int32_t i, int32_t c) {
        const double half = 0.5 * c;
        const double ux = gap(g * (i + half), box.min_x, box.max_x);
        const double uy = gap(g * (j + half), min_y, max_y);
        const double uz = gap(g * (k + half), box.min_z, box.max_z);
        return !(ux * ux + uy * uy + uz * uz > far_sq);
      };
      // The positions of each kind c's near points, from its first near i to its last, in one
      // row of the lattice.
      int32_t first[2] = {i1 + 1, i1 + 1}, last[2] = {i0 - 1, i0 - 1};
      for (int32_t c = 0; c < 2; ++c) {
        for (int32_t i = i0; i <= i1; ++i) {
          if (!near(i, c)) continue;
          first[c] = std::min(first[c], i);
          last[c] = i;
        }
        if (first[c] > last[c]) continue;
        const size_t count = static_cast<size_t>(last[c] - first[c] + 1);
        if (row_x[c].size() < count) {
          row_x[c].resize(count), row_y[c].resize(count), row_z[c].resize(count);
        }
        lattice_.PositionRow(first[c], static_cast<int32_t>(count), j, k, c, row_x[c].data(),
                             row_y[c].data(), row_z[c].data());
      }
      for (int32_t i = i0; i <= i1; ++i) {
        for (int32_t c = 0; c < 2; ++c) {
          if (!near(i, c)) continue;
          const size_t at = static_cast<size_t>(i - first[c]);
          const double x = row_x[c][at], y = row_y[c][at], z = row_z[c][at];
          const double ys = y * s;
          if (!reaches(x, ys, z)) continue;
          out->samples.push_back({x, ys, z, 0});
          xs.push_back(x);
          block_y.push_back(y);
          zs.push_back(z);
        }
      }
    }
  }
  out->row_start.push_back(static_cast<uint32_t>(out->samples.size()));
  // The biomes, in one batch of the map.
  thread_local std::vector<uint16_t> biomes;
  biomes.resize(out->samples.size());
  Classify(xs.data(), block_y.data(), zs.data(), out->samples.size(), biomes.data());
  for (size_t t = 0; t < biomes.size(); ++t) out->samples[t].biome = biomes[t];
}

void ScatteredVolumeBlender::GatherSamples(const VolumeBox& box, std::vector<VolumeSample>* out,
                                           BiomeSampleCache* cache) const {
  thread_local Gather gather;
  GatherInto(box, cache, &gather);
  out->assign(gather.samples.begin(), gather.samples.end());
}

void ScatteredVolumeBlender::Runs(const Gather& gather, double ys_lo, double ys_hi, double z_lo,
                                  double z_hi,
                                  std::vector<std::span<const VolumeSample>>* runs) const {
  runs->clear();
  const auto [ja, jb] = RowRange(ys_lo, ys_hi);
  const auto [ka, kb] = RowRange(z_lo, z_hi);
  const int32_t j_lo = std::max(ja, gather.j0), j_hi = std::min(jb, gather.j0 + gather.rows_j - 1);
  const int32_t k_lo = std::max(ka, gather.k0), k_hi = std::min(kb, gather.k0 + gather.rows_k - 1);
  if (k_lo > k_hi) return;
  for (int32_t j = j_lo; j <= j_hi; ++j) {
    const size_t row = static_cast<size_t>(j - gather.j0) * static_cast<size_t>(gather.rows_k);
    const uint32_t begin = gather.row_start[row + static_cast<size_t>(k_lo - gather.k0)];
    const uint32_t end = gather.row_start[row + static_cast<size_t>(k_hi - gather.k0) + 1];
    if (begin < end) runs->emplace_back(gather.samples.data() + begin, end - begin);
  }
}

bool ScatteredVolumeBlender::CaveReaches(std::span<const std::span<const VolumeSample>> runs,
                                         const VolumeBox& box) const {
  const double s = lattice_.y_scale();
  const double min_y = box.min_y * s, max_y = box.max_y * s;
  const auto gap = [](double v, double lo, double hi) { return v - std::min(std::max(v, lo), hi); };
  for (std::span<const VolumeSample> run : runs) {
    for (const VolumeSample& p : run) {
      if (!is_cave_[p.biome]) continue;
      const double dx = gap(p.x, box.min_x, box.max_x);
      const double dy = gap(p.y, min_y, max_y);
      const double dz = gap(p.z, box.min_z, box.max_z);
      if (dx * dx + dy * dy + dz * dz < radius_sq_) return true;
    }
  }
  return false;
}

void ConvolveVolumePoint(std::span<const VolumeSample> samples, double radius_sq, double x,
                         double y_scaled, double z, std::span<const char> is_cave,
                         std::span<const std::pair<int, float>> surface_weights,
                         std::vector<std::pair<int, float>>* weights) {
  const std::span<const VolumeSample> runs[] = {samples};
  ConvolveVolumePoint(runs, radius_sq, x, y_scaled, z, is_cave, surface_weights, weights);
}

void ConvolveVolumePoint(std::span<const std::span<const VolumeSample>> runs, double radius_sq,
                         double x, double y_scaled, double z, std::span<const char> is_cave,
                         std::span<const std::pair<int, float>> surface_weights,
                         std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  thread_local std::vector<double> sums;
  thread_local std::vector<int32_t> seen;
  thread_local std::vector<uint16_t> present;
  present.clear();
  const bool over_surface = !is_cave.empty();
  double surface = 0.0;
  BiomeRunSums biome_sums(&seen, &sums, &present);
  for (std::span<const VolumeSample> run : runs) {
    for (const VolumeSample& p : run) {
      const double dx = x - p.x, dy = y_scaled - p.y, dz = z - p.z;
      const double t = ((radius_sq - dz * dz) - dy * dy) - dx * dx;
      if (!(t > 0.0)) continue;  // Would add exactly +0.0.
      const double w = t * t;
      if (over_surface && !is_cave[p.biome]) {
        surface += w;
      } else {
        biome_sums.Add(p.biome, w);
      }
    }
  }
  biome_sums.Finish();
  std::sort(present.begin(), present.end());
  ShareOut(
      present, [&](uint16_t biome) { return sums[biome]; }, surface, surface_weights, weights);
  for (uint16_t biome : present) seen[biome] = -1;
}

void ShareOutSums(std::span<const int> present, std::span<const double> sums, double surface,
                  std::span<const std::pair<int, float>> column,
                  std::vector<std::pair<int, float>>* weights) {
  ShareOut(
      present, [&](int biome) { return sums[static_cast<size_t>(biome)]; }, surface, column,
      weights);
}

bool ScatteredVolumeBlender::BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz,
                                        int cell, std::vector<IndexedLayer>* layers,
                                        BiomeSampleCache* cache) const {
  // Over a surface: the 2D weights of each column (a cell's (x, z)), as World::BlendVolume takes
  // them.
  thread_local std::vector<std::vector<std::pair<int, float>>> columns;
  columns.clear();
  if (surface_ != nullptr) surface_->BlendColumnGrid(x0, z0, nx, nz, cell, cache, &columns);
  return BlendCells(x0, y0, z0, nx, ny, nz, cell, columns, layers);
}

bool ScatteredVolumeBlender::BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz,
                                        int cell,
                                        std::span<const std::vector<std::pair<int, float>>> columns,
                                        std::vector<IndexedLayer>* layers) const {
  thread_local std::vector<std::vector<IndexedLayer>> stack;
  thread_local std::vector<char> single;
  BlendStack(x0, y0, z0, nx, ny, nz, cell, 1, columns, &stack, &single);
  *layers = std::move(stack[0]);
  return single[0] != 0;
}

void ScatteredVolumeBlender::BlendStack(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz,
                                        int cell, int blocks,
                                        std::span<const std::vector<std::pair<int, float>>> columns,
                                        std::vector<std::vector<IndexedLayer>>* layers,
                                        std::vector<char>* single, BiomeSampleCache* cache) const {
  const size_t cells = static_cast<size_t>(nx) * static_cast<size_t>(ny) * static_cast<size_t>(nz);
  const size_t column_count = static_cast<size_t>(nx) * static_cast<size_t>(nz);
  const double c = static_cast<double>(cell);
  const auto block_box = [&](int t) {
    const double y = static_cast<double>(y0 + int64_t{cell} * ny * t);
    return VolumeBox{static_cast<double>(x0), y,
                     static_cast<double>(z0), static_cast<double>(x0) + c * (nx - 1),
                     y + c * (ny - 1),        static_cast<double>(z0) + c * (nz - 1)};
  };
  // One gather over the blocks that need samples: all of them, or over a surface those a cave
  // sample may reach (a contiguous range: MayReachCaves is monotone in the range it is asked).
  thread_local std::vector<char> gathered;
  gathered.assign(static_cast<size_t>(blocks), 0);
  int first = blocks, last = -1;
  for (int t = 0; t < blocks; ++t) {
    const VolumeBox b = block_box(t);
    if (surface_ == nullptr || MayReachCaves(b.min_y, b.max_y)) {
      gathered[static_cast<size_t>(t)] = 1;
      first = std::min(first, t);
      last = t;
    }
  }
  thread_local Gather gather;
  gather.samples.clear();
  gather.row_start.clear();
  gather.rows_j = gather.rows_k = 0;
  if (last >= first) {
    VolumeBox all = block_box(first);
    all.max_y = block_box(last).max_y;
    GatherInto(all, cache, &gather);
  }
  int biome_count = static_cast<int>(is_cave_.size());
  for (const VolumeSample& p : gather.samples) biome_count = std::max(biome_count, p.biome + 1);
  for (size_t k = 0; surface_ != nullptr && k < column_count; ++k) {
    for (const auto& [biome, w] : columns[k]) biome_count = std::max(biome_count, biome + 1);
  }
  layers->resize(static_cast<size_t>(blocks));
  single->assign(static_cast<size_t>(blocks), 0);
  thread_local std::vector<std::span<const VolumeSample>> runs;
  thread_local std::vector<double> xs, ys, zs;
  std::vector<IndexedLayer> surface_layers;  // The blocks no cave reaches, once built.
  // Over a surface, the biome all its cell columns are entirely, or -1 (OneBiomeColumns).
  const int surface_biome = surface_ != nullptr ? OneBiomeColumns(columns.first(column_count)) : -1;
  const double s = lattice_.y_scale();
  for (int t = 0; t < blocks; ++t) {
    std::vector<IndexedLayer>& out = (*layers)[static_cast<size_t>(t)];
    out.clear();
    const VolumeBox box = block_box(t);
    // The samples within the radius of this block: the rows that may reach it (a stack's gather
    // holds every block's), filtered exactly where it matters (any cave sample; all one biome).
    bool caves = false, one_biome = true;
    int biome = -1;
    runs.clear();
    if (gathered[static_cast<size_t>(t)]) {
      Runs(gather, box.min_y * s, box.max_y * s, box.min_z, box.max_z, &runs);
      if (surface_ != nullptr) {
        caves = CaveReaches(runs, box);
      } else {
        for (std::span<const VolumeSample> run : runs) {
          for (const VolumeSample& p : run) {
            const double dx = p.x - std::min(std::max(p.x, box.min_x), box.max_x);
            const double dy = p.y - std::min(std::max(p.y, box.min_y * s), box.max_y * s);
            const double dz = p.z - std::min(std::max(p.z, box.min_z), box.max_z);
            if (!(dx * dx + dy * dy + dz * dz < radius_sq_)) continue;
            if (biome < 0) biome = p.biome;
            one_biome = one_biome && p.biome == biome;
          }
        }
      }
    }
    const bool is_single = surface_ != nullptr ? !caves && surface_biome >= 0 : one_biome;
    if (is_single) {
      out.push_back({surface_ != nullptr ? surface_biome : std::max(biome, 0),
                     std::vector<float>(cells, 1.0f)});
      (*single)[static_cast<size_t>(t)] = 1;
      continue;
    }
    if (surface_ != nullptr && !caves) {
      // No cave sample in reach: the 2D blend, the same layers for every such block.
      if (surface_layers.empty()) {
        StackColumns(columns.first(column_count), static_cast<size_t>(ny), biome_count,
                     &surface_layers);
      }
      out = surface_layers;
      continue;
    }
    LayerAccumulator accumulator(biome_count, cells);
    {
      xs.resize(static_cast<size_t>(nx));
      ys.resize(static_cast<size_t>(ny));
      zs.resize(static_cast<size_t>(nz));
      for (int a = 0; a < nx; ++a) xs[a] = static_cast<double>(x0) + c * a;
      for (int b = 0; b < ny; ++b) ys[b] = (box.min_y + c * b) * s;
      for (int d = 0; d < nz; ++d) zs[d] = static_cast<double>(z0 + int64_t{cell} * d);
      ConvolveVolumeBlock(runs, radius_, xs, ys, zs, is_cave_,
                          surface_ != nullptr
                              ? columns.first(column_count)
                              : std::span<const std::vector<std::pair<int, float>>>(),
                          biome_count, &accumulator);
    }
    accumulator.MoveTo(&out);
  }
}

void ScatteredVolumeBlender::BlendPoint(double x, double y, double z,
                                        std::vector<std::pair<int, float>>* weights,
                                        BiomeSampleCache* cache) const {
  thread_local Gather gather;
  thread_local std::vector<std::span<const VolumeSample>> runs;
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
  GatherInto({x, y, z, x, y, z}, cache, &gather);
  const double ys = y * lattice_.y_scale();
  Runs(gather, ys, ys, z, z, &runs);
  ConvolveVolumePoint(runs, radius_sq_, x, ys, z, is_cave_, column, weights);
}

}  // namespace worldgen
