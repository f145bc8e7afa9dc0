#include "engine/world.h"

#include <link.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::DefaultWorld;
using testing::FloatBits;
using ::testing::HasSubstr;
using testing::TestCoordinate;

// The engine's thread_local buffers take static TLS in every thread of the program that links it,
// which glibc carves out of each thread's stack: the server's metrics threads (civetweb) run on
// stacks of about 100 KiB, and an 80 KiB thread_local table once made them overflow. Large
// per-thread state belongs on the heap behind a thread_local pointer. This binary links the whole
// engine, so its TLS block is at least the engine's.
TEST(WorldTest, StaticThreadLocalStorageStaysSmall) {
  size_t tls_bytes = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;  // Not the program.
        for (int h = 0; h < info->dlpi_phnum; ++h) {
          if (info->dlpi_phdr[h].p_type == PT_TLS) {
            *static_cast<size_t*>(out) = info->dlpi_phdr[h].p_memsz;
          }
        }
        return 1;
      },
      &tls_bytes);
  EXPECT_GT(tls_bytes, 0u);  // The engine has thread_local buffers: the block was found.
  EXPECT_LT(tls_bytes, size_t{16} << 10);
}

TEST(WorldTest, CreateRejectsAnInvalidSpec) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender.params["blend_radius"] = -1;
  auto world = World::Create(spec);
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(world.status().message()), HasSubstr("blend_radius"));
}

TEST(WorldTest, CreateSortsBiomesById) {
  WorldSpec spec = DefaultWorldSpec();
  std::reverse(spec.biomes.begin(), spec.biomes.end());
  auto world = *World::Create(spec);
  for (size_t k = 1; k < world->spec().biomes.size(); ++k) {
    EXPECT_LT(world->spec().biomes[k - 1].id, world->spec().biomes[k].id);
  }
  // Order of the table does not change output.
  EXPECT_EQ(testing::HashChunk(*world->BlendChunk(3, 4, 16, {})),
            testing::HashChunk(*DefaultWorld().BlendChunk(3, 4, 16, {})));
}

TEST(WorldTest, BadChunksAreRejectedNotClamped) {
  const World& world = DefaultWorld();
  const int64_t big = std::numeric_limits<int64_t>::max();
  struct Case {
    int64_t cx, cz;
    int size;
    const char* message;
  } cases[] = {
      {0, 0, 0, "chunk size 0"},
      {0, 0, -16, "chunk size -16"},
      {0, 0, kMaxChunkSize + 1, "chunk size"},
      {big, 0, 16, "chunk x"},
      {0, -big, 16, "chunk z"},
      {std::numeric_limits<int64_t>::min(), 0, 16, "chunk x"},
      {int64_t{1} << 21, 0, 16, "outside the world bounds"},
      {0, -(int64_t{1} << 21) - 1, 16, "chunk z"},
  };
  for (const Case& c : cases) {
    auto chunk = world.BlendChunk(c.cx, c.cz, c.size, {});
    ASSERT_FALSE(chunk.ok()) << c.cx << "," << c.cz << " size " << c.size;
    EXPECT_EQ(chunk.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(chunk.status().message()), HasSubstr(c.message));
  }
  // The last chunks inside the bounds are fine.
  EXPECT_TRUE(world.BlendChunk((int64_t{1} << 21) - 1, -(int64_t{1} << 21), 16, {}).ok());
}

TEST(WorldTest, BadPointsAreRejected) {
  const World& world = DefaultWorld();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [x, z] : {std::pair{nan, 0.0}, std::pair{0.0, inf}, std::pair{-inf, 1.0},
                      std::pair{1e300, 0.0}, std::pair{0.0, -kMaxWorldCoordinate - 1}}) {
    auto point = world.BlendPoint(x, z, {});
    ASSERT_FALSE(point.ok()) << x << "," << z;
    EXPECT_EQ(point.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(world.BlendPoint(kMaxWorldCoordinate, -kMaxWorldCoordinate, {}).ok());
}

TEST(WorldTest, WorksAtTheEdgeOfTheWorld) {
  const World& world = DefaultWorld();
  const int64_t last = (int64_t{1} << 21) - 1;  // 2^25 / 16 - 1
  ChunkBlend chunk = *world.BlendChunk(last, -last - 1, 16, {.heights = true});
  for (size_t col = 0; col < 256; ++col) {
    double sum = 0;
    for (const auto& layer : chunk.layers) sum += layer.weights[col];
    EXPECT_NEAR(sum, 1.0, 1e-6);
    EXPECT_TRUE(std::isfinite(chunk.heights[col]));
  }
}

TEST(WorldTest, HeightsStayWithinTheBiomesRanges) {
  const World& world = DefaultWorld();
  double lo = 1e9, hi = -1e9;
  for (const BiomeSpec& b : world.spec().biomes) {
    lo = std::min(lo, b.height_base - b.height_amplitude);
    hi = std::max(hi, b.height_base + b.height_amplitude);
  }
  for (uint64_t k = 0; k < 100; ++k) {
    ChunkBlend chunk = *world.BlendChunk(TestCoordinate(k, 20, -800, 800),
                                         TestCoordinate(k, 21, -800, 800), 16, {.heights = true});
    for (float h : chunk.heights) {
      ASSERT_GE(h, lo - 1e-3);
      ASSERT_LE(h, hi + 1e-3);
    }
  }
}

TEST(WorldTest, SingleBiomeHeightIsThatBiomesHeight) {
  const World& world = DefaultWorld();
  HeightField field(world.spec());
  for (uint64_t k = 0; k < 300; ++k) {
    ChunkBlend chunk = *world.BlendChunk(TestCoordinate(k, 22, -800, 800),
                                         TestCoordinate(k, 23, -800, 800), 16, {.heights = true});
    if (!chunk.single_biome) continue;
    int index = 0;
    while (world.spec().biomes[index].id != chunk.layers[0].biome_id) ++index;
    double expected = field.BiomeHeight(index, chunk.chunk_x * 16.0 + 3, chunk.chunk_z * 16.0 + 7);
    EXPECT_EQ(FloatBits(chunk.heights[ColumnIndex(16, 3, 7)]),
              FloatBits(static_cast<float>(expected)));
    return;
  }
  FAIL() << "no single-biome chunk found";
}

// HeightField's batch equals its point function bit for bit, for every biome of the default world
// and at the highest allowed frequency, over rows of columns and scattered points.
TEST(WorldTest, BatchedBiomeHeightsEqualBiomeHeight) {
  WorldSpec fast = DefaultWorldSpec();
  for (BiomeSpec& b : fast.biomes) b.height_frequency = 1.0;
  for (const WorldSpec& spec : {DefaultWorldSpec(), fast}) {
    HeightField field(spec);
    std::vector<double> xs, zs;
    for (int k = 0; k < 300; ++k) {
      xs.push_back(k < 150 ? -1000.0 + k
                           : 0.37 * static_cast<double>(TestCoordinate(k, 24, -1 << 25, 1 << 25)));
      zs.push_back(k < 150 ? 77.0 + k / 16
                           : 0.61 * static_cast<double>(TestCoordinate(k, 25, -1 << 25, 1 << 25)));
    }
    std::vector<double> out(xs.size());
    for (int biome = 0; biome < static_cast<int>(spec.biomes.size()); ++biome) {
      field.BiomeHeights(biome, xs.data(), zs.data(), xs.size(), out.data());
      for (size_t k = 0; k < xs.size(); ++k) {
        const double expected = field.BiomeHeight(biome, xs[k], zs[k]);
        ASSERT_EQ(std::memcmp(&out[k], &expected, sizeof expected), 0)
            << "biome " << biome << " at " << xs[k] << "," << zs[k];
      }
    }
  }
}

// Every column of a chunk's heights is the per-column sum, bit for bit: h = 0.0, then
// h += w * BiomeHeight for each layer with w != 0 in ascending id order, rounded to float once.
TEST(WorldTest, ChunkHeightsAreThePerColumnSum) {
  WorldSpec fast = DefaultWorldSpec();
  for (BiomeSpec& b : fast.biomes) b.height_frequency = 0.9;
  for (const WorldSpec& spec : {DefaultWorldSpec(), fast}) {
    auto world = *World::Create(spec);
    HeightField field(world->spec());
    int multi = 0;
    for (uint64_t k = 0; k < 60; ++k) {
      const int size = 4 << (k % 4);  // 4, 8, 16, 32.
      ChunkBlend chunk =
          *world->BlendChunk(TestCoordinate(k, 26, -3000, 3000), TestCoordinate(k, 27, -3000, 3000),
                             size, {.heights = true});
      multi += chunk.layers.size() > 1;
      std::vector<int> index;
      for (const BiomeLayer& layer : chunk.layers) {
        int b = 0;
        while (world->spec().biomes[b].id != layer.biome_id) ++b;
        index.push_back(b);
      }
      for (int lz = 0; lz < size; ++lz) {
        for (int lx = 0; lx < size; ++lx) {
          const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
          const double x = static_cast<double>(chunk.chunk_x * size + lx);
          const double z = static_cast<double>(chunk.chunk_z * size + lz);
          double h = 0.0;
          for (size_t l = 0; l < chunk.layers.size(); ++l) {
            const float w = chunk.layers[l].weights[col];
            if (w != 0.0f) h += static_cast<double>(w) * field.BiomeHeight(index[l], x, z);
          }
          ASSERT_EQ(FloatBits(chunk.heights[col]), FloatBits(static_cast<float>(h)))
              << "chunk " << chunk.chunk_x << "," << chunk.chunk_z << " size " << size << " column "
              << lx << "," << lz;
        }
      }
    }
    EXPECT_GT(multi, 10);
  }
}

TEST(WorldTest, DominantBiomeFollowsTheSourceMap) {
  // Blending moves borders a little (seed 001's "noisy borders") but the blended map must still be
  // the source's map almost everywhere.
  const World& world = DefaultWorld();
  int agree = 0, total = 0;
  for (uint64_t k = 0; k < 60; ++k) {
    ChunkBlend chunk =
        *world.BlendChunk(TestCoordinate(k, 24, -600, 600), TestCoordinate(k, 25, -600, 600), 16,
                          {.dominant_biome = true});
    for (int lz = 0; lz < 16; lz += 3) {
      for (int lx = 0; lx < 16; lx += 3) {
        ++total;
        agree += chunk.dominant_biome[ColumnIndex(16, lx, lz)] ==
                 world.SourceBiomeAt(chunk.chunk_x * 16.0 + lx, chunk.chunk_z * 16.0 + lz);
      }
    }
  }
  EXPECT_GT(agree, total * 9 / 10);
}

TEST(WorldTest, PerBiomeRadiusKeepsPartitionOfUnityAndDeterminism) {
  WorldSpec spec = DefaultWorldSpec();
  spec.name = "wide";
  for (BiomeSpec& b : spec.biomes) b.blend_radius = 12.0 + 4.0 * (b.id % 5);
  auto world = *World::Create(spec);
  for (uint64_t k = 0; k < 200; ++k) {
    int64_t x = TestCoordinate(k, 26, -9000, 9000), z = TestCoordinate(k, 27, -9000, 9000);
    ChunkBlend chunk = *world->BlendChunk(FloorDiv(x, 16), FloorDiv(z, 16), 16, {});
    size_t col = static_cast<size_t>(ColumnIndex(16, static_cast<int>(x - chunk.chunk_x * 16),
                                                 static_cast<int>(z - chunk.chunk_z * 16)));
    PointBlend p = *world->BlendPoint(static_cast<double>(x), static_cast<double>(z), {});
    double sum = 0;
    size_t nonzero = 0;
    for (const auto& layer : chunk.layers) {
      sum += layer.weights[col];
      if (layer.weights[col] != 0.0f) {
        ASSERT_LT(nonzero, p.weights.size());
        EXPECT_EQ(FloatBits(layer.weights[col]), FloatBits(p.weights[nonzero].weight));
        ++nonzero;
      }
    }
    EXPECT_EQ(nonzero, p.weights.size());
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

// The raw map view: each column's source biome is the biome source's own answer there, the same
// from a chunk of any size and from a point query.
// Blended in pieces, a big chunk keeps its heights in every height mode: coastlines (whose
// distances come from a search around each block), seed 004's interpolation between chunk
// corners, and a cave world's surface. The blenders' own equality is the contract suite's
// (ChunkInPiecesIsTheWholeChunkBitForBit). Sizes that are no larger multiple of a piece are
// blended whole, the hook never called.
TEST(WorldTest, ChunkInPiecesKeepsEveryHeightMode) {
  WorldSpec interpolated = DefaultWorldSpec();
  interpolated.heights.mode = HeightMode::kChunkInterpolated;
  for (const WorldSpec& spec :
       {testing::CoastalWorldSpec(), interpolated, testing::CaveWorldSpec()}) {
    SCOPED_TRACE(spec.name);
    const std::shared_ptr<const World> world = *World::Create(spec);
    testing::ExpectPiecesEqualTheWholeChunk(*world, 2, -3, 128);
    testing::ExpectPiecesEqualTheWholeChunk(*world, -40, 17, 128);
  }
  int calls = 0;
  for (int size : {16, 32, 48, 100}) {
    ASSERT_TRUE(DefaultWorld().BlendChunkInPieces(1, 1, size, {}, nullptr, [&] { ++calls; }).ok());
  }
  EXPECT_EQ(calls, 0);
  // Errors before any piece.
  EXPECT_FALSE(DefaultWorld()
                   .BlendChunkInPieces(int64_t{1} << 40, 0, 128, {}, nullptr, [&] { ++calls; })
                   .ok());
  EXPECT_EQ(calls, 0);
}

TEST(WorldTest, SourceBiomeIsTheUnblendedMapAtEachColumn) {
  const World& world = DefaultWorld();
  const BlendOptions raw{.source_biome = true};
  int borders = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    const int64_t cx = testing::TestCoordinate(k, 40, -3000, 3000);
    const int64_t cz = testing::TestCoordinate(k, 41, -3000, 3000);
    ChunkBlend chunk = *world.BlendChunk(cx, cz, 16, raw);
    ASSERT_EQ(chunk.source_biome.size(), 256u);
    std::set<uint32_t> seen(chunk.source_biome.begin(), chunk.source_biome.end());
    borders += seen.size() > 1;
    for (int lz = 0; lz < 16; lz += 5) {
      for (int lx = 0; lx < 16; lx += 3) {
        const double x = static_cast<double>(cx * 16 + lx), z = static_cast<double>(cz * 16 + lz);
        const uint32_t expected = world.SourceBiomeAt(x, z);
        EXPECT_EQ(chunk.source_biome[static_cast<size_t>(ColumnIndex(16, lx, lz))], expected);
        EXPECT_EQ(world.BlendPoint(x, z, raw)->source_biome, expected);
      }
    }
  }
  EXPECT_GT(borders, 0) << "no chunk crossed a border of the raw map";
  EXPECT_TRUE(world.BlendChunk(0, 0, 16, {})->source_biome.empty()) << "only when asked for";
}

}  // namespace
}  // namespace worldgen
