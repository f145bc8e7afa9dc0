#include "client/chunk_view.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/worldgen_client.h"

namespace worldgen {
namespace {

// A 4x4 chunk with biome 2 fading into biome 5 along x.
v1::ChunkData TwoBiomeChunk() {
  v1::ChunkData data;
  data.mutable_coord()->set_x(-3);
  data.mutable_coord()->set_z(7);
  data.set_chunk_size(4);
  v1::BiomeWeights* a = data.add_biomes();
  v1::BiomeWeights* b = data.add_biomes();
  a->set_biome_id(2);
  b->set_biome_id(5);
  for (int lz = 0; lz < 4; ++lz) {
    for (int lx = 0; lx < 4; ++lx) {
      const float w = (lx == 3 && lz == 0) ? 0.5f : 1.0f - lx * 0.25f;
      a->add_weights(w);
      b->add_weights(1.0f - w);
      data.add_heights(static_cast<float>(lz * 10 + lx));
    }
  }
  return data;
}

TEST(ChunkViewTest, LooksUpWeightsInWireLayout) {
  absl::StatusOr<ChunkView> view = ChunkView::Decode(TwoBiomeChunk());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->chunk_x(), -3);
  EXPECT_EQ(view->chunk_z(), 7);
  EXPECT_EQ(view->size(), 4);
  EXPECT_EQ(view->origin_x(), -12);
  EXPECT_EQ(view->origin_z(), 28);
  EXPECT_EQ(view->biome_ids(), (std::vector<uint32_t>{2, 5}));
  EXPECT_EQ(view->Weight(2, 1, 2), 0.75f);
  EXPECT_EQ(view->Weight(5, 1, 2), 0.25f);
  EXPECT_EQ(view->Weight(3, 1, 2), 0.0f);  // Absent biome.
  EXPECT_FALSE(view->HasBiome(3));
  EXPECT_EQ(view->Weights(5).size(), 16u);
  EXPECT_TRUE(view->Weights(3).empty());
  ASSERT_TRUE(view->has_heights());
  EXPECT_EQ(view->Height(3, 2), 23.0f);  // heights[lz * n + lx]
}

TEST(ChunkViewTest, LooksUpByWorldColumn) {
  absl::StatusOr<ChunkView> view = ChunkView::Decode(TwoBiomeChunk());  // Chunk (-3, 7), size 4.
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->ContainsColumn(-12, 28));
  EXPECT_TRUE(view->ContainsColumn(-9, 31));
  EXPECT_FALSE(view->ContainsColumn(-8, 28));
  EXPECT_FALSE(view->ContainsColumn(-12, 27));
  EXPECT_EQ(view->WeightAtColumn(2, -11, 30), view->Weight(2, 1, 2));
  EXPECT_EQ(view->DominantBiomeAtColumn(-9, 29), 5u);
}

TEST(ChunkViewTest, ComputesDominantBiomeWithTiesToLowerId) {
  absl::StatusOr<ChunkView> view = ChunkView::Decode(TwoBiomeChunk());
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->DominantBiome(0, 0), 2u);
  EXPECT_EQ(view->DominantBiome(3, 1), 5u);
  EXPECT_EQ(view->DominantBiome(3, 0), 2u);  // 0.5 vs 0.5: the lower id.
}

TEST(ChunkViewTest, PrefersTheServersDominantBiome) {
  v1::ChunkData data = TwoBiomeChunk();
  for (int i = 0; i < 16; ++i) data.add_dominant_biome(9);
  absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->DominantBiome(0, 0), 9u);
}

TEST(ChunkViewTest, SingleBiomeChunkHasWeightOneEverywhere) {
  v1::ChunkData data;
  data.set_chunk_size(16);
  data.set_single_biome(true);
  data.add_biomes()->set_biome_id(4);
  absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(view->single_biome());
  EXPECT_EQ(view->Weight(4, 15, 15), 1.0f);
  EXPECT_EQ(view->Weight(3, 15, 15), 0.0f);
  EXPECT_TRUE(view->Weights(4).empty());
  EXPECT_EQ(view->DominantBiome(7, 3), 4u);
  EXPECT_FALSE(view->has_heights());
}

TEST(ChunkViewTest, LooksUpTheRawMapInWireLayout) {
  v1::ChunkData data = TwoBiomeChunk();
  for (int i = 0; i < 16; ++i) data.add_source_biome(i % 4 < 2 ? 2 : 5);
  absl::StatusOr<ChunkView> view = ChunkView::Decode(data);
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_TRUE(view->has_source_biome());
  EXPECT_EQ(view->SourceBiome(1, 3), 2u);
  EXPECT_EQ(view->SourceBiome(2, 0), 5u);
  data.add_splat_textures(std::string(4 * 4 * 4, '\0'));
  data.mutable_splat_textures(0)->at((3 * 4 + 2) * 4 + 1) = static_cast<char>(200);
  view = ChunkView::Decode(data);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->splat_texture_count(), 1);
  EXPECT_EQ(view->SplatByte(0, 2, 3, 1), 200);  // Texel (2, 3), channel G.
  absl::StatusOr<ChunkView> without = ChunkView::Decode(TwoBiomeChunk());
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->has_source_biome());
}

TEST(ChunkViewTest, RejectsMessagesThatBreakTheContract) {
  auto expect_data_loss = [](v1::ChunkData data, const char* why) {
    absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
    EXPECT_EQ(view.status().code(), absl::StatusCode::kDataLoss) << why;
  };
  v1::ChunkData data = TwoBiomeChunk();
  data.set_chunk_size(0);
  expect_data_loss(data, "size 0");

  data = TwoBiomeChunk();
  data.mutable_biomes(1)->mutable_weights()->RemoveLast();
  expect_data_loss(data, "short weights");

  data = TwoBiomeChunk();
  data.mutable_biomes(1)->set_biome_id(1);
  expect_data_loss(data, "ids not ascending");

  data = TwoBiomeChunk();
  data.add_heights(1.0f);
  expect_data_loss(data, "too many heights");

  data = TwoBiomeChunk();
  data.add_dominant_biome(1);
  expect_data_loss(data, "short dominant");

  data = TwoBiomeChunk();
  for (int i = 0; i < 15; ++i) data.add_source_biome(2);
  expect_data_loss(data, "short source");

  data = TwoBiomeChunk();
  data.add_splat_textures(std::string(4 * 4 * 4, '\0'));
  data.add_splat_textures(std::string(4 * 4 * 4 - 1, '\0'));
  expect_data_loss(data, "short splat texture");

  data = TwoBiomeChunk();
  data.set_single_biome(true);
  expect_data_loss(data, "single biome with two entries");

  data = TwoBiomeChunk();
  data.mutable_biomes()->RemoveLast();
  data.set_single_biome(true);
  expect_data_loss(data, "single biome with weights");

  data.clear_biomes();
  expect_data_loss(data, "no biomes");
}

// A 3D chunk of size 4 in cells of 2 blocks, y [-32, 0): the lower section one biome (7), the upper
// one biome 2 fading into biome 9 upwards (by cell row) and along x.
v1::ChunkData TwoSectionVolume() {
  v1::ChunkData data;
  data.mutable_coord()->set_x(-3);
  data.mutable_coord()->set_z(7);
  data.set_chunk_size(4);
  data.set_cell_size(2);
  v1::ChunkSection* low = data.add_sections();
  low->set_min_y(-32);
  low->set_single_biome(true);
  low->add_biomes()->set_biome_id(7);
  for (int cell = 0; cell < 32; ++cell) low->add_source_biome(7);
  v1::ChunkSection* high = data.add_sections();
  high->set_min_y(-16);
  v1::BiomeWeights* a = high->add_biomes();
  v1::BiomeWeights* b = high->add_biomes();
  a->set_biome_id(2);
  b->set_biome_id(9);
  for (int ly = 0; ly < 8; ++ly) {
    for (int lz = 0; lz < 2; ++lz) {
      for (int lx = 0; lx < 2; ++lx) {
        const float w = 1.0f - 0.125f * static_cast<float>(ly) - 0.0625f * static_cast<float>(lx);
        a->add_weights(w);
        b->add_weights(1.0f - w);
        high->add_source_biome(w > 0.5f ? 2 : 9);
      }
    }
  }
  return data;
}

TEST(ChunkViewTest, LooksUpCellsOfAVolumeBySectionAndBlock) {
  absl::StatusOr<ChunkView> view = ChunkView::Decode(TwoSectionVolume());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(view->is_volume());
  EXPECT_EQ(view->cell_size(), 2);
  EXPECT_EQ(view->cells_per_side(), 2);
  EXPECT_EQ(view->cell_rows(), 16);
  EXPECT_EQ(view->min_y(), -32);
  EXPECT_EQ(view->max_y(), 0);
  EXPECT_TRUE(view->section_single_biome(0));
  EXPECT_EQ(view->section_biome_ids(1), (std::vector<uint32_t>{2, 9}));
  // Rows 0-7 are the lower section, 8-15 the upper (8 rows of 2 blocks per section).
  EXPECT_EQ(view->CellBiomeIds(7), (std::vector<uint32_t>{7}));
  EXPECT_EQ(view->CellBiomeIds(8), (std::vector<uint32_t>{2, 9}));
  // The lower section: one biome at exactly 1 in every cell, absent biomes 0.
  EXPECT_EQ(view->CellWeight(7, 1, 3, 0), 1.0f);
  EXPECT_EQ(view->CellWeight(2, 1, 3, 0), 0.0f);
  EXPECT_EQ(view->CellDominantBiome(0, 7, 1), 7u);
  // Cell (1, 8 + 3, 1): section 1, row 3, index (3 * 2 + 1) * 2 + 1 = 15.
  EXPECT_EQ(view->CellWeight(2, 1, 11, 1), 1.0f - 0.375f - 0.0625f);
  EXPECT_EQ(view->CellWeight(9, 1, 11, 1), 0.375f + 0.0625f);
  EXPECT_EQ(view->CellDominantBiome(1, 11, 1), 2u);
  EXPECT_EQ(view->CellDominantBiome(1, 15, 1), 9u);
  EXPECT_EQ(view->CellSourceBiome(1, 15, 1), 9u);
  EXPECT_EQ(view->CellSourceBiome(0, 0, 0), 7u);
  EXPECT_TRUE(view->has_cell_source_biome());
  EXPECT_FALSE(view->has_source_biome());  // The 2D chunk's accessor.
  // Block (x, y, z) = origin + (3, 22, 2) lies in cell (1, 11, 1).
  ASSERT_TRUE(view->ContainsBlock(-12 + 3, -32 + 22, 28 + 2));
  EXPECT_FALSE(view->ContainsBlock(-12, 0, 28));
  EXPECT_EQ(view->BlockWeight(9, -12 + 3, -32 + 22, 28 + 2), view->CellWeight(9, 1, 11, 1));
}

TEST(ChunkViewTest, RejectsVolumesThatBreakTheContract) {
  auto expect_data_loss = [](v1::ChunkData data, const char* why) {
    absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
    EXPECT_EQ(view.status().code(), absl::StatusCode::kDataLoss) << why;
  };
  v1::ChunkData data = TwoSectionVolume();
  data.set_cell_size(3);
  expect_data_loss(data, "cell size not dividing 16");
  data = TwoSectionVolume();
  data.set_cell_size(8);
  expect_data_loss(data, "cell size past the chunk size");
  data = TwoSectionVolume();
  data.mutable_sections(1)->set_min_y(0);
  expect_data_loss(data, "a gap between sections");
  data = TwoSectionVolume();
  data.mutable_sections(1)->mutable_biomes(0)->mutable_weights()->RemoveLast();
  expect_data_loss(data, "short weights in a section");
  data = TwoSectionVolume();
  data.mutable_sections(1)->add_source_biome(2);
  expect_data_loss(data, "long source biomes in a section");
  data = TwoSectionVolume();
  data.mutable_sections(0)->clear_source_biome();
  expect_data_loss(data, "source biomes in one section only");
  data = TwoSectionVolume();
  for (int cell = 0; cell < 32; ++cell) data.mutable_sections(1)->add_dominant_biome(2);
  expect_data_loss(data, "dominant biomes in one section only");
  data = TwoSectionVolume();
  data.mutable_sections(0)->set_min_y(std::numeric_limits<int64_t>::max() - 16);
  data.mutable_sections(1)->set_min_y(std::numeric_limits<int64_t>::max());
  expect_data_loss(data, "sections past the largest int64");
  data = TwoSectionVolume();
  data.add_heights(1.0f);
  expect_data_loss(data, "2D fields in a volume");
  data = TwoSectionVolume();
  data.clear_sections();
  expect_data_loss(data, "a cell size without sections");
  data = TwoSectionVolume();
  data.mutable_sections(0)->clear_biomes();
  expect_data_loss(data, "a section without biomes");
}

TEST(RetryBackoffTest, IsADeterministicCappedExponential) {
  ClientOptions options;
  options.initial_backoff = absl::Milliseconds(50);
  options.backoff_multiplier = 2.0;
  options.max_backoff = absl::Milliseconds(300);
  EXPECT_EQ(RetryBackoff(options, 1), absl::Milliseconds(50));
  EXPECT_EQ(RetryBackoff(options, 2), absl::Milliseconds(100));
  EXPECT_EQ(RetryBackoff(options, 3), absl::Milliseconds(200));
  EXPECT_EQ(RetryBackoff(options, 4), absl::Milliseconds(300));
  EXPECT_EQ(RetryBackoff(options, 60), absl::Milliseconds(300));
}

TEST(ClientTest, ConnectRejectsBadOptions) {
  ClientOptions options;
  options.deadline = absl::ZeroDuration();
  EXPECT_EQ(Client::Connect("127.0.0.1:1", options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = ClientOptions();
  options.max_retries = -1;
  EXPECT_EQ(Client::Connect("127.0.0.1:1", options).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Client::Connect("", {}).status().code(), absl::StatusCode::kInvalidArgument);
  // The user agent goes into an HTTP header: printable ASCII of a bounded length.
  options = ClientOptions();
  options.user_agent = std::string(kMaxUserAgentBytes, 'a');
  EXPECT_TRUE(Client::Connect("127.0.0.1:1", options).ok());
  for (const std::string& bad : {std::string(kMaxUserAgentBytes + 1, 'a'),
                                 std::string("eu-3\r\nx-evil: 1"), std::string("caf\xc3\xa9")}) {
    options.user_agent = bad;
    const absl::Status status = Client::Connect("127.0.0.1:1", options).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(status.message(), "ClientOptions.user_agent must be at most 64"))
        << status;
  }
  // So does an API key, which is a secret: a refusal does not quote it.
  options = ClientOptions();
  options.api_key = std::string(kMaxApiKeyBytes, 'k');
  EXPECT_TRUE(Client::Connect("127.0.0.1:1", options).ok());
  for (const std::string& bad :
       {std::string(kMaxApiKeyBytes + 1, 'k'), std::string("s3cret key"),
        std::string("s3cret\r\nx-evil: 1"), std::string("s3cr\xc3\xa9t")}) {
    options.api_key = bad;
    const absl::Status status = Client::Connect("127.0.0.1:1", options).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(status.message(), "ClientOptions.api_key has")) << status;
    EXPECT_FALSE(absl::StrContains(status.message(), "s3c")) << status;
  }
}

TEST(ClientTest, RegionsAreCheckedBeforeAnyRpc) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect("127.0.0.1:1");
  ASSERT_TRUE(client.ok());
  auto ignore = [](ChunkView) {};
  EXPECT_EQ((*client)->GenerateRegion({.min_x = 1, .max_x = 0}, {}, ignore).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*client)
                ->GenerateRegion({.min_x = -5000, .min_z = -5000, .max_x = 5000, .max_z = 5000}, {},
                                 ignore)
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*client)->stats().attempts, 0);
}

}  // namespace
}  // namespace worldgen
