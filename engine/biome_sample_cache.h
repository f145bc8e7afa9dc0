// BiomeSampleCache: a bounded, sharded cache of biome-source answers at lattice points.
//
// The scattered blender evaluates the biome source once per jittered lattice point. Neighbouring
// chunks share most of their points, so answers are cached per tile of kTileSize x kTileSize
// lattice vertices. A tile's content is a pure function of (world, tile), so cached and uncached
// blending are bit-identical; the cache only saves time.
//
// Eviction is CLOCK (second chance): a hit only sets the entry's referenced bit, so the hit path
// writes nothing but that bit and the counters, and hands the tile to a visitor under the shard's
// lock instead of sharing ownership (no reference counts). What is guaranteed: memory stays within
// capacity_bytes (kBytesPerEntry per entry); an entry found since the hand last passed it survives
// the hand's next pass (one full sweep of the other entries of its shard).
//
// Thread safety: all methods are safe for concurrent use. Each shard has its own mutex.
#ifndef WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_
#define WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "engine/floor_div.h"

namespace worldgen {

// Which vertices of a tile (BiomeTile, below) hold samples: vertex v is bit v % 64 of
// words[v / 64], so each word holds four whole rows of 16 vertices.
struct TileMask {
  static constexpr int kWords = 4;
  static constexpr int kRowSize = 16;  // BiomeTile::kTileSize
  uint64_t words[kWords] = {};

  static TileMask All() {
    TileMask all;
    for (uint64_t& w : all.words) w = ~uint64_t{0};
    return all;
  }
  // Adds vertices first .. last (inclusive) of one tile row.
  void AddRun(int first, int last) { words[first / 64] |= RunBits(first, last) << (first % 64); }
  bool Has(int v) const { return (words[v / 64] >> (v % 64)) & 1; }
  // Whether vertices first .. last (inclusive) of one tile row are all here.
  bool HasRun(int first, int last) const {
    const uint64_t run = RunBits(first, last);
    return ((words[first / 64] >> (first % 64)) & run) == run;
  }
  // Tile row b's vertices: bit a for vertex b * kRowSize + a.
  uint64_t Row(int b) const {
    const int first = b * kRowSize;
    return (words[first / 64] >> (first % 64)) & RunBits(0, kRowSize - 1);
  }
  bool Covers(const TileMask& other) const {
    uint64_t lacking = 0;
    for (int w = 0; w < kWords; ++w) lacking |= other.words[w] & ~words[w];
    return lacking == 0;
  }
  TileMask Without(const TileMask& other) const {
    TileMask rest;
    for (int w = 0; w < kWords; ++w) rest.words[w] = words[w] & ~other.words[w];
    return rest;
  }
  TileMask& operator|=(const TileMask& other) {
    for (int w = 0; w < kWords; ++w) words[w] |= other.words[w];
    return *this;
  }
  bool empty() const { return TileMask{}.Covers(*this); }
  int Count() const {
    int count = 0;
    for (uint64_t w : words) count += std::popcount(w);
    return count;
  }
  bool operator==(const TileMask&) const = default;

 private:
  // Bits 0 .. last - first set.
  static uint64_t RunBits(int first, int last) {
    const int count = last - first + 1;
    return count == 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
  }
};

// The samples of one tile of a blender's lattice: vertex (tile_i * kTileSize + a,
// tile_j * kTileSize + b) is vertex v = b * kTileSize + a, sampled at (xz[2v], xz[2v + 1]) (its
// jittered position, kept so that gathering never recomputes it) with the biome source's answer
// there, biome[v] (a dense index into the world's id-sorted biome table). Only the vertices in
// `filled` hold samples: the scattered blender fills a tile's vertices as gathers first read them
// (VisitTileRows with a `compute` that takes a TileMask), every other user fills whole tiles.
struct BiomeTile final {
  // 16 x 16 vertices (4.5 KiB of payload): a 16x16 chunk at interval 8 touches about 2.6 tiles and
  // a point query about 2, against 5 and 4 with 8 x 8 tiles; each tile visit takes a lock and a
  // cache miss on the tile, so fewer, larger tiles gather faster. The price: a tile that misses
  // computes the samples a gather reads from it, all 256 for blenders that fill whole tiles. x and
  // z interleave so that a run of a row's vertices is one run of memory: tiles mostly live outside
  // the CPU caches, and a gather reads runs of 7 to 16 vertices.
  static constexpr int kTileSize = 16;
  static constexpr int kVertices = kTileSize * kTileSize;
  TileMask filled;  // First: a visit reads it before the samples, from the tile's first line.
  double xz[2 * kVertices];
  uint16_t biome[kVertices];
  char padding_[32];  // To a whole number of 64-byte lines, so that slab tiles start on one.

  // Tiles live in 2 MiB slabs that ask for transparent huge pages (biome_sample_cache.cc,
  // TileSlabs): a large cache's tiles, visited at random, otherwise miss the TLB on most visits.
  static void* operator new(size_t size);
  static void operator delete(void* tile) noexcept;
};
static_assert(BiomeTile::kVertices == 64 * TileMask::kWords &&
                  BiomeTile::kTileSize == TileMask::kRowSize && 64 % TileMask::kRowSize == 0,
              "a tile row lies within one word of TileMask");
static_assert(sizeof(BiomeTile) % 64 == 0, "slab tiles start on a cache line");

struct BiomeTileKey {
  uint64_t world_uid = 0;  // World::uid(): distinguishes worlds sharing one cache.
  int32_t tile_i = 0;
  int32_t tile_j = 0;
  // 0 for 2D tiles. A 3D tile (ScatteredVolumeBlender's cube tile_i, tile_j, tile_k) stores
  // 2 * tile_k + 1 here, odd and so never 0: no 3D key equals a 2D one.
  int32_t tile_k = 0;
  bool operator==(const BiomeTileKey&) const = default;

  // A 3D tile's key and its tile_k back: the one home of that encoding.
  static BiomeTileKey Volume(uint64_t world_uid, int32_t ti, int32_t tj, int32_t tk) {
    return {world_uid, ti, tj, 2 * tk + 1};
  }
  int32_t volume_tile_k() const { return (tile_k - 1) / 2; }
};

class BiomeSampleCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t bytes = 0;  // Accounted bytes currently held (kBytesPerEntry per entry).
    uint64_t entries = 0;
  };

  // Memory accounted per cached tile, an upper bound on what an entry costs: the tile (one heap
  // block, with the allocator's header), its share of the shard's index (32-byte slots kept at
  // most half and, once grown, at least a quarter full: at most four slots per entry) and of the
  // shard's prefetch hints (16 bytes, at most one per entry the capacity allows). Each thread that
  // misses also keeps one tile of scratch memory of its own.
  static constexpr size_t kBytesPerEntry = sizeof(BiomeTile) + 176;

  // capacity_bytes == 0 disables storing (every lookup computes and counts a miss).
  // shards must be >= 1; capacity is split evenly between shards.
  explicit BiomeSampleCache(size_t capacity_bytes, int shards = 16);
  ~BiomeSampleCache();
  BiomeSampleCache(const BiomeSampleCache&) = delete;
  BiomeSampleCache& operator=(const BiomeSampleCache&) = delete;

  // Calls `visit` with the tile for `key`. `visit` reads some of the tile's vertices and returns
  // whether the tile held them all (tile.filled); if not, or if there is no tile, the vertices it
  // reads, `need()`, are computed and `visit` is called again on a tile that holds them, and must
  // then return true. To compute, `compute(tile, missing)` is called on a tile of this thread's to
  // fill at least the vertices in `missing` (their xz and biome); those are then added to the
  // cached tile, or that tile is stored. `visit` runs under the shard's lock: it must be short,
  // must not use the cache, and must not keep a pointer into the tile after it returns (the
  // entry's memory is reused on eviction). `compute` runs without any lock held and must not use
  // the cache either; two threads missing the same vertices may both compute them (the results
  // are identical). A visit that computes counts as a miss.
  void Visit(const BiomeTileKey& key, absl::FunctionRef<bool(const BiomeTile&)> visit,
             absl::FunctionRef<TileMask()> need,
             absl::FunctionRef<void(BiomeTile&, const TileMask&)> compute);
  // The same for a whole tile: `compute` fills all of it, and `visit` may read any of it.
  void Visit(const BiomeTileKey& key, absl::FunctionRef<void(BiomeTile&)> compute,
             absl::FunctionRef<void(const BiomeTile&)> visit);

  // Starts loading the given tiles' index slots into the CPU caches ahead of visiting them, and
  // calls `prefetch(k, tile)` for each keys[k] whose tile's address is known (best effort: a cached
  // tile may be missed, and the address may be stale), with no lock held. Tiles mostly live outside
  // the CPU caches and each visit's lock waits for all loads before it, so visiting tile after tile
  // would wait for each in turn. `prefetch` may only pass addresses in the tile to
  // __builtin_prefetch: the memory may be reused at any moment (prefetching it is harmless, reading
  // it is not). Takes no lock, counts nothing, marks nothing.
  void Prefetch(std::span<const BiomeTileKey> keys,
                absl::FunctionRef<void(size_t, const BiomeTile*)> prefetch);

  // Whether `key`'s tile is cached. Counts nothing, marks nothing.
  bool Contains(const BiomeTileKey& key);

  Stats stats() const;
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  class Shard;
  Shard& ShardFor(uint64_t hash);
  size_t capacity_bytes_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

// One row's worth of a tile visit in VisitTileRows: vertices (i_begin .. i_end, j), inclusive, are
// at tile indices index .. index + (i_end - i_begin).
struct TileRowSpan {
  int64_t j;
  int64_t i_begin, i_end;
  int index;
};

// Reads, through `cache`, the vertices of lattice rows j0 .. j0 + i_lo.size() - 1 where row j0 + r
// covers columns i_lo[r] .. i_hi[r] (none when i_hi[r] < i_lo[r]). Each tile holding such vertices
// is visited once, tiles in (tile_j, tile_i) order, and `copy(tile, span)` is called under the
// visit for each row span of it, rows ascending. `compute` fills a tile that lacks what is read:
// either `compute(tile_i, tile_j, tile)` fills the whole tile, or `compute(tile_i, tile_j,
// missing, tile)` (a TileMask) fills only the vertices in `missing`, so that a tile holds what
// gathers have read from it. The caller places each span by its (j, i_begin): spans arrive tile
// by tile, not in row order.
template <typename Compute, typename Copy>
void VisitTileRows(BiomeSampleCache& cache, uint64_t world_uid, int64_t j0,
                   std::span<const int64_t> i_lo, std::span<const int64_t> i_hi, Compute&& compute,
                   Copy&& copy) {
  constexpr bool kFillsWhatIsRead =
      std::is_invocable_v<Compute&, int32_t, int32_t, const TileMask&, BiomeTile&>;
  constexpr int64_t n = BiomeTile::kTileSize;
  const int64_t rows = static_cast<int64_t>(i_lo.size());
  if (rows == 0) return;
  const int64_t j1 = j0 + rows - 1;
  // The tiles to visit, with the rows (r0..r1, offsets from j0) each one holds.
  struct Visit {
    int64_t r0, r1;
  };
  constexpr size_t kBatch = 16;
  BiomeTileKey keys[kBatch];
  Visit visits[kBatch];
  size_t count = 0;
  // Calls `each(r, a0, a1, index)` for the rows r of visits[k] that have vertices a0..a1 in it,
  // the first at tile vertex `index`.
  auto for_each_span = [&](size_t k, auto&& each) {
    const int64_t ti = keys[k].tile_i, tj = keys[k].tile_j;
    for (int64_t r = visits[k].r0; r <= visits[k].r1; ++r) {
      const int64_t a0 = std::max(i_lo[r], ti * n), a1 = std::min(i_hi[r], ti * n + n - 1);
      if (a0 <= a1) each(r, a0, a1, static_cast<int>((j0 + r - tj * n) * n + (a0 - ti * n)));
    }
  };
  auto flush = [&] {
    cache.Prefetch({keys, count}, [&](size_t k, const BiomeTile* tile) {
      for_each_span(k, [&](int64_t, int64_t a0, int64_t a1, int index) {
        const int last = index + static_cast<int>(a1 - a0);
        for (int d = 2 * index; d < 2 * last + 1; d += 8) {  // 8 doubles: one 64-byte line.
          __builtin_prefetch(&tile->xz[d]);
        }
        __builtin_prefetch(&tile->xz[2 * last + 1]);
        __builtin_prefetch(&tile->biome[index]);
        __builtin_prefetch(&tile->biome[last]);
      });
      __builtin_prefetch(&tile->filled);
    });
    for (size_t k = 0; k < count; ++k) {
      const int32_t ti = keys[k].tile_i, tj = keys[k].tile_j;
      if constexpr (kFillsWhatIsRead) {
        cache.Visit(
            keys[k],
            [&](const BiomeTile& tile) {
              // A whole tile (most, once read from a few places) needs no check per run.
              const bool whole = tile.filled.Covers(TileMask::All());
              bool held = true;
              for_each_span(k, [&](int64_t r, int64_t a0, int64_t a1, int index) {
                if (!held) return;
                held = whole || tile.filled.HasRun(index, index + static_cast<int>(a1 - a0));
                if (held) copy(tile, TileRowSpan{j0 + r, a0, a1, index});
              });
              return held;
            },
            [&] {
              TileMask need;
              for_each_span(k, [&](int64_t, int64_t a0, int64_t a1, int index) {
                need.AddRun(index, index + static_cast<int>(a1 - a0));
              });
              return need;
            },
            [&](BiomeTile& t, const TileMask& missing) { compute(ti, tj, missing, t); });
      } else {
        cache.Visit(
            keys[k], [&](BiomeTile& t) { compute(ti, tj, t); },
            [&](const BiomeTile& tile) {
              for_each_span(k, [&](int64_t r, int64_t a0, int64_t a1, int index) {
                copy(tile, TileRowSpan{j0 + r, a0, a1, index});
              });
            });
      }
    }
    count = 0;
  };
  for (int64_t tj = FloorDiv(j0, n); tj <= FloorDiv(j1, n); ++tj) {
    const int64_t r0 = std::max(j0, tj * n) - j0, r1 = std::min(j1, tj * n + n - 1) - j0;
    int64_t lo = i_lo[r0], hi = i_hi[r0];
    for (int64_t r = r0 + 1; r <= r1; ++r) {
      if (i_hi[r] < i_lo[r]) continue;
      if (hi < lo) lo = i_lo[r], hi = i_hi[r];
      lo = std::min(lo, i_lo[r]);
      hi = std::max(hi, i_hi[r]);
    }
    if (hi < lo) continue;
    for (int64_t ti = FloorDiv(lo, n); ti <= FloorDiv(hi, n); ++ti) {
      if (count == kBatch) flush();
      keys[count] = {world_uid, static_cast<int32_t>(ti), static_cast<int32_t>(tj)};
      visits[count] = {r0, r1};
      ++count;
    }
  }
  flush();
}

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_BIOME_SAMPLE_CACHE_H_
