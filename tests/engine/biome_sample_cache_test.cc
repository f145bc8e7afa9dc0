#include "engine/biome_sample_cache.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

void FillWith(uint16_t value, BiomeTile& tile) {
  for (uint16_t& b : tile.biome) b = value;
}

TEST(BiomeSampleCacheTest, ComputesOnMissAndServesHits) {
  BiomeSampleCache cache(1 << 20, 4);
  int computed = 0;
  for (int round = 0; round < 3; ++round) {
    auto tile = cache.GetOrCompute({1, 5, -7}, [&](BiomeTile& t) {
      ++computed;
      FillWith(9, t);
    });
    EXPECT_EQ(tile->biome[0], 9);
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
  cache.GetOrCompute({1, 0, 0}, [](BiomeTile& t) { FillWith(1, t); });
  cache.GetOrCompute({2, 0, 0}, [](BiomeTile& t) { FillWith(2, t); });
  cache.GetOrCompute({1, 0, 1}, [](BiomeTile& t) { FillWith(3, t); });
  auto never = [](BiomeTile&) { FAIL() << "should be cached"; };
  EXPECT_EQ(cache.GetOrCompute({1, 0, 0}, never)->biome[5], 1);
  EXPECT_EQ(cache.GetOrCompute({2, 0, 0}, never)->biome[5], 2);
  EXPECT_EQ(cache.GetOrCompute({1, 0, 1}, never)->biome[5], 3);
}

TEST(BiomeSampleCacheTest, EvictsLeastRecentlyUsedWithinTheByteBound) {
  // One shard holding exactly three entries.
  BiomeSampleCache cache(3 * BiomeSampleCache::kBytesPerEntry, 1);
  for (int32_t k = 0; k < 3; ++k) cache.GetOrCompute({1, k, 0}, [](BiomeTile& t) { FillWith(0, t); });
  cache.GetOrCompute({1, 0, 0}, [](BiomeTile&) {});  // Touch 0: 1 is now least recent.
  cache.GetOrCompute({1, 3, 0}, [](BiomeTile& t) { FillWith(0, t); });
  BiomeSampleCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_LE(stats.bytes, 3 * BiomeSampleCache::kBytesPerEntry);
  bool recomputed = false;
  cache.GetOrCompute({1, 1, 0}, [&](BiomeTile& t) { recomputed = true; FillWith(0, t); });
  EXPECT_TRUE(recomputed);
  bool zero_recomputed = false;
  cache.GetOrCompute({1, 0, 0}, [&](BiomeTile& t) { zero_recomputed = true; FillWith(0, t); });
  EXPECT_FALSE(zero_recomputed);
}

TEST(BiomeSampleCacheTest, ZeroCapacityStoresNothing) {
  BiomeSampleCache cache(0);
  int computed = 0;
  for (int k = 0; k < 3; ++k) cache.GetOrCompute({1, 0, 0}, [&](BiomeTile& t) { ++computed; FillWith(4, t); });
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(BiomeSampleCacheTest, ConcurrentUseStaysBoundedAndConsistent) {
  BiomeSampleCache cache(64 * BiomeSampleCache::kBytesPerEntry, 8);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5000; ++k) {
        int32_t i = (k * 7 + t) % 200;
        auto tile = cache.GetOrCompute({3, i, -i}, [&](BiomeTile& tl) { FillWith(static_cast<uint16_t>(i), tl); });
        if (tile->biome[63] != i) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  BiomeSampleCache::Stats stats = cache.stats();
  EXPECT_LE(stats.bytes, 64 * BiomeSampleCache::kBytesPerEntry);
  EXPECT_EQ(stats.hits + stats.misses, 20000u);
}

}  // namespace
}  // namespace worldgen
