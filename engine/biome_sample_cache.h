// BiomeSampleCache: a bounded, sharded LRU cache of biome-source answers at lattice points.
//
// The scattered blender evaluates the biome source once per jittered lattice point. Neighbouring
// chunks share most of their points, so answers are cached per tile of kTileSize x kTileSize lattice
// vertices. A tile's content is a pure function of (world, tile), so cached and uncached blending are
// bit-identical; the cache only saves time.
//
// Thread safety: all methods are safe for concurrent use. Each shard has its own mutex.
#ifndef WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_
#define WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"

namespace worldgen {

// The samples of one tile of a blender's lattice: vertex (tile_i * kTileSize + a,
// tile_j * kTileSize + b) is at index b * kTileSize + a, sampled at (x, z) (its jittered position,
// kept so that gathering never recomputes it) with the biome source's answer there (a dense index
// into the world's id-sorted biome table).
struct BiomeTile {
  // 16 x 16 vertices (4.5 KiB of payload): a 16x16 chunk at interval 8 touches about 2.6 tiles and a
  // point query about 2, against 5 and 4 with 8 x 8 tiles; every tile lookup is a chain of dependent
  // cache misses (hash slot, LRU node, tile), so fewer, larger tiles gather faster. The price: a
  // tile that misses computes 256 biome samples.
  static constexpr int kTileSize = 16;
  static constexpr int kVertices = kTileSize * kTileSize;
  double x[kVertices];
  double z[kVertices];
  uint16_t biome[kVertices];
};

struct BiomeTileKey {
  uint64_t world_uid = 0;  // World::uid(): distinguishes worlds sharing one cache.
  int32_t tile_i = 0;
  int32_t tile_j = 0;
  bool operator==(const BiomeTileKey&) const = default;
};

class BiomeSampleCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t bytes = 0;    // Accounted bytes currently held (tiles plus per-entry overhead).
    uint64_t entries = 0;
  };

  // Approximate memory accounted per cached tile (payload plus index and list overhead).
  static constexpr size_t kBytesPerEntry = sizeof(BiomeTile) + 96;

  // capacity_bytes == 0 disables storing (every lookup computes and counts a miss).
  // shards must be >= 1; capacity is split evenly between shards.
  explicit BiomeSampleCache(size_t capacity_bytes, int shards = 16);
  ~BiomeSampleCache();
  BiomeSampleCache(const BiomeSampleCache&) = delete;
  BiomeSampleCache& operator=(const BiomeSampleCache&) = delete;

  // Returns the tile for `key`, calling `compute` to fill it on a miss. `compute` runs without any
  // lock held, so two threads missing the same tile may both compute it (the results are identical).
  std::shared_ptr<const BiomeTile> GetOrCompute(const BiomeTileKey& key,
                                                absl::FunctionRef<void(BiomeTile&)> compute);

  Stats stats() const;
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  class Shard;
  size_t capacity_bytes_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_
