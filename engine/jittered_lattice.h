// JitteredLattice: the jittered point lattice that scattered blending samples on.
//
// Triangular (the default): vertex (i, j) sits at interval * (i + j/2, j * sqrt(3)/2); square:
// at interval * (i, j). Each is displaced by `jitter` blocks in a direction hashed from
// (seed, i, j). Neighbouring vertices are `interval` apart; every point of the plane is within
// max_vertex_distance() (interval/sqrt(3) triangular, interval/sqrt(2) square) of an unjittered
// vertex, and so within that plus the jitter of a jittered one. Rows are j; row j's vertices are
// i = ..., with x offset row_shift() * j intervals. Thread safety: immutable after construction;
// safe for concurrent use.
#ifndef WORLDGEN_ENGINE_JITTERED_LATTICE_H_
#define WORLDGEN_ENGINE_JITTERED_LATTICE_H_

#include <cstdint>
#include <vector>

namespace worldgen {

struct LatticeIndex {
  int32_t i = 0;
  int32_t j = 0;
};

class JitteredLattice {
 public:
  static constexpr double kSqrt3 = 1.7320508075688772;
  static constexpr double kSqrt2 = 1.4142135623730951;

  enum class Shape { kTriangular = 0, kSquare = 1 };

  // interval > 0 (blocks between neighbours); 0 <= jitter_fraction <= 0.5 (of interval).
  JitteredLattice(uint64_t seed, double interval, double jitter_fraction,
                  Shape shape = Shape::kTriangular);

  Shape shape() const { return shape_; }
  double interval() const { return interval_; }
  double jitter() const { return jitter_; }          // In blocks.
  double row_height() const { return row_height_; }  // Between rows: interval * sqrt(3)/2 or 1.
  double row_shift() const { return row_shift_; }    // Row j's x offset: row_shift * j intervals.
  // Largest distance from any point of the plane to its nearest unjittered vertex.
  double max_vertex_distance() const { return MaxVertexDistance(interval_, shape_); }
  static double MaxVertexDistance(double interval, Shape shape) {
    return interval / (shape == Shape::kTriangular ? kSqrt3 : kSqrt2);
  }

  // The jittered position of vertex (i, j).
  void Position(int32_t i, int32_t j, double* x, double* z) const;

  // The unjittered vertex nearest to (x, z) (ties broken deterministically).
  LatticeIndex NearestVertex(double x, double z) const;

 private:
  uint64_t seed_mix_;  // Mix64(seed ^ kHashSeedSalt): HashCoords' seed step, done once.
  Shape shape_;
  double interval_;
  double jitter_;
  double row_height_;
  double row_shift_;  // 0.5 triangular, 0 square
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_JITTERED_LATTICE_H_
