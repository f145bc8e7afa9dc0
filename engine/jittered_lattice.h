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
#include <span>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/simd.h"

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
  double interval() const { return g_.interval; }
  double jitter() const { return g_.jitter; }          // In blocks.
  double row_height() const { return g_.row_height; }  // Between rows: interval * sqrt(3)/2 or 1.
  double row_shift() const { return g_.row_shift; }    // Row j's x offset: row_shift * j intervals.
  // Largest distance from any point of the plane to its nearest unjittered vertex.
  double max_vertex_distance() const { return MaxVertexDistance(g_.interval, shape_); }
  static double MaxVertexDistance(double interval, Shape shape) {
    return interval / (shape == Shape::kTriangular ? kSqrt3 : kSqrt2);
  }

  // The jittered position of vertex (i, j).
  void Position(int32_t i, int32_t j, double* x, double* z) const;

  // Position of the vertices (i_begin + k, j) into x[k], z[k] for k < count, with the same bits,
  // several vertices per vector instruction (the dispatched variant of PositionRowVariants()).
  // i_begin + count - 1 must not overflow int32_t.
  void PositionRow(int32_t i_begin, int32_t count, int32_t j, double* x, double* z) const;

  // What Position reads of the lattice, for the compiled variants of PositionRow.
  struct Geometry {
    uint64_t seed_mix;  // Mix64(seed ^ kHashSeedSalt): HashCoords' seed step, done once.
    double interval;
    double jitter;      // In blocks.
    double row_height;  // interval * sqrt(3)/2, or interval (square).
    double row_shift;   // 0.5 triangular, 0 square.
  };
  const Geometry& geometry() const { return g_; }
  using PositionRowFn = void(const Geometry& g, int32_t i_begin, int32_t count, int32_t j,
                             double* x, double* z);

  // The unjittered vertex nearest to (x, z) (ties broken deterministically).
  LatticeIndex NearestVertex(double x, double z) const;

 private:
  Shape shape_;
  Geometry g_;
};

// The compiled variants of JitteredLattice::PositionRow ("avx512", "avx2", "baseline"; see
// simd::Dispatcher), and the one it runs.
using LatticeRowVariant = simd::Variant<JitteredLattice::PositionRowFn>;
std::span<const LatticeRowVariant> LatticeRowVariants();
absl::string_view DispatchedLatticeRowVariant();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_JITTERED_LATTICE_H_
