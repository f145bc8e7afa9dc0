#include "engine/kernel_row.h"

#include <cstring>

#include "engine/simd.h"

namespace worldgen {
namespace {

using simd::Double8;
using simd::Float8;
using simd::Int64x8;

#define WORLDGEN_KERNEL_INLINE inline __attribute__((always_inline))

WORLDGEN_KERNEL_INLINE Double8 Splat8(double v) { return Double8{v, v, v, v, v, v, v, v}; }

WORLDGEN_KERNEL_INLINE Double8 Load8(const double* p) {
  Double8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

WORLDGEN_KERNEL_INLINE void Store8(double* p, Double8 v) { std::memcpy(p, &v, sizeof v); }

// The vector kernel. For each point, in order: the rows its kernel reaches (dz^2 < r^2, exactly the
// test the reference's arithmetic makes), and in each row the vectors of columns whose nearest column
// it reaches. The nearest column's dx is computed as the reference computes it (x - px, or its exact
// negation), squares are monotonic, so a vector whose nearest column gets +0.0 gets +0.0 everywhere:
// skipping it changes no sum.
WORLDGEN_KERNEL_INLINE void KernelBody(const KernelBlock& b) {
  const size_t n = static_cast<size_t>(b.size);
  const size_t vectors = b.stride / kKernelLanes;
  alignas(64) double xs[1024 + kKernelLanes];
  for (size_t lx = 0; lx < b.stride; ++lx) xs[lx] = b.x0 + static_cast<double>(lx);
  double near_sq[1024 / kKernelLanes + 1];  // Per vector: squared dx of its nearest column.
  alignas(64) double dx_sq[1024 + kKernelLanes];  // Per column: (x - p.x)^2 for the current point.
  for (size_t k = 0; k < b.count; ++k) {
    const KernelPoint& p = b.points[k];
    for (size_t v = 0; v < vectors; ++v) {
      const double lo = xs[v * kKernelLanes], hi = xs[v * kKernelLanes + kKernelLanes - 1];
      const double d = p.x < lo ? lo - p.x : (p.x > hi ? p.x - hi : 0.0);
      near_sq[v] = d * d;
    }
    // dx^2 per column does not depend on the row: computed once per point.
    const Double8 px = Splat8(p.x), r_sq = Splat8(p.radius_sq), zero = Splat8(0.0);
    for (size_t v = 0; v < vectors; ++v) {
      const Double8 dx = Load8(xs + v * kKernelLanes) - px;
      Store8(dx_sq + v * kKernelLanes, dx * dx);
    }
    double* slot_acc = b.acc + p.slot * n * b.stride;
    for (size_t lz = 0; lz < n; ++lz) {
      const double dz = (b.z0 + static_cast<double>(lz)) - p.z;
      const double dz_sq = dz * dz;
      if (!(dz_sq < p.radius_sq)) continue;
      const Double8 vdz = Splat8(dz_sq);
      double* acc_row = slot_acc + lz * b.stride;
      double* total_row = b.total + lz * b.stride;
      for (size_t v = 0; v < vectors; ++v) {
        if (!(near_sq[v] + dz_sq < p.radius_sq)) continue;
        const size_t at = v * kKernelLanes;
        Double8 t = r_sq - (Load8(dx_sq + at) + vdz);
        t = t > zero ? t : zero;
        const Double8 w = t * t;
        Store8(acc_row + at, Load8(acc_row + at) + w);
        Store8(total_row + at, Load8(total_row + at) + w);
      }
    }
  }
  for (size_t s = 0; s < b.slots; ++s) {
    const double* acc = b.acc + s * n * b.stride;
    float* out = b.weights + s * n * n;
    Int64x8 any = {};
    for (size_t lz = 0; lz < n; ++lz) {
      for (size_t at = 0; at < b.stride; at += kKernelLanes) {
        const Double8 q = Load8(acc + lz * b.stride + at) / Load8(b.total + lz * b.stride + at);
        const Float8 f = __builtin_convertvector(q, Float8);
        float lanes[kKernelLanes];
        std::memcpy(lanes, &f, sizeof lanes);
        const size_t count = n - at < kKernelLanes ? n - at : kKernelLanes;
        std::memcpy(out + lz * n + at, lanes, count * sizeof(float));
        // Non-zero test on the stored columns only (padded lanes are scratch).
        for (size_t l = 0; l < count; ++l) any[l] |= lanes[l] != 0.0f;
      }
    }
    bool set = false;
    for (size_t l = 0; l < kKernelLanes; ++l) set |= any[l] != 0;
    b.nonzero[s] = set ? 1 : 0;
  }
}

#if WORLDGEN_SIMD_DISPATCH
__attribute__((target("avx512f"))) void KernelAvx512(const KernelBlock& b) { KernelBody(b); }
__attribute__((target("avx2"))) void KernelAvx2(const KernelBlock& b) { KernelBody(b); }
#endif
void KernelBaseline(const KernelBlock& b) { KernelBody(b); }

const KernelVariant* Variants() {
  static const KernelVariant variants[] = {
#if WORLDGEN_SIMD_DISPATCH
      {"avx512", __builtin_cpu_supports("avx512f") != 0, &KernelAvx512},
      {"avx2", __builtin_cpu_supports("avx2") != 0, &KernelAvx2},
#endif
      {"baseline", true, &KernelBaseline},
  };
  return variants;
}

constexpr size_t kVariantCount = WORLDGEN_SIMD_DISPATCH ? 3 : 1;

const KernelVariant& Dispatched() {
  static const KernelVariant* chosen = [] {
    for (size_t v = 0; v < kVariantCount; ++v) {
      if (Variants()[v].supported) return &Variants()[v];
    }
    return &Variants()[kVariantCount - 1];
  }();
  return *chosen;
}

}  // namespace

void KernelBlockWeights(const KernelBlock& block) { Dispatched().run(block); }

std::span<const KernelVariant> KernelVariants() { return {Variants(), kVariantCount}; }

absl::string_view DispatchedKernelVariant() { return Dispatched().name; }

void KernelBlockScalar(const KernelBlock& b) {
  const size_t n = static_cast<size_t>(b.size);
  for (size_t k = 0; k < b.count; ++k) {
    const KernelPoint& p = b.points[k];
    for (size_t lz = 0; lz < n; ++lz) {
      const double dz = (b.z0 + static_cast<double>(lz)) - p.z;
      const double dz_sq = dz * dz;
      for (size_t lx = 0; lx < n; ++lx) {
        const double dx = (b.x0 + static_cast<double>(lx)) - p.x;
        double t = p.radius_sq - (dx * dx + dz_sq);
        t = t > 0.0 ? t : 0.0;
        const double w = t * t;
        b.acc[(p.slot * n + lz) * b.stride + lx] += w;
        b.total[lz * b.stride + lx] += w;
      }
    }
  }
  for (size_t s = 0; s < b.slots; ++s) {
    b.nonzero[s] = 0;
    for (size_t lz = 0; lz < n; ++lz) {
      for (size_t lx = 0; lx < n; ++lx) {
        const float w = static_cast<float>(b.acc[(s * n + lz) * b.stride + lx] /
                                           b.total[lz * b.stride + lx]);
        b.weights[s * n * n + lz * n + lx] = w;
        if (w != 0.0f) b.nonzero[s] = 1;
      }
    }
  }
}

}  // namespace worldgen
