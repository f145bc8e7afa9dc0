// 3D biomes (issue 25), the engine's first part: a 3D biome map (VolumeSource) and scattered
// blending generalised to 3D (ScatteredVolumeBlender), with the same arithmetic as the 2D
// methods (sparse_convolution.h), so its weights are a partition of unity in [0, 1] and a block
// of cells and a point agree bit for bit.
//
// Kernel space: y is scaled by blend_radius / vertical_blend_radius, so the kernel
// max(0, r^2 - d^2)^2 with the horizontal radius r there reaches vertical_blend_radius blocks up
// and down; the lattice (JitteredBccLattice) is a body-centred cubic one that is isotropic in
// kernel space (vertical interval = sampling_interval * vertical_blend_radius / blend_radius).
// Padding and search bounds follow seed 001's 2D derivation: a point's kernel reaches a box when
// its jittered position is within r of it, so its unjittered position is within r + jitter.
//
// Over a surface (a world's caves, World builds it so): samples of cave biomes count as
// themselves, and every other sample counts as "the surface", whose share of the kernel weight
// goes to the 2D blender's weights of the cell's column:
//     w_b(p) = S_b(p) / S(p) + (S_surface(p) / S(p)) * w2D_b(x, z)
// (S_b a cave biome's kernel sum, S_surface the other samples', S their total, surface first then
// the cave biomes ascending). A partition of unity in [0, 1], as smooth as both blends, and where
// no cave sample reaches a cell its weights are the 2D blend's bit for bit: a world's 3D answer
// above its caves is its 2D answer, and a section no cave sample reaches costs the 2D blend of its
// columns only.
//
// Thread safety: immutable after construction; all const methods are safe for concurrent use.
#ifndef WORLDGEN_ENGINE_VOLUME_BLENDER_H_
#define WORLDGEN_ENGINE_VOLUME_BLENDER_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/biome_source.h"
#include "engine/blender.h"
#include "engine/jittered_bcc_lattice.h"
#include "engine/kernel_row.h"
#include "engine/world_spec.h"

namespace worldgen {

// Inclusive box of block coordinates (y not scaled).
struct VolumeBox {
  double min_x = 0, min_y = 0, min_z = 0, max_x = 0, max_y = 0, max_z = 0;
};

class ScatteredVolumeBlender {
 public:
  // The smallest horizontal radius that leaves no point without a sample in reach: the lattice's
  // covering radius plus the jitter plus a quarter interval (seed 001's padding), in kernel space.
  static double MinBlendRadius(double sampling_interval, double jitter);
  // The largest blend_radius, in sampling intervals. With the lattice's vertical spacing of at
  // least one block (Validate), this bounds a 3D blend's cost: a cell's kernel holds about
  // 8.4 (blend_radius / sampling_interval)^3 lattice points (two per cube of the body-centred
  // lattice), at most some 4,300 (the default's 3 intervals: about 230), and a chunk's gather
  // reads at most about 2 ((size + 2 r) / g)^2 points per block of height (r = blend_radius,
  // g = sampling_interval).
  static constexpr double kMaxRadiusIntervals = 8.0;
  // The smallest vertical_blend_radius: 1 block, and blend_radius / sampling_interval, so that the
  // lattice's layers (sampling_interval * vertical_blend_radius / blend_radius apart) are at least
  // a block apart.
  static double MinVerticalBlendRadius(double sampling_interval, double blend_radius);
  // INVALID_ARGUMENT naming the parameter, the value and the rule: blend_radius in
  // [MinBlendRadius, min(1024, kMaxRadiusIntervals * sampling_interval)], vertical_blend_radius in
  // [MinVerticalBlendRadius, blend_radius].
  static absl::Status Validate(const VolumeBlendParams& params);

  // `params` must be valid; `source` must outlive the blender. With `surface` (which must outlive
  // it too), `is_cave` per dense biome index says which biomes count as themselves (see above);
  // without, every sample counts as its biome (a plain 3D blend of `source`).
  // `cache_uid` (World::uid()) keys the blender's 3D tiles in a BiomeSampleCache; 0 never caches.
  ScatteredVolumeBlender(uint64_t seed, const VolumeBlendParams& params, const VolumeSource& source,
                         const Blender* surface = nullptr, std::vector<char> is_cave = {},
                         uint64_t cache_uid = 0);

  const JitteredBccLattice& lattice() const { return lattice_; }

  // The lattice points whose kernel reaches some point of `box`, in canonical order (j, k, i, c
  // ascending), with their biomes; over a surface, a sample whose biome is not a cave biome has
  // surface_marker() instead (its share goes to the surface, whichever biome it is, so the map
  // need not say which: VolumeSource::CaveIndicesAt).
  // `cache` (may be null) keeps the lattice's positions and map answers in 3D tiles (8 x 8 cubes
  // of one lattice layer, both corner and centre points): the same samples, read instead of
  // computed.
  void GatherSamples(const VolumeBox& box, std::vector<VolumeSample>* out,
                     BiomeSampleCache* cache = nullptr) const;
  // The biome index of "the surface" in gathered samples over a surface: one past the last biome.
  int surface_marker() const { return static_cast<int>(is_cave_.size()) - 1; }

  // The weights of nx * ny * nz cells `cell` blocks wide whose lowest one starts at (x0, y0, z0):
  // cell (a, b, d) is blended at its lowest corner (x0 + cell * a, y0 + cell * b, z0 + cell * d),
  // and its weights sit at index (b * nz + d) * nx + a (y, then z, then x: a chunk section's
  // order). Layers ascend by biome and hold only biomes with a non-zero weight somewhere. Returns
  // true when every sample has one biome (then one layer of exactly 1.0f).
  // Over a surface it returns true when no cave sample reaches the block and every column is one
  // biome in 2D. `cache` (may be null) serves the surface blender.
  bool BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz, int cell,
                  std::vector<IndexedLayer>* layers, BiomeSampleCache* cache = nullptr) const;
  // The same with the surface's 2D weights of the nx * nz columns given (index d * nx + a, as
  // Blender::BlendColumnGrid makes them with step `cell`; any source of the same bits will do), so
  // a stack of sections blends its columns once. Ignored (may be empty) without a surface.
  bool BlendCells(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz, int cell,
                  std::span<const std::vector<std::pair<int, float>>> columns,
                  std::vector<IndexedLayer>* layers) const;
  // `blocks` such blocks stacked upwards (block t starts at y0 + t * ny * cell), from one gather:
  // (*layers)[t] and (*single)[t] are BlendCells' answers for block t, bit for bit.
  void BlendStack(int64_t x0, int64_t y0, int64_t z0, int nx, int ny, int nz, int cell, int blocks,
                  std::span<const std::vector<std::pair<int, float>>> columns,
                  std::vector<std::vector<IndexedLayer>>* layers, std::vector<char>* single,
                  BiomeSampleCache* cache = nullptr) const;
  bool has_surface() const { return surface_ != nullptr; }

  // The weights at (x, y, z): (biome, weight) for the non-zero ones, ascending biome.
  void BlendPoint(double x, double y, double z, std::vector<std::pair<int, float>>* weights,
                  BiomeSampleCache* cache = nullptr) const;

 private:
  // Gathered samples with the index of their lattice rows: row (j, k) holds samples
  // [row_start[(j - j0) * rows_k + (k - k0)], the next row's start), so the samples that may
  // reach a point are a few contiguous runs (Runs).
  struct Gather {
    std::vector<VolumeSample> samples;
    int32_t j0 = 0, k0 = 0, rows_j = 0, rows_k = 0;
    std::vector<uint32_t> row_start;  // rows_j * rows_k + 1 entries.
  };
  // The lattice rows (i, j or k, y in kernel space) whose points may reach [lo, hi] on one axis:
  // within `radius` (kernel space) of it; the blend radius unless a nearer bound is known.
  std::pair<int32_t, int32_t> RowRange(double lo, double hi) const {
    return RowRange(lo, hi, radius_);
  }
  std::pair<int32_t, int32_t> RowRange(double lo, double hi, double radius) const;
  void GatherInto(const VolumeBox& box, BiomeSampleCache* cache, Gather* out) const;
  // The biome of each gathered sample (the map's, or over a surface the cave biome or
  // surface_marker()), from its position in blocks.
  void Classify(const double* xs, const double* ys, const double* zs, size_t n,
                uint16_t* out) const;
  // 3D tile (ti, tj, tk), a cube of the lattice: points (4 ti + a, 4 tj + l, 4 tk + b, c) at
  // v = ((l * 4 + b) * 4 + a) * 2 + c, x and z in xz[2v], xz[2v + 1], y (blocks) in xz[256 + v],
  // biome in biome[v]. A point query's ball (about 8 lattice intervals across) reads some 22 such
  // cubes, against 32 tiles of 8 x 8 points in one layer: fewer visits, each a lock and a lookup,
  // and from memory a chain of misses.
  static constexpr int kTile3 = 4;
  void FillTile(int32_t ti, int32_t tj, int32_t tk, BiomeTile* tile) const;
  // The runs of `gather` whose rows (j, k) may reach a kernel-space height in [ys_lo, ys_hi] and a
  // depth in [z_lo, z_hi] (every i of the gather: its x range is the block's), in order.
  void Runs(const Gather& gather, double ys_lo, double ys_hi, double z_lo, double z_hi,
            std::vector<std::span<const VolumeSample>>* runs) const;
  // Whether a cave sample of `runs` (Runs of `box`) lies within the radius of `box`.
  bool CaveReaches(std::span<const std::span<const VolumeSample>> runs, const VolumeBox& box) const;
  // Whether a cave sample can reach a point with min_y <= y <= max_y.
  bool MayReachCaves(double min_y, double max_y) const;

  const VolumeSource& source_;
  const Blender* surface_;
  std::vector<char> is_cave_;
  uint64_t cache_uid_;
  JitteredBccLattice lattice_;
  double radius_sq_;  // Kernel space.
  double radius_;
};

// A point's weights from its kernel sums, the 3D methods' one formula: total = surface + sums[b]
// over `present` (ascending dense biome indices); biome b of `present` gets sums[b] / total and a
// biome of `column` (the point's 2D weights, never one of `present`) (surface / total) * its
// weight; each rounded to float once, merged in ascending biome order, zeros left out.
void ShareOutSums(std::span<const int> present, std::span<const double> sums, double surface,
                  std::span<const std::pair<int, float>> column,
                  std::vector<std::pair<int, float>>* weights);

// Normalized sparse convolution at one point of kernel space, as ConvolvePoint in 2D: per biome
// sum_{samples of b} max(0, r^2 - d^2)^2 in double in the samples' order, the total over biomes
// in ascending biome order, each quotient rounded to float once. `samples` must include every
// sample within r of the point (a superset in the same relative order gives the same bits).
// Over a surface (`is_cave` per dense biome index, non-empty): only cave biomes' samples count as
// themselves; the others' sum, first in the total, shares out `surface_weights` (the column's 2D
// weights) as the header comment's formula says. Without one, every sample counts as its biome.
void ConvolveVolumePoint(std::span<const VolumeSample> samples, double radius_sq, double x,
                         double y_scaled, double z, std::span<const char> is_cave,
                         std::span<const std::pair<int, float>> surface_weights,
                         std::vector<std::pair<int, float>>* weights);
// The same over the concatenation of `runs`, in order.
void ConvolveVolumePoint(std::span<const std::span<const VolumeSample>> runs, double radius_sq,
                         double x, double y_scaled, double z, std::span<const char> is_cave,
                         std::span<const std::pair<int, float>> surface_weights,
                         std::vector<std::pair<int, float>>* weights);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_VOLUME_BLENDER_H_
