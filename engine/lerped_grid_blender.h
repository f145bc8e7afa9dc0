// LerpedGridBlender: seed 001's "lerped grid". Convoluted-grid weights are computed only at the
// vertices of a square grid of spacing `interval` anchored at the world origin, and every column's
// weights are the bilinear interpolation of its cell's four corners. Fast, and visibly creased on
// every grid line: the method the quality metrics' grid lock was made to catch.
//
// Bit-exactness: a vertex's weights are ConvolvePoint at the vertex (the same bits from any
// gathered superset), and a column's weights are interpolated with the same double operations
// whether it is asked for alone or in a chunk, each rounded to float once.
//
// Parameters (world config message `lerped_grid`): interval (whole blocks, [1, 256]), blend_radius
// (blocks, as for convoluted_grid; per-biome radii allowed).
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
  SquareGrid grid_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_LERPED_GRID_BLENDER_H_
