// Seed 004's chunk height interpolation (HeightMode::kChunkInterpolated): chunk == point bit for
// bit, independence from the request's chunk size, and continuity with a computed bound.
#include "engine/interpolated_heights.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::FloatBits;
using testing::TestCoordinate;

WorldSpec InterpolatedSpec(int chunk_size = 16, double reach = 1.5) {
  WorldSpec spec = DefaultWorldSpec();
  spec.heights = {HeightMode::kChunkInterpolated, chunk_size, reach};
  return spec;
}

TEST(ChunkInterpolatedHeightsTest, ChunkEqualsPointBitForBit) {
  for (auto [chunk_size, reach] : {std::pair{16, 1.5}, std::pair{5, 2.5}, std::pair{64, 1.25}}) {
    std::shared_ptr<const World> world = *World::Create(InterpolatedSpec(chunk_size, reach));
    for (uint64_t k = 0; k < 600; ++k) {
      const int64_t x = TestCoordinate(k, 20, -60000, 60000),
                    z = TestCoordinate(k, 21, -60000, 60000);
      const int size = 4 << (k % 5);
      ChunkBlend chunk =
          *world->BlendChunk(FloorDiv(x, size), FloorDiv(z, size), size, {.heights = true});
      const size_t col =
          static_cast<size_t>(ColumnIndex(size, static_cast<int>(x - chunk.chunk_x * size),
                                          static_cast<int>(z - chunk.chunk_z * size)));
      PointBlend point =
          *world->BlendPoint(static_cast<double>(x), static_cast<double>(z), {.heights = true});
      ASSERT_EQ(FloatBits(chunk.heights[col]), FloatBits(point.height))
          << x << "," << z << " size " << size << " height chunks " << chunk_size;
    }
  }
}

// The height chunks are the world's, not the request's: any request chunk size gives the same bits.
TEST(ChunkInterpolatedHeightsTest, RequestChunkSizeDoesNotChangeHeights) {
  std::shared_ptr<const World> world = *World::Create(InterpolatedSpec(16, 1.5));
  std::map<std::pair<int64_t, int64_t>, uint32_t> reference;
  for (int size : {64, 32, 8, 4}) {
    for (int cz = 0; cz < 64 / size; ++cz) {
      for (int cx = 0; cx < 64 / size; ++cx) {
        ChunkBlend chunk =
            *world->BlendChunk(-64 / size + cx, 2560 / size + cz, size, {.heights = true});
        for (int lz = 0; lz < size; ++lz) {
          for (int lx = 0; lx < size; ++lx) {
            const std::pair<int64_t, int64_t> key{chunk.chunk_x * size + lx,
                                                  chunk.chunk_z * size + lz};
            const uint32_t bits =
                FloatBits(chunk.heights[static_cast<size_t>(ColumnIndex(size, lx, lz))]);
            if (size == 64) {
              reference[key] = bits;
            } else {
              ASSERT_EQ(reference.at(key), bits)
                  << key.first << "," << key.second << " size " << size;
            }
          }
        }
      }
    }
  }
}

// Normalized chunk weights at (x, z).
std::map<std::pair<int64_t, int64_t>, double> Normalized(double x, double z, int chunk_size,
                                                         double reach) {
  std::vector<HeightChunkWeight> chunks;
  HeightChunkWeights(x, z, chunk_size, reach, &chunks);
  double total = 0.0;
  for (const HeightChunkWeight& c : chunks) total += c.weight;
  std::map<std::pair<int64_t, int64_t>, double> out;
  for (const HeightChunkWeight& c : chunks) out[{c.i, c.j}] = c.weight / total;
  return out;
}

// G: the largest change of the normalized weights between neighbouring sample points, half the sum
// of |change| over chunks. The weight field repeats every chunk, so one chunk's columns (and their
// +x, +z neighbours) cover every pair in the world. `offset` shifts the samples off the integer
// columns.
double WeightStepBound(int chunk_size, double reach, double offset = 0.0) {
  double worst = 0.0;
  for (int z = 0; z < chunk_size; ++z) {
    for (int x = 0; x < chunk_size; ++x) {
      const auto a = Normalized(x + offset, z + offset, chunk_size, reach);
      for (auto [dx, dz] : {std::pair{1, 0}, std::pair{0, 1}}) {
        auto b = Normalized(x + dx + offset, z + dz + offset, chunk_size, reach);
        double change = 0.0;
        for (const auto& [key, w] : a) change += std::fabs(w - (b.contains(key) ? b[key] : 0.0));
        for (const auto& [key, w] : b) change += a.contains(key) ? 0.0 : w;
        worst = std::max(worst, change / 2.0);
      }
    }
  }
  return worst;
}

// The seed's formula (reach 1) hands a column from one chunk to the next in a single step at chunk
// corners: the whole height difference appears between two columns. From reach 1.25 on the step is
// a fraction of it, shrinking with the chunk size.
TEST(ChunkInterpolatedHeightsTest, WeightStepIsBoundedAwayFromTheSeedsReach) {
  EXPECT_NEAR(WeightStepBound(16, 1.0, 0.5), 1.0, 1e-12) << "the seed's corner jump";
  const double g16 = WeightStepBound(16, 1.5);
  EXPECT_LT(g16, 0.25);
  EXPECT_LT(WeightStepBound(16, 1.25), 0.4);
  EXPECT_LT(WeightStepBound(16, 2.0), 0.13);
  EXPECT_NEAR(WeightStepBound(32, 1.5), g16 / 2.0, 0.02) << "a step shrinks like 1 / chunk size";
}

// |H(p) - H(q)| <= L + G * spread for neighbouring columns p, q, where L is the largest change of
// any contributing chunk's own height function between p and q (the height functions' slope),
// spread the range of those height functions at q, and G the weight step bound above: H(p) - H(q) =
// Σ w_C(p) (h_C(p) - h_C(q)) + Σ (w_C(p) - w_C(q)) (h_C(q) - m) for any m. Checked everywhere in
// several regions, so across chunk borders and through chunk middles.
TEST(ChunkInterpolatedHeightsTest, NeighbourJumpIsBoundedByTheHeightFunctionsSlope) {
  const WorldSpec spec = InterpolatedSpec(16, 1.5);
  std::shared_ptr<const World> world = *World::Create(spec);
  const HeightField height_field(world->spec());
  const ChunkInterpolatedHeights interpolation(world->spec().heights, world->source(),
                                               height_field);
  const double g = WeightStepBound(16, 1.5);
  int blended_pairs = 0, border_pairs = 0, middle_pairs = 0;
  double worst_blend_share = 0.0;
  for (auto [ox, oz] : {std::pair{-2048, 512}, std::pair{4096, -4096}, std::pair{-9000, -700},
                        std::pair{12000, 12000}, std::pair{300, 30000}}) {
    ChunkBlend chunk = *world->BlendChunk(ox / 64, oz / 64, 64, {.heights = true});
    const int64_t x0 = chunk.chunk_x * 64, z0 = chunk.chunk_z * 64;
    for (int lz = 0; lz < 63; ++lz) {
      for (int lx = 0; lx < 63; ++lx) {
        for (auto [dx, dz] : {std::pair{1, 0}, std::pair{0, 1}}) {
          const double px = static_cast<double>(x0 + lx), pz = static_cast<double>(z0 + lz);
          const double qx = px + dx, qz = pz + dz;
          std::vector<HeightChunkWeight> at_p, at_q;
          HeightChunkWeights(px, pz, 16, 1.5, &at_p);
          HeightChunkWeights(qx, qz, 16, 1.5, &at_q);
          double slope = 0.0, low = 1e300, high = -1e300;
          for (const auto* list : {&at_p, &at_q}) {
            for (const HeightChunkWeight& c : *list) {
              const int biome = interpolation.ChunkBiome(c.i, c.j);
              const double hq = height_field.BiomeHeight(biome, qx, qz);
              slope = std::max(slope, std::fabs(height_field.BiomeHeight(biome, px, pz) - hq));
              low = std::min(low, hq);
              high = std::max(high, hq);
            }
          }
          const float hp = chunk.heights[static_cast<size_t>(ColumnIndex(64, lx, lz))];
          const float hq = chunk.heights[static_cast<size_t>(ColumnIndex(64, lx + dx, lz + dz))];
          const double jump = std::fabs(static_cast<double>(hp) - static_cast<double>(hq));
          // Both heights are rounded to float once.
          const double rounding = 2.0 * std::max(std::fabs(hp), std::fabs(hq)) * 0x1.0p-24;
          ASSERT_LE(jump, slope + g * (high - low) + rounding)
              << "columns " << px << "," << pz << " and " << qx << "," << qz;
          if (high - low > 10.0) {
            ++blended_pairs;
            worst_blend_share = std::max(worst_blend_share, (jump - slope) / (high - low));
          }
          const int64_t xi = x0 + lx;
          if (dx == 1 && FloorDiv(xi, 16) != FloorDiv(xi + 1, 16)) ++border_pairs;
          if (dx == 1 && (xi + 1) % 16 == 8) ++middle_pairs;
        }
      }
    }
  }
  EXPECT_GT(blended_pairs, 500) << "the regions should cross biome borders";
  EXPECT_GT(border_pairs, 500);
  EXPECT_GT(middle_pairs, 500);
  std::printf(
      "weight step bound G = %.4f, worst measured (jump - slope) / spread = %.4f over %d pairs\n",
      g, worst_blend_share, blended_pairs);
  EXPECT_LE(worst_blend_share, g);
  EXPECT_GT(worst_blend_share, 0.0);
}

TEST(ChunkInterpolatedHeightsTest, WeightsMatchTheFormula) {
  // Column (3, 5) with 16-block chunks, reach 1.5 (24 blocks): chunk (0, 0), centre (8, 8),
  // manhattan 8 -> (24 - 8)^4; chunk (-1, 0), centre (-8, 8): 11 + 3 = 14 -> 10^4; chunk (0, -1),
  // centre (8, -8): 5 + 13 = 18 -> 6^4; chunk (1, 0), centre (24, 8): 21 + 3 = 24 -> 0.
  std::vector<HeightChunkWeight> chunks;
  HeightChunkWeights(3.0, 5.0, 16, 1.5, &chunks);
  std::map<std::pair<int64_t, int64_t>, double> w;
  for (const HeightChunkWeight& c : chunks) w[{c.i, c.j}] = c.weight;
  EXPECT_EQ(w.at({0, 0}), 65536.0);
  EXPECT_EQ(w.at({-1, 0}), 10000.0);
  EXPECT_EQ(w.at({0, -1}), 1296.0);
  EXPECT_FALSE(w.contains({1, 0}));
  for (size_t k = 1; k < chunks.size(); ++k) {
    EXPECT_TRUE(chunks[k - 1].j < chunks[k].j ||
                (chunks[k - 1].j == chunks[k].j && chunks[k - 1].i < chunks[k].i));
  }
}

}  // namespace
}  // namespace worldgen
