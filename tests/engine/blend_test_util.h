// Shared fixtures for the engine's blending tests.
#ifndef WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_
#define WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "engine/fingerprint.h"
#include "engine/floor_div.h"
#include "engine/hash.h"
#include "engine/world.h"
#include "gtest/gtest.h"

namespace worldgen::testing {

inline const World& DefaultWorld() {
  static const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  return *world;
}

// The default world's biomes with coastlines (HeightMode::kCoastal, engine/coast.h): the ocean is
// water, every other biome land above sea level 58, and the climate varies about twice as fast, so
// that a few hundred blocks hold several coasts.
inline WorldSpec CoastalWorldSpec() {
  WorldSpec spec = DefaultWorldSpec();
  spec.name = "coastal";
  AddDefaultCoasts(&spec);
  spec.climate.temperature_frequency = 0.0012;
  spec.climate.humidity_frequency = 0.0015;
  spec.climate.octaves = 4;
  spec.heights.coast_width = 16.0;
  spec.heights.shore_slope = 0.25;
  return spec;
}

// The default world with two cave biomes (3D biomes): lush caves from y = -64 up to 0 and the
// deep dark below -32, with climate points that compete with the surface biomes.
inline WorldSpec CaveWorldSpec() {
  WorldSpec spec = DefaultWorldSpec();
  spec.name = "caves";
  BiomeSpec lush;
  lush.id = 100;
  lush.name = "lush_caves";
  lush.temperature = 0.3;
  lush.humidity = 0.9;
  lush.cave = CaveBand{-64.0, 0.0};
  BiomeSpec dark = lush;
  dark.id = 101;
  dark.name = "deep_dark";
  dark.temperature = -0.9;
  dark.humidity = -0.6;
  dark.cave = CaveBand{-64.0, -32.0};
  spec.biomes.push_back(lush);
  spec.biomes.push_back(dark);
  spec.caves.frequency = 1.0 / 64.0;
  return spec;
}

// The golden hashes' helpers live with the engine's fingerprint (engine/fingerprint.h).
using worldgen::FloatBits;
using worldgen::Fnv1a;
using worldgen::HashChunk;
using worldgen::HashVolume;

// A chunk blended in pieces (World::BlendChunk on chunk (cx, cz) of `size`, a multiple of
// World::kChunkPiece above it) against the same columns blended as chunks of 16, each whole, with
// every option: the same weights per column and biome, heights, dominant and source biomes and
// splat texels, bit for bit; the layers those of biomes with a weight somewhere; single_biome
// exactly for a lone layer of 1.0f (so whenever every chunk of 16 was flagged one biome); and
// BlendChunkInPieces the same, its hook called once between each two pieces.
inline void ExpectPiecesEqualTheWholeChunk(const World& world, int64_t cx, int64_t cz, int size) {
  SCOPED_TRACE(::testing::Message() << "chunk " << cx << "," << cz << " of size " << size);
  const BlendOptions all{
      .heights = true, .dominant_biome = true, .source_biome = true, .splat = true};
  const ChunkBlend big = *world.BlendChunk(cx, cz, size, all);
  int calls = 0;
  const ChunkBlend hooked = *world.BlendChunkInPieces(cx, cz, size, all, nullptr, [&] { ++calls; });
  const int per_side = size / World::kChunkPiece;
  EXPECT_EQ(calls, per_side * per_side - 1);
  EXPECT_EQ(HashChunk(hooked), HashChunk(big));
  std::set<uint32_t> reached;  // biomes with a weight somewhere, from the chunks of 16
  bool all_flagged = true;
  std::set<uint32_t> flagged_biomes;
  constexpr int kTile = 16;
  const int textures = static_cast<int>(big.splat_textures.size());
  for (int tz = 0; tz < size / kTile; ++tz) {
    for (int tx = 0; tx < size / kTile; ++tx) {
      const ChunkBlend tile =
          *world.BlendChunk(cx * (size / kTile) + tx, cz * (size / kTile) + tz, kTile, all);
      all_flagged &= tile.single_biome;
      if (tile.single_biome) flagged_biomes.insert(tile.layers[0].biome_id);
      ASSERT_EQ(static_cast<int>(tile.splat_textures.size()), textures);
      for (int lz = 0; lz < kTile; ++lz) {
        for (int lx = 0; lx < kTile; ++lx) {
          const size_t t = static_cast<size_t>(ColumnIndex(kTile, lx, lz));
          const size_t b = static_cast<size_t>(ColumnIndex(size, tx * kTile + lx, tz * kTile + lz));
          std::map<uint32_t, uint32_t> from_tile, from_big;
          for (const BiomeLayer& layer : tile.layers) {
            if (layer.weights[t] != 0.0f) from_tile[layer.biome_id] = FloatBits(layer.weights[t]);
            if (layer.weights[t] != 0.0f) reached.insert(layer.biome_id);
          }
          for (const BiomeLayer& layer : big.layers) {
            if (layer.weights[b] != 0.0f) from_big[layer.biome_id] = FloatBits(layer.weights[b]);
          }
          ASSERT_EQ(from_big, from_tile) << "column " << b;
          ASSERT_EQ(FloatBits(big.heights[b]), FloatBits(tile.heights[t])) << "column " << b;
          ASSERT_EQ(big.dominant_biome[b], tile.dominant_biome[t]) << "column " << b;
          ASSERT_EQ(big.source_biome[b], tile.source_biome[t]) << "column " << b;
          for (int k = 0; k < textures; ++k) {
            for (int c = 0; c < 4; ++c) {
              ASSERT_EQ(big.splat_textures[static_cast<size_t>(k)][4 * b + c],
                        tile.splat_textures[static_cast<size_t>(k)][4 * t + c])
                  << "texture " << k << " column " << b;
            }
          }
        }
      }
    }
  }
  std::set<uint32_t> layers;
  for (const BiomeLayer& layer : big.layers) layers.insert(layer.biome_id);
  EXPECT_EQ(layers, reached);
  const bool lone_layer_of_one =
      big.layers.size() == 1 &&
      std::all_of(big.layers[0].weights.begin(), big.layers[0].weights.end(),
                  [](float w) { return w == 1.0f; });
  EXPECT_EQ(big.single_biome, lone_layer_of_one);
  if (all_flagged && flagged_biomes.size() == 1) {
    EXPECT_TRUE(big.single_biome);
  }
}

// `points` equal `expected` in order: positions bit for bit and biomes.
inline void ExpectSamePoints(const std::vector<SamplingPoint>& points,
                             const std::vector<SamplingPoint>& expected) {
  ASSERT_EQ(points.size(), expected.size());
  for (size_t n = 0; n < points.size(); ++n) {
    EXPECT_EQ(points[n].x, expected[n].x) << "point " << n;
    EXPECT_EQ(points[n].z, expected[n].z) << "point " << n;
    EXPECT_EQ(points[n].biome, expected[n].biome) << "point " << n;
  }
}

// A deterministic pseudo-random integer in [lo, hi] for test case k.
inline int64_t TestCoordinate(uint64_t k, uint64_t stream, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(
                  HashCoords(0x7e57, static_cast<int64_t>(k), static_cast<int64_t>(stream)) %
                  static_cast<uint64_t>(hi - lo + 1));
}

// A straight walk through the world for continuity checks: start (x, z) and direction (radians).
struct WalkLine {
  double x = 0.0, z = 0.0, angle = 0.0;
};

using PointWeights = std::vector<std::pair<int, float>>;

// The largest change of any biome's weight (BlendPoint) between consecutive points `step` blocks
// apart along each line, over `length` blocks. `on_step`, if set, sees every step: the positions
// before and after and the weights there.
inline double WorstWeightStep(
    const Blender& blender, int biome_count, const std::vector<WalkLine>& lines, double length,
    double step,
    const std::function<void(double, double, double, double, const PointWeights&,
                             const PointWeights&)>& on_step = nullptr) {
  double worst = 0.0;
  PointWeights before, after;
  std::vector<float> change(static_cast<size_t>(biome_count));
  for (const WalkLine& line : lines) {
    double x = line.x, z = line.z;
    blender.BlendPoint(x, z, nullptr, &before);
    for (int k = 0; k < static_cast<int>(length / step); ++k) {
      const double next_x = x + std::cos(line.angle) * step,
                   next_z = z + std::sin(line.angle) * step;
      blender.BlendPoint(next_x, next_z, nullptr, &after);
      if (on_step) on_step(x, z, next_x, next_z, before, after);
      std::fill(change.begin(), change.end(), 0.0f);
      for (auto [biome, w] : before) change[static_cast<size_t>(biome)] -= w;
      for (auto [biome, w] : after) change[static_cast<size_t>(biome)] += w;
      for (float d : change) worst = std::max(worst, static_cast<double>(std::fabs(d)));
      std::swap(before, after);
      x = next_x;
      z = next_z;
    }
  }
  return worst;
}

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_
