// LerpedGridBlender: seed 001's "lerped grid". Convoluted-grid weights are computed only at the
// vertices of a square grid of spacing `interval` anchored at the world origin, and every column's
// weights are the bilinear interpolation of its cell's four corners. Fast, and visibly creased on
// every grid line: the method the quality metrics' grid lock was made to catch. With
// interpolation = 1 the cubic B-spline of the 4 x 4 vertices around the cell instead (no creases).
//
// Bit-exactness: a vertex's weights are ConvolvePoint at the vertex (the same bits from any
// gathered superset), and a column's weights are interpolated with the same double operations
// whether it is asked for alone or in a chunk, each rounded to float once.
//
// Parameters (world config message `lerped_grid`): interval (whole blocks, [1, 256]), blend_radius
// (blocks, as for convoluted_grid; per-biome radii allowed), interpolation (0 bilinear, the
// default; 1 the uniform cubic B-spline over the 4 x 4 vertices around a column's cell: weights
// b_a(fx) b_b(fz) with the basis (1-f)^3/6, (3f^3 - 6f^2 + 4)/6, (-3f^3 + 3f^2 + 3f + 1)/6, f^3/6,
// all >= 0 and summing to 1, so weights stay in [0, 1] and sum to 1 as the vertex weights do;
// C2, so no creases; it smooths the vertex weights a little, i.e. it approximates rather than
// interpolates them).
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_LERPED_GRID_BLENDER_H_
#define WORLDGEN_ENGINE_LERPED_GRID_BLENDER_H_

#include <cstdint>
#include <vector>

#include "engine/blender.h"
#include "engine/square_grid.h"

namespace worldgen {

class LerpedGridBlender final : public Blender {
 public:
  static const BlenderMethod kMethod;

  LerpedGridBlender(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid);

  BlenderKind kind() const override { return BlenderKind::kLerpedGrid; }
  std::vector<BlenderFigure> Describe() const override;
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const override;
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const override;
  // The grid's vertices, where the convoluted-grid kernel samples the source.
  void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                      std::vector<SamplingPoint>* out) const override {
    grid_.SamplingPoints(box, cache, out);
  }
  double SamplingPointBound(const BlockBox& box) const override {
    return grid_.SamplingPointCount(box);
  }

 private:
  // Vertex weights of the vertices [gx0, gx0 + nx) x [gz0, gz0 + nz), dense over `biomes`
  // (ascending): out[((j * nx) + i) * biomes.size() + slot]. Returns false (and leaves `out` empty)
  // if every gathered sample has one biome, which is then biomes[0].
  bool VertexWeights(int64_t gx0, int64_t gz0, int nx, int nz, BiomeSampleCache* cache,
                     std::vector<int>* biomes, std::vector<float>* out) const;

  double interval_;
  double blend_radius_;
  bool bspline_;  // interpolation = 1: cubic B-spline over 4 x 4 vertices; else bilinear.
  SquareGrid grid_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_LERPED_GRID_BLENDER_H_
