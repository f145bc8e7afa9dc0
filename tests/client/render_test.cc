#include "client/cli/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

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
  // Sides whose pixel product overflows int64 (found by client_input_fuzz): refused, not wrapped.
  const absl::Status huge = ParseBlockRegion("6,2,66950599999,99999999999", 8).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("more than 67108864 pixels"), absl::string_view::npos) << huge;
  EXPECT_FALSE(ParseBlockRegion("-1099511627776,-1099511627776,1099511627776,1099511627776").ok());
  // The limit itself: 8192 x 8192 pixels pass, one more row does not.
  EXPECT_TRUE(ParseBlockRegion("0,0,8191,8191").ok());
  EXPECT_FALSE(ParseBlockRegion("0,0,8191,8192").ok());
}

// Typed coordinates stop at 2^40 on both sides. INT64_MIN, whose std::abs overflows (to itself,
// in practice: negative, so it once passed a `std::abs(v) > 2^40` test), is refused like the rest.
TEST(ParseTypedCoordinateTest, AcceptsTheRangeAndSaysWhyElse) {
  int64_t v = 0;
  EXPECT_TRUE(ParseTypedCoordinate("", "-1099511627776", &v).ok());
  EXPECT_EQ(v, -kMaxTypedCoordinate);
  EXPECT_TRUE(ParseTypedCoordinate("", "1099511627776", &v).ok());
  EXPECT_EQ(v, kMaxTypedCoordinate);
  for (const char* out :
       {"1099511627777", "-1099511627777", "-9223372036854775808", "9223372036854775807"}) {
    const absl::Status s = ParseTypedCoordinate("--region: ", out, &v);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << out;
    EXPECT_EQ(s.message(), absl::StrCat("--region: \"", out, "\" is out of [-2^40, 2^40]"));
  }
  for (const char* bad : {"", "x", "1.5", "99999999999999999999", "-9223372036854775809"}) {
    const absl::Status s = ParseTypedCoordinate("tile x ", bad, &v);
    EXPECT_EQ(s.message(), absl::StrCat("tile x \"", bad, "\" is not an integer")) << bad;
  }
  EXPECT_EQ(ParseBlockRegion("-9223372036854775808,0,0,0").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSlice("y:-9223372036854775808").status().message(),
            "--slice=y:-9223372036854775808: \"-9223372036854775808\" is out of [-2^40, 2^40]");
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
                "dominant, blend, source, height, weight:ID or splat:T"),
            absl::string_view::npos);
  EXPECT_NE(ParseRenderLayer("weight:x").status().message().find("not a biome id"),
            absl::string_view::npos);
}

// A world of two biomes: 2 is pure red, 5 is (0, 100, 50); heights between 0 and 8 (4 +- 4), one
// splat texture.
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
  for (v1::BiomeConfig* biome : {red, green}) {
    biome->set_height_base(4);
    biome->set_height_amplitude(4);
    world.add_splat_channel_biome_ids(biome->id());
  }
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
  // Texel (lx, lz) = (lx, lz, 7, 255 - lx - lz).
  std::string texels;
  for (int lz = 0; lz < 8; ++lz) {
    for (int lx = 0; lx < 8; ++lx) {
      for (int v : {lx, lz, 7, 255 - lx - lz}) texels.push_back(static_cast<char>(v));
    }
  }
  data.add_splat_textures(std::move(texels));
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

// The sample a point call returns for column (x, z) of TwoBiomeChunk(0, 0): its values there.
PointSample SampleOf(const ChunkView& chunk, int64_t x, int64_t z) {
  PointSample sample;
  for (uint32_t id : chunk.biome_ids()) {
    const float w = chunk.WeightAtColumn(id, x, z);
    if (w != 0.0f) sample.weights.push_back({id, w});
  }
  const int lx = static_cast<int>(x - chunk.origin_x()),
            lz = static_cast<int>(z - chunk.origin_z());
  sample.height = chunk.Height(lx, lz);
  sample.dominant_biome = chunk.DominantBiome(lx, lz);
  sample.source_biome = chunk.SourceBiome(lx, lz);
  return sample;
}

TEST(RegionPainterTest, ScaleShowsTheCentreColumnOfEachSquare) {
  const ChunkView chunk = TwoBiomeChunk(0, 0);
  const RgbImage full = Render("blend", {0, 0, 7, 7});
  RegionPainter scaled(TwoBiomeWorld(), {0, 0, 7, 6}, {RenderLayer::Kind::kBlend}, 2);
  EXPECT_EQ(scaled.width(), 4);
  EXPECT_EQ(scaled.height(), 4);  // 7 rows: the last square is cut short.
  const std::vector<std::pair<double, double>> points = scaled.Points();
  ASSERT_EQ(points.size(), 16u);
  EXPECT_EQ(points[0], std::make_pair(1.0, 1.0));
  EXPECT_EQ(points[5], std::make_pair(3.0, 3.0));
  EXPECT_EQ(points[15], std::make_pair(7.0, 7.0));
  scaled.Paint(chunk);
  const RgbImage image = scaled.Finish();
  for (int py = 0; py < 4; ++py) {
    for (int px = 0; px < 4; ++px) {
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(Pixel(image, px, py)[k], Pixel(full, 2 * px + 1, 2 * py + 1)[k]) << px << py;
      }
    }
  }
}

// Point samples paint the bytes chunks paint, for every layer that has them, at any scale: the
// viewer's zoomed-out tiles and `render --scale` agree with the chunk path wherever both exist.
TEST(RegionPainterTest, PointSamplesPaintWhatChunksPaint) {
  const ChunkView chunk = TwoBiomeChunk(0, 0);
  for (const char* text : {"dominant", "blend", "source", "height", "weight:2", "weight:5"}) {
    for (int scale : {1, 3}) {
      const BlockRegion region{1, 1, 7, 7};
      RegionPainter from_chunk(TwoBiomeWorld(), region, *ParseRenderLayer(text), scale);
      RegionPainter from_points(TwoBiomeWorld(), region, *ParseRenderLayer(text), scale);
      from_chunk.Paint(chunk);
      for (const auto& [x, z] : from_points.Points()) {
        if (!chunk.ContainsColumn(static_cast<int64_t>(x), static_cast<int64_t>(z))) continue;
        from_points.Paint(static_cast<int64_t>(x), static_cast<int64_t>(z),
                          SampleOf(chunk, static_cast<int64_t>(x), static_cast<int64_t>(z)));
      }
      const RgbImage a = from_chunk.Finish(), b = from_points.Finish();
      EXPECT_EQ(a.pixels, b.pixels) << text << " at scale " << scale;
      EXPECT_NE(std::count(a.pixels.begin(), a.pixels.end(), 0), static_cast<long>(a.pixels.size()))
          << text;
    }
  }
}

// Tiles meet without seams: a column is lit the same whichever region it is rendered in.
TEST(RegionPainterTest, ShadingDoesNotDependOnWhereTheRegionStarts) {
  for (const char* text : {"dominant", "height"}) {
    const RgbImage large = Render(text, {1, 1, 7, 7});
    const RgbImage small = Render(text, {4, 3, 6, 7});
    for (int z = 3; z <= 7; ++z) {
      for (int x = 4; x <= 6; ++x) {
        for (int k = 0; k < 3; ++k) {
          EXPECT_EQ(Pixel(small, x - 4, z - 3)[k], Pixel(large, x - 1, z - 1)[k]) << text;
        }
      }
    }
  }
}

TEST(RegionPainterTest, SplatDrawsATexturesRgbChannels) {
  const RgbImage image = Render("splat:0", {0, 0, 7, 7});
  for (int z = 0; z < 8; ++z) {
    for (int x = 0; x < 8; ++x) {
      EXPECT_EQ(Pixel(image, x, z)[0], x);
      EXPECT_EQ(Pixel(image, x, z)[1], z);
      EXPECT_EQ(Pixel(image, x, z)[2], 7);
    }
  }
  RegionPainter painter(TwoBiomeWorld(), {0, 0, 7, 7}, *ParseRenderLayer("splat:0"));
  EXPECT_TRUE(painter.ChunkOptions(8).splat);
  EXPECT_TRUE(CheckRenderLayer(*ParseRenderLayer("splat:0"), TwoBiomeWorld()).ok());
  absl::Status past = CheckRenderLayer(*ParseRenderLayer("splat:1"), TwoBiomeWorld());
  EXPECT_NE(past.message().find("has 1 splat texture(s)"), absl::string_view::npos) << past;
  // Indices that do not fit an int are past the last texture too, not a negative index.
  for (const char* huge : {"splat:2147483648", "splat:4294967295"}) {
    absl::StatusOr<RenderLayer> layer = ParseRenderLayer(huge);
    ASSERT_TRUE(layer.ok()) << huge;
    EXPECT_EQ(CheckRenderLayer(*layer, TwoBiomeWorld()).code(), absl::StatusCode::kInvalidArgument)
        << huge;
  }
  EXPECT_NE(ParseRenderLayer("splat:x").status().message().find("not a texture index"),
            absl::string_view::npos);
}

TEST(RegionPainterTest, ScaleIsBoundedAndCountsPixelsNotColumns) {
  EXPECT_TRUE(ParseBlockRegion("0,0,65535,65535", 8).ok());
  EXPECT_FALSE(ParseBlockRegion("0,0,65535,65535", 1).ok());
  EXPECT_NE(ParseBlockRegion("0,0,1,1", 0).status().message().find("not in [1, 1024]"),
            absl::string_view::npos);
  EXPECT_FALSE(ParseBlockRegion("0,0,1,1", 1025).ok());
}

// Worlds whose point query reads a few cells are drawn from chunks at fewer scales.
TEST(MaxChunkRenderScaleTest, DependsOnWhatAPointOfTheBlenderCosts) {
  v1::WorldDescription world;
  for (auto [kind, scale] :
       std::vector<std::pair<v1::BlenderKind, int>>{{v1::BLENDER_KIND_SCATTERED, 4},
                                                    {v1::BLENDER_KIND_FULL_RESOLUTION, 4},
                                                    {v1::BLENDER_KIND_CONVOLUTED_GRID, 4},
                                                    {v1::BLENDER_KIND_LERPED_GRID, 4},
                                                    {v1::BLENDER_KIND_JITTERED_CELLS, 2},
                                                    {v1::BLENDER_KIND_PARAMETER_VORONOI, 2}}) {
    world.mutable_config()->set_blender(kind);
    EXPECT_EQ(MaxChunkRenderScale(world), scale) << v1::BlenderKind_Name(kind);
  }
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
