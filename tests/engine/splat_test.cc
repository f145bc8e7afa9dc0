// Splat textures (engine/splat.h): the quantization on its own, the texture layout, the size limit,
// and the textures World::BlendChunk builds for every blender (per column, so chunk == point and
// every chunk size agree).
#include "engine/splat.h"

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TestCoordinate;

std::vector<uint8_t> Quantize(const std::vector<float>& weights) {
  std::vector<uint8_t> out(weights.size(), 0xAA);
  QuantizeSplatWeights(weights, out);
  return out;
}

int Sum(const std::vector<uint8_t>& bytes) {
  return std::accumulate(bytes.begin(), bytes.end(), 0);
}

TEST(QuantizeSplatWeightsTest, OneBiomeGetsEverything) {
  EXPECT_THAT(Quantize({1.0f}), ElementsAre(255));
  EXPECT_THAT(Quantize({0.0f, 1.0f, 0.0f}), ElementsAre(0, 255, 0));
}

// The seed rounds each weight to a byte on its own (and clamps the running value): two halves give
// 128 + 128 = 256, six sixths 6 x 43 = 258, and the sum is lost. Largest remainder keeps it at 255,
// giving the missing units to the lower positions when remainders tie.
TEST(QuantizeSplatWeightsTest, SumsTo255WhereRoundingEachWeightDoesNot) {
  EXPECT_THAT(Quantize({0.5f, 0.5f}), ElementsAre(128, 127));
  const float sixth = 1.0f / 6.0f;
  EXPECT_THAT(Quantize({sixth, sixth, sixth, sixth, sixth, sixth}),
              ElementsAre(43, 43, 43, 42, 42, 42));
  EXPECT_THAT(Quantize({0.25f, 0.25f, 0.25f, 0.25f}), ElementsAre(64, 64, 64, 63));
  // 0.003 * 255 = 0.765 rounds up on its own; 0.997 * 255 = 254.235 keeps 254.
  EXPECT_THAT(Quantize({0.997f, 0.003f}), ElementsAre(254, 1));
  // 253.98 + 0.459 + 0.561: the two largest remainders (positions 0 and 2) take the two missing
  // units.
  EXPECT_THAT(Quantize({0.996f, 0.0018f, 0.0022f}), ElementsAre(254, 0, 1));
}

TEST(QuantizeSplatWeightsTest, RandomColumnsSumToExactly255AndStayWithinOneUnit) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = trial < 19990 ? 1 + static_cast<int>(rng() % 12) : 1024;
    std::vector<float> weights(static_cast<size_t>(n));
    double total = 0.0;
    for (float& w : weights) {
      // A third of the weights are zero; the rest span several orders of magnitude.
      w = rng() % 3 == 0 ? 0.0f
                         : std::ldexp(static_cast<float>(rng() % 1000 + 1), -(int(rng() % 20)));
      total += w;
    }
    if (total == 0.0) {
      weights[0] = 1.0f;
      total = 1.0;
    }
    // Normalized in float, like a blender's output: the sum is 1 only within rounding.
    for (float& w : weights) w = static_cast<float>(w / total);
    const std::vector<uint8_t> bytes = Quantize(weights);
    ASSERT_EQ(Sum(bytes), 255) << "trial " << trial;
    double sum = 0.0;
    for (float w : weights) sum += w;
    for (size_t i = 0; i < weights.size(); ++i) {
      const double exact = 255.0 * weights[i] / sum;
      ASSERT_LT(std::fabs(bytes[i] - exact), 1.0) << "trial " << trial << " weight " << i;
      if (weights[i] == 0.0f) {
        ASSERT_EQ(bytes[i], 0) << "trial " << trial;
      }
    }
    ASSERT_EQ(Quantize(weights), bytes) << "not deterministic";
  }
}

TEST(SplatLayoutTest, OneTexturePerFourBiomes) {
  for (auto [biomes, textures] : std::vector<std::pair<int, int>>{
           {1, 1}, {3, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 3}, {11, 3}, {1023, 256}, {1024, 256}}) {
    EXPECT_EQ(SplatTextureCount(biomes), textures) << biomes;
    EXPECT_EQ(SplatBytes(biomes, 16), int64_t{textures} * 16 * 16 * 4) << biomes;
    IndexedLayer only{biomes - 1, std::vector<float>(16 * 16, 1.0f)};
    std::vector<std::vector<uint8_t>> out = SplatTextures({&only, 1}, biomes, 16);
    ASSERT_EQ(out.size(), static_cast<size_t>(textures)) << biomes;
    for (const std::vector<uint8_t>& texture : out) EXPECT_EQ(texture.size(), 16u * 16 * 4);
    // The last biome is channel (B-1) % 4 of the last texture: 255 in every texel.
    for (size_t texel = 0; texel < 256; ++texel) {
      ASSERT_EQ(out.back()[texel * 4 + static_cast<size_t>((biomes - 1) % 4)], 255) << biomes;
    }
  }
}

// Dense index d is channel d % 4 of texture d / 4, and texel (lx, lz) is bytes (lz * size + lx)
// * 4..: three biomes (dense 0, 5 and 9 of 10) whose weights differ along x and z.
TEST(SplatLayoutTest, ChannelsAndTexelsAreWhereTheLayoutSays) {
  constexpr int kSize = 5;
  std::vector<IndexedLayer> layers = {{0, {}}, {5, {}}, {9, {}}};
  for (int lz = 0; lz < kSize; ++lz) {
    for (int lx = 0; lx < kSize; ++lx) {
      const float a = 0.1f * static_cast<float>(lx), b = 0.05f * static_cast<float>(lz);
      layers[0].weights.push_back(a);
      layers[1].weights.push_back(b);
      layers[2].weights.push_back(1.0f - a - b);
    }
  }
  std::vector<std::vector<uint8_t>> textures = SplatTextures(layers, 10, kSize);
  ASSERT_EQ(textures.size(), 3u);
  for (int lz = 0; lz < kSize; ++lz) {
    for (int lx = 0; lx < kSize; ++lx) {
      const size_t texel = static_cast<size_t>(lz * kSize + lx) * 4;
      std::vector<float> column;
      for (const IndexedLayer& layer : layers) {
        if (layer.weights[static_cast<size_t>(lz * kSize + lx)] != 0.0f) {
          column.push_back(layer.weights[static_cast<size_t>(lz * kSize + lx)]);
        }
      }
      const std::vector<uint8_t> want = Quantize(column);
      std::vector<uint8_t> got;
      if (lx > 0) got.push_back(textures[0][texel + 0]);  // Dense 0: texture 0, R.
      if (lz > 0) got.push_back(textures[1][texel + 1]);  // Dense 5: texture 1, G.
      got.push_back(textures[2][texel + 1]);              // Dense 9: texture 2, G.
      EXPECT_EQ(got, want) << lx << ", " << lz;
      int sum = 0;
      for (const std::vector<uint8_t>& texture : textures) {
        for (int k = 0; k < 4; ++k) sum += texture[texel + static_cast<size_t>(k)];
      }
      EXPECT_EQ(sum, 255) << lx << ", " << lz;
      // Nothing else is written: dense 1..4, 6..8 and the unused 10, 11 stay 0.
      for (auto [t, k] : std::vector<std::pair<int, int>>{
               {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 2}, {1, 3}, {2, 0}, {2, 2}, {2, 3}}) {
        EXPECT_EQ(textures[static_cast<size_t>(t)][texel + static_cast<size_t>(k)], 0);
      }
    }
  }
}

TEST(SplatLimitTest, RefusesPayloadsOverTheCapWithTheNumbers) {
  EXPECT_TRUE(ValidateSplatSize(64, 256).ok());   // 16 x 256 KiB = the cap exactly.
  EXPECT_TRUE(ValidateSplatSize(1024, 64).ok());  // 256 x 16 KiB = the cap exactly.
  absl::Status over = ValidateSplatSize(65, 256);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.message(),
              HasSubstr("17 textures x 256 x 256 texels x 4 bytes = 4456448 bytes"));
  EXPECT_THAT(over.message(), HasSubstr("limit of 4194304 bytes"));
  EXPECT_EQ(ValidateSplatSize(1024, 1024).code(), absl::StatusCode::kInvalidArgument);

  // The world refuses before blending.
  WorldSpec spec = DefaultWorldSpec();
  spec.biomes.clear();
  for (int i = 0; i < 65; ++i) {
    BiomeSpec biome;
    biome.id = static_cast<uint32_t>(i);
    biome.name = absl::StrCat("b", i);
    biome.temperature = -1.0 + i / 32.0;
    spec.biomes.push_back(biome);
  }
  std::shared_ptr<const World> world = *World::Create(spec);
  EXPECT_EQ(world->BlendChunk(0, 0, 256, {.splat = true}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<ChunkBlend> fits = world->BlendChunk(0, 0, 128, {.splat = true});
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->splat_textures.size(), 17u);
}

// For every blender: the chunk's texels are the quantized BlendPoint weights of each column (chunk
// == point), the same bytes from chunks of 8, 16 and 32, 255 per texel over all textures.
class SplatWorldTest : public ::testing::TestWithParam<BlenderKind> {};

TEST_P(SplatWorldTest, TexelsArePerColumnAndAgreeAcrossChunkSizesAndPoints) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {GetParam(), {}};
  std::shared_ptr<const World> world = *World::Create(spec);
  const int biome_count = static_cast<int>(world->spec().biomes.size());
  ASSERT_EQ(SplatTextureCount(biome_count), 3);  // 11 biomes: more than the seed's fixed two.
  int border_texels = 0;
  for (uint64_t k = 0; k < 12; ++k) {
    // A 32-column block and its 8- and 16-column sub-chunks.
    const int64_t bx = TestCoordinate(k, 10, -300, 300), bz = TestCoordinate(k, 11, -300, 300);
    ChunkBlend big = *world->BlendChunk(bx, bz, 32, {.splat = true});
    ASSERT_EQ(big.splat_textures.size(), 3u);
    for (int size : {8, 16}) {
      const int per = 32 / size;
      for (int sz = 0; sz < per; ++sz) {
        for (int sx = 0; sx < per; ++sx) {
          ChunkBlend small =
              *world->BlendChunk(bx * per + sx, bz * per + sz, size, {.splat = true});
          for (int lz = 0; lz < size; ++lz) {
            for (int lx = 0; lx < size; ++lx) {
              const size_t s = static_cast<size_t>(ColumnIndex(size, lx, lz)) * 4;
              const size_t b =
                  static_cast<size_t>(ColumnIndex(32, sx * size + lx, sz * size + lz)) * 4;
              for (size_t t = 0; t < 3; ++t) {
                for (size_t c = 0; c < 4; ++c) {
                  ASSERT_EQ(small.splat_textures[t][s + c], big.splat_textures[t][b + c]);
                }
              }
            }
          }
        }
      }
    }
    for (int lz = 0; lz < 32; lz += 3) {
      for (int lx = 0; lx < 32; lx += 3) {
        const double x = static_cast<double>(bx * 32 + lx), z = static_cast<double>(bz * 32 + lz);
        PointBlend point = *world->BlendPoint(x, z, {});
        std::vector<float> weights;
        for (const BiomeWeight& w : point.weights) weights.push_back(w.weight);
        const std::vector<uint8_t> want = Quantize(weights);
        const size_t texel = static_cast<size_t>(ColumnIndex(32, lx, lz)) * 4;
        std::vector<uint8_t> got;
        int sum = 0;
        for (size_t d = 0; d < static_cast<size_t>(biome_count); ++d) {
          const uint8_t byte = big.splat_textures[d / 4][texel + d % 4];
          sum += byte;
          // Point weights list non-zero biomes in id (= dense) order.
          const uint32_t id = world->spec().biomes[d].id;
          for (const BiomeWeight& w : point.weights) {
            if (w.biome_id == id) got.push_back(byte);
          }
        }
        ASSERT_EQ(sum, 255) << x << ", " << z;
        ASSERT_EQ(got, want) << x << ", " << z;
        border_texels += weights.size() > 1;
      }
    }
  }
  EXPECT_GT(border_texels, 0);
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, SplatWorldTest, ::testing::ValuesIn([] {
                           std::vector<BlenderKind> kinds;
                           for (const BlenderMethod* m : BlenderMethods()) kinds.push_back(m->kind);
                           return kinds;
                         }()),
                         [](const ::testing::TestParamInfo<BlenderKind>& info) {
                           return std::string(BlenderName(info.param));
                         });

}  // namespace
}  // namespace worldgen
