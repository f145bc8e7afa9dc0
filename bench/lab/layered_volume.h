// worldgen-lab --slices --layered=...: candidate 3D methods for issue 25's speed target, measured
// against the full-resolution 3D reference before any of them is built into the engine.
//
// The engine's 3D method (engine/volume_blender.h) sums about 226 kernel terms per cell from a
// jittered body-centred cubic lattice, each sample a term of its own. These candidates sample the
// world's 3D map on layers instead: seed 001's 2D jittered triangular lattice (the world's cave
// interval and jitter fraction) at the heights y = spacing * L, either the same (x, z) on every
// layer (a column's horizontal offsets then serve every layer, and with cells at multiples of the
// spacing every cell sees the layers at the same few vertical offsets, so a chunk's terms could be
// computed once per column and reused down it) or a lattice of each layer's own. Two kernels:
//   separable: max(0, r^2 - dxz^2)^2 * max(0, rv^2 - dy^2)^2
//   radial:    max(0, r^2 - dxz^2 - (s * dy)^2)^2 with s = r / rv, the engine's kernel
// (r the world's cave blend radius, rv its vertical radius). A sample whose 3D-map biome is a cave
// biome counts for it and any other for the surface, whose share goes to the world's 2D blend of
// the point's column, as in the engine. This is a direct, slow evaluation (each sample's biome read
// from the map and kept in a table) for the lab's figures: the quality of the method, not its
// speed.
//
// Thread safety: not thread-safe (the table of biomes grows as points are blended).
#ifndef WORLDGEN_BENCH_LAB_LAYERED_VOLUME_H_
#define WORLDGEN_BENCH_LAB_LAYERED_VOLUME_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/biome_sample_cache.h"
#include "engine/jittered_lattice.h"
#include "engine/world.h"

namespace worldgen::lab {

struct LayeredMethod {
  double spacing = 4.0;  // Blocks between layers, > 0.
  bool separable = true;
  // Each layer with a lattice of its own (its own seed) instead of the same (x, z) on every
  // layer: a cell's samples then lie at as many distinct (x, z) as the BCC lattice's do, and
  // nothing is shared down a column but the layer's gather per chunk.
  bool own_lattices = false;
  std::string Name() const;  // e.g. "layers 4, separable, shared (x, z)".
};

// "H[s|r][i],..." (s separable, r radial, both when neither is given; i: own_lattices), e.g.
// "2,4s,4ri": INVALID_ARGUMENT naming the part that is not a positive spacing of at most 64 blocks
// with those letters.
absl::StatusOr<std::vector<LayeredMethod>> ParseLayeredMethods(const std::string& text);

class LayeredVolumePrototype {
 public:
  // `world` must have cave biomes and outlive the prototype.
  LayeredVolumePrototype(const World& world, LayeredMethod method);

  // The weights at (x, y, z): (dense biome index, weight), non-zero, ascending index. `cache`
  // serves the world's 2D blender. Adds the number of positive kernel terms to `*terms`.
  void BlendPoint(double x, double y, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights, uint64_t* terms);

 private:
  // The 3D map's dense biome at vertex (i, j) of layer `layer`, read once.
  int BiomeAt(int32_t i, int32_t j, int64_t layer, double x, double z);

  // Layer `layer`'s lattice (the same one for every layer unless own_lattices).
  JitteredLattice LatticeOf(int64_t layer) const;

  const World& world_;
  LayeredMethod method_;
  uint64_t seed_;
  double radius_, vertical_radius_;
  std::vector<char> is_cave_;  // Per dense biome index.
  absl::flat_hash_map<std::tuple<int32_t, int32_t, int64_t>, int> biomes_;
};

}  // namespace worldgen::lab

#endif  // WORLDGEN_BENCH_LAB_LAYERED_VOLUME_H_
