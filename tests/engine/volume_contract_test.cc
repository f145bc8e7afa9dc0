// The contract of 3D answers (World::BlendVolume and the 3D World::BlendPoint, issue 25), for a
// world with cave biomes and for a 2D world: partition of unity and bounds in every cell, a cell
// equal to the point at its corner bit for bit at every chunk and cell size, the same bits on any
// thread and with or without a cache, a 2D world's columns at every y, per-cell options, the
// validation of ranges and cell sizes, and golden hashes.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::HashVolume;
using ::testing::HasSubstr;

const World& CaveWorld() {
  static const std::shared_ptr<const World> world = *World::Create(testing::CaveWorldSpec());
  return *world;
}

// The weight of `biome_id` in cell `at` of `section` (0 if it has no layer).
float CellWeight(const SectionBlend& section, uint32_t biome_id, size_t at) {
  for (const BiomeLayer& layer : section.layers) {
    if (layer.biome_id == biome_id) return layer.weights[at];
  }
  return 0.0f;
}

bool IsCave(const World& world, uint32_t id) {
  for (const BiomeSpec& b : world.spec().biomes) {
    if (b.id == id) return b.cave.has_value();
  }
  return false;
}

// Chunks of the cave world that hold a 2D border and, in the range [-64, 16), a cave border (a
// cave biome's weight strictly between 0 and 1 somewhere), found once: every formula of the
// surface share is at work in them.
const std::vector<std::pair<int64_t, int64_t>>& CaveBorderChunks() {
  static const auto chunks = [] {
    std::vector<std::pair<int64_t, int64_t>> found;
    for (int64_t k = 0; k < 4096 && found.size() < 4; ++k) {
      const int64_t cx = k * 7 - 200, cz = 130 - k * 3;
      if (CaveWorld().BlendChunk(cx, cz, 16, {})->single_biome) continue;
      const VolumeBlend v = *CaveWorld().BlendVolume(cx, cz, 16, -64, 16, 4, {});
      bool border = false;
      for (const SectionBlend& s : v.sections) {
        for (const BiomeLayer& layer : s.layers) {
          if (!IsCave(CaveWorld(), layer.biome_id)) continue;
          for (float w : layer.weights) border = border || (w > 0.0f && w < 1.0f);
        }
      }
      if (border) found.emplace_back(cx, cz);
    }
    return found;
  }();
  return chunks;
}

TEST(VolumeContractTest, CaveBordersExistToTest) { EXPECT_EQ(CaveBorderChunks().size(), 4u); }

TEST(VolumeContractTest, EveryCellIsAPartitionOfUnityInBounds) {
  for (const auto& [cx, cz] : CaveBorderChunks()) {
    const VolumeBlend v = *CaveWorld().BlendVolume(cx, cz, 16, -80, 48, 2, {});
    ASSERT_EQ(v.sections.size(), 8u);
    for (const SectionBlend& s : v.sections) {
      std::vector<double> sum(8 * 8 * 8, 0.0);
      for (size_t k = 0; k < s.layers.size(); ++k) {
        if (k > 0) {
          EXPECT_LT(s.layers[k - 1].biome_id, s.layers[k].biome_id);
        }
        ASSERT_EQ(s.layers[k].weights.size(), sum.size());
        bool nonzero = false;
        for (size_t at = 0; at < sum.size(); ++at) {
          const float w = s.layers[k].weights[at];
          ASSERT_GE(w, 0.0f);
          ASSERT_LE(w, 1.0f);
          nonzero = nonzero || w != 0.0f;
          sum[at] += w;
        }
        EXPECT_TRUE(nonzero) << "a layer without weight in section " << s.min_y;
      }
      for (double total : sum) EXPECT_NEAR(total, 1.0, 1e-5);
    }
  }
}

// Cell (lx, ly, lz) of every section equals BlendPoint(x, y, z) at its lowest corner, bit for bit,
// at chunk sizes 4, 16 and 32 and cell sizes 1, 2 and 4: so also any two chunkings of one cell.
TEST(VolumeContractTest, CellsEqualPointsAtEveryChunkAndCellSize) {
  const World& world = CaveWorld();
  int compared = 0;
  for (const auto& [cx16, cz16] : CaveBorderChunks()) {
    for (const auto& [size, cell] :
         {std::pair{16, 4}, std::pair{4, 1}, std::pair{32, 2}, std::pair{16, 1}, std::pair{4, 4}}) {
      // The chunk of this size holding the 16-chunk's corner.
      const int64_t cx = (cx16 * 16) >> std::countr_zero(static_cast<unsigned>(size));
      const int64_t cz = (cz16 * 16) >> std::countr_zero(static_cast<unsigned>(size));
      const VolumeBlend v = *world.BlendVolume(cx, cz, size, -48, -16, cell, {});
      const int m = size / cell;
      for (const SectionBlend& s : v.sections) {
        // A spread of cells (every cell at cell 4; a lattice of them at finer cells).
        const int step = std::max(1, m / 4);
        for (int ly = 0; ly < 16 / cell; ly += std::max(1, 4 / cell)) {
          for (int lz = 0; lz < m; lz += step) {
            for (int lx = 0; lx < m; lx += step) {
              const size_t at = (static_cast<size_t>(ly) * m + lz) * m + lx;
              const double x = static_cast<double>(cx * size + cell * lx);
              const double y = static_cast<double>(s.min_y + cell * ly);
              const double z = static_cast<double>(cz * size + cell * lz);
              const PointBlend p = *world.BlendPoint(x, y, z, {});
              std::vector<uint32_t> ids;
              for (const BiomeWeight& w : p.weights) {
                ids.push_back(w.biome_id);
                ASSERT_EQ(testing::FloatBits(CellWeight(s, w.biome_id, at)),
                          testing::FloatBits(w.weight))
                    << "biome " << w.biome_id << " at " << x << ", " << y << ", " << z << " (size "
                    << size << ", cell " << cell << ")";
              }
              for (const BiomeLayer& layer : s.layers) {
                if (std::find(ids.begin(), ids.end(), layer.biome_id) == ids.end()) {
                  ASSERT_EQ(layer.weights[at], 0.0f);
                }
              }
              ++compared;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(VolumeContractTest, SameBitsOnAnyThreadWithOrWithoutACache) {
  const World& world = CaveWorld();
  std::vector<uint64_t> plain;
  for (const auto& [cx, cz] : CaveBorderChunks()) {
    plain.push_back(HashVolume(*world.BlendVolume(cx, cz, 16, -64, 32, 4, {})));
  }
  BiomeSampleCache cache(64 << 20);
  std::vector<uint64_t> threaded(plain.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < plain.size(); ++k) {
    threads.emplace_back([&, k] {
      const auto [cx, cz] = CaveBorderChunks()[k];
      // Twice: the second reads the cache the first filled.
      (void)world.BlendVolume(cx, cz, 16, -64, 32, 4, {}, &cache);
      threaded[k] = HashVolume(*world.BlendVolume(cx, cz, 16, -64, 32, 4, {}, &cache));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(threaded, plain);
}

// A world without caves answers its columns' 2D weights in every cell; a section is single-biome
// when its cells' columns are one biome at 1.0 (which the rest of the chunk need not be).
TEST(VolumeContractTest, A2DWorldHasItsColumnsWeightsAtEveryY) {
  const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  ASSERT_EQ(world->volume_blender(), nullptr);
  int mixed = 0, single = 0, cells_single_but_chunk_not = 0;
  for (int64_t k = 0; k < 12; ++k) {
    const int64_t cx = k * 13 - 40, cz = 7 - k * 5;
    const ChunkBlend chunk = *world->BlendChunk(cx, cz, 16, {});
    const VolumeBlend v = *world->BlendVolume(cx, cz, 16, -32, 32, 4, {.source_biome = true});
    ASSERT_EQ(v.sections.size(), 4u);
    mixed += !chunk.single_biome;
    // Whether the 16 columns of the cells are one biome at exactly 1.0.
    int layers_at_cells = 0;
    bool all_one = true;
    for (const BiomeLayer& layer : chunk.layers) {
      bool present = false;
      for (int lz = 0; lz < 4; ++lz) {
        for (int lx = 0; lx < 4; ++lx) {
          const float w = layer.weights[static_cast<size_t>(ColumnIndex(16, 4 * lx, 4 * lz))];
          present |= w != 0.0f;
          all_one &= w == 0.0f || w == 1.0f;
        }
      }
      layers_at_cells += present;
    }
    const bool cells_single = layers_at_cells == 1 && all_one;
    cells_single_but_chunk_not += cells_single && !chunk.single_biome;
    for (const SectionBlend& s : v.sections) {
      EXPECT_EQ(s.single_biome, cells_single);
      single += s.single_biome;
      for (int ly = 0; ly < 4; ++ly) {
        for (int lz = 0; lz < 4; ++lz) {
          for (int lx = 0; lx < 4; ++lx) {
            const size_t at = (static_cast<size_t>(ly) * 4 + lz) * 4 + lx;
            const int col = ColumnIndex(16, 4 * lx, 4 * lz);
            for (const BiomeLayer& layer : chunk.layers) {
              EXPECT_EQ(testing::FloatBits(CellWeight(s, layer.biome_id, at)),
                        testing::FloatBits(layer.weights[static_cast<size_t>(col)]));
            }
            EXPECT_EQ(s.source_biome[at],
                      world->SourceBiomeAt(static_cast<double>(cx * 16 + 4 * lx),
                                           static_cast<double>(cz * 16 + 4 * lz)));
          }
        }
      }
    }
  }
  EXPECT_GT(mixed, 0);
  EXPECT_GT(single, 0);
  EXPECT_GT(cells_single_but_chunk_not, 0) << "no chunk tells the section's flag from the chunk's";
}

// The one rule of a single-biome section, for cave and 2D worlds alike: every cell column is one
// biome at exactly 1.0f. A column whose only weight is not 1.0f (a mesh interpolation could round a
// second biome's share away) keeps the section mixed, as its point query would answer that weight.
TEST(VolumeContractTest, ASectionIsSingleOnlyWhenEveryColumnIsOneBiomeAtExactlyOne) {
  using Columns = std::vector<std::vector<std::pair<int, float>>>;
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 1.0f}}, {{3, 1.0f}}, {{3, 1.0f}}}), 3);
  EXPECT_EQ(OneBiomeColumns(Columns{{{0, 1.0f}}}), 0);
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 1.0f}}, {{3, std::nextafter(1.0f, 2.0f)}}}), -1);
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 1.0f}}, {{3, std::nextafter(1.0f, 0.0f)}}}), -1);
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 1.0f}}, {{4, 1.0f}}}), -1);
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 1.0f}}, {{3, 0.5f}, {4, 0.5f}}}), -1);
  EXPECT_EQ(OneBiomeColumns(Columns{{{3, 0.5f}, {4, 0.5f}}, {{3, 1.0f}}}), -1);
  EXPECT_EQ(OneBiomeColumns(Columns{}), -1);
}

// Dominant and source biome per cell: the arg-max of the cell's weights, and the 3D map's biome at
// the cell's corner (a cave biome inside a cave).
TEST(VolumeContractTest, DominantAndSourceBiomesArePerCell) {
  const World& world = CaveWorld();
  int cave_sources = 0;
  for (const auto& [cx, cz] : CaveBorderChunks()) {
    const VolumeBlend v =
        *world.BlendVolume(cx, cz, 16, -64, -32, 4, {.dominant_biome = true, .source_biome = true});
    for (const SectionBlend& s : v.sections) {
      ASSERT_EQ(s.dominant_biome.size(), 64u);
      ASSERT_EQ(s.source_biome.size(), 64u);
      for (size_t at = 0; at < 64; ++at) {
        uint32_t best = s.layers[0].biome_id;
        float best_w = s.layers[0].weights[at];
        for (const BiomeLayer& layer : s.layers) {
          if (layer.weights[at] > best_w) best = layer.biome_id, best_w = layer.weights[at];
        }
        EXPECT_EQ(s.dominant_biome[at], best);
        const int lx = static_cast<int>(at % 4), lz = static_cast<int>(at / 4 % 4),
                  ly = static_cast<int>(at / 16);
        const double x = static_cast<double>(cx * 16 + 4 * lx);
        const double y = static_cast<double>(s.min_y + 4 * ly);
        const double z = static_cast<double>(cz * 16 + 4 * lz);
        EXPECT_EQ(s.source_biome[at], world.SourceBiomeAt(x, y, z));
        EXPECT_EQ(world.BlendPoint(x, y, z, {.source_biome = true})->source_biome,
                  s.source_biome[at]);
        cave_sources += IsCave(world, s.source_biome[at]);
      }
    }
  }
  EXPECT_GT(cave_sources, 0);
}

TEST(VolumeContractTest, RangesAndCellSizesAreValidated) {
  const World& world = CaveWorld();
  const struct {
    int size;
    int64_t min_y, max_y;
    int cell;
    BlendOptions options;
    const char* message;
  } bad[] = {
      {16, -60, 0, 4, {}, "min_y = -60 is not a multiple of the section height 16"},
      {16, 0, 8, 4, {}, "max_y = 8 is not a multiple"},
      {16, 0, 0, 4, {}, "min_y = 0 is not below max_y = 0"},
      {16, -kMaxWorldY - 16, 0, 4, {}, "min_y = -65552 is outside [-65536, 65536]"},
      {16, 0, kMaxWorldY + 16, 4, {}, "max_y = 65552 is outside [-65536, 65536]"},
      {16, 0, 16, 3, {}, "cell_size = 3 is not a power of two"},
      {16, 0, 16, 32, {}, "cell_size = 32"},
      {4,
       0,
       16,
       8,
       {},
       "cell_size = 8 is not a power of two dividing the section height 16 and "
       "the chunk size 4"},
      {16, 0, 16, 0, {}, "cell_size = 0"},
      {64, 0, 1024, 1, {}, "holds 4194304 cells; the limit is 262144"},
      {16, 0, 16, 4, {.heights = true}, "include_heights: heights and splat textures are per"},
      {16, 0, 16, 4, {.splat = true}, "include_splat"},
  };
  for (const auto& b : bad) {
    absl::StatusOr<VolumeBlend> v =
        world.BlendVolume(0, 0, b.size, b.min_y, b.max_y, b.cell, b.options);
    ASSERT_FALSE(v.ok()) << b.message;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(v.status().message(), HasSubstr(b.message));
  }
  // The largest range at the cell limit passes.
  EXPECT_TRUE(World::ValidateVolume(16, -512, 512, 1).ok());
  for (double y : {std::nan(""), 65537.0, -1e300}) {
    absl::StatusOr<PointBlend> p = world.BlendPoint(0.0, y, 0.0, {});
    ASSERT_FALSE(p.ok());
    EXPECT_THAT(p.status().message(), HasSubstr("outside the world's y bounds"));
  }
}

// A cave world's sections are blended in pieces (World::kVolumePieceCells): the hook runs between
// them, as often as the pieces say, and another volume blended inside it, on the same thread,
// changes nothing of the answer (the engine holds nothing of its own there).
TEST(VolumeContractTest, VolumeInPiecesLetsAnotherVolumeBlendBetweenThem) {
  const World& world = CaveWorld();
  // Plain variables, not a structured binding: the hook's lambda captures them (clang 14 cannot
  // capture a binding).
  const int64_t cx = CaveBorderChunks().front().first, cz = CaveBorderChunks().front().second;
  struct Case {
    int size, cell;
  };
  for (const Case c : {Case{16, 1}, Case{32, 1}, Case{16, 2}, Case{16, 4}}) {
    SCOPED_TRACE(::testing::Message() << "size " << c.size << " cell " << c.cell);
    const int64_t min_y = -80, max_y = 32;
    const int sections = static_cast<int>((max_y - min_y) / kSectionHeight);
    const int64_t section_cells =
        int64_t{c.size / c.cell} * (c.size / c.cell) * (kSectionHeight / c.cell);
    const int64_t per_piece = std::max<int64_t>(1, World::kVolumePieceCells / section_cells);
    const uint64_t whole = HashVolume(*world.BlendVolume(cx, cz, c.size, min_y, max_y, c.cell, {}));
    int hooks = 0;
    const VolumeBlend pieces =
        *world.BlendVolumeInPieces(cx, cz, c.size, min_y, max_y, c.cell, {}, nullptr, [&] {
          ++hooks;
          // Another chunk, all of whose sections (cave and surface) take every path.
          EXPECT_TRUE(world.BlendVolume(cx + 1, cz - hooks, c.size, -64, 64, c.cell, {}).ok());
        });
    EXPECT_EQ(HashVolume(pieces), whole);
    EXPECT_EQ(hooks, (sections + per_piece - 1) / per_piece - 1);
    if (c.cell == 1) {
      EXPECT_GT(hooks, 0);  // Full-resolution volumes are blended in pieces.
    }
  }
}

// Golden hashes of reference volumes of the cave world (each crossing a cave border, checked
// above): any change to the 3D output must be deliberate (update them in the same commit and say
// why).
TEST(VolumeContractTest, GoldenVolumes) {
  const World& world = CaveWorld();
  const std::array<uint64_t, 4> golden = {0xabaf39676f151606ULL, 0x6a83171ede345772ULL,
                                          0xacedc84168b9176dULL, 0xce8b7433514a955bULL};
  const auto& chunks = CaveBorderChunks();
  ASSERT_EQ(chunks.size(), golden.size());
  for (size_t k = 0; k < chunks.size(); ++k) {
    const VolumeBlend v =
        *world.BlendVolume(chunks[k].first, chunks[k].second, 16, -80, 32, k % 2 == 0 ? 4 : 1,
                           {.dominant_biome = true, .source_biome = true});
    EXPECT_EQ(HashVolume(v), golden[k])
        << "volume " << k << " (" << chunks[k].first << ", " << chunks[k].second << ")";
  }
}

}  // namespace
}  // namespace worldgen
