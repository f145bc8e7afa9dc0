#include "engine/biome_sample_cache.h"

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

void FillWith(uint16_t value, BiomeTile& tile) {
  for (uint16_t& b : tile.biome) b = value;
  for (int v = 0; v < BiomeTile::kVertices; ++v) {
    tile.xz[2 * v] = value + v;
    tile.xz[2 * v + 1] = -value - v;
  }
}

// The biome at `vertex` of key's tile, computing it with FillWith(fill) on a miss; `*computed`
// (if not null) counts the computations.
uint16_t BiomeAt(BiomeSampleCache& cache, const BiomeTileKey& key, uint16_t fill, int vertex = 0,
                 int* computed = nullptr) {
  uint16_t biome = 0;
  cache.Visit(
      key,
      [&](BiomeTile& t) {
        if (computed != nullptr) ++*computed;
        FillWith(fill, t);
      },
      [&](const BiomeTile& t) { biome = t.biome[vertex]; });
  return biome;
}

bool IsCached(BiomeSampleCache& cache, const BiomeTileKey& key) {
  const uint64_t hits = cache.stats().hits;
  int computed = 0;
  BiomeAt(cache, key, 0, 0, &computed);
  EXPECT_EQ(cache.Contains(key), true);
  EXPECT_EQ(cache.stats().hits, hits + (computed == 0));
  return computed == 0;
}

TEST(BiomeSampleCacheTest, ComputesOnMissAndServesHits) {
  BiomeSampleCache cache(1 << 20, 4);
  int computed = 0;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(BiomeAt(cache, {1, 5, -7}, 9, 17, &computed), 9);
  }
  EXPECT_EQ(computed, 1);
  BiomeSampleCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, BiomeSampleCache::kBytesPerEntry);
}

TEST(BiomeSampleCacheTest, KeysSeparateWorldsAndTiles) {
  BiomeSampleCache cache(1 << 20);
  BiomeAt(cache, {1, 0, 0}, 1);
  BiomeAt(cache, {2, 0, 0}, 2);
  BiomeAt(cache, {1, 0, 1}, 3);
  int computed = 0;
  EXPECT_EQ(BiomeAt(cache, {1, 0, 0}, 7, 5, &computed), 1);
  EXPECT_EQ(BiomeAt(cache, {2, 0, 0}, 7, 5, &computed), 2);
  EXPECT_EQ(BiomeAt(cache, {1, 0, 1}, 7, 5, &computed), 3);
  EXPECT_EQ(computed, 0);
  // 3D tiles (tile_k odd) are entries of their own beside the 2D tile of the same (i, j).
  BiomeAt(cache, {1, 0, 0, 1}, 4);
  BiomeAt(cache, {1, 0, 0, -1}, 5);
  EXPECT_EQ(BiomeAt(cache, {1, 0, 0}, 7, 5, &computed), 1);
  EXPECT_EQ(BiomeAt(cache, {1, 0, 0, 1}, 7, 5, &computed), 4);
  EXPECT_EQ(BiomeAt(cache, {1, 0, 0, -1}, 7, 5, &computed), 5);
  EXPECT_EQ(computed, 0);
  EXPECT_EQ(cache.stats().entries, 5u);
}

TEST(BiomeSampleCacheTest, ManyTilesInOneShardStayFindable) {
  // Enough keys to grow the index several times and to probe past collisions.
  BiomeSampleCache cache(1000 * BiomeSampleCache::kBytesPerEntry, 1);
  for (int32_t k = 0; k < 1000; ++k) BiomeAt(cache, {4, k % 40, k / 40}, static_cast<uint16_t>(k));
  for (int32_t k = 0; k < 1000; ++k) {
    int computed = 0;
    ASSERT_EQ(BiomeAt(cache, {4, k % 40, k / 40}, 0, 0, &computed), k);
    ASSERT_EQ(computed, 0) << k;
  }
  EXPECT_EQ(cache.stats().entries, 1000u);
  EXPECT_EQ(cache.stats().evictions, 0u);
}

TEST(BiomeSampleCacheTest, EvictsWithinTheByteBoundAndCounts) {
  // One shard holding exactly three entries.
  BiomeSampleCache cache(3 * BiomeSampleCache::kBytesPerEntry, 1);
  for (int32_t k = 0; k < 10; ++k) {
    BiomeAt(cache, {1, k, 0}, static_cast<uint16_t>(k));
    BiomeSampleCache::Stats stats = cache.stats();
    EXPECT_EQ(stats.entries, std::min<uint64_t>(k + 1, 3));
    EXPECT_EQ(stats.bytes, stats.entries * BiomeSampleCache::kBytesPerEntry);
    EXPECT_EQ(stats.evictions, static_cast<uint64_t>(std::max(0, k - 2)));
    EXPECT_EQ(stats.misses, static_cast<uint64_t>(k + 1));
  }
  // Exactly three tiles remain, the newest among them, each with its own content.
  std::vector<BiomeTileKey> keys;
  for (int32_t k = 0; k < 10; ++k) keys.push_back({1, k, 0});
  std::vector<size_t> cached;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (cache.Contains(keys[k])) cached.push_back(k);
  }
  ASSERT_EQ(cached.size(), 3u);
  EXPECT_EQ(cached.back(), 9u);
  for (size_t k : cached) {
    int computed = 0;
    EXPECT_EQ(BiomeAt(cache, keys[k], 0, 3, &computed), k);
    EXPECT_EQ(computed, 0);
  }
}

TEST(BiomeSampleCacheTest, ARecentlyFoundTileSurvivesAScanOfOthers) {
  // CLOCK's guarantee: an entry found since the hand last passed it outlives every entry that was
  // not, so a hot tile survives a scan of cold ones as long as it is found again before the hand
  // has swept the whole shard twice (here: once per half a capacity of new tiles).
  constexpr int32_t kCapacity = 8;
  BiomeSampleCache cache(kCapacity * BiomeSampleCache::kBytesPerEntry, 1);
  const BiomeTileKey hot{1, -1, -1};
  BiomeAt(cache, hot, 42);
  for (int32_t k = 0; k < 20 * kCapacity; ++k) {
    BiomeAt(cache, {1, k, 0}, 1);
    if (k % (kCapacity / 2) == 0) {
      ASSERT_TRUE(IsCached(cache, hot)) << "evicted after " << k;
    }
  }
  EXPECT_TRUE(IsCached(cache, hot));
  EXPECT_GT(cache.stats().evictions, 0u);
}

TEST(BiomeSampleCacheTest, UnfoundTilesAreEvictedBeforeFoundOnes) {
  BiomeSampleCache cache(4 * BiomeSampleCache::kBytesPerEntry, 1);
  for (int32_t k = 0; k < 4; ++k) BiomeAt(cache, {1, k, 0}, 0);
  for (int32_t k = 0; k < 3; ++k) BiomeAt(cache, {1, k, 0}, 0);  // Found: 0, 1, 2; not 3.
  BiomeAt(cache, {1, 9, 0}, 0);  // Evicts 3, the only unreferenced entry.
  for (int32_t k = 0; k < 3; ++k) EXPECT_TRUE(IsCached(cache, {1, k, 0})) << k;
  EXPECT_TRUE(IsCached(cache, {1, 9, 0}));
  EXPECT_FALSE(IsCached(cache, {1, 3, 0}));
}

TEST(BiomeSampleCacheTest, ZeroCapacityStoresNothing) {
  BiomeSampleCache cache(0);
  int computed = 0;
  for (int k = 0; k < 3; ++k) EXPECT_EQ(BiomeAt(cache, {1, 0, 0}, 4, 0, &computed), 4);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

TEST(BiomeSampleCacheTest, PrefetchSeesOnlyCachedTilesAndChangesNothing) {
  BiomeSampleCache cache(1 << 20, 2);
  BiomeAt(cache, {1, 2, 3}, 5);
  const BiomeTileKey keys[] = {{1, 0, 0}, {1, 2, 3}, {2, 2, 3}};
  std::vector<size_t> seen;
  cache.Prefetch(keys, [&](size_t k, const BiomeTile* tile) {
    EXPECT_NE(tile, nullptr);
    seen.push_back(k);
  });
  EXPECT_EQ(seen, std::vector<size_t>{1});
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_TRUE(cache.Contains({1, 2, 3}));
  EXPECT_FALSE(cache.Contains({1, 0, 0}));
  EXPECT_EQ(cache.stats().hits + cache.stats().misses, 1u);
}

TEST(BiomeSampleCacheTest, VisitTileRowsCoversEachVertexOnceTileByTile) {
  BiomeSampleCache cache(1 << 22);
  constexpr int n = BiomeTile::kTileSize;
  auto compute = [](int32_t ti, int32_t tj, BiomeTile& t) {
    for (int v = 0; v < BiomeTile::kVertices; ++v) {
      t.xz[2 * v] = ti * n + v % n;  // The vertex's i and j.
      t.xz[2 * v + 1] = tj * n + v / n;
    }
  };
  // Rows -20 .. 19 with ragged, partly empty column ranges crossing tiles (negative ones too).
  const int64_t j0 = -20;
  std::vector<int64_t> lo, hi;
  for (int64_t r = 0; r < 40; ++r) {
    lo.push_back(-37 + r % 7);
    hi.push_back(r % 9 == 4 ? lo.back() - 1 : 5 + 3 * r);
  }
  for (int pass = 0; pass < 2; ++pass) {  // Computed, then cached.
    std::vector<std::vector<int>> seen(lo.size());
    for (size_t r = 0; r < lo.size(); ++r)
      seen[r].assign(static_cast<size_t>(hi[r] - lo[r] + 1 + (hi[r] < lo[r])), 0);
    VisitTileRows(cache, 7, j0, lo, hi, compute,
                  [&](const BiomeTile& tile, const TileRowSpan& span) {
                    for (int64_t i = span.i_begin; i <= span.i_end; ++i) {
                      const int v = span.index + static_cast<int>(i - span.i_begin);
                      ASSERT_EQ(tile.xz[2 * v], static_cast<double>(i));
                      ASSERT_EQ(tile.xz[2 * v + 1], static_cast<double>(span.j));
                      ++seen[static_cast<size_t>(span.j - j0)]
                            [static_cast<size_t>(i - lo[static_cast<size_t>(span.j - j0)])];
                    }
                  });
    for (size_t r = 0; r < lo.size(); ++r) {
      for (int64_t i = lo[r]; i <= hi[r]; ++i) {
        ASSERT_EQ(seen[r][static_cast<size_t>(i - lo[r])], 1) << "row " << r << " i " << i;
      }
    }
  }
  EXPECT_GT(cache.stats().hits, 0u);
}

TEST(BiomeSampleCacheTest, ConcurrentUseStaysBoundedAndConsistent) {
  BiomeSampleCache cache(64 * BiomeSampleCache::kBytesPerEntry, 8);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5000; ++k) {
        const int32_t i = (k * 7 + t) % 200;
        if (BiomeAt(cache, {3, i, -i}, static_cast<uint16_t>(i), 63) != i) ++wrong;
        if (k % 16 == 0) {
          const BiomeTileKey keys[] = {{3, i, -i}, {3, i + 1, -i - 1}};
          cache.Prefetch(keys, [](size_t, const BiomeTile* tile) { __builtin_prefetch(tile); });
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  BiomeSampleCache::Stats stats = cache.stats();
  EXPECT_LE(stats.bytes, 64 * BiomeSampleCache::kBytesPerEntry);
  EXPECT_EQ(stats.hits + stats.misses, 20000u);
  EXPECT_GT(stats.evictions, 0u);
}

// The sample a test tile holds at vertex v of tile (ti, tj): biome and position from both.
void FillVertex(int32_t ti, int32_t tj, int v, BiomeTile& tile) {
  tile.biome[v] = static_cast<uint16_t>(v + 3 * ti + 5 * tj);
  tile.xz[2 * v] = ti * 1000.0 + v;
  tile.xz[2 * v + 1] = tj * 1000.0 - v;
}

bool HoldsTheSamplesOf(int32_t ti, int32_t tj, const TileMask& vertices, const BiomeTile& tile) {
  BiomeTile expected;
  for (int v = 0; v < BiomeTile::kVertices; ++v) {
    if (!vertices.Has(v)) continue;
    FillVertex(ti, tj, v, expected);
    if (tile.biome[v] != expected.biome[v] || tile.xz[2 * v] != expected.xz[2 * v] ||
        tile.xz[2 * v + 1] != expected.xz[2 * v + 1]) {
      return false;
    }
  }
  return true;
}

// Visits `key`'s tile for `need` through the masked Visit, filling missing vertices with
// FillVertex; records each `missing` mask computed, and whether the final visit saw `need`'s
// samples.
struct MaskedVisit {
  std::vector<TileMask> computed;
  bool saw_the_samples = false;
  void Run(
      BiomeSampleCache& cache, const BiomeTileKey& key, const TileMask& need,
      absl::FunctionRef<void()> while_computing = [] {}) {
    saw_the_samples = false;
    cache.Visit(
        key,
        [&](const BiomeTile& tile) {
          if (!tile.filled.Covers(need)) return false;
          saw_the_samples = HoldsTheSamplesOf(key.tile_i, key.tile_j, need, tile);
          return true;
        },
        [&] { return need; },
        [&](BiomeTile& tile, const TileMask& missing) {
          computed.push_back(missing);
          while_computing();
          for (int v = 0; v < BiomeTile::kVertices; ++v) {
            if (missing.Has(v)) FillVertex(key.tile_i, key.tile_j, v, tile);
          }
        });
  }
};

TileMask Rows(int first_row, int last_row, int first, int last) {
  TileMask mask;
  for (int b = first_row; b <= last_row; ++b) {
    mask.AddRun(b * BiomeTile::kTileSize + first, b * BiomeTile::kTileSize + last);
  }
  return mask;
}

TEST(BiomeSampleCacheTest, ATileFirstGetsWhatIsReadThenTheRest) {
  BiomeSampleCache cache(1 << 20, 2);
  const BiomeTileKey key{9, 4, -2};
  const TileMask a = Rows(3, 9, 2, 8), inside_a = Rows(4, 6, 3, 5), b = Rows(8, 12, 6, 15);
  MaskedVisit visit;
  visit.Run(cache, key, a);  // A miss: only what is read.
  ASSERT_EQ(visit.computed.size(), 1u);
  EXPECT_EQ(visit.computed[0], a);
  EXPECT_EQ(visit.computed[0].Count(), 7 * 7);
  EXPECT_TRUE(visit.saw_the_samples);
  visit.Run(cache, key, inside_a);  // A hit.
  EXPECT_EQ(visit.computed.size(), 1u);
  EXPECT_TRUE(visit.saw_the_samples);
  visit.Run(cache, key, b);  // Partly held: the rest of the tile.
  ASSERT_EQ(visit.computed.size(), 2u);
  EXPECT_EQ(visit.computed[1], TileMask::All().Without(a));
  EXPECT_TRUE(visit.saw_the_samples);
  visit.Run(cache, key, TileMask::All());  // Whole now: a hit holding every sample.
  EXPECT_EQ(visit.computed.size(), 2u);
  EXPECT_TRUE(visit.saw_the_samples);
  const BiomeSampleCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.entries, 1u);
  // A tile mostly held takes the rest in (the merge copies the fewer vertices: here the rest).
  const TileMask most = Rows(0, 11, 0, 15);
  MaskedVisit mostly;
  mostly.Run(cache, {9, 6, -2}, most);
  mostly.Run(cache, {9, 6, -2}, Rows(14, 14, 3, 9));
  ASSERT_EQ(mostly.computed.size(), 2u);
  EXPECT_EQ(mostly.computed[1], TileMask::All().Without(most));
  mostly.Run(cache, {9, 6, -2}, TileMask::All());
  EXPECT_EQ(mostly.computed.size(), 2u);
  EXPECT_TRUE(mostly.saw_the_samples);
  // A whole-tile visit of a partial tile computes the rest too.
  MaskedVisit partial;
  partial.Run(cache, {9, 5, -2}, a);
  int whole_computes = 0;
  BiomeTile seen;
  cache.Visit(
      {9, 5, -2},
      [&](BiomeTile& tile) {
        ++whole_computes;
        for (int v = 0; v < BiomeTile::kVertices; ++v) FillVertex(5, -2, v, tile);
      },
      [&](const BiomeTile& tile) { seen = tile; });
  EXPECT_EQ(whole_computes, 1);
  EXPECT_TRUE(HoldsTheSamplesOf(5, -2, TileMask::All(), seen));
}

// A partial tile evicted while a visit computes the rest of it: the visit computes again all it
// needs, and stores that.
TEST(BiomeSampleCacheTest, APartialTileEvictedDuringItsFillIsComputedAgain) {
  BiomeSampleCache cache(BiomeSampleCache::kBytesPerEntry, 1);  // One tile.
  const BiomeTileKey key{9, 0, 0};
  const TileMask a = Rows(0, 3, 0, 7), b = Rows(2, 5, 4, 11);
  MaskedVisit first;
  first.Run(cache, key, a);
  MaskedVisit second;
  second.Run(cache, key, b, [&] {
    if (second.computed.size() != 1) return;
    // Another thread stores another tile meanwhile, evicting this one.
    std::thread([&] { BiomeAt(cache, {9, 1, 0}, 1); }).join();
  });
  ASSERT_EQ(second.computed.size(), 2u);
  EXPECT_EQ(second.computed[0], TileMask::All().Without(a));
  EXPECT_EQ(second.computed[1], b);
  EXPECT_TRUE(second.saw_the_samples);
  EXPECT_EQ(cache.stats().evictions, 2u);
  MaskedVisit again;
  again.Run(cache, key, b);
  EXPECT_TRUE(again.computed.empty());
  EXPECT_TRUE(again.saw_the_samples);
}

// The tile is evicted while a visit computes its rest, and stored anew by another thread with other
// vertices: the merge leaves it still lacking some that the visit reads, so the visit computes
// what the tile lacks then, and reads the right samples.
TEST(BiomeSampleCacheTest, ATileStoredAnewDuringAFillWithOtherVerticesGetsWhatItLacks) {
  BiomeSampleCache cache(BiomeSampleCache::kBytesPerEntry, 1);  // One tile.
  const BiomeTileKey key{9, 0, 0};
  const TileMask a = Rows(0, 3, 0, 7), b = Rows(2, 5, 4, 11), c = Rows(8, 9, 0, 3);
  MaskedVisit first;
  first.Run(cache, key, a);
  MaskedVisit second, other;
  second.Run(cache, key, b, [&] {
    if (second.computed.size() != 1) return;
    // Another thread stores another tile, evicting this one, then this one again holding only c.
    std::thread([&] {
      BiomeAt(cache, {9, 1, 0}, 1);
      other.Run(cache, key, c);
    }).join();
  });
  ASSERT_EQ(other.computed.size(), 1u);
  EXPECT_EQ(other.computed[0], c);
  ASSERT_EQ(second.computed.size(), 2u);
  EXPECT_EQ(second.computed[0], TileMask::All().Without(a));
  TileMask merged = TileMask::All().Without(a);
  merged |= c;
  EXPECT_FALSE(merged.Covers(b)) << "the case under test: the merge lacks some of b (b and a)";
  EXPECT_EQ(second.computed[1], TileMask::All().Without(merged));
  EXPECT_TRUE(second.saw_the_samples);
  EXPECT_EQ(cache.stats().evictions, 2u);
  MaskedVisit again;
  again.Run(cache, key, TileMask::All());
  EXPECT_TRUE(again.computed.empty()) << "the tile is whole";
  EXPECT_TRUE(again.saw_the_samples);
}

// Tiles come from slabs (BiomeTile::operator new): more tiles than one 2 MiB slab holds, all
// alive at once, never share memory (each keeps what was written into it), and their memory is
// handed out again once they are freed (except under AddressSanitizer, where the heap serves
// them).
TEST(BiomeTileTest, TilesAreDisjointAndTheirMemoryIsReused) {
  constexpr int kTiles = 1000;  // About two slabs.
  std::vector<std::unique_ptr<BiomeTile>> tiles;
  std::set<const BiomeTile*> addresses;
  for (int k = 0; k < kTiles; ++k) {
    tiles.push_back(std::make_unique<BiomeTile>());
    FillWith(static_cast<uint16_t>(k), *tiles.back());
    addresses.insert(tiles.back().get());
  }
  for (int k = 0; k < kTiles; ++k) {
    const BiomeTile& tile = *tiles[static_cast<size_t>(k)];
    ASSERT_EQ(tile.biome[0], k) << "tile " << k << " was overwritten";
    ASSERT_EQ(tile.biome[BiomeTile::kVertices - 1], k);
    ASSERT_EQ(tile.xz[0], k);
    ASSERT_EQ(tile.xz[2 * BiomeTile::kVertices - 1], -k - (BiomeTile::kVertices - 1));
  }
  tiles.clear();
  int reused = 0;
  for (int k = 0; k < kTiles; ++k) {
    tiles.push_back(std::make_unique<BiomeTile>());
    reused += addresses.count(tiles.back().get()) != 0 ? 1 : 0;
  }
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(reused, kTiles);
#endif
}

}  // namespace
}  // namespace worldgen
