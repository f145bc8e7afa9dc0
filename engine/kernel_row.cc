#include "engine/kernel_row.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/simd.h"

namespace worldgen {
namespace {

#define WORLDGEN_KERNEL_INLINE inline __attribute__((always_inline))

// The kernel's vectors: 8 doubles (one AVX-512 register), 4 (AVX2) and 2 (SSE2), with the float
// and int vectors of as many lanes. Declared here without simd.h's aligned(8), which a template
// argument would drop (with a warning); every load and store goes through memcpy anyway.
typedef double Double8 __attribute__((vector_size(64)));
typedef double Double4 __attribute__((vector_size(32)));
typedef double Double2 __attribute__((vector_size(16)));
typedef float Float8 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));
typedef float Float2 __attribute__((vector_size(8)));
typedef int32_t Int32x8 __attribute__((vector_size(32)));
typedef int32_t Int32x4 __attribute__((vector_size(16)));
typedef int32_t Int32x2 __attribute__((vector_size(8)));

// What a variant's body computes with: its vector of doubles V (the widest its ISA holds in one
// register: GCC splits wider vectors into several and, past the register file, spills them lane by
// lane), the float vector its weights convert to, the matching int mask, and how many V
// accumulators the sums keep in registers (half the register file, the rest for the terms).
template <typename V>
struct KernelVector;
template <>
struct KernelVector<Double8> {  // AVX-512: 32 zmm registers.
  using Float = Float8;
  using Mask = Int32x8;
  static constexpr size_t kAccumulators = 16;
};
template <>
struct KernelVector<Double4> {  // AVX2: 16 ymm registers.
  using Float = Float4;
  using Mask = Int32x4;
  static constexpr size_t kAccumulators = 8;
};
template <>
struct KernelVector<Double2> {  // SSE2: 16 xmm registers.
  using Float = Float2;
  using Mask = Int32x2;
  static constexpr size_t kAccumulators = 8;
};

template <typename V>
inline constexpr size_t kLanes = sizeof(V) / sizeof(double);
static_assert(kKernelLanes % kLanes<Double8> == 0 && kKernelLanes % kLanes<Double2> == 0);

using simd::Load;
using simd::Store;

// Most rows SlotSums takes at a time.
constexpr size_t kMaxRows = 8;

// SlotSums' per-row-band lists, one entry per point of the slot (row_parts: kMaxRows per point),
// and the list of those that reach a group of columns.
struct RowScratch {
  double* row_x;
  double* row_near_sq;
  double* row_parts;
  uint32_t* reaching;
};

// One slot's sums over the block: `points` are the slot's points in their original order. Rows are
// taken kRows at a time and vectors kGroup at a time, each sum in a register of its own, so a
// point's terms go to kRows * kGroup independent sums and no addition waits on another. A tile
// takes only the points whose kernel reaches its nearest column and row (KernelNearestOffset: one
// it does not reach adds +0.0 everywhere in the tile); inside the tile every term is computed
// (those out of reach are +0.0).
template <typename Max, typename V, size_t kRows, size_t kGroup>
WORLDGEN_KERNEL_INLINE void SlotSums(const KernelBlock& b, const double* xs,
                                     const KernelPoint* points, size_t count,
                                     const RowScratch& scratch, double* slot_acc) {
  static_assert(kRows <= kMaxRows);
  constexpr size_t kL = kLanes<V>;
  double* const row_x = scratch.row_x;
  double* const row_near_sq = scratch.row_near_sq;
  double* const row_parts = scratch.row_parts;
  uint32_t* const reaching = scratch.reaching;
  const size_t n = static_cast<size_t>(b.size);
  const size_t vectors = b.stride / kL;
  for (size_t r0 = 0; r0 < n; r0 += kRows) {
    alignas(64) double row_z[kRows];
    for (size_t r = 0; r < kRows; ++r) row_z[r] = b.z0 + b.step * static_cast<double>(r0 + r);
    const double z_lo = row_z[0], z_hi = row_z[std::min(kRows, n - r0) - 1];
    // The points that reach these rows at all (r^2 - dz^2 > 0 at the nearest row), each with that
    // row's part of its nearest term and its part of every row's terms (r^2 - dz^2, computed across
    // the rows at once; the sums below only broadcast them).
    size_t near = 0;
    for (size_t k = 0; k < count; ++k) {
      const double near_z = KernelNearestOffset(points[k].z, z_lo, z_hi);
      const double row_part = points[k].radius_sq - near_z * near_z;
      row_x[near] = points[k].x;
      row_near_sq[near] = row_part;
      if constexpr (kRows % kL == 0) {
        for (size_t r = 0; r < kRows; r += kL) {
          const V dz = Load<V>(row_z + r) - points[k].z;
          Store(row_parts + near * kRows + r, points[k].radius_sq - dz * dz);
        }
      } else {
        for (size_t r = 0; r < kRows; ++r) {
          const double dz = row_z[r] - points[k].z;
          row_parts[near * kRows + r] = points[k].radius_sq - dz * dz;
        }
      }
      near += row_part > 0.0;
    }
    for (size_t g = 0; g < vectors; g += kGroup) {
      const double x_lo = xs[g * kL];
      const double x_hi = xs[std::min((g + kGroup) * kL, n) - 1];
      V acc[kRows][kGroup];
#pragma GCC unroll 8
      for (size_t r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
        for (size_t v = 0; v < kGroup; ++v) acc[r][v] = V{};
      }
      // The points whose kernel reaches these columns, listed without a branch: which ones do is
      // not predictable, and a mispredicted skip cost more than the terms it saved.
      size_t reach = 0;
      for (size_t m = 0; m < near; ++m) {
        const double near_x = KernelNearestOffset(row_x[m], x_lo, x_hi);
        reaching[reach] = static_cast<uint32_t>(m);
        reach += row_near_sq[m] - near_x * near_x > 0.0;
      }
      for (size_t i = 0; i < reach; ++i) {
        const size_t m = reaching[i];
        const double px = row_x[m];
        V dx_sq[kGroup];
#pragma GCC unroll 4
        for (size_t v = 0; v < kGroup; ++v) {
          const V dx = Load<V>(xs + (g + v) * kL) - px;
          dx_sq[v] = dx * dx;
        }
        const double* parts = row_parts + m * kRows;
#pragma GCC unroll 8
        for (size_t r = 0; r < kRows; ++r) {
          const double row_part = parts[r];
#pragma GCC unroll 4
          for (size_t v = 0; v < kGroup; ++v) {
            const V t = Max::Positive(row_part - dx_sq[v]);
            acc[r][v] += t * t;
          }
        }
      }
      for (size_t r = 0; r < kRows && r0 + r < n; ++r) {
        for (size_t v = 0; v < kGroup; ++v) {
          Store(slot_acc + (r0 + r) * b.stride + (g + v) * kL, acc[r][v]);
        }
      }
    }
  }
}

// The vector kernel: slot by slot, each slot's sums accumulated in registers (SlotSums), then the
// totals and the normalized weights.
template <typename Max, typename V>
WORLDGEN_KERNEL_INLINE void KernelBody(const KernelBlock& b) {
  using Float = typename KernelVector<V>::Float;
  using Mask = typename KernelVector<V>::Mask;
  constexpr size_t kL = kLanes<V>;
  constexpr size_t kAcc = KernelVector<V>::kAccumulators;
  const size_t n = static_cast<size_t>(b.size);
  const size_t vectors = b.stride / kL;
  alignas(64) double xs[1024 + kKernelLanes];
  for (size_t lx = 0; lx < b.stride; ++lx) xs[lx] = b.x0 + b.step * static_cast<double>(lx);
  thread_local std::vector<double> row_x;
  thread_local std::vector<double> row_near_sq;
  thread_local std::vector<double> row_parts;
  thread_local std::vector<uint32_t> reaching;
  row_x.resize(b.count);
  row_near_sq.resize(b.count);
  row_parts.resize(b.count * kMaxRows);
  reaching.resize(b.count);
  const RowScratch scratch{row_x.data(), row_near_sq.data(), row_parts.data(), reaching.data()};
  for (size_t s = 0; s < b.slots; ++s) {
    const KernelPoint* points = b.points + b.slot_begin[s];
    const size_t count = b.slot_begin[s + 1] - b.slot_begin[s];
    double* slot_acc = b.acc + s * n * b.stride;
    if (vectors % 4 == 0) {
      SlotSums<Max, V, kAcc / 4, 4>(b, xs, points, count, scratch, slot_acc);
    } else if (vectors % 2 == 0) {
      SlotSums<Max, V, kAcc / 2, 2>(b, xs, points, count, scratch, slot_acc);
    } else {
      SlotSums<Max, V, std::min(kAcc, kMaxRows), 1>(b, xs, points, count, scratch, slot_acc);
    }
  }
  // Totals: the slots' sums in ascending slot order.
  for (size_t lz = 0; lz < n; ++lz) {
    for (size_t at = 0; at < b.stride; at += kL) {
      V t = Load<V>(b.acc + lz * b.stride + at);
      for (size_t s = 1; s < b.slots; ++s) t += Load<V>(b.acc + (s * n + lz) * b.stride + at);
      Store(b.total + lz * b.stride + at, t);
    }
  }
  // Block fields in locals, and `any` written as whole vectors: the stores into the weights (by
  // memcpy, which may alias anything) would otherwise make GCC reload the fields and keep `any` in
  // memory, each row then waiting on the previous row's store.
  const size_t stride = b.stride;
  const double* const total = b.total;
  Mask lane_index;
  for (size_t l = 0; l < kL; ++l) lane_index[l] = static_cast<int32_t>(l);
  for (size_t s = 0; s < b.slots; ++s) {
    const double* acc = b.acc + s * n * stride;
    float* out = b.weights + s * n * n;
    Mask any = {};
    for (size_t lz = 0; lz < n; ++lz) {
      for (size_t at = 0; at < stride; at += kL) {
        if (at >= n) break;  // The rest of the row is padding (vectors narrower than its unit).
        const V q = Load<V>(acc + lz * stride + at) / Load<V>(total + lz * stride + at);
        const Float f = __builtin_convertvector(q, Float);
        if (n - at >= kL) {
          std::memcpy(out + lz * n + at, &f, sizeof f);
          any |= f != 0.0f;
          continue;
        }
        // A row's last, partial vector: only its stored columns count (padded lanes are scratch).
        std::memcpy(out + lz * n + at, &f, (n - at) * sizeof(float));
        any |= (f != 0.0f) & (lane_index < static_cast<int32_t>(n - at));
      }
    }
    int32_t set = 0;
    for (size_t l = 0; l < kL; ++l) set |= any[l];
    b.nonzero[s] = set != 0 ? 1 : 0;
  }
}

// max(t, +0.0) per lane: t where t > 0, else +0.0 (the kernel squares it, so the sign of a zero
// never matters). GCC's vector extensions have no max and lower the portable select to a compare
// and a blend; x86's vmaxpd (dest = src1 > src2 ? src1 : src2) is exactly this rule in one
// instruction. Written as inline assembly because intrinsics cannot be inlined into the
// target-neutral body that each variant instantiates.
struct PortableMax {
  template <typename V>
  static WORLDGEN_KERNEL_INLINE V Positive(V t) {
    return t > 0.0 ? t : 0.0;
  }
};

#if WORLDGEN_SIMD_DISPATCH
struct Avx512Max {
  static WORLDGEN_KERNEL_INLINE Double8 Positive(Double8 t) {
    Double8 r;
    asm("vmaxpd %[zero], %[t], %[r]" : [r] "=v"(r) : [t] "v"(t), [zero] "v"(Double8{}));
    return r;
  }
};
struct Avx2Max {
  static WORLDGEN_KERNEL_INLINE Double4 Positive(Double4 t) {
    Double4 r;
    asm("vmaxpd %[zero], %[t], %[r]" : [r] "=x"(r) : [t] "x"(t), [zero] "x"(Double4{}));
    return r;
  }
};

__attribute__((target("avx512f"))) void KernelAvx512(const KernelBlock& b) {
  KernelBody<Avx512Max, Double8>(b);
}
__attribute__((target("avx2"))) void KernelAvx2(const KernelBlock& b) {
  KernelBody<Avx2Max, Double4>(b);
}
#endif
void KernelBaseline(const KernelBlock& b) { KernelBody<PortableMax, Double2>(b); }

// The cells a sample may reach on one evenly spaced, ascending axis of a 3D block: its kernel's
// extent, widened by one each way (the arithmetic decides), as [first, last + 1). Truncation and
// the widening bound floor and ceil from outside; the clamp keeps the conversion in range.
struct VolumeAxis {
  explicit VolumeAxis(std::span<const double> at)
      : origin(at[0]),
        inverse_step(1.0 / (at.size() > 1 ? at[1] - at[0] : 1.0)),
        count(static_cast<double>(at.size())) {}
  WORLDGEN_KERNEL_INLINE std::pair<size_t, size_t> Reach(double centre, double radius) const {
    const double lo = std::clamp((centre - radius - origin) * inverse_step, -1.0, count);
    const double hi = std::clamp((centre + radius - origin) * inverse_step, -1.0, count);
    const auto size = static_cast<int64_t>(count);
    return {static_cast<size_t>(std::clamp<int64_t>(static_cast<int64_t>(lo) - 1, 0, size)),
            static_cast<size_t>(std::clamp<int64_t>(static_cast<int64_t>(hi) + 2, 0, size))};
  }
  double origin, inverse_step, count;
};

// The samples of a 3D block's runs in their order, each that may reach one of its cells passed
// to body(p, rows, depths, acc): its reach in heights and depths (VolumeAxis::Reach, neither
// empty) and its biome's plane. Both 3D kernel bodies walk the samples so.
template <typename Body>
WORLDGEN_KERNEL_INLINE void ForEachReachingSample(const VolumeKernelBlock& b, Body&& body) {
  const VolumeAxis y_axis(b.ys), z_axis(b.zs);
  for (std::span<const VolumeSample> run : b.runs) {
    for (const VolumeSample& p : run) {
      const std::pair<size_t, size_t> rows = y_axis.Reach(p.y, b.radius);
      const std::pair<size_t, size_t> depths = z_axis.Reach(p.z, b.radius);
      if (rows.first >= rows.second || depths.first >= depths.second) continue;
      body(p, rows, depths, b.planes + static_cast<size_t>(b.plane_of[p.biome]) * b.plane_size);
    }
  }
}

// The 3D kernel for narrow blocks (Minecraft's cell size 4 in a 16-block chunk: 4 x 4 cells per
// height): a height's nz rows lie side by side in a plane, so the sample's offsets are taken once
// per lane of the whole height, (r^2 - dz^2) and dx^2, and each height it reaches costs one pass
// of subtract, subtract, max, square and add over W = nz * stride lanes, without VolumeBody's
// per-row broadcasts and loops. Lanes out of the sample's reach in z add +0.0, as its rows do.
// kVectors = W / V's lanes, a constant: the passes unroll and the offsets stay in registers.
template <typename Max, typename V, size_t kVectors>
WORLDGEN_KERNEL_INLINE void VolumeFlatSums(const VolumeKernelBlock& b, const double* lane_x,
                                           const double* lane_z) {
  constexpr size_t kL = kLanes<V>, n = kVectors, width = n * kL;
  const double radius_sq = b.radius * b.radius;
  ForEachReachingSample(
      b, [&](const VolumeSample& p, std::pair<size_t, size_t> rows, std::pair<size_t, size_t>,
             double* acc) __attribute__((always_inline)) {
        V px, pz, r_sq;
        for (size_t l = 0; l < kL; ++l) px[l] = p.x, pz[l] = p.z, r_sq[l] = radius_sq;
        V near[n], dx_sq[n];
#pragma GCC unroll 16
        for (size_t v = 0; v < n; ++v) {
          const V dz = Load<V>(lane_z + v * kL) - pz, dx = Load<V>(lane_x + v * kL) - px;
          near[v] = r_sq - dz * dz;
          dx_sq[v] = dx * dx;
        }
        for (size_t row = rows.first; row < rows.second; ++row) {
          const double dy = b.ys[row] - p.y, dy_sq = dy * dy;
          if (!(radius_sq - dy_sq > 0.0)) continue;
          V vdy;
          for (size_t l = 0; l < kL; ++l) vdy[l] = dy_sq;
          double* cells = acc + row * width;
#pragma GCC unroll 16
          for (size_t v = 0; v < n; ++v) {
            const V t = Max::Positive((near[v] - vdy) - dx_sq[v]);
            Store(cells + v * kL, Load<V>(cells + v * kL) + t * t);
          }
        }
      });
}

// VolumeFlatSums over a block whose height spans `width` lanes, 1, 2, 4, 8 or 16 of V's vectors
// (VolumeFlatVectors): the lanes' cell coordinates (a padded lane repeats its row's last x:
// scratch), then the sums.
template <typename Max, typename V>
WORLDGEN_KERNEL_INLINE void VolumeFlatBody(const VolumeKernelBlock& b, size_t width) {
  constexpr size_t kL = kLanes<V>;
  const size_t nx = b.xs.size(), stride = VolumeStride(nx);
  alignas(64) double lane_x[16 * kL], lane_z[16 * kL];
  for (size_t l = 0; l < width; ++l) {
    lane_x[l] = b.xs[std::min(l % stride, nx - 1)];
    lane_z[l] = b.zs[l / stride];
  }
  switch (width / kL) {
    case 1:
      return VolumeFlatSums<Max, V, 1>(b, lane_x, lane_z);
    case 2:
      return VolumeFlatSums<Max, V, 2>(b, lane_x, lane_z);
    case 4:
      return VolumeFlatSums<Max, V, 4>(b, lane_x, lane_z);
    case 8:
      return VolumeFlatSums<Max, V, 8>(b, lane_x, lane_z);
    default:
      return VolumeFlatSums<Max, V, 16>(b, lane_x, lane_z);
  }
}

// Whether VolumeFlatBody takes a block whose height spans `width` lanes, in vectors of kL.
constexpr bool VolumeFlatVectors(size_t width, size_t kL) {
  return width % kL == 0 && (width / kL == 1 || width / kL == 2 || width / kL == 4 ||
                             width / kL == 8 || width / kL == 16);
}

// The 3D kernel's body: sample by sample (the sums' order), each row (b, d) of cells the sample may
// reach gets its terms, V lanes of cells at a time. Every row and depth in the sample's reach is
// summed without a branch (a row beyond it adds max(v, 0) = +0.0 in every lane); only a height the
// sample cannot reach at all is skipped: (r^2 - dz^2) - dy^2 <= r^2 - dy^2, rounding being
// monotonic.
template <typename Max, typename V>
WORLDGEN_KERNEL_INLINE void VolumeBody(const VolumeKernelBlock& b) {
  constexpr size_t kL = kLanes<V>;
  static_assert(kVolumeLanes % kL == 0);
  const double radius_sq = b.radius * b.radius;
  const size_t nx = b.xs.size(), nz = b.zs.size();
  const size_t stride = VolumeStride(nx);
  if (const size_t width = nz * stride; VolumeFlatVectors(width, kL)) {
    VolumeFlatBody<Max, V>(b, width);
    return;
  }
  thread_local std::vector<double> xs;
  xs.assign(stride, b.xs.back());
  std::copy(b.xs.begin(), b.xs.end(), xs.begin());
  constexpr size_t kDepths = 32;  // Depths whose squared offsets a sample keeps at hand.
  ForEachReachingSample(
      b, [&](const VolumeSample& p, std::pair<size_t, size_t> rows,
             std::pair<size_t, size_t> depths, double* acc) __attribute__((always_inline)) {
        const auto [b0, b1] = rows;
        const auto [d0, d1] = depths;
        double dz_sq[kDepths];
        for (size_t d = d0; d < std::min(d1, d0 + kDepths); ++d) {
          const double dz = b.zs[d] - p.z;
          dz_sq[d - d0] = dz * dz;
        }
        V px;
        for (size_t l = 0; l < kL; ++l) px[l] = p.x;
        for (size_t row = b0; row < b1; ++row) {
          const double dy = b.ys[row] - p.y, dy_sq = dy * dy;
          if (!(radius_sq - dy_sq > 0.0)) continue;
          for (size_t d = d0; d < d1; ++d) {
            double dz2;
            if (d - d0 < kDepths) {
              dz2 = dz_sq[d - d0];
            } else {
              const double dz = b.zs[d] - p.z;
              dz2 = dz * dz;
            }
            const double base = (radius_sq - dz2) - dy_sq;
            V vbase;
            for (size_t l = 0; l < kL; ++l) vbase[l] = base;
            double* cells = acc + (row * nz + d) * stride;
            for (size_t a = 0; a < stride; a += kL) {
              const V dx = Load<V>(xs.data() + a) - px;
              const V t = Max::Positive(vbase - dx * dx);
              Store(cells + a, Load<V>(cells + a) + t * t);
            }
          }
        }
      });
}

#if WORLDGEN_SIMD_DISPATCH
// AVX-512 takes a narrow block's heights eight lanes at a time (a 16-block chunk at cell size 4:
// two vectors per height; on Zen 4, which splits them into 256-bit halves, 3% faster than four
// lanes for the fewer instructions) and a wide block's rows (cell sizes 1 and 2) four at a time,
// as AVX2 does: rows are padded to kVolumeLanes (4) cells.
__attribute__((target("avx512f"))) void VolumeAvx512(const VolumeKernelBlock& b) {
  const size_t width = b.zs.size() * VolumeStride(b.xs.size());
  if (VolumeFlatVectors(width, 8)) return VolumeFlatBody<Avx512Max, Double8>(b, width);
  VolumeBody<Avx2Max, Double4>(b);
}
__attribute__((target("avx2"))) void VolumeAvx2(const VolumeKernelBlock& b) {
  VolumeBody<Avx2Max, Double4>(b);
}
#endif
void VolumeBaseline(const VolumeKernelBlock& b) { VolumeBody<PortableMax, Double2>(b); }

const simd::Dispatcher<void(const KernelBlock&)>& Kernels() {
  static const simd::Dispatcher<void(const KernelBlock&)> dispatcher(
      WORLDGEN_SIMD_VARIANT_FN(KernelAvx512), WORLDGEN_SIMD_VARIANT_FN(KernelAvx2),
      &KernelBaseline);
  return dispatcher;
}

const simd::Dispatcher<void(const VolumeKernelBlock&)>& VolumeKernels() {
  static const simd::Dispatcher<void(const VolumeKernelBlock&)> dispatcher(
      WORLDGEN_SIMD_VARIANT_FN(VolumeAvx512), WORLDGEN_SIMD_VARIANT_FN(VolumeAvx2),
      &VolumeBaseline);
  return dispatcher;
}

}  // namespace

void KernelBlockWeights(const KernelBlock& block) { Kernels().chosen().run(block); }

std::span<const KernelVariant> KernelVariants() { return Kernels().variants(); }

absl::string_view DispatchedKernelVariant() { return Kernels().chosen().name; }

void VolumeKernelSums(const VolumeKernelBlock& block) { VolumeKernels().chosen().run(block); }

std::span<const VolumeKernelVariant> VolumeKernelVariants() { return VolumeKernels().variants(); }

absl::string_view DispatchedVolumeKernelVariant() { return VolumeKernels().chosen().name; }

void VolumeKernelSumsScalar(const VolumeKernelBlock& b) {
  const double radius_sq = b.radius * b.radius;
  const size_t nx = b.xs.size(), ny = b.ys.size(), nz = b.zs.size();
  const size_t stride = VolumeStride(nx);
  for (std::span<const VolumeSample> run : b.runs) {
    for (const VolumeSample& p : run) {
      double* acc = b.planes + static_cast<size_t>(b.plane_of[p.biome]) * b.plane_size;
      for (size_t row = 0; row < ny; ++row) {
        for (size_t d = 0; d < nz; ++d) {
          for (size_t a = 0; a < nx; ++a) {
            const double dx = b.xs[a] - p.x, dy = b.ys[row] - p.y, dz = b.zs[d] - p.z;
            double t = ((radius_sq - dz * dz) - dy * dy) - dx * dx;
            t = t > 0.0 ? t : 0.0;
            acc[(row * nz + d) * stride + a] += t * t;
          }
        }
      }
    }
  }
}

void KernelBlockScalar(const KernelBlock& b) {
  const size_t n = static_cast<size_t>(b.size);
  std::fill(b.acc, b.acc + b.slots * n * b.stride, 0.0);
  for (size_t k = 0; k < b.count; ++k) {
    const KernelPoint& p = b.points[k];
    for (size_t lz = 0; lz < n; ++lz) {
      const double dz = (b.z0 + b.step * static_cast<double>(lz)) - p.z;
      const double dz_sq = dz * dz;
      for (size_t lx = 0; lx < n; ++lx) {
        const double dx = (b.x0 + b.step * static_cast<double>(lx)) - p.x;
        double t = (p.radius_sq - dz_sq) - dx * dx;
        t = t > 0.0 ? t : 0.0;
        const double w = t * t;
        b.acc[(p.slot * n + lz) * b.stride + lx] += w;
      }
    }
  }
  for (size_t lz = 0; lz < n; ++lz) {
    for (size_t lx = 0; lx < n; ++lx) {
      double t = b.acc[lz * b.stride + lx];
      for (size_t s = 1; s < b.slots; ++s) t += b.acc[(s * n + lz) * b.stride + lx];
      b.total[lz * b.stride + lx] = t;
    }
  }
  for (size_t s = 0; s < b.slots; ++s) {
    b.nonzero[s] = 0;
    for (size_t lz = 0; lz < n; ++lz) {
      for (size_t lx = 0; lx < n; ++lx) {
        const float w =
            static_cast<float>(b.acc[(s * n + lz) * b.stride + lx] / b.total[lz * b.stride + lx]);
        b.weights[s * n * n + lz * n + lx] = w;
        if (w != 0.0f) b.nonzero[s] = 1;
      }
    }
  }
}

}  // namespace worldgen
