#include "server/service/wire_encoding.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "engine/world_spec.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

ChunkBlend TwoByTwo() {
  ChunkBlend blend;
  blend.chunk_x = -3;
  blend.chunk_z = 7;
  blend.size = 2;
  return blend;
}

TEST(WireEncodingTest, MixedChunkKeepsEveryLayerAndColumnBitForBit) {
  ChunkBlend blend = TwoByTwo();
  const float odd = std::nextafter(0.25f, 1.0f);
  blend.layers = {{2, {0.75f, 0.5f, 1.0f, 1.0f - odd}}, {9, {0.25f, 0.5f, 0.0f, odd}}};
  blend.heights = {1.5f, -2.0f, 3.25f, 64.0f};
  blend.dominant_biome = {2, 2, 2, 2};
  v1::ChunkData data;
  EncodeChunk(blend, &data);
  EXPECT_EQ(data.coord().x(), -3);
  EXPECT_EQ(data.coord().z(), 7);
  EXPECT_EQ(data.chunk_size(), 2u);
  EXPECT_FALSE(data.single_biome());
  ASSERT_EQ(data.biomes_size(), 2);
  EXPECT_EQ(data.biomes(1).biome_id(), 9u);
  ASSERT_EQ(data.biomes(1).weights_size(), 4);
  float got = data.biomes(1).weights(3);
  EXPECT_EQ(std::memcmp(&got, &odd, sizeof(float)), 0);
  EXPECT_EQ(data.heights_size(), 4);
  EXPECT_EQ(data.heights(2), 3.25f);
  EXPECT_EQ(data.dominant_biome_size(), 4);
}

TEST(WireEncodingTest, SingleBiomeChunkHasOneEntryWithoutArray) {
  ChunkBlend blend = TwoByTwo();
  blend.single_biome = true;
  blend.layers = {{4, {1.0f, 1.0f, 1.0f, 1.0f}}};
  v1::ChunkData data;
  EncodeChunk(blend, &data);
  EXPECT_TRUE(data.single_biome());
  ASSERT_EQ(data.biomes_size(), 1);
  EXPECT_EQ(data.biomes(0).biome_id(), 4u);
  EXPECT_EQ(data.biomes(0).weights_size(), 0);
  EXPECT_EQ(data.heights_size(), 0);  // Not requested.
}

TEST(WireEncodingTest, LoneLayerOfExactOnesIsSentAsSingleBiome) {
  ChunkBlend blend = TwoByTwo();
  blend.single_biome = false;  // Other biomes' samples were gathered but reach no column.
  blend.layers = {{4, {1.0f, 1.0f, 1.0f, 1.0f}}};
  v1::ChunkData data;
  EncodeChunk(blend, &data);
  EXPECT_TRUE(data.single_biome());
  EXPECT_EQ(data.biomes(0).weights_size(), 0);
}

TEST(WireEncodingTest, PointCarriesHeightAndSourceBiomeOnlyWhenAsked) {
  PointBlend blend;
  blend.weights = {{1, 0.5f}, {3, 0.5f}};
  blend.height = 70.25f;
  blend.dominant_biome = 1;
  blend.source_biome = 3;
  v1::PointWeights with, without;
  EncodePoint(blend, {.heights = true, .source_biome = true}, &with);
  EncodePoint(blend, {}, &without);
  ASSERT_EQ(with.weights_size(), 2);
  EXPECT_EQ(with.weights(1).biome_id(), 3u);
  EXPECT_EQ(with.height(), 70.25f);
  EXPECT_EQ(with.source_biome(), 3u);
  EXPECT_EQ(without.height(), 0.0f);
  EXPECT_EQ(without.source_biome(), 0u);
  EXPECT_EQ(without.dominant_biome(), 1u);
}

TEST(WireEncodingTest, ChunkCarriesTheSourceBiomesWhenPresent) {
  ChunkBlend blend;
  blend.size = 4;
  blend.single_biome = true;
  blend.layers = {{2, std::vector<float>(16, 1.0f)}};
  blend.source_biome.assign(16, 2);
  blend.source_biome[5] = 7;
  v1::ChunkData data;
  EncodeChunk(blend, &data);
  ASSERT_EQ(data.source_biome_size(), 16);
  EXPECT_EQ(data.source_biome(5), 7u);
  EXPECT_EQ(data.source_biome(0), 2u);
}

// The reservation for a ListSamplingPoints reply covers the largest encoding of its points: the
// largest biome id and doubles that fill their 8 bytes.
TEST(WireEncodingTest, SamplingPointsReplyFitsItsReservation) {
  for (int64_t n : {1, 7, 1000}) {
    v1::ListSamplingPointsResponse response;
    for (int64_t k = 0; k < n; ++k) {
      v1::SamplingPoint* p = response.add_points();
      p->set_x(-33554432.125 + static_cast<double>(k));
      p->set_z(1e-300);
      p->set_biome_id(0xffffffffu);
    }
    EXPECT_LE(static_cast<int64_t>(response.ByteSizeLong()), MaxEncodedSamplingPointsBytes(n)) << n;
    EXPECT_GT(static_cast<int64_t>(response.ByteSizeLong()) * 2, MaxEncodedSamplingPointsBytes(n))
        << n << ": a reservation far above the reply would refuse calls the budget can take";
  }
}

// A 3D chunk: one ChunkSection per section in order, each single-biome or sparse by itself, and the
// worst case (every biome in every cell of every section, extreme ids and coordinates) within its
// reservation, and not far below it.
TEST(WireEncodingTest, VolumeSectionsAreSparseEachAndFitTheirReservation) {
  VolumeBlend blend;
  blend.chunk_x = -3;
  blend.chunk_z = 7;
  blend.size = 4;
  blend.cell = 2;
  const size_t cells = 2 * 8 * 2;
  SectionBlend& single = blend.sections.emplace_back();
  single.min_y = -64;
  single.layers = {{4, std::vector<float>(cells, 1.0f)}};  // Exact ones: sent as single_biome.
  SectionBlend& mixed = blend.sections.emplace_back();
  mixed.min_y = -48;
  mixed.layers = {{2, std::vector<float>(cells, 0.25f)}, {100, std::vector<float>(cells, 0.75f)}};
  mixed.dominant_biome.assign(cells, 100);
  v1::ChunkData data;
  EncodeVolume(blend, &data);
  EXPECT_EQ(data.cell_size(), 2u);
  EXPECT_EQ(data.chunk_size(), 4u);
  EXPECT_EQ(data.biomes_size(), 0);
  ASSERT_EQ(data.sections_size(), 2);
  EXPECT_EQ(data.sections(0).min_y(), -64);
  EXPECT_TRUE(data.sections(0).single_biome());
  ASSERT_EQ(data.sections(0).biomes_size(), 1);
  EXPECT_EQ(data.sections(0).biomes(0).weights_size(), 0);
  EXPECT_FALSE(data.sections(1).single_biome());
  ASSERT_EQ(data.sections(1).biomes_size(), 2);
  EXPECT_EQ(data.sections(1).biomes(1).biome_id(), 100u);
  EXPECT_EQ(data.sections(1).biomes(1).weights_size(), static_cast<int>(cells));
  EXPECT_EQ(data.sections(1).dominant_biome_size(), static_cast<int>(cells));

  for (const auto& [size, cell, biomes] :
       {std::tuple{16, 4, 12}, std::tuple{16, 1, 3}, std::tuple{64, 2, 5}}) {
    const size_t n = static_cast<size_t>(size / cell) * (size / cell) * (16 / cell);
    VolumeBlend worst;
    worst.chunk_x = INT64_MIN;
    worst.chunk_z = INT64_MIN;
    worst.size = size;
    worst.cell = cell;
    for (int64_t y = -kMaxWorldY; y < -kMaxWorldY + 48; y += 16) {
      SectionBlend& section = worst.sections.emplace_back();
      section.min_y = y;
      for (int b = 0; b < biomes; ++b) {
        section.layers.push_back(
            {0xffffffffu - static_cast<uint32_t>(b), std::vector<float>(n, 0.5f)});
      }
      section.dominant_biome.assign(n, 0xffffffffu);
      section.source_biome.assign(n, 0xffffffffu);
    }
    v1::ChunkData encoded;
    EncodeVolume(worst, &encoded);
    const int64_t bound = MaxEncodedVolumeBytes(size, cell, 3, biomes,
                                                {.dominant_biome = true, .source_biome = true});
    EXPECT_LE(static_cast<int64_t>(encoded.ByteSizeLong()), bound) << size << " " << cell;
    EXPECT_GT(static_cast<int64_t>(encoded.ByteSizeLong()) * 2, bound) << size << " " << cell;
  }
}

}  // namespace
}  // namespace worldgen
