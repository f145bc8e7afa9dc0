// The hot loop of every kernel blender: a block's samples convolved into normalized weights;
// and for 3D biomes, VolumeKernelSums: a block of cells' kernel sums, compiled and checked alike.
//
// Written once against GCC's portable vector extensions (across columns only) and compiled for
// AVX-512, AVX2 and baseline x86-64, each with the vector one of its registers holds (8, 4 and 2
// doubles) and as many accumulators as its register file keeps; the best variant the CPU supports
// is chosen at startup (WORLDGEN_SIMD_VARIANT forces one, engine/simd.h). Every lane performs
// exactly the scalar reference's IEEE operations in the same order (no FMA: -ffp-contract=off), so
// every variant gives the same bits; tests compare each one the CPU can run against
// KernelBlockScalar.
//
// Thread safety: free functions of their arguments; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_KERNEL_ROW_H_
#define WORLDGEN_ENGINE_KERNEL_ROW_H_

#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/strings/string_view.h"
#include "engine/simd.h"

namespace worldgen {

// Columns per vector in the kernel; rows of the accumulators are padded to a multiple of it.
inline constexpr size_t kKernelLanes = 8;

// A block row's padded length: `size` rounded up to kKernelLanes.
inline constexpr size_t KernelStride(size_t size) {
  return (size + kKernelLanes - 1) / kKernelLanes * kKernelLanes;
}

// std::max(t, 0.0) exactly, NaN and -0.0 included: 0.0 > t ? 0.0 : t, on x86-64 as one maxsd
// (src1 > src2 ? src1 : src2), for which GCC would write std::max as a compare and a jump.
inline double NonNegative(double t) {
#if defined(__x86_64__)
  return _mm_cvtsd_f64(_mm_max_sd(_mm_setzero_pd(), _mm_set_sd(t)));
#else
  return 0.0 > t ? 0.0 : t;
#endif
}

// Offset from v to the nearest of lo..hi (0 inside), computed as the kernel computes the offset of
// that nearest column or row (x - p, or its exact negation). Squares and rounding are monotonic, so
// a point whose term is +0.0 at a block's nearest column and row, (r^2 - dz^2) - dx^2 <= 0 with
// these offsets, adds +0.0 to every column of the block: culling it changes no sum. Written without
// a branch (the kernels and the sub-block split call it for every point of every tile, and which
// side a point lies on is not predictable): at most one of the two terms is positive, and adding
// +0.0 to it is exact.
inline double KernelNearestOffset(double v, double lo, double hi) {
  return NonNegative(lo - v) + NonNegative(v - hi);
}

// One sample as the kernel reads it: position, squared kernel radius, and its accumulator slot.
struct KernelPoint {
  double x = 0.0, z = 0.0;
  double radius_sq = 0.0;
  uint32_t slot = 0;
};

// A size x size block of columns whose lowest corner is (x0, z0), `step` blocks apart (1: a chunk;
// more: the columns of a 3D chunk's cells, Blender::BlendColumnGrid), its points and its scratch.
//   points:     count points grouped by slot: slot s's are points[slot_begin[s] .. slot_begin[s+1])
//               (slot_begin has slots + 1 entries, slot_begin[0] = 0), each slot's in the order
//               the sums run (the caller's canonical order), every one with .slot == s;
//   acc:        slots * size * stride doubles, slot s's row lz at acc + (s * size + lz) * stride;
//   total:      size * stride doubles, row lz at total + lz * stride;
// both written by the kernel (no zeroing needed); stride = KernelStride(size). Columns
// past `size` in a padded row are scratch.
//   weights: slots * size * size floats, slot s's column (lx, lz) at s * size * size + lz * size +
//   lx; nonzero: slots flags, set to 1 where slot s has a non-zero weight somewhere in the block,
//   else 0.
struct KernelBlock {
  const KernelPoint* points = nullptr;
  size_t count = 0;
  const size_t* slot_begin = nullptr;
  size_t slots = 0;
  double x0 = 0.0, z0 = 0.0;
  double step = 1.0;  // A whole number: x0 + step * lx is exact.
  int size = 0;
  size_t stride = 0;
  double* acc = nullptr;
  double* total = nullptr;
  float* weights = nullptr;
  uint8_t* nonzero = nullptr;
};

// For every column (x, z) = (x0 + step * lx, z0 + step * lz) and every point p in each slot's
// order:
//     w = max((p.radius_sq - (z - p.z)^2) - (x - p.x)^2, 0)^2,   acc[p.slot] += w
// (that parenthesization: the row's part is a scalar per point and row, each slot's sum from +0.0
// in the points' order); then total = acc[0] + acc[1] + ... (ascending slot), weights[s] =
// float(acc[s] / total), and the nonzero flags. A point adds exactly +0.0 wherever its kernel does
// not reach, so the variants skip those columns. Every column must be reached by some point (else
// its weights are NaN).
void KernelBlockWeights(const KernelBlock& block);

// The scalar reference: every point at every column, one column at a time.
void KernelBlockScalar(const KernelBlock& block);

// The 3D kernel (ScatteredVolumeBlender): a lattice point with its biome, y in kernel space (the
// kernel's radius the same on every axis there).
struct VolumeSample {
  double x = 0.0, y = 0.0, z = 0.0;
  uint16_t biome = 0;
};

// A 3D block's rows are padded to a multiple of this many cells.
inline constexpr size_t kVolumeLanes = 4;
inline constexpr size_t VolumeStride(size_t nx) {
  return (nx + kVolumeLanes - 1) / kVolumeLanes * kVolumeLanes;
}

// A block of nx * ny * nz cells and the samples that may reach it:
//   runs:     the samples, in the order every cell's sums run (the caller's canonical order);
//   plane_of: per biome index of the samples, the plane its terms add to;
//   xs, ys, zs: the cells' coordinates (ys in kernel space), each axis evenly spaced and ascending;
//   planes:   plane q at planes + q * plane_size (plane_size >= ny * nz * VolumeStride(nx)),
//             cell (a, b, d)'s sum at (b * nz + d) * VolumeStride(nx) + a; the caller zeroes the
//             planes it uses (aligned to 64 bytes, a row of cells never straddles a cache line).
struct VolumeKernelBlock {
  std::span<const std::span<const VolumeSample>> runs;
  const uint32_t* plane_of = nullptr;
  double radius = 0.0;
  std::span<const double> xs, ys, zs;
  double* planes = nullptr;
  size_t plane_size = 0;
};

// For every sample p in the runs' order and every cell (x, y, z) of the block:
//     planes[plane_of[p.biome]][cell] += max(((r^2 - dz^2) - dy^2) - dx^2, 0)^2
// with d. = (cell - p). in that parenthesization (ConvolveVolumePoint's sum, term for term). A
// sample adds exactly +0.0 wherever it does not reach, so the variants skip those cells; the
// lanes of a padded row past nx are scratch.
void VolumeKernelSums(const VolumeKernelBlock& block);
// The scalar reference: every sample at every cell.
void VolumeKernelSumsScalar(const VolumeKernelBlock& block);

// The compiled variants of KernelBlockWeights, best first, for tests and benchmarks.
using KernelVariant = simd::Variant<void(const KernelBlock& block)>;
std::span<const KernelVariant> KernelVariants();
// The variant KernelBlockWeights runs.
absl::string_view DispatchedKernelVariant();

// The compiled variants of VolumeKernelSums (the same names and support as KernelVariants).
using VolumeKernelVariant = simd::Variant<void(const VolumeKernelBlock& block)>;
std::span<const VolumeKernelVariant> VolumeKernelVariants();
absl::string_view DispatchedVolumeKernelVariant();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_KERNEL_ROW_H_
