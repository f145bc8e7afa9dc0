// ScatteredBlender: normalized sparse convolution over a jittered triangular lattice (seed 001).
//
// Every lattice point carries the biome the source returns at its jittered position; the points
// reaching a block of columns are gathered once, row by row over the lattice rows and columns that
// can reach the block (padded by the kernel radius and the jitter), culled exactly against the
// block, and convolved (sparse_convolution.h) in canonical (j, i) lattice order. Through a cache,
// positions and biomes come from its tiles, so nothing is hashed or sampled again.
//
// Parameters (world config message `scattered`): sampling_interval (lattice spacing, blocks),
// jitter (fraction of the interval; 0 = the plain lattice), blend_radius (kernel radius, blocks;
// per-biome radii allowed), lattice (0 triangular, the default; 1 square: seed 001's comparison of
// lattices, with more grid lock to show for it), interpolation (0 the kernel at every column; 1
// seed 001's "fast linear interpolation on the jittered grid": the kernel at the lattice points
// only and each column barycentric on its triangle of the jittered mesh, see BlendOnMesh; 2 the
// same points joined C1 instead: the Powell-Sabin quadratic of the kernel blend's weights and
// exact gradients at the vertices, a biome's slope at a vertex scaled down where its ordinate
// would go below 0 (what it loses taken from every biome by weight), see powell_sabin.h).
//
// Thread safety: immutable after construction; all const methods are safe for concurrent use.
#ifndef WORLDGEN_ENGINE_SCATTERED_BLENDER_H_
#define WORLDGEN_ENGINE_SCATTERED_BLENDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/blender.h"
#include "engine/jittered_lattice.h"
#include "engine/sparse_convolution.h"

namespace worldgen {

class ScatteredBlender final : public Blender {
 public:
  static const BlenderMethod kMethod;

  // Smallest kernel radius accepted for a lattice: the farthest a column can be from its nearest
  // jittered point, plus a padding of a quarter interval so every column has a strictly positive
  // total weight and borders have a minimum width.
  static double MinBlendRadius(double sampling_interval, double jitter,
                               JitteredLattice::Shape shape = JitteredLattice::Shape::kTriangular);

  // `spec` must be valid with biomes sorted by id; `source` must outlive the blender.
  ScatteredBlender(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid);

  BlenderKind kind() const override { return BlenderKind::kScattered; }
  std::vector<BlenderFigure> Describe() const override;
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const override;
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const override;
  // One gather for the grid's box, then the block kernel over its columns `step` apart (a grid
  // that is not square: each column's point convolution; interpolated: the mesh at the grid's
  // points only): a 3D chunk's 16 cell columns at cell size 4 cost a sixteenth of the chunk's
  // convolution.
  void BlendColumnGrid(int64_t x0, int64_t z0, int nx, int nz, int step, BiomeSampleCache* cache,
                       std::vector<std::vector<std::pair<int, float>>>* columns) const override;
  // The jittered lattice points in the box, in canonical (j, i) order.
  void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                      std::vector<SamplingPoint>* out) const override;
  double SamplingPointBound(const BlockBox& box) const override;

  const JitteredLattice& lattice() const { return lattice_; }
  // Largest kernel radius over all biomes (the reach of a point's influence).
  double max_radius() const { return max_radius_; }

  // Lattice points whose kernel can reach some point of the box [min_x, max_x] x [min_z, max_z],
  // in canonical (j, i) order, with their lattice indices in `indices` if it is not null.
  // `cache` may be null.
  void GatherSamples(double min_x, double min_z, double max_x, double max_z,
                     BiomeSampleCache* cache, std::vector<KernelSample>* out,
                     std::vector<LatticeIndex>* indices = nullptr) const;

 private:
  // Fills the vertices of a cache tile in `vertices`: their jittered positions and the source's
  // biomes there.
  void ComputeTile(int32_t tile_i, int32_t tile_j, const TileMask& vertices, BiomeTile* tile) const;

  // interpolation = 1 or 2: a point's weights as a mix of per-vertex vectors, (vector, factor):
  // linear, its triangle's three vertex weights and barycentric coordinates; smooth, their
  // weights and gradients (x, z), nine vectors and their Powell-Sabin factors.
  using MeshWeights = std::vector<std::pair<const std::vector<std::pair<int, float>>*, double>>;
  // Calls out(index, triangle) for every point, in order; or sets *single_biome to the one biome
  // of every sample reaching them (then `out` is not called), else to -1.
  void BlendOnMesh(std::span<const std::pair<double, double>> points, BiomeSampleCache* cache,
                   const std::function<void(size_t, const MeshWeights&)>& out,
                   int* single_biome) const;
  static void MeshPointWeights(const MeshWeights& vertices,
                               std::vector<std::pair<int, float>>* weights);

  const BiomeSource& source_;
  uint64_t world_uid_;
  double sampling_interval_, jitter_fraction_, blend_radius_;
  JitteredLattice lattice_;
  std::vector<double> radius_sq_;  // Per dense biome index.
  double max_radius_ = 0.0;
  int interpolation_ = 0;  // 0 kernel per column, 1 linear on the mesh, 2 smooth on the mesh
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_SCATTERED_BLENDER_H_
