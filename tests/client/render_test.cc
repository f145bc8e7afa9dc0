#include "client/cli/render.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace worldgen::cli {
namespace {

TEST(ParseBlockRegionTest, ParsesInclusiveRectangles) {
  absl::StatusOr<BlockRegion> region = ParseBlockRegion("-64,-32,63,31");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(region->min_x, -64);
  EXPECT_EQ(region->min_z, -32);
  EXPECT_EQ(region->width(), 128);
  EXPECT_EQ(region->height(), 64);
}

TEST(ParseBlockRegionTest, RejectsMalformedOrHugeRegions) {
  for (const char* bad : {"", "1,2,3", "1,2,3,4,5", "a,0,1,1", "5,0,4,1", "0,0,100000,100000"}) {
    EXPECT_EQ(ParseBlockRegion(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ParseRenderLayerTest, ParsesEveryLayer) {
  using Kind = RenderLayer::Kind;
  for (auto [text, kind] :
       {std::pair{"dominant", Kind::kDominant}, std::pair{"blend", Kind::kBlend},
        std::pair{"source", Kind::kSource}, std::pair{"height", Kind::kHeight}}) {
    absl::StatusOr<RenderLayer> layer = ParseRenderLayer(text);
    ASSERT_TRUE(layer.ok()) << text << ": " << layer.status();
    EXPECT_EQ(layer->kind, kind) << text;
  }
  absl::StatusOr<RenderLayer> weight = ParseRenderLayer("weight:17");
  ASSERT_TRUE(weight.ok()) << weight.status();
  EXPECT_EQ(weight->kind, Kind::kWeight);
  EXPECT_EQ(weight->biome_id, 17u);
}

TEST(ParseRenderLayerTest, RejectsOtherTextsNamingTheForms) {
  for (const char* bad : {"", "Dominant", "shade", "weight", "weight:", "weight:x", "weight:-1",
                          "weight:+3", "weight: 3", "weight:99999999999", "weight:3:4"}) {
    absl::StatusOr<RenderLayer> layer = ParseRenderLayer(bad);
    EXPECT_EQ(layer.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseRenderLayer("shade").status().message().find(
                "dominant, blend, source, height or weight:ID"),
            absl::string_view::npos);
  EXPECT_NE(ParseRenderLayer("weight:x").status().message().find("not a biome id"),
            absl::string_view::npos);
}

// A world of two biomes: 2 is pure red, 5 is (0, 100, 50).
v1::WorldDescription TwoBiomeWorld() {
  v1::WorldDescription world;
  world.mutable_config()->set_name("pair");
  v1::BiomeConfig* red = world.mutable_config()->add_biomes();
  red->set_id(2);
  red->mutable_color()->set_r(200);
  v1::BiomeConfig* green = world.mutable_config()->add_biomes();
  green->set_id(5);
  green->mutable_color()->set_g(100);
  green->mutable_color()->set_b(50);
  return world;
}

float WeightOfRed(int lx, int lz) {
  return std::max(0.0f, 1.0f - 0.2f * static_cast<float>(lx + lz));
}

// An 8x8 chunk at (cx, cz): biome 2 fading into 5 towards +x+z, heights 0.1 * (10 z + x) in local
// coordinates, the raw map 2 where lx < 3, else 5.
ChunkView TwoBiomeChunk(int64_t cx, int64_t cz) {
  v1::ChunkData data;
  data.mutable_coord()->set_x(cx);
  data.mutable_coord()->set_z(cz);
  data.set_chunk_size(8);
  v1::BiomeWeights* red = data.add_biomes();
  v1::BiomeWeights* green = data.add_biomes();
  red->set_biome_id(2);
  green->set_biome_id(5);
  for (int lz = 0; lz < 8; ++lz) {
    for (int lx = 0; lx < 8; ++lx) {
      red->add_weights(WeightOfRed(lx, lz));
      green->add_weights(1.0f - WeightOfRed(lx, lz));
      data.add_heights(0.1f * static_cast<float>(lz * 10 + lx));
      data.add_source_biome(lx < 3 ? 2 : 5);
    }
  }
  absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
  EXPECT_TRUE(view.ok()) << view.status();
  return *std::move(view);
}

const uint8_t* Pixel(const RgbImage& image, int x, int y) { return image.at(x, y); }

RgbImage Render(absl::string_view layer_text, const BlockRegion& region) {
  absl::StatusOr<RenderLayer> layer = ParseRenderLayer(layer_text);
  EXPECT_TRUE(layer.ok());
  RegionPainter painter(TwoBiomeWorld(), region, *layer);
  painter.Paint(TwoBiomeChunk(0, 0));
  return painter.Finish();
}

TEST(RegionPainterTest, BlendMixesTheColoursByWeight) {
  const RgbImage image = Render("blend", {0, 0, 7, 7});
  ASSERT_EQ(image.width, 8);
  ASSERT_EQ(image.height, 8);
  for (int z = 0; z < 8; ++z) {
    for (int x = 0; x < 8; ++x) {
      const double red = WeightOfRed(x, z), green = 1.0f - WeightOfRed(x, z);
      const uint8_t* p = Pixel(image, x, z);
      EXPECT_EQ(p[0], std::lround(200 * red)) << x << ", " << z;
      EXPECT_EQ(p[1], std::lround(100 * green)) << x << ", " << z;
      EXPECT_EQ(p[2], std::lround(50 * green)) << x << ", " << z;
    }
  }
  // A transition, not two flat areas: some pixels are neither colour.
  EXPECT_EQ(Pixel(image, 1, 1)[0], 120);
  EXPECT_EQ(Pixel(image, 1, 1)[1], 40);
}

TEST(RegionPainterTest, WeightIsGreyFromBlackToWhite) {
  const RgbImage image = Render("weight:2", {0, 0, 7, 7});
  for (int z = 0; z < 8; ++z) {
    for (int x = 0; x < 8; ++x) {
      const uint8_t* p = Pixel(image, x, z);
      EXPECT_EQ(p[0], std::lround(255.0 * WeightOfRed(x, z))) << x << ", " << z;
      EXPECT_EQ(p[1], p[0]);
      EXPECT_EQ(p[2], p[0]);
    }
  }
  EXPECT_EQ(Pixel(image, 0, 0)[0], 255);
  EXPECT_EQ(Pixel(image, 7, 7)[0], 0);
  // A biome absent from the chunk weighs 0 everywhere.
  RegionPainter absent(TwoBiomeWorld(), {0, 0, 7, 7}, {RenderLayer::Kind::kWeight, 9});
  absent.Paint(TwoBiomeChunk(0, 0));
  const RgbImage black = absent.Finish();
  EXPECT_EQ(std::count(black.pixels.begin(), black.pixels.end(), 0), 8 * 8 * 3);
}

TEST(RegionPainterTest, SourceDrawsTheRawMapFlat) {
  const RgbImage image = Render("source", {1, 2, 6, 4});
  ASSERT_EQ(image.width, 6);
  ASSERT_EQ(image.height, 3);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 6; ++x) {
      const bool red = x + 1 < 3;
      const uint8_t* p = Pixel(image, x, y);
      EXPECT_EQ(p[0], red ? 200 : 0);
      EXPECT_EQ(p[1], red ? 0 : 100);
      EXPECT_EQ(p[2], red ? 0 : 50);
    }
  }
}

TEST(RegionPainterTest, DominantKeepsTheBiomesHueUnderShading) {
  const RgbImage image = Render("dominant", {1, 1, 7, 7});
  for (int z = 1; z < 8; ++z) {
    for (int x = 1; x < 8; ++x) {
      const uint8_t* p = Pixel(image, x - 1, z - 1);
      if (WeightOfRed(x, z) > 0.5f) {
        EXPECT_GT(p[0], 0);
        EXPECT_EQ(p[1], 0);
      } else {
        EXPECT_EQ(p[0], 0);
        EXPECT_GT(p[1], 0);
      }
    }
  }
}

TEST(RegionPainterTest, HeightIsGreyRisingWithAltitude) {
  // Inside the chunk the slope towards the north-west is the same everywhere, so brightness follows
  // altitude alone.
  const RgbImage image = Render("height", {1, 1, 7, 7});
  int previous = -1;
  for (int i = 0; i < 7; ++i) {  // Along the diagonal, heights rise.
    const uint8_t* p = Pixel(image, i, i);
    EXPECT_EQ(p[0], p[1]);
    EXPECT_EQ(p[1], p[2]);
    EXPECT_GE(p[0], previous);
    previous = p[0];
  }
  EXPECT_LT(Pixel(image, 0, 0)[0], Pixel(image, 6, 6)[0]);
}

TEST(RegionPainterTest, AsksForWhatTheLayerNeedsAndTheChunksTheImageTouches) {
  const BlockRegion region{0, 0, 15, 7};  // Two 8-column chunks wide, one high.
  RegionPainter dominant(TwoBiomeWorld(), region, {RenderLayer::Kind::kDominant});
  ChunkRequestOptions options = dominant.ChunkOptions(8);
  EXPECT_TRUE(options.heights);
  EXPECT_TRUE(options.dominant_biome);
  EXPECT_FALSE(options.source_biome);
  // Shading reads one column north-west: chunks -1..1 on x and -1..0 on z.
  EXPECT_EQ(dominant.Chunks(8).size(), 6u);

  RegionPainter source(TwoBiomeWorld(), region, {RenderLayer::Kind::kSource});
  options = source.ChunkOptions(8);
  EXPECT_FALSE(options.heights);
  EXPECT_TRUE(options.source_biome);
  EXPECT_EQ(source.Chunks(8).size(), 2u);
  EXPECT_EQ(options.chunk_size, 8);
}

TEST(RegionPainterTest, ChunkOrderDoesNotMatterAndUnpaintedColumnsAreBlack) {
  const BlockRegion region{0, 0, 15, 7};
  RegionPainter forward(TwoBiomeWorld(), region, {RenderLayer::Kind::kBlend});
  forward.Paint(TwoBiomeChunk(0, 0));
  forward.Paint(TwoBiomeChunk(1, 0));
  RegionPainter backward(TwoBiomeWorld(), region, {RenderLayer::Kind::kBlend});
  backward.Paint(TwoBiomeChunk(1, 0));
  backward.Paint(TwoBiomeChunk(0, 0));
  EXPECT_EQ(forward.Finish().pixels, backward.Finish().pixels);

  RegionPainter half(TwoBiomeWorld(), region, {RenderLayer::Kind::kBlend});
  half.Paint(TwoBiomeChunk(0, 0));
  const RgbImage image = half.Finish();
  EXPECT_NE(Pixel(image, 0, 0)[0], 0);
  for (int x = 8; x < 16; ++x) EXPECT_EQ(Pixel(image, x, 3)[0] + Pixel(image, x, 3)[1], 0) << x;
}

TEST(CheckRenderLayerTest, UnknownBiomeIdsAreNamedWithTheWorldsIds) {
  EXPECT_TRUE(CheckRenderLayer({RenderLayer::Kind::kWeight, 5}, TwoBiomeWorld()).ok());
  EXPECT_TRUE(CheckRenderLayer({RenderLayer::Kind::kBlend}, TwoBiomeWorld()).ok());
  absl::Status unknown = CheckRenderLayer({RenderLayer::Kind::kWeight, 7}, TwoBiomeWorld());
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("has no biome 7; its ids are 2, 5"), absl::string_view::npos)
      << unknown.message();
}

}  // namespace
}  // namespace worldgen::cli
