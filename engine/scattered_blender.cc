#include "engine/scattered_blender.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

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
    {.name = "lattice", .default_value = 0.0, .min = 0.0, .max = 1.0, .integer = true},
};

JitteredLattice::Shape ShapeOf(const WorldSpec& spec) {
  return BlenderParam(spec, "lattice") == 1.0 ? JitteredLattice::Shape::kSquare
                                              : JitteredLattice::Shape::kTriangular;
}

absl::Status Validate(const WorldSpec& spec) {
  const double interval = BlenderParam(spec, "sampling_interval");
  const double min_radius =
      ScatteredBlender::MinBlendRadius(interval, BlenderParam(spec, "jitter"), ShapeOf(spec));
  return ValidateKernelRadii(spec, "scattered", min_radius,
                             std::min(1024.0, kMaxRadiusInIntervals * interval),
                             "a radius must cover the lattice's largest gap (sampling_interval * "
                             "(1/sqrt(3) triangular or 1/sqrt(2) square + jitter + 1/4)) and span "
                             "at most 32 intervals");
}

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source,
                              uint64_t world_uid) {
  return std::make_unique<ScatteredBlender>(spec, source, world_uid);
}

}  // namespace

const BlenderMethod ScatteredBlender::kMethod = {BlenderKind::kScattered, "scattered", kParams,
                                                 &Validate, &Make};

ScatteredBlender::ScatteredBlender(const WorldSpec& spec, const BiomeSource& source,
                                   uint64_t world_uid)
    : source_(source),
      world_uid_(world_uid),
      sampling_interval_(BlenderParam(spec, "sampling_interval")),
      jitter_fraction_(BlenderParam(spec, "jitter")),
      blend_radius_(BlenderParam(spec, "blend_radius")),
      lattice_(DeriveSeed(spec.seed, kLatticeStream), sampling_interval_, jitter_fraction_,
               ShapeOf(spec)),
      radius_sq_(BiomeRadiiSquared(spec, blend_radius_)) {
  for (double r_sq : radius_sq_) max_radius_ = std::max(max_radius_, std::sqrt(r_sq));
}

double ScatteredBlender::MinBlendRadius(double sampling_interval, double jitter,
                                        JitteredLattice::Shape shape) {
  return JitteredLattice::MaxVertexDistance(sampling_interval, shape) +
         sampling_interval * (jitter + 0.25);
}

std::vector<BlenderFigure> ScatteredBlender::Describe() const {
  return {
      {"sampling_interval", sampling_interval_},
      {"jitter", jitter_fraction_},
      {"blend_radius", blend_radius_},
      {"lattice", lattice_.shape() == JitteredLattice::Shape::kSquare ? 1.0 : 0.0},
      {"min_blend_radius", MinBlendRadius(sampling_interval_, jitter_fraction_, lattice_.shape())},
      {"max_biome_radius", max_radius_}};
}

void ScatteredBlender::ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  double x[BiomeTile::kVertices], z[BiomeTile::kVertices];
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t a = 0; a < n; ++a) {
      const int32_t v = b * n + a;
      lattice_.Position(tile_i * n + a, tile_j * n + b, &x[v], &z[v]);
      tile->xz[2 * v] = x[v];
      tile->xz[2 * v + 1] = z[v];
    }
  }
  source_.BiomeIndices(x, z, n * n, tile->biome);
}

void ScatteredBlender::GatherSamples(double min_x, double min_z, double max_x, double max_z,
                                     BiomeSampleCache* cache, std::vector<KernelSample>* out,
                                     std::vector<LatticeIndex>* indices) const {
  const double reach_sq = max_radius_ * max_radius_;
  // A vertex whose jittered position is within max_radius_ of the box has its unjittered position
  // within max_radius_ + jitter of it; one block of slack absorbs every rounding below, so the
  // (j, i) ranges hold every vertex the exact test accepts.
  const double pad = max_radius_ + lattice_.jitter() + 1.0;
  const double interval = lattice_.interval();
  const double row_height = lattice_.row_height();
  const int32_t j0 = static_cast<int32_t>(std::floor((min_z - pad) / row_height));
  const int32_t j1 = static_cast<int32_t>(std::ceil((max_z + pad) / row_height));
  // Candidates: rows j0..j1, row j holding vertices i_lo[j - j0]..i_hi[j - j0] from row_start on,
  // in canonical order (rows j ascending, i ascending within a row). Thread-local buffers that only
  // grow: a gather allocates and clears nothing.
  thread_local std::vector<int64_t> i_lo, i_hi;
  thread_local std::vector<size_t> row_start;
  thread_local std::vector<KernelSample> candidates;
  const size_t rows = static_cast<size_t>(j1 - j0 + 1);
  i_lo.resize(rows);
  i_hi.resize(rows);
  row_start.resize(rows);
  size_t total = 0;
  const double jitter = lattice_.jitter();
  for (size_t r = 0; r < rows; ++r) {
    const int32_t j = j0 + static_cast<int32_t>(r);
    // Row j's vertices are within `jitter` of z = row_height * j, so at least dz from the box,
    // less a block of slack for rounding; the row's reach is then the disc's chord there, padded
    // by the jitter and the slack as the rows are.
    const double zj = row_height * static_cast<double>(j);
    const double dz = std::max(0.0, std::max(min_z - zj, zj - max_z) - jitter - 1.0);
    row_start[r] = total;
    if (!(dz < max_radius_)) {
      i_lo[r] = 0;
      i_hi[r] = -1;
      continue;
    }
    const double half = std::sqrt(reach_sq - dz * dz) + jitter + 1.0;
    const double shift = lattice_.row_shift() * static_cast<double>(j);
    i_lo[r] = static_cast<int32_t>(std::floor((min_x - half) / interval - shift));
    i_hi[r] = static_cast<int32_t>(std::ceil((max_x + half) / interval - shift));
    total += static_cast<size_t>(i_hi[r] - i_lo[r] + 1);
  }
  if (candidates.size() < total) candidates.resize(total);
  KernelSample* cand = candidates.data();
  if (cache == nullptr) {
    for (size_t r = 0, k = 0; r < rows; ++r) {
      for (int64_t i = i_lo[r]; i <= i_hi[r]; ++i, ++k) {
        lattice_.Position(static_cast<int32_t>(i), j0 + static_cast<int32_t>(r), &cand[k].x,
                          &cand[k].z);
      }
    }
  } else {
    VisitTileRows(
        *cache, world_uid_, j0, i_lo, i_hi,
        [this](int32_t ti, int32_t tj, BiomeTile& t) { ComputeTile(ti, tj, &t); },
        [&](const BiomeTile& tile, const TileRowSpan& span) {
          const size_t r = static_cast<size_t>(span.j - j0);
          KernelSample* dst = cand + row_start[r] + (span.i_begin - i_lo[r]);
          const int count = static_cast<int>(span.i_end - span.i_begin) + 1;
          for (int a = 0; a < count; ++a) {
            dst[a].x = tile.xz[2 * (span.index + a)];
            dst[a].z = tile.xz[2 * (span.index + a) + 1];
            dst[a].biome = tile.biome[span.index + a];
          }
        });
  }
  // Culled into `out`, in order. Every candidate is written and kept by advancing `count`: no
  // branch per vertex. A cached tile's biomes are known, so their radii are set here; the source's
  // come after culling.
  if (indices != nullptr) indices->resize(total);
  out->resize(total);
  KernelSample* dst = out->data();
  const double* radius_sq = radius_sq_.data();
  auto cull = [&](auto with_radius) {
    size_t count = 0;
    for (size_t r = 0, k = 0; r < rows; ++r) {
      for (int64_t i = i_lo[r]; i <= i_hi[r]; ++i, ++k) {
        const double x = cand[k].x, z = cand[k].z;
        const uint16_t biome = cand[k].biome;
        // Offset from the box (from the nearest point of it, which the clamp finds). Rounding is
        // monotonic, so this never exceeds the computed offset to any column inside the box: no
        // point that can weigh on a column is culled. Clamping compiles to min/max, no branch.
        const double dx = x - std::min(std::max(x, min_x), max_x);
        const double dz = z - std::min(std::max(z, min_z), max_z);
        dst[count].x = x;
        dst[count].z = z;
        dst[count].biome = biome;
        if constexpr (decltype(with_radius)::value) dst[count].radius_sq = radius_sq[biome];
        if (indices != nullptr) {
          (*indices)[count] = {static_cast<int32_t>(i), j0 + static_cast<int32_t>(r)};
        }
        count += dx * dx + dz * dz < reach_sq;
      }
    }
    return count;
  };
  const size_t count = cache != nullptr ? cull(std::true_type{}) : cull(std::false_type{});
  out->resize(count);
  if (indices != nullptr) indices->resize(count);
  if (cache == nullptr) {
    SampleSourceBiomes(source_, *out);
    for (KernelSample& s : *out) s.radius_sq = radius_sq_[s.biome];
  }
}

bool ScatteredBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                    std::vector<IndexedLayer>* layers) const {
  thread_local std::vector<KernelSample> samples;  // Reused: no allocation per chunk.
  GatherSamples(static_cast<double>(x0), static_cast<double>(z0),
                static_cast<double>(x0 + size - 1), static_cast<double>(z0 + size - 1), cache,
                &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void ScatteredBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                  std::vector<std::pair<int, float>>* weights) const {
  thread_local std::vector<KernelSample> samples;
  GatherSamples(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

void ScatteredBlender::SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                                      std::vector<SamplingPoint>* out) const {
  thread_local std::vector<KernelSample> samples;
  GatherSamples(box.min_x, box.min_z, box.max_x, box.max_z, cache, &samples);
  KeepSamplingPointsIn(box, samples, out);
}

double ScatteredBlender::SamplingPointBound(const BlockBox& box) const {
  // A vertex lies within the jitter of its unjittered position on each axis: rows and vertices of
  // a row within the box grown by the jitter, counted generously.
  const double grow = 2.0 * lattice_.jitter();
  const double rows = (box.max_z - box.min_z + grow) / lattice_.row_height() + 2.0;
  const double per_row = (box.max_x - box.min_x + grow) / lattice_.interval() + 2.0;
  return std::ceil(rows) * std::ceil(per_row);
}

}  // namespace worldgen
