// The hot loop of scattered blending: one lattice sample's kernel weights added to a row of columns.
//
// Written once against GCC's portable vector extensions and compiled for AVX2 and baseline x86-64
// with runtime dispatch. Every lane performs exactly the scalar reference's IEEE operations in the
// same order (no FMA: -ffp-contract=off), so all variants give bit-identical sums; the tests compare
// them against AccumulateSampleRowScalar.
#ifndef WORLDGEN_ENGINE_KERNEL_ROW_H_
#define WORLDGEN_ENGINE_KERNEL_ROW_H_

#include <cstddef>

namespace worldgen {

// For lx in [0, n): w = max(radius_sq - ((xs[lx] - px)^2 + dz_sq), 0)^2;
//                   acc[lx] += w; total[lx] += w.
// max(r^2 - d^2, 0) is > 0 exactly when d^2 < r^2, so w is the kernel max(0, r^2 - d^2)^2 and a
// column out of reach gains exactly +0.0. acc and total must not overlap each other or xs.
void AccumulateSampleRow(const double* xs, size_t n, double px, double dz_sq, double radius_sq,
                         double* acc, double* total);

// The scalar reference of AccumulateSampleRow (same results, bit for bit).
void AccumulateSampleRowScalar(const double* xs, size_t n, double px, double dz_sq,
                               double radius_sq, double* acc, double* total);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_KERNEL_ROW_H_
