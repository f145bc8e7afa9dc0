// The Blender contract (engine/blender.h), checked for every method in the engine's table on the
// default world's biome map with the method's default parameters: partition of unity, range,
// sparsity, continuity, chunk == point bit-for-bit, chunk-size, thread and cache independence, a
// chunk blended in pieces equal to the whole,
// single-biome chunks, sampling points, cave biomes kept off the surface (on a world with caves),
// golden outputs; and, at the ends of every parameter's range, the invariants at the world's
// corners (BlenderExtremesTest). A new method is covered by adding it to the table.
#include "engine/blender.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::FloatBits;
using testing::HashChunk;
using testing::TestCoordinate;

const BlendOptions kEverything{.heights = true, .dominant_biome = true};

// Methods that never go through the BiomeSampleCache (they sample no biome source).
const std::set<BlenderKind> kCacheFreeMethods = {BlenderKind::kParameterVoronoi};

// A blender the contract is checked for: every method at its defaults, and the method options that
// change how weights are computed.
struct Variant {
  std::string name;
  BlenderSpec blender;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

std::vector<Variant> AllVariants() {
  std::vector<Variant> variants;
  for (const BlenderMethod* method : BlenderMethods()) {
    variants.push_back({std::string(method->name), {method->kind, {}}});
  }
  variants.push_back({"lerped_grid_bspline", {BlenderKind::kLerpedGrid, {{"interpolation", 1}}}});
  variants.push_back({"scattered_square", {BlenderKind::kScattered, {{"lattice", 1}}}});
  variants.push_back({"scattered_unjittered", {BlenderKind::kScattered, {{"jitter", 0}}}});
  variants.push_back({"scattered_mesh", {BlenderKind::kScattered, {{"interpolation", 1}}}});
  variants.push_back({"scattered_mesh_smooth", {BlenderKind::kScattered, {{"interpolation", 2}}}});
  variants.push_back(
      {"jittered_cells_uniform", {BlenderKind::kJitteredCells, {{"uniform_biomes", 1}}}});
  return variants;
}

class BlenderContractTest : public ::testing::TestWithParam<Variant> {
 protected:
  // The default world with the variant's blender (per-biome radii kept).
  const World& ContractWorld() {
    static std::map<std::string, std::shared_ptr<const World>>* worlds =
        new std::map<std::string, std::shared_ptr<const World>>();
    auto& world = (*worlds)[GetParam().name];
    if (world == nullptr) {
      WorldSpec spec = DefaultWorldSpec();
      spec.blender = GetParam().blender;
      world = *World::Create(spec);
    }
    return *world;
  }
  BlenderKind kind() const { return GetParam().blender.kind; }
};

INSTANTIATE_TEST_SUITE_P(EveryMethod, BlenderContractTest, ::testing::ValuesIn(AllVariants()),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return info.param.name;
                         });

TEST_P(BlenderContractTest, WeightsFormAPartitionOfUnity) {
  int multi_biome_chunks = 0;
  double worst = 0.0;
  for (uint64_t k = 0; k < 300; ++k) {
    int64_t cx = TestCoordinate(k, 0, -4000, 4000), cz = TestCoordinate(k, 1, -4000, 4000);
    ChunkBlend chunk = *ContractWorld().BlendChunk(cx, cz, 16, {});
    if (chunk.layers.size() > 1) ++multi_biome_chunks;
    for (size_t col = 0; col < 256; ++col) {
      double sum = 0.0;
      for (const BiomeLayer& layer : chunk.layers) {
        ASSERT_GE(layer.weights[col], 0.0f);
        ASSERT_LE(layer.weights[col], 1.0f);
        sum += layer.weights[col];
      }
      worst = std::max(worst, std::fabs(sum - 1.0));
    }
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_GT(multi_biome_chunks, 20) << "too few borders sampled for the test to mean anything";
}

TEST_P(BlenderContractTest, LayersAreSparseAndSortedById) {
  for (uint64_t k = 0; k < 200; ++k) {
    ChunkBlend chunk = *ContractWorld().BlendChunk(TestCoordinate(k, 2, -900, 900),
                                                   TestCoordinate(k, 3, -900, 900), 16, {});
    ASSERT_FALSE(chunk.layers.empty());
    for (size_t i = 0; i < chunk.layers.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(chunk.layers[i - 1].biome_id, chunk.layers[i].biome_id);
      }
      const auto& w = chunk.layers[i].weights;
      EXPECT_EQ(w.size(), 256u);
      EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](float v) { return v > 0.0f; }));
    }
  }
}

TEST_P(BlenderContractTest, NeighbouringColumnsChangeSmoothly) {
  // With a 24-block kernel no weight can jump between adjacent columns; a hard (unblended) border
  // would jump by 1.
  double worst = 0.0;
  for (uint64_t k = 0; k < 150; ++k) {
    int64_t cx = TestCoordinate(k, 4, -3000, 3000), cz = TestCoordinate(k, 5, -3000, 3000);
    ChunkBlend chunk = *ContractWorld().BlendChunk(cx, cz, 32, {});
    for (const BiomeLayer& layer : chunk.layers) {
      for (int lz = 0; lz < 32; ++lz) {
        for (int lx = 0; lx < 32; ++lx) {
          float w = layer.weights[ColumnIndex(32, lx, lz)];
          if (lx + 1 < 32)
            worst =
                std::max(worst, double(std::fabs(w - layer.weights[ColumnIndex(32, lx + 1, lz)])));
          if (lz + 1 < 32)
            worst =
                std::max(worst, double(std::fabs(w - layer.weights[ColumnIndex(32, lx, lz + 1)])));
        }
      }
    }
  }
  EXPECT_LT(worst, 0.2);
  EXPECT_GT(worst, 0.0);
}

// Chunk results and point queries agree bit-for-bit, at random columns and on every chunk edge and
// corner, with negative coordinates, for weights, heights and dominant biome.
TEST_P(BlenderContractTest, ChunkPathEqualsPointQueryBitForBit) {
  const World& world = ContractWorld();
  auto check_column = [&](const ChunkBlend& chunk, int lx, int lz) {
    const int64_t x = chunk.chunk_x * chunk.size + lx, z = chunk.chunk_z * chunk.size + lz;
    const size_t col = static_cast<size_t>(ColumnIndex(chunk.size, lx, lz));
    PointBlend point =
        *world.BlendPoint(static_cast<double>(x), static_cast<double>(z), kEverything);
    std::vector<BiomeWeight> from_chunk;
    for (const BiomeLayer& layer : chunk.layers) {
      if (layer.weights[col] != 0.0f) from_chunk.push_back({layer.biome_id, layer.weights[col]});
    }
    ASSERT_EQ(from_chunk.size(), point.weights.size()) << "column " << x << "," << z;
    for (size_t i = 0; i < from_chunk.size(); ++i) {
      ASSERT_EQ(from_chunk[i].biome_id, point.weights[i].biome_id);
      ASSERT_EQ(FloatBits(from_chunk[i].weight), FloatBits(point.weights[i].weight))
          << "column " << x << "," << z << " biome " << from_chunk[i].biome_id;
    }
    ASSERT_EQ(FloatBits(chunk.heights[col]), FloatBits(point.height)) << x << "," << z;
    ASSERT_EQ(chunk.dominant_biome[col], point.dominant_biome) << x << "," << z;
  };
  int multi = 0;
  for (uint64_t k = 0; k < 3000; ++k) {
    int64_t x = TestCoordinate(k, 6, -50000, 50000), z = TestCoordinate(k, 7, -50000, 50000);
    int size = 16 << (k % 3);
    ChunkBlend chunk = *world.BlendChunk(FloorDiv(x, size), FloorDiv(z, size), size, kEverything);
    multi += chunk.layers.size() > 1;
    check_column(chunk, static_cast<int>(x - chunk.chunk_x * size),
                 static_cast<int>(z - chunk.chunk_z * size));
  }
  EXPECT_GT(multi, 100);
  // Every edge and corner column of some border chunks.
  int border_chunks = 0;
  for (uint64_t k = 0; border_chunks < 12 && k < 2000; ++k) {
    ChunkBlend chunk = *world.BlendChunk(TestCoordinate(k, 8, -2000, 2000),
                                         TestCoordinate(k, 9, -2000, 2000), 16, kEverything);
    if (chunk.layers.size() < 2) continue;
    ++border_chunks;
    for (int t = 0; t < 16; ++t) {
      check_column(chunk, t, 0);
      check_column(chunk, t, 15);
      check_column(chunk, 0, t);
      check_column(chunk, 15, t);
    }
  }
  EXPECT_EQ(border_chunks, 12);
}

// A grid of columns (a 3D chunk's cell columns: World::BlendVolume) is each column's point query,
// bit for bit: sparse grids, a grid too wide for one block (the default's fallback), one column,
// grids the block kernel takes in sub-blocks.
TEST_P(BlenderContractTest, ColumnGridEqualsPointQueryBitForBit) {
  const World& world = ContractWorld();
  const Blender& blender = world.blender();
  BiomeSampleCache cache(1 << 12);
  std::vector<std::vector<std::pair<int, float>>> grid;
  std::vector<std::pair<int, float>> point;
  int mixed = 0;
  for (uint64_t k = 0; k < 62; ++k) {
    // (The large grids share one origin, where most of them is mixed.)
    const uint64_t origin = std::min<uint64_t>(k, 60);
    const int64_t x0 = TestCoordinate(origin, 10, -3000, 3000);
    const int64_t z0 = TestCoordinate(origin, 11, -3000, 3000);
    const int step = std::array{1, 2, 4, 16, 100}[k % 5];
    int nx = 1 + static_cast<int>(k % 7), nz = 1 + static_cast<int>(k / 7 % 5);
    // Square grids of more than one 16-column sub-block: 48 columns 1 apart, 32 columns 2 apart.
    if (k == 60) nx = nz = 48;
    if (k == 61) nx = nz = 32;
    blender.BlendColumnGrid(x0, z0, nx, nz, step, k % 2 == 0 ? &cache : nullptr, &grid);
    ASSERT_EQ(grid.size(), static_cast<size_t>(nx) * static_cast<size_t>(nz));
    for (int d = 0; d < nz; ++d) {
      for (int a = 0; a < nx; ++a) {
        const double x = static_cast<double>(x0 + int64_t{step} * a);
        const double z = static_cast<double>(z0 + int64_t{step} * d);
        blender.BlendPoint(x, z, nullptr, &point);
        const std::vector<std::pair<int, float>>& column = grid[static_cast<size_t>(d) * nx + a];
        mixed += point.size() > 1;
        ASSERT_EQ(column.size(), point.size()) << "column " << x << "," << z << " step " << step;
        for (size_t i = 0; i < point.size(); ++i) {
          ASSERT_EQ(column[i].first, point[i].first) << x << "," << z;
          ASSERT_EQ(FloatBits(column[i].second), FloatBits(point[i].second)) << x << "," << z;
        }
      }
    }
  }
  EXPECT_GT(mixed, 10);
}

// The same columns blended as chunks of 4, 8, 16, 32 and 64 give identical bits.
TEST_P(BlenderContractTest, ChunkSizeDoesNotChangeResults) {
  const World& world = ContractWorld();
  for (auto [ox, oz] : {std::pair{-64, -64}, std::pair{1280, -2560}, std::pair{-7168, 4096}}) {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<uint32_t, uint32_t>>> reference;
    for (int size : {64, 32, 16, 8, 4}) {
      std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<uint32_t, uint32_t>>> columns;
      for (int cz = 0; cz < 64 / size; ++cz) {
        for (int cx = 0; cx < 64 / size; ++cx) {
          ChunkBlend chunk = *world.BlendChunk(ox / size + cx, oz / size + cz, size, kEverything);
          for (int lz = 0; lz < size; ++lz) {
            for (int lx = 0; lx < size; ++lx) {
              auto& entry = columns[{chunk.chunk_x * size + lx, chunk.chunk_z * size + lz}];
              size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
              for (const BiomeLayer& layer : chunk.layers) {
                if (layer.weights[col] != 0.0f)
                  entry.push_back({layer.biome_id, FloatBits(layer.weights[col])});
              }
              entry.push_back({0xffffffffu, FloatBits(chunk.heights[col])});
            }
          }
        }
      }
      if (reference.empty()) {
        reference = std::move(columns);
      } else {
        EXPECT_TRUE(columns == reference) << "chunk size " << size << " at " << ox << "," << oz;
      }
    }
  }
}

// A big chunk, which World::BlendChunk blends in pieces, is its columns blended as chunks of 16,
// bit for bit: a border region, one far out, a chunk of 6 x 6 pieces, and a single-biome chunk
// (but with uniform_biomes, whose cells each draw a biome of their own, so that no 128 x 128 block
// is one biome).
TEST_P(BlenderContractTest, ChunkInPiecesIsTheWholeChunkBitForBit) {
  const World& world = ContractWorld();
  testing::ExpectPiecesEqualTheWholeChunk(world, -1, 0, 128);
  testing::ExpectPiecesEqualTheWholeChunk(world, 37, -191, 128);
  testing::ExpectPiecesEqualTheWholeChunk(world, 5, 2, 192);
  if (GetParam().name == "jittered_cells_uniform") return;
  for (uint64_t k = 0; k < 400; ++k) {
    const int64_t cx = TestCoordinate(k, 14, -600, 600), cz = TestCoordinate(k, 15, -600, 600);
    if (!world.BlendChunk(cx, cz, 128, {})->single_biome) continue;
    testing::ExpectPiecesEqualTheWholeChunk(world, cx, cz, 128);
    return;
  }
  ADD_FAILURE() << "no single-biome chunk of 128 found";
}

std::vector<std::pair<int64_t, int64_t>> ChunkList(int n) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int k = 0; k < n; ++k) {
    chunks.push_back({TestCoordinate(k, 10, -300, 300), TestCoordinate(k, 11, -300, 300)});
  }
  return chunks;
}

TEST_P(BlenderContractTest, ThreadsOrderAndCacheDoNotChangeResults) {
  const World& world = ContractWorld();
  const auto chunks = ChunkList(160);
  std::vector<uint64_t> reference;
  for (auto [cx, cz] : chunks)
    reference.push_back(HashChunk(*world.BlendChunk(cx, cz, 16, kEverything)));

  // Four threads, each walking the list in a different order, sharing one small (evicting) cache:
  // 50 tiles of 16x16 vertices, fewer than every method's chunks need.
  BiomeSampleCache cache(50 * BiomeSampleCache::kBytesPerEntry, 4);
  std::vector<std::vector<uint64_t>> results(4, std::vector<uint64_t>(chunks.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t n = 0; n < chunks.size(); ++n) {
        // Multipliers coprime with the list length, so every order is a permutation.
        size_t k = t % 2 == 0 ? (n * (t == 0 ? 1 : 7)) % chunks.size() : chunks.size() - 1 - n;
        results[t][k] = HashChunk(
            *world.BlendChunk(chunks[k].first, chunks[k].second, 16, kEverything, &cache));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(results[t], reference) << "thread " << t;
  if (kCacheFreeMethods.contains(kind())) {
    // Samples no biome source (its noise is per column): the cache must stay untouched.
    EXPECT_EQ(cache.stats().hits + cache.stats().misses, 0u);
  } else {
    // Whether the threads overlapped in time (and so found each other's tiles) is the machine's
    // affair: on a loaded one they may run one after another and never hit. A chunk blended twice
    // in a row finds its own tiles, bit for bit the same.
    const auto [cx, cz] = chunks.front();
    const uint64_t hits = cache.stats().hits;
    for (int again = 0; again < 2; ++again) {
      EXPECT_EQ(HashChunk(*world.BlendChunk(cx, cz, 16, kEverything, &cache)), reference.front());
    }
    EXPECT_GT(cache.stats().hits, hits);
    EXPECT_GT(cache.stats().evictions, 0u);
  }
}

// Points far apart leave the cache's tiles holding only what they read (the scattered blender
// fills a tile as gathers read it, BiomeSampleCache::Visit); the chunks holding them, read
// afterwards through those partial tiles, and the points again, are the same bits as without a
// cache.
TEST_P(BlenderContractTest, PointsThenChunksThroughOneCacheAreTheUncachedBits) {
  const World& world = ContractWorld();
  // 320 blocks apart: no cache tile (16 lattice intervals, 128 blocks at the default's 8) is
  // read by two of them.
  std::vector<std::pair<double, double>> points;
  for (int64_t k = 0; k < 24; ++k) {
    points.emplace_back(static_cast<double>(320 * (k % 6) - 960 + k) + 0.375,
                        static_cast<double>(320 * (k / 6) - 640 - 2 * k) - 0.625);
  }
  const BlendOptions options{.heights = true};
  std::vector<uint64_t> reference;
  for (auto [x, z] : points) reference.push_back(HashPoint(*world.BlendPoint(x, z, options)));
  BiomeSampleCache cache(1 << 24);
  for (int round = 0; round < 2; ++round) {  // Partial tiles, then (after the chunks) whole ones.
    for (size_t k = 0; k < points.size(); ++k) {
      EXPECT_EQ(HashPoint(*world.BlendPoint(points[k].first, points[k].second, options, &cache)),
                reference[k])
          << "round " << round << " point (" << points[k].first << ", " << points[k].second << ")";
    }
    if (round == 1) break;
    for (auto [x, z] : points) {
      const int64_t cx = static_cast<int64_t>(std::floor(x / 16));
      const int64_t cz = static_cast<int64_t>(std::floor(z / 16));
      EXPECT_EQ(HashChunk(*world.BlendChunk(cx, cz, 16, kEverything, &cache)),
                HashChunk(*world.BlendChunk(cx, cz, 16, kEverything)))
          << "chunk (" << cx << ", " << cz << ")";
    }
  }
}

TEST_P(BlenderContractTest, SingleBiomeChunksAreExactlyOne) {
  const World& world = ContractWorld();
  int found = 0;
  for (uint64_t k = 0; k < 400 && found < 20; ++k) {
    ChunkBlend chunk = *world.BlendChunk(TestCoordinate(k, 12, -5000, 5000),
                                         TestCoordinate(k, 13, -5000, 5000), 16, kEverything);
    if (!chunk.single_biome) continue;
    ++found;
    ASSERT_EQ(chunk.layers.size(), 1u);
    for (float w : chunk.layers[0].weights) ASSERT_EQ(w, 1.0f);
    PointBlend p = *world.BlendPoint(static_cast<double>(chunk.chunk_x * 16 + 5),
                                     static_cast<double>(chunk.chunk_z * 16 + 11), {});
    ASSERT_EQ(p.weights.size(), 1u);
    EXPECT_EQ(p.weights[0].weight, 1.0f);
    EXPECT_EQ(p.weights[0].biome_id, chunk.layers[0].biome_id);
  }
  EXPECT_EQ(found, 20);
}

// Sampling points (Blender::SamplingPoints): inside their box, within the bound, the same with and
// without a cache, tiling (the points of a box are those of its quarters, each once), and each
// point's biome is one the method blends from there. Methods without points return none anywhere.
TEST_P(BlenderContractTest, SamplingPointsTileTheirBoxAndCarryTheBiomeBlendedThere) {
  const Blender& blender = ContractWorld().blender();
  using Key = std::tuple<double, double, int>;
  const auto points_of = [&](const BlockBox& box, BiomeSampleCache* cache) {
    std::vector<SamplingPoint> points;
    blender.SamplingPoints(box, cache, &points);
    EXPECT_LE(static_cast<double>(points.size()), blender.SamplingPointBound(box));
    std::vector<Key> keys;
    for (const SamplingPoint& p : points) {
      EXPECT_TRUE(box.Contains(p.x, p.z)) << p.x << ", " << p.z;
      keys.emplace_back(p.x, p.z, p.biome);
    }
    return keys;
  };
  BiomeSampleCache cache(256 * BiomeSampleCache::kBytesPerEntry, 4);
  size_t total = 0;
  for (uint64_t k = 0; k < 6; ++k) {
    const double x0 = static_cast<double>(TestCoordinate(k, 20, -3000, 3000)) + 0.5;
    const double z0 = static_cast<double>(TestCoordinate(k, 21, -3000, 3000));
    const BlockBox box{x0, z0, x0 + 160, z0 + 128};
    const std::vector<Key> whole = points_of(box, nullptr);
    EXPECT_EQ(points_of(box, &cache), whole);
    std::vector<Key> quarters;
    for (const BlockBox& q :
         {BlockBox{x0, z0, x0 + 60, z0 + 50}, BlockBox{x0 + 60, z0, x0 + 160, z0 + 50},
          BlockBox{x0, z0 + 50, x0 + 60, z0 + 128},
          BlockBox{x0 + 60, z0 + 50, x0 + 160, z0 + 128}}) {
      const std::vector<Key> part = points_of(q, &cache);
      quarters.insert(quarters.end(), part.begin(), part.end());
    }
    std::vector<Key> sorted = whole;
    std::sort(sorted.begin(), sorted.end());
    std::sort(quarters.begin(), quarters.end());
    EXPECT_EQ(quarters, sorted);
    total += whole.size();
    // A kernel method's sample reaches its own position with the largest weight it has, so its
    // biome weighs there. (Jittered cells look columns up after a warp: checked at the warped
    // position in jittered_cells_blender_test.cc.)
    if (kind() == BlenderKind::kJitteredCells) continue;
    std::vector<std::pair<int, float>> weights;
    const size_t stride = whole.size() / 200 + 1;  // Full resolution has a point per column.
    for (size_t n = 0; n < whole.size(); n += stride) {
      const auto& [x, z, biome] = whole[n];
      blender.BlendPoint(x, z, &cache, &weights);
      const auto found = std::find_if(weights.begin(), weights.end(),
                                      [b = biome](const auto& w) { return w.first == b; });
      ASSERT_NE(found, weights.end()) << "biome " << biome << " at (" << x << ", " << z << ")";
    }
  }
  if (kind() == BlenderKind::kParameterVoronoi) {
    EXPECT_EQ(total, 0u);  // Blends climates read at every column: no world-space points.
  } else {
    EXPECT_GT(total, 0u);
  }
}

// In a world with caves, cave biomes belong to the 3D map only: no method puts one on the surface,
// in a chunk, a point or a sampling point (the 3D blend shares the surface's kernel weight out over
// the 2D weights, and counts a cave biome's own samples apart). A method that cannot honour it
// refuses such a world.
TEST_P(BlenderContractTest, CaveBiomesNeverReachTheSurface) {
  WorldSpec spec = testing::CaveWorldSpec();
  spec.blender = GetParam().blender;
  std::set<int> cave;  // Dense indices (the world sorts its biomes by id).
  std::set<uint32_t> cave_ids;
  for (const BiomeSpec& b : spec.biomes) {
    if (b.cave) cave_ids.insert(b.id);
  }
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
  if (!world.ok()) {
    EXPECT_EQ(kind(), BlenderKind::kParameterVoronoi) << world.status();
    return;
  }
  for (size_t k = 0; k < (*world)->spec().biomes.size(); ++k) {
    if ((*world)->spec().biomes[k].cave) cave.insert(static_cast<int>(k));
  }
  ASSERT_EQ(cave.size(), 2u);
  int layers = 0;
  for (uint64_t k = 0; k < 60; ++k) {
    const int64_t cx = TestCoordinate(k, 30, -3000, 3000), cz = TestCoordinate(k, 31, -3000, 3000);
    const ChunkBlend chunk = *(*world)->BlendChunk(cx, cz, 16, kEverything);
    for (const BiomeLayer& layer : chunk.layers) {
      ++layers;
      ASSERT_FALSE(cave_ids.contains(layer.biome_id)) << "chunk " << cx << ", " << cz;
    }
    const PointBlend point = *(*world)->BlendPoint(static_cast<double>(cx * 16 + 5),
                                                   static_cast<double>(cz * 16 + 9), kEverything);
    for (const BiomeWeight& w : point.weights) ASSERT_FALSE(cave_ids.contains(w.biome_id));
    std::vector<SamplingPoint> points;
    const double x0 = static_cast<double>(cx * 16), z0 = static_cast<double>(cz * 16);
    (*world)->blender().SamplingPoints({x0, z0, x0 + 64, z0 + 64}, nullptr, &points);
    for (const SamplingPoint& p : points) ASSERT_FALSE(cave.contains(p.biome));
  }
  EXPECT_GT(layers, 60);
}

// Golden hashes of reference regions, per method: any change to a method's output must be
// deliberate (update these values in the same commit, and say why). Every region crosses a border
// for every method (checked), so each hash pins blending, not just one biome's id.
TEST_P(BlenderContractTest, GoldenRegions) {
  const World& world = ContractWorld();
  struct Region {
    int64_t cx, cz;
    int size, count;
  };
  const Region regions[] = {
      {0, 0, 16, 4}, {-46, 100, 16, 4}, {900, -1500, 32, 3}, {-20000, -20000, 64, 2}};
  const std::map<std::string, std::array<uint64_t, 4>> golden = {
      {"scattered",
       {0xa17435d9c60a9903ULL, 0xa6324b392660e4c1ULL, 0x2223b87e60fdc002ULL,
        0x857bbe05aad1a9f1ULL}},
      {"full_resolution",
       {0x49027e2f6badb959ULL, 0xd61ecd897d13c6deULL, 0x282edeb05968e12dULL,
        0x7b27d2dc5ae7a961ULL}},
      {"convoluted_grid",
       {0xad05ac7ea753e5a0ULL, 0xf72ac2a5f6a024e4ULL, 0xf77ff163874af9cdULL,
        0x725c85ee0c414bd9ULL}},
      {"lerped_grid",
       {0xc44453284919b7f6ULL, 0x40546a278875a3f4ULL, 0x6ac877c3b6d92cb8ULL,
        0x10e99a953b120053ULL}},
      {"parameter_voronoi",
       {0x650e128ee1b63b8dULL, 0x535b992b17e3714eULL, 0x8b9002f4edc6fee7ULL,
        0xd024c1330c601c11ULL}},
      {"jittered_cells",
       {0xe9d8959651db1368ULL, 0xeb28d489b8ff31d9ULL, 0x539adee36974bf08ULL,
        0x3c057d6c05cd77e0ULL}},
      {"scattered_square",
       {0x2be6bcf605b7007bULL, 0x4b44c4f79c7d6713ULL, 0xfbf2a206735f4c02ULL,
        0x9cc33fc85cd7d794ULL}},
      {"scattered_unjittered",
       {0x3560a9cf489928d0ULL, 0x21eea0e6c7e39356ULL, 0x36a010c3ff2a7ab1ULL,
        0x66a10235dad8a1d7ULL}},
      {"scattered_mesh",
       {0xb94a5e437ad5d847ULL, 0x961520da92c79857ULL, 0xf487bbaa63dcf15fULL,
        0x1b752894d80474c2ULL}},
      {"scattered_mesh_smooth",
       {0x67e43d84943ff022ULL, 0xbb84d29d8304e85eULL, 0xda1a7212641759a2ULL,
        0x803a7ce056542aa0ULL}},
      {"jittered_cells_uniform",
       {0xf97be2b9031d5a2cULL, 0xd594df03a779e744ULL, 0x9823000d3e753d4cULL,
        0xba2a06358618b181ULL}},
      {"lerped_grid_bspline",
       {0x285da271813caff4ULL, 0x56740fdb7cfeae5aULL, 0x1f6ceadb10411e32ULL,
        0x979113c54b074200ULL}},
  };
  ASSERT_TRUE(golden.contains(GetParam().name)) << "pin this variant's golden hashes";
  for (size_t k = 0; k < std::size(regions); ++k) {
    const Region& r = regions[k];
    const uint64_t expected = golden.at(GetParam().name)[k];
    uint64_t h = 0xcbf29ce484222325ULL;
    bool border = false;
    for (int dz = 0; dz < r.count; ++dz) {
      for (int dx = 0; dx < r.count; ++dx) {
        const ChunkBlend chunk = *world.BlendChunk(r.cx + dx, r.cz + dz, r.size, kEverything);
        border = border || !chunk.single_biome;
        h = HashChunk(chunk, h);
      }
    }
    // A region inside one biome hashes the same for every method and pins nothing.
    EXPECT_TRUE(border) << "region " << r.cx << "," << r.cz << " holds no border";
    EXPECT_EQ(h, expected) << "region " << r.cx << "," << r.cz << " hash 0x" << std::hex << h;
  }
}

// Every method at the ends of its parameters' ranges (each alone, each pair, all together: the
// combinations validation accepts), with the per-biome radii off so the method's own radius counts,
// blends chunks at the origin and at both corners of the world: weights in [0, 1] summing to 1,
// finite heights, chunk == point bit for bit. The contract suite above runs the defaults and the
// fuzzer the lower parts of the ranges; this reaches the rest.
class BlenderExtremesTest : public ::testing::TestWithParam<const BlenderMethod*> {};

INSTANTIATE_TEST_SUITE_P(EveryMethod, BlenderExtremesTest, ::testing::ValuesIn(BlenderMethods()),
                         [](const ::testing::TestParamInfo<const BlenderMethod*>& info) {
                           return std::string(info.param->name);
                         });

TEST_P(BlenderExtremesTest, ParameterExtremesKeepTheContractAtTheWorldsCorners) {
  const BlenderMethod& method = *GetParam();
  std::vector<std::map<std::string, double>> sets;
  std::map<std::string, double> all_min, all_max;
  for (const BlenderParamDef& a : method.params) {
    const std::string name(a.name);
    sets.push_back({{name, a.min}});
    sets.push_back({{name, a.max}});
    all_min[name] = a.min;
    all_max[name] = a.max;
    for (const BlenderParamDef& b : method.params) {
      if (b.name <= a.name) continue;
      for (double va : {a.min, a.max}) {
        for (double vb : {b.min, b.max}) sets.push_back({{name, va}, {std::string(b.name), vb}});
      }
    }
  }
  sets.push_back(all_min);
  sets.push_back(all_max);
  constexpr int kSize = 16;
  const int64_t edge = static_cast<int64_t>(kMaxWorldCoordinate) / kSize;
  std::set<std::string> maxima_blended;
  for (const std::map<std::string, double>& params : sets) {
    WorldSpec spec = DefaultWorldSpec();
    spec.blender = {method.kind, {params.begin(), params.end()}};
    for (BiomeSpec& biome : spec.biomes) biome.blend_radius = 0.0;
    if (!ValidateWorldSpec(spec).ok()) continue;
    std::string label;
    for (const auto& [name, value] : params) {
      absl::StrAppend(&label, " ", name, "=", value);
      for (const BlenderParamDef& p : method.params) {
        if (p.name == name && value == p.max) maxima_blended.insert(name);
      }
    }
    SCOPED_TRACE(label);
    absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
    ASSERT_TRUE(world.ok()) << world.status();
    for (const auto& [cx, cz] :
         {std::pair<int64_t, int64_t>{0, 0}, {edge - 1, -edge}, {-edge, edge - 1}}) {
      const std::string at = absl::StrCat("chunk ", cx, ",", cz);
      absl::StatusOr<ChunkBlend> chunk = (*world)->BlendChunk(cx, cz, kSize, kEverything);
      ASSERT_TRUE(chunk.ok()) << chunk.status();
      for (size_t col = 0; col < kSize * kSize; ++col) {
        double sum = 0.0;
        for (const BiomeLayer& layer : chunk->layers) {
          ASSERT_GE(layer.weights[col], 0.0f) << at;
          ASSERT_LE(layer.weights[col], 1.0f) << at;
          sum += layer.weights[col];
        }
        ASSERT_NEAR(sum, 1.0, 1e-6) << at << " column " << col;
        ASSERT_TRUE(std::isfinite(chunk->heights[col])) << at << " column " << col;
      }
      for (const auto& [lx, lz] : {std::pair{0, 0}, std::pair{kSize - 1, 7}}) {
        const size_t col = static_cast<size_t>(ColumnIndex(kSize, lx, lz));
        absl::StatusOr<PointBlend> point =
            (*world)->BlendPoint(static_cast<double>(cx * kSize + lx),
                                 static_cast<double>(cz * kSize + lz), kEverything);
        ASSERT_TRUE(point.ok()) << point.status();
        ASSERT_EQ(FloatBits(point->height), FloatBits(chunk->heights[col])) << at;
        for (const BiomeLayer& layer : chunk->layers) {
          float w = 0.0f;
          for (const BiomeWeight& bw : point->weights)
            w = bw.biome_id == layer.biome_id ? bw.weight : w;
          ASSERT_EQ(FloatBits(w), FloatBits(layer.weights[col])) << at;
        }
      }
    }
  }
  // Each parameter's largest value was blended in at least one accepted combination.
  for (const BlenderParamDef& p : method.params) {
    EXPECT_TRUE(maxima_blended.contains(std::string(p.name))) << p.name << " = " << p.max;
  }
}

}  // namespace
}  // namespace worldgen
