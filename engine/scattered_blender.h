// ScatteredBlender: normalized sparse convolution over a jittered triangular lattice (seed 001).
//
// Every lattice point carries the biome the source returns at its jittered position. A column at
// (x, z) gets from each point p within reach the kernel weight
//     w_p = max(0, r_p^2 - |(x, z) - p|^2)^2        (r_p: the blend radius of p's biome)
// and biome b's weight is  sum_{p of biome b} w_p / sum_p w_p.  Sums run over points in canonical
// (j, i) lattice order in double precision; each weight is rounded to float once. Points whose kernel
// does not reach a column add exactly +0.0, so a chunk (which gathers a superset of points once, with
// padding) and a single point query produce bit-identical floats by construction.
//
// Thread safety: immutable after construction (the per-extent search-offset memo is internally
// synchronized); all const methods are safe for concurrent use.
#ifndef WORLDGEN_ENGINE_SCATTERED_BLENDER_H_
#define WORLDGEN_ENGINE_SCATTERED_BLENDER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/biome_sample_cache.h"
#include "engine/biome_source.h"
#include "engine/triangular_lattice.h"
#include "engine/world_spec.h"

namespace worldgen {

// A lattice point near a query, with the biome the source gives it.
struct LatticeSample {
  double x = 0.0, z = 0.0;     // Jittered position.
  double radius_sq = 0.0;      // Squared kernel radius of its biome.
  int32_t i = 0, j = 0;        // Lattice index.
  uint16_t biome = 0;          // Dense biome index.
};

// One biome's weights over a block of columns, by dense biome index.
struct IndexedLayer {
  int biome = 0;
  std::vector<float> weights;  // size * size, ColumnIndex layout (chunk.h).
};

class ScatteredBlender {
 public:
  // `spec` must be valid with biomes sorted by id; `source` must outlive the blender.
  // `world_uid` keys this world's tiles in a shared BiomeSampleCache.
  ScatteredBlender(const WorldSpec& spec, const BiomeSource& source, uint64_t world_uid);

  const TriangularLattice& lattice() const { return lattice_; }
  // Largest kernel radius over all biomes (the reach of a point's influence).
  double max_radius() const { return max_radius_; }

  // Lattice points whose kernel can reach some point of the box [min_x, max_x] x [min_z, max_z],
  // in canonical (j, i) order. `cache` may be null.
  void GatherSamples(double min_x, double min_z, double max_x, double max_z, BiomeSampleCache* cache,
                     std::vector<LatticeSample>* out) const;

  // Weights of the size x size integer columns whose lowest corner is (x0, z0). Fills `layers` with
  // the biomes non-zero somewhere in the block, ascending index. Returns true if the block was covered
  // by a single biome (then the one layer is all 1.0f and no per-column work was done).
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const;

  // Non-zero weights at the point (x, z) as (dense biome index, weight), ascending index.
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const;

 private:
  // Biome of each sample's lattice vertex, through the cache's tiles when there is one.
  void AssignBiomes(BiomeSampleCache* cache, std::vector<LatticeSample>* samples) const;
  void ComputeTile(int32_t tile_i, int32_t tile_j, BiomeTile* tile) const;
  std::shared_ptr<const std::vector<LatticeOffset>> OffsetsForReach(double half_diagonal) const;

  const BiomeSource& source_;
  uint64_t world_uid_;
  TriangularLattice lattice_;
  std::vector<double> radius_sq_;  // Per dense biome index.
  double max_radius_ = 0.0;
  std::shared_ptr<const std::vector<LatticeOffset>> point_offsets_;
  mutable std::mutex offsets_mu_;  // Guards offsets_by_extent_.
  mutable absl::flat_hash_map<int64_t, std::shared_ptr<const std::vector<LatticeOffset>>>
      offsets_by_extent_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_SCATTERED_BLENDER_H_
