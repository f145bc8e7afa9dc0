#include "engine/kernel_row.h"

#include "engine/simd.h"

namespace worldgen {
namespace {

using simd::Double4;

inline double KernelWeight(double x, double px, double dz_sq, double radius_sq) {
  double dx = x - px;
  double t = radius_sq - (dx * dx + dz_sq);
  t = t > 0.0 ? t : 0.0;
  return t * t;
}

}  // namespace

void AccumulateSampleRowScalar(const double* xs, size_t n, double px, double dz_sq,
                               double radius_sq, double* acc, double* total) {
  for (size_t lx = 0; lx < n; ++lx) {
    double w = KernelWeight(xs[lx], px, dz_sq, radius_sq);
    acc[lx] += w;
    total[lx] += w;
  }
}

WORLDGEN_TARGET_CLONES
void AccumulateSampleRow(const double* xs, size_t n, double px, double dz_sq, double radius_sq,
                         double* acc, double* total) {
  const Double4 vpx = {px, px, px, px};
  const Double4 vdz = {dz_sq, dz_sq, dz_sq, dz_sq};
  const Double4 vr = {radius_sq, radius_sq, radius_sq, radius_sq};
  const Double4 zero = {0.0, 0.0, 0.0, 0.0};
  size_t lx = 0;
  for (; lx + 4 <= n; lx += 4) {
    Double4 x = *reinterpret_cast<const Double4*>(xs + lx);
    Double4 dx = x - vpx;
    Double4 t = vr - (dx * dx + vdz);
    t = t > zero ? t : zero;
    Double4 w = t * t;
    *reinterpret_cast<Double4*>(acc + lx) += w;
    *reinterpret_cast<Double4*>(total + lx) += w;
  }
  AccumulateSampleRowScalar(xs + lx, n - lx, px, dz_sq, radius_sq, acc + lx, total + lx);
}

}  // namespace worldgen
