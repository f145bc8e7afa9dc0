#include "engine/scattered_blender.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "engine/floor_div.h"
#include "engine/hash.h"
#include "engine/powell_sabin.h"

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
    {.name = "interpolation", .default_value = 0.0, .min = 0.0, .max = 2.0, .integer = true},
};

// Mesh interpolation needs a valid jittered mesh: a triangle folds over only when a vertex and the
// opposite edge each move half the triangle's smallest height towards each other. Heights:
// interval * sqrt(3)/2 (triangular), interval / sqrt(2) (the square split along a diagonal).
double MaxMeshJitter(JitteredLattice::Shape shape) {
  return shape == JitteredLattice::Shape::kTriangular ? 0.43 : 0.35;
}

JitteredLattice::Shape ShapeOf(const WorldSpec& spec) {
  return BlenderParam(spec, "lattice") == 1.0 ? JitteredLattice::Shape::kSquare
                                              : JitteredLattice::Shape::kTriangular;
}

absl::Status Validate(const WorldSpec& spec) {
  const double interval = BlenderParam(spec, "sampling_interval");
  if (BlenderParam(spec, "interpolation") >= 1.0 &&
      BlenderParam(spec, "jitter") > MaxMeshJitter(ShapeOf(spec))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "scattered.jitter = %g is above %g, the most that keeps the jittered mesh valid for "
        "scattered.interpolation = %g (a triangle would fold over)",
        BlenderParam(spec, "jitter"), MaxMeshJitter(ShapeOf(spec)),
        BlenderParam(spec, "interpolation")));
  }
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
      radius_sq_(BiomeRadiiSquared(spec, blend_radius_)),
      interpolation_(static_cast<int>(BlenderParam(spec, "interpolation"))) {
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
      {"interpolation", static_cast<double>(interpolation_)},
      {"min_blend_radius", MinBlendRadius(sampling_interval_, jitter_fraction_, lattice_.shape())},
      {"max_biome_radius", max_radius_}};
}

void ScatteredBlender::ComputeTile(int32_t tile_i, int32_t tile_j, const TileMask& vertices,
                                   BiomeTile* tile) const {
  constexpr int32_t n = BiomeTile::kTileSize;
  // Each row's positions from its first to its last vertex asked for (gathers ask for runs), the
  // vertices asked for then listed for one batch of the source.
  double row_x[n], row_z[n];
  double x[BiomeTile::kVertices], z[BiomeTile::kVertices];
  int vertex[BiomeTile::kVertices];
  int count = 0;
  for (int32_t b = 0; b < n; ++b) {
    const uint32_t bits = static_cast<uint32_t>(vertices.Row(b));
    if (bits == 0) continue;
    const int first = std::countr_zero(bits), last = 31 - std::countl_zero(bits);
    lattice_.PositionRow(tile_i * n + first, last - first + 1, tile_j * n + b, row_x, row_z);
    for (int a = first; a <= last; ++a) {
      if (((bits >> a) & 1) == 0) continue;
      const int v = b * n + a;
      tile->xz[2 * v] = x[count] = row_x[a - first];
      tile->xz[2 * v + 1] = z[count] = row_z[a - first];
      vertex[count++] = v;
    }
  }
  uint16_t biome[BiomeTile::kVertices];
  source_.BiomeIndices(x, z, static_cast<size_t>(count), biome);
  for (int k = 0; k < count; ++k) tile->biome[vertex[k]] = biome[k];
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
    thread_local std::vector<double> row_x, row_z;
    for (size_t r = 0; r < rows; ++r) {
      const int32_t count = static_cast<int32_t>(i_hi[r] - i_lo[r] + 1);
      if (count <= 0) continue;
      if (row_x.size() < static_cast<size_t>(count)) row_x.resize(count), row_z.resize(count);
      lattice_.PositionRow(static_cast<int32_t>(i_lo[r]), count, j0 + static_cast<int32_t>(r),
                           row_x.data(), row_z.data());
      KernelSample* dst = cand + row_start[r];
      for (int32_t a = 0; a < count; ++a) dst[a].x = row_x[a], dst[a].z = row_z[a];
    }
  } else {
    VisitTileRows(
        *cache, world_uid_, j0, i_lo, i_hi,
        [this](int32_t ti, int32_t tj, const TileMask& missing, BiomeTile& t) {
          ComputeTile(ti, tj, missing, &t);
        },
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

namespace {

// Barycentric coordinates of (x, z) in the triangle (a, b, c), each {x, z}.
std::array<double, 3> Barycentric(const double* a, const double* b, const double* c, double x,
                                  double z) {
  const double det = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]);
  const double l1 = ((x - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (z - a[1])) / det;
  const double l2 = ((b[0] - a[0]) * (z - a[1]) - (x - a[0]) * (b[1] - a[1])) / det;
  return {1.0 - l1 - l2, l1, l2};
}

// The Powell-Sabin split (powell_sabin.h) of a window of the mesh, each split point computed when
// first used: a triangle's incentre, an edge's crossing. Rhombus (i, j) holds the triangles up = 0
// ((i, j), (i + 1, j), (i, j + 1)) and up = 1 ((i + 1, j), (i + 1, j + 1), (i, j + 1)) and owns
// the edges kind 0 (i, j)-(i + 1, j), 1 (i, j)-(i, j + 1) and 2 (i + 1, j)-(i, j + 1). An edge is
// split once, from its ends and its two triangles in that fixed order, so both triangles read the
// same bits.
class SplitMesh {
 public:
  using Position = std::function<Point2(int64_t i, int64_t j)>;
  struct Crossing {
    Point2 r;
    int64_t pi, pj;  // The edge's first end (p); its weight wp, the other end's wq.
    double wp, wq;
  };

  void Reset(int64_t i_lo, int64_t j_lo, int64_t ni, int64_t nj, Position position) {
    i_lo_ = i_lo, j_lo_ = j_lo, ni_ = ni;
    position_ = std::move(position);
    const size_t rhombi = static_cast<size_t>(ni * nj);
    incentre_.resize(2 * rhombi);
    crossing_.resize(3 * rhombi);
    triangle_.resize(2 * rhombi);
    have_incentre_.assign(2 * rhombi, 0);
    have_crossing_.assign(3 * rhombi, 0);
    have_triangle_.assign(2 * rhombi, 0);
  }

  // The triangle's vertices, (i, j) of each.
  static std::array<std::pair<int64_t, int64_t>, 3> Vertices(int64_t i, int64_t j, int64_t up) {
    if (up == 0) return {{{i, j}, {i + 1, j}, {i, j + 1}}};
    return {{{i + 1, j}, {i + 1, j + 1}, {i, j + 1}}};
  }

  const std::pair<Point2, std::array<double, 3>>& TriangleIncentre(int64_t i, int64_t j,
                                                                   int64_t up) {
    const size_t slot = 2 * Rhombus(i, j) + static_cast<size_t>(up);
    if (!have_incentre_[slot]) {
      const auto v = Vertices(i, j, up);
      incentre_[slot] =
          Incentre(position_(v[0].first, v[0].second), position_(v[1].first, v[1].second),
                   position_(v[2].first, v[2].second));
      have_incentre_[slot] = 1;
    }
    return incentre_[slot];
  }
  const Point2& TriangleSplit(int64_t i, int64_t j, int64_t up) {
    return TriangleIncentre(i, j, up).first;
  }

  const Crossing& Edge(int64_t i, int64_t j, int kind) {
    const size_t slot = 3 * Rhombus(i, j) + static_cast<size_t>(kind);
    if (!have_crossing_[slot]) {
      // The ends p, q and the split points of the triangles on either side.
      int64_t pi = i, pj = j, qi = i + 1, qj = j;
      Point2 z1, z2 = TriangleSplit(i, j, 0);
      if (kind == 0) {
        z1 = TriangleSplit(i, j - 1, 1);
      } else if (kind == 1) {
        qi = i, qj = j + 1;
        z1 = TriangleSplit(i - 1, j, 1);
      } else {
        pi = i + 1, qi = i, qj = j + 1;
        z1 = z2, z2 = TriangleSplit(i, j, 1);
      }
      const Point2 p = position_(pi, pj), q = position_(qi, qj);
      const double mu = EdgeSplit(p, q, z1, z2);
      crossing_[slot] = {
          {p[0] + mu * (q[0] - p[0]), p[1] + mu * (q[1] - p[1])}, pi, pj, 1.0 - mu, mu};
      have_crossing_[slot] = 1;
    }
    return crossing_[slot];
  }

  // The split triangle, with scale(i, j) the gradient scale of vertex (i, j).
  const SplitTriangle& Triangle(int64_t i, int64_t j, int64_t up,
                                const std::function<double(int64_t, int64_t)>& scale) {
    const size_t slot = 2 * Rhombus(i, j) + static_cast<size_t>(up);
    if (have_triangle_[slot]) return triangle_[slot];
    SplitTriangle& t = triangle_[slot];
    const auto v = Vertices(i, j, up);
    const auto& [z, beta] = TriangleIncentre(i, j, up);
    t.z = z, t.beta = beta;
    // Edge m, opposite v[m].
    const std::array<const Crossing*, 3> edges =
        up == 0 ? std::array<const Crossing*, 3>{&Edge(i, j, 2), &Edge(i, j, 1), &Edge(i, j, 0)}
                : std::array<const Crossing*, 3>{&Edge(i, j + 1, 0), &Edge(i, j, 2),
                                                 &Edge(i + 1, j, 1)};
    for (int m = 0; m < 3; ++m) {
      t.v[m] = position_(v[m].first, v[m].second);
      t.scale[m] = scale(v[m].first, v[m].second);
      const Crossing& e = *edges[m];
      const auto& from = v[(m + 1) % 3];
      const bool from_p = from.first == e.pi && from.second == e.pj;
      t.r[m] = e.r;
      t.w[m] = from_p ? std::array<double, 2>{e.wp, e.wq} : std::array<double, 2>{e.wq, e.wp};
    }
    have_triangle_[slot] = 1;
    return t;
  }

 private:
  size_t Rhombus(int64_t i, int64_t j) const {
    return static_cast<size_t>((j - j_lo_) * ni_ + (i - i_lo_));
  }

  int64_t i_lo_ = 0, j_lo_ = 0, ni_ = 0;
  Position position_;
  std::vector<std::pair<Point2, std::array<double, 3>>> incentre_;
  std::vector<Crossing> crossing_;
  std::vector<SplitTriangle> triangle_;
  std::vector<char> have_incentre_, have_crossing_, have_triangle_;
};

}  // namespace

// The mesh: rhombus (i, j) .. (i + 1, j + 1) of the lattice split into (i, j), (i + 1, j), (i, j +
// 1) and (i + 1, j), (i + 1, j + 1), (i, j + 1). With the jitter bounded (MaxMeshJitter) the
// jittered triangles tile the plane. A point's triangle is found among the 18 of the 3 x 3 rhombi
// around the unjittered rhombus holding it: the first (rhombi by dj, di from -1, lower before
// upper) whose barycentric coordinates are all > 0, else (on an edge, or rounding) the one whose
// smallest coordinate is largest; its negative coordinates (rounding) are clamped to 0 and the rest
// scaled to sum to 1. The same rule on the same doubles in both paths: a chunk and a point agree.
void ScatteredBlender::BlendOnMesh(std::span<const std::pair<double, double>> points,
                                   BiomeSampleCache* cache,
                                   const std::function<void(size_t, const MeshWeights&)>& out,
                                   int* single_biome) const {
  const double g = lattice_.interval(), rh = lattice_.row_height(), shift = lattice_.row_shift();
  double min_x = points[0].first, max_x = min_x, min_z = points[0].second, max_z = min_z;
  for (const auto& [x, z] : points) {
    min_x = std::min(min_x, x), max_x = std::max(max_x, x);
    min_z = std::min(min_z, z), max_z = std::max(max_z, z);
  }
  // Vertex window: every vertex of every rhombus any point looks at (one more each side for the
  // rounding of the floors below); the smooth interpolation also reads the triangles around its
  // triangle's vertices and edges, one vertex further each way.
  const bool smooth = interpolation_ == 2;
  const int64_t extra = smooth ? 1 : 0;
  const int64_t j_lo = static_cast<int64_t>(std::floor(min_z / rh)) - 2 - extra;
  const int64_t j_hi = static_cast<int64_t>(std::floor(max_z / rh)) + 3 + extra;
  const int64_t i_lo =
      static_cast<int64_t>(std::floor(min_x / g - shift * (max_z / rh))) - 3 - extra;
  const int64_t i_hi =
      static_cast<int64_t>(std::floor(max_x / g - shift * (min_z / rh))) + 4 + extra;
  const int64_t ni = i_hi - i_lo + 1, nj = j_hi - j_lo + 1;
  // Gather every sample reaching the window's vertices (their box grown by the jitter).
  const double pad = lattice_.jitter() + 1.0;
  const double bx0 = g * (static_cast<double>(i_lo) + std::min(shift * static_cast<double>(j_lo),
                                                               shift * static_cast<double>(j_hi))) -
                     pad;
  const double bx1 = g * (static_cast<double>(i_hi) + std::max(shift * static_cast<double>(j_lo),
                                                               shift * static_cast<double>(j_hi))) +
                     pad;
  const double bz0 = rh * static_cast<double>(j_lo) - pad;
  const double bz1 = rh * static_cast<double>(j_hi) + pad;
  thread_local std::vector<KernelSample> samples;
  thread_local std::vector<LatticeIndex> indices;
  GatherSamples(bx0, bz0, bx1, bz1, cache, &samples, &indices);
  *single_biome = SingleBiome(samples) ? (samples.empty() ? 0 : samples[0].biome) : -1;
  if (*single_biome >= 0) return;
  // Every gathered sample by lattice index over the gather's index range (the window's vertices
  // lie in the gathered box, so each has its sample).
  int64_t gi0 = indices[0].i, gi1 = gi0, gj0 = indices[0].j, gj1 = gj0;
  for (const LatticeIndex& at : indices) {
    gi0 = std::min<int64_t>(gi0, at.i), gi1 = std::max<int64_t>(gi1, at.i);
    gj0 = std::min<int64_t>(gj0, at.j), gj1 = std::max<int64_t>(gj1, at.j);
  }
  const int64_t gni = gi1 - gi0 + 1;
  thread_local std::vector<int32_t> sample_at;
  sample_at.assign(static_cast<size_t>(gni * (gj1 - gj0 + 1)), -1);
  for (size_t k = 0; k < indices.size(); ++k) {
    sample_at[static_cast<size_t>((indices[k].j - gj0) * gni + (indices[k].i - gi0))] =
        static_cast<int32_t>(k);
  }
  const auto sample_index = [&](int64_t i, int64_t j) -> int32_t {
    if (i < gi0 || i > gi1 || j < gj0 || j > gj1) return -1;
    return sample_at[static_cast<size_t>((j - gj0) * gni + (i - gi0))];
  };
  thread_local std::vector<int32_t> sample_of;
  sample_of.assign(static_cast<size_t>(ni * nj), -1);
  for (int64_t b = 0; b < nj; ++b) {
    for (int64_t a = 0; a < ni; ++a) {
      sample_of[static_cast<size_t>(b * ni + a)] = sample_index(i_lo + a, j_lo + b);
    }
  }
  // A vertex's kernel reads the samples within the largest radius of it: their unjittered
  // positions are within reach = max radius + twice the jitter (+1 for rounding), so within
  // ceil(reach / row height) rows and, per row, reach / interval + 1 vertices of the row's point
  // below the vertex. Collected in canonical (j, i) order: ConvolvePoint over them gives the bits
  // it gives over any larger gather.
  const double reach = max_radius_ + 2.0 * lattice_.jitter() + 1.0;
  const int64_t rows = static_cast<int64_t>(std::ceil(reach / rh));
  const double across = reach / g + 1.0;
  thread_local std::vector<KernelSample> near;
  const auto convolve_vertex = [&](int64_t i, int64_t j, std::vector<std::pair<int, float>>* w,
                                   PointGradient* gradient) {
    near.clear();
    for (int64_t dj = -rows; dj <= rows; ++dj) {
      const double centre = static_cast<double>(i) - shift * static_cast<double>(dj);
      const int64_t a0 = static_cast<int64_t>(std::floor(centre - across));
      const int64_t a1 = static_cast<int64_t>(std::ceil(centre + across));
      for (int64_t a = a0; a <= a1; ++a) {
        const int32_t k = sample_index(a, j + dj);
        if (k >= 0) near.push_back(samples[static_cast<size_t>(k)]);
      }
    }
    const KernelSample& v = samples[static_cast<size_t>(sample_index(i, j))];
    ConvolvePoint(near, v.x, v.z, w, gradient);
  };
  // Vertex weights (and with `smooth` their gradients), computed when first used.
  thread_local std::vector<std::vector<std::pair<int, float>>> vertex_weights;
  thread_local std::vector<PointGradient> vertex_gradients;
  thread_local std::vector<char> done;
  vertex_weights.resize(static_cast<size_t>(ni * nj));
  if (smooth) vertex_gradients.resize(static_cast<size_t>(ni * nj));
  done.assign(static_cast<size_t>(ni * nj), 0);
  const auto vertex = [&](int64_t i, int64_t j) {
    return static_cast<size_t>((j - j_lo) * ni + (i - i_lo));
  };
  const auto position = [&](size_t v) {
    return &samples[static_cast<size_t>(sample_of[v])].x;  // x, then z: adjacent doubles
  };
  const auto vertex_data = [&](size_t v) {
    if (!done[v]) {
      const int64_t vi = i_lo + static_cast<int64_t>(v) % ni;
      const int64_t vj = j_lo + static_cast<int64_t>(v) / ni;
      convolve_vertex(vi, vj, &vertex_weights[v], smooth ? &vertex_gradients[v] : nullptr);
      done[v] = 1;
    }
  };
  thread_local SplitMesh split;
  if (smooth) {
    split.Reset(i_lo, j_lo, ni, nj, [&](int64_t i, int64_t j) {
      const double* p = position(vertex(i, j));
      return Point2{p[0], p[1]};
    });
  }
  // A vertex's gradients limited, then its gradient scale, so its ordinates towards the split
  // points of its six triangles and six edges stay >= 0 (LimitVertexGradients, then
  // VertexGradientScale for what the float rounding of the limited gradients leaves). Done once
  // per vertex, before any column reads its gradients.
  thread_local std::vector<double> gradient_scale;
  if (smooth) gradient_scale.assign(static_cast<size_t>(ni * nj), -1.0);
  thread_local std::vector<float> f, gx, gz;
  const auto scale_of = [&](int64_t i, int64_t j) {
    const size_t v = vertex(i, j);
    if (gradient_scale[v] >= 0.0) return gradient_scale[v];
    vertex_data(v);
    f.clear(), gx.clear(), gz.clear();
    for (size_t e = 0; e < vertex_weights[v].size(); ++e) {
      f.push_back(vertex_weights[v][e].second);
      gx.push_back(vertex_gradients[v].dx[e].second);
      gz.push_back(vertex_gradients[v].dz[e].second);
    }
    const std::array<Point2, 12> around = {split.TriangleSplit(i, j, 0),
                                           split.TriangleSplit(i - 1, j, 0),
                                           split.TriangleSplit(i, j - 1, 0),
                                           split.TriangleSplit(i - 1, j, 1),
                                           split.TriangleSplit(i - 1, j - 1, 1),
                                           split.TriangleSplit(i, j - 1, 1),
                                           split.Edge(i, j, 0).r,
                                           split.Edge(i, j, 1).r,
                                           split.Edge(i - 1, j, 0).r,
                                           split.Edge(i, j - 1, 1).r,
                                           split.Edge(i - 1, j, 2).r,
                                           split.Edge(i, j - 1, 2).r};
    const double* p = position(v);
    LimitVertexGradients({p[0], p[1]}, f, gx, gz, around);
    for (size_t e = 0; e < f.size(); ++e) {
      vertex_gradients[v].dx[e].second = gx[e];
      vertex_gradients[v].dz[e].second = gz[e];
    }
    return gradient_scale[v] = VertexGradientScale({p[0], p[1]}, f, gx, gz, around);
  };
  MeshWeights result;
  for (size_t p = 0; p < points.size(); ++p) {
    const auto [x, z] = points[p];
    const double fj = z / rh;
    const int64_t j0 = static_cast<int64_t>(std::floor(fj));
    const int64_t i0 = static_cast<int64_t>(std::floor(x / g - shift * fj));
    double best_min = -std::numeric_limits<double>::infinity();
    std::array<size_t, 3> best_v{};
    std::array<double, 3> best_l{};
    int64_t best_i = 0, best_j = 0, best_up = 0;
    for (int64_t dj = -1; dj <= 1 && !(best_min > 0.0); ++dj) {
      for (int64_t di = -1; di <= 1 && !(best_min > 0.0); ++di) {
        const int64_t i = i0 + di, j = j0 + dj;
        const std::array<size_t, 3> triangles[2] = {
            {vertex(i, j), vertex(i + 1, j), vertex(i, j + 1)},
            {vertex(i + 1, j), vertex(i + 1, j + 1), vertex(i, j + 1)}};
        for (int64_t up = 0; up < 2; ++up) {
          const std::array<size_t, 3>& t = triangles[up];
          const std::array<double, 3> l =
              Barycentric(position(t[0]), position(t[1]), position(t[2]), x, z);
          const double m = std::min({l[0], l[1], l[2]});
          if (m > best_min) {
            best_min = m, best_v = t, best_l = l, best_i = i, best_j = j, best_up = up;
            if (m > 0.0) break;
          }
        }
      }
    }
    result.clear();
    if (smooth) {
      const SplitTriangle& triangle = split.Triangle(
          best_i, best_j, best_up, [&](int64_t i, int64_t j) { return scale_of(i, j); });
      const std::array<double, 9> coefficients = Coefficients(triangle, x, z);
      for (size_t c = 0; c < 3; ++c) {
        const size_t v = best_v[c];
        vertex_data(v);
        result.push_back({&vertex_weights[v], coefficients[3 * c]});
        result.push_back({&vertex_gradients[v].dx, coefficients[3 * c + 1]});
        result.push_back({&vertex_gradients[v].dz, coefficients[3 * c + 2]});
      }
      out(p, result);
      continue;
    }
    double total = 0.0;
    for (double& l : best_l) total += (l = std::max(l, 0.0));
    for (double& l : best_l) l /= total;
    for (size_t c = 0; c < 3; ++c) {
      const size_t v = best_v[c];
      vertex_data(v);
      result.push_back({&vertex_weights[v], best_l[c]});
    }
    out(p, result);
  }
}

// Biome weights of one point from its triangle's vertex vectors: sum_c lambda_c w_c(b), over the
// vectors in order, each biome's sum in double, rounded to float once; ascending biome. A sum a
// rounding below 0 (the smooth interpolation's factors have both signs) is 0.
void ScatteredBlender::MeshPointWeights(const MeshWeights& vertices,
                                        std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  thread_local std::vector<std::pair<int, double>> sums;
  sums.clear();
  for (const auto& [w, lambda] : vertices) {
    for (const auto& [biome, value] : *w) {
      auto it = std::find_if(sums.begin(), sums.end(),
                             [b = biome](const auto& s) { return s.first == b; });
      if (it == sums.end()) {
        sums.push_back({biome, lambda * value});
      } else {
        it->second += lambda * value;
      }
    }
  }
  std::sort(sums.begin(), sums.end());
  for (const auto& [biome, sum] : sums) {
    const float w = static_cast<float>(std::max(sum, 0.0));
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

bool ScatteredBlender::BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                                    std::vector<IndexedLayer>* layers) const {
  if (interpolation_ != 0) {
    thread_local std::vector<std::pair<double, double>> points;
    points.clear();
    for (int lz = 0; lz < size; ++lz) {
      for (int lx = 0; lx < size; ++lx) {
        points.push_back({static_cast<double>(x0 + lx), static_cast<double>(z0 + lz)});
      }
    }
    int single = -1;
    LayerAccumulator accumulator(static_cast<int>(radius_sq_.size()), points.size());
    std::vector<std::pair<int, float>> weights;
    BlendOnMesh(
        points, cache,
        [&](size_t p, const MeshWeights& v) {
          MeshPointWeights(v, &weights);
          accumulator.Add(p, weights);
        },
        &single);
    layers->clear();
    if (single >= 0) {
      layers->push_back({single, std::vector<float>(points.size(), 1.0f)});
      return true;
    }
    accumulator.MoveTo(layers);
    return false;
  }
  thread_local std::vector<KernelSample> samples;  // Reused: no allocation per chunk.

  GatherSamples(static_cast<double>(x0), static_cast<double>(z0),
                static_cast<double>(x0 + size - 1), static_cast<double>(z0 + size - 1), cache,
                &samples);
  return ConvolveColumns(samples, x0, z0, size, layers);
}

void ScatteredBlender::BlendPoint(double x, double z, BiomeSampleCache* cache,
                                  std::vector<std::pair<int, float>>* weights) const {
  if (interpolation_ != 0) {
    const std::pair<double, double> point{x, z};
    int single = -1;
    BlendOnMesh(
        std::span(&point, 1), cache,
        [&](size_t, const MeshWeights& v) { MeshPointWeights(v, weights); }, &single);
    if (single >= 0) {
      weights->clear();
      weights->emplace_back(single, 1.0f);
    }
    return;
  }
  thread_local std::vector<KernelSample> samples;
  GatherSamples(x, z, x, z, cache, &samples);
  ConvolvePoint(samples, x, z, weights);
}

void ScatteredBlender::BlendColumnGrid(
    int64_t x0, int64_t z0, int nx, int nz, int step, BiomeSampleCache* cache,
    std::vector<std::vector<std::pair<int, float>>>* columns) const {
  columns->resize(static_cast<size_t>(nx) * static_cast<size_t>(nz));
  const auto column_x = [&](int a) { return static_cast<double>(x0 + int64_t{step} * a); };
  const auto column_z = [&](int d) { return static_cast<double>(z0 + int64_t{step} * d); };
  if (interpolation_ != 0) {
    thread_local std::vector<std::pair<double, double>> points;
    points.clear();
    for (int d = 0; d < nz; ++d) {
      for (int a = 0; a < nx; ++a) points.push_back({column_x(a), column_z(d)});
    }
    int single = -1;
    BlendOnMesh(
        points, cache, [&](size_t p, const MeshWeights& v) { MeshPointWeights(v, &(*columns)[p]); },
        &single);
    if (single >= 0) {
      for (std::vector<std::pair<int, float>>& column : *columns) column.assign(1, {single, 1.0f});
    }
    return;
  }
  // A superset of each column's samples in their relative order: the same bits as BlendPoint.
  thread_local std::vector<KernelSample> samples;
  GatherSamples(column_x(0), column_z(0), column_x(nx - 1), column_z(nz - 1), cache, &samples);
  if (nx != nz) {
    for (int d = 0; d < nz; ++d) {
      for (int a = 0; a < nx; ++a) {
        ConvolvePoint(samples, column_x(a), column_z(d),
                      &(*columns)[static_cast<size_t>(d) * nx + a]);
      }
    }
    return;
  }
  // A square grid (a 3D chunk's): the block kernel over its columns, `step` apart.
  thread_local std::vector<IndexedLayer> layers;
  ConvolveColumns(samples, x0, z0, nx, &layers, step);
  for (size_t c = 0; c < columns->size(); ++c) ColumnWeights(layers, c, &(*columns)[c]);
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
