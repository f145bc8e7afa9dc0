// JitteredBccLattice: the jittered point lattice that 3D scattered blending samples on (issue 25).
//
// A body-centred cubic lattice: the corners of cubes `interval` wide (x, z) and `vertical_interval`
// high (y), plus their centres. Point (i, j, k, c) sits at
//     (interval * (i + c/2), vertical_interval * (j + c/2), interval * (k + c/2)),  c in {0, 1},
// displaced by `jitter` in a direction hashed from (seed, i, j, k, c) (uniform over the sphere,
// scaled by vertical_interval / interval on y). Measured in "kernel space", where y is scaled by
// interval / vertical_interval, the lattice is isotropic: its cubes are `interval` on each side,
// it has no large gaps (every point is within interval * sqrt(5)/4 of an unjittered lattice point,
// the BCC lattice's covering radius, against interval * sqrt(3)/2 for the plain cubic lattice) and
// no axis-aligned rows of single points. A vertical kernel radius shorter than the horizontal one
// is the same isotropic kernel in kernel space.
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_JITTERED_BCC_LATTICE_H_
#define WORLDGEN_ENGINE_JITTERED_BCC_LATTICE_H_

#include <cstdint>
#include <span>

#include "absl/strings/string_view.h"
#include "engine/simd.h"

namespace worldgen {

struct BccIndex {
  int32_t i = 0, j = 0, k = 0;  // Cube (x, y, z).
  int32_t c = 0;                // 0 corner, 1 centre.
};

class JitteredBccLattice {
 public:
  static constexpr double kCoveringRadius = 0.5590169943749474;  // sqrt(5)/4, in intervals.

  // interval > 0 and vertical_interval > 0 (blocks); 0 <= jitter_fraction <= 0.5 (of the
  // interval, in kernel space).
  JitteredBccLattice(uint64_t seed, double interval, double vertical_interval,
                     double jitter_fraction);

  double interval() const { return g_.interval; }
  double vertical_interval() const { return g_.vertical_interval; }
  // y in kernel space = y * y_scale().
  double y_scale() const { return g_.y_scale; }
  double jitter() const { return g_.jitter; }  // In blocks of kernel space.

  // The jittered position of point (i, j, k, c), in blocks (y not scaled).
  void Position(const BccIndex& p, double* x, double* y, double* z) const;

  // Position of the points (i_begin + n, j, k, c) into x[n], y[n], z[n] for n < count, with the
  // same bits, several points per vector instruction (the dispatched variant of
  // BccRowVariants()). i_begin + count - 1 must not overflow int32_t.
  void PositionRow(int32_t i_begin, int32_t count, int32_t j, int32_t k, int32_t c, double* x,
                   double* y, double* z) const;

  // What Position reads of the lattice, for the compiled variants of PositionRow.
  struct Geometry {
    uint64_t seed_mix;  // Mix64(seed ^ kHashSeedSalt).
    double interval, vertical_interval, y_scale, jitter;
  };
  const Geometry& geometry() const { return g_; }
  using PositionRowFn = void(const Geometry& g, int32_t i_begin, int32_t count, int32_t j,
                             int32_t k, int32_t c, double* x, double* y, double* z);

 private:
  Geometry g_;
};

// The compiled variants of JitteredBccLattice::PositionRow ("avx512", "avx2", "baseline"; see
// simd::Dispatcher), and the one it runs.
using BccRowVariant = simd::Variant<JitteredBccLattice::PositionRowFn>;
std::span<const BccRowVariant> BccRowVariants();
absl::string_view DispatchedBccRowVariant();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_JITTERED_BCC_LATTICE_H_
