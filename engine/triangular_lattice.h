// TriangularLattice: the jittered triangular point lattice that scattered blending samples on.
//
// Vertex (i, j) sits at  interval * (i + j/2, j * sqrt(3)/2)  and is displaced by `jitter` blocks
// in a direction hashed from (seed, i, j). Neighbouring vertices are `interval` apart, every point
// of the plane is within interval/sqrt(3) of an unjittered vertex, and so within interval/sqrt(3) +
// jitter of a jittered one. Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_TRIANGULAR_LATTICE_H_
#define WORLDGEN_ENGINE_TRIANGULAR_LATTICE_H_

#include <cstdint>
#include <vector>

namespace worldgen {

struct LatticeIndex {
  int32_t i = 0;
  int32_t j = 0;
};

class TriangularLattice {
 public:
  static constexpr double kSqrt3 = 1.7320508075688772;

  // interval > 0 (blocks between neighbours); 0 <= jitter_fraction <= 0.5 (of interval).
  TriangularLattice(uint64_t seed, double interval, double jitter_fraction);

  double interval() const { return interval_; }
  double jitter() const { return jitter_; }  // In blocks.
  // Largest distance from any point of the plane to its nearest unjittered vertex:
  // interval/sqrt(3).
  double max_vertex_distance() const { return interval_ / kSqrt3; }

  // The jittered position of vertex (i, j).
  void Position(int32_t i, int32_t j, double* x, double* z) const;

  // The unjittered vertex nearest to (x, z) (ties broken deterministically).
  LatticeIndex NearestVertex(double x, double z) const;

 private:
  uint64_t seed_mix_;  // Mix64(seed ^ kHashSeedSalt): HashCoords' seed step, done once.
  double interval_;
  double jitter_;
  double row_height_;  // interval * sqrt(3) / 2
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_TRIANGULAR_LATTICE_H_
