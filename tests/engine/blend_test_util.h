// Shared fixtures for the engine's blending tests.
#ifndef WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_
#define WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
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

// World::BlendChunkInPieces against World::BlendChunk on chunk (cx, cz) of `size` (a multiple of
// World::kChunkPiece above it) with every option: the same layers, heights, dominant and source
// biomes and splat textures bit for bit, single_biome exactly for a lone layer of 1.0f (implied by
// BlendChunk's), and the hook called once between each two pieces.
inline void ExpectPiecesEqualTheWholeChunk(const World& world, int64_t cx, int64_t cz, int size) {
  SCOPED_TRACE(::testing::Message() << "chunk " << cx << "," << cz << " of size " << size);
  const BlendOptions all{
      .heights = true, .dominant_biome = true, .source_biome = true, .splat = true};
  const ChunkBlend whole = *world.BlendChunk(cx, cz, size, all);
  int calls = 0;
  const ChunkBlend pieces = *world.BlendChunkInPieces(cx, cz, size, all, nullptr, [&] { ++calls; });
  const int per_side = size / World::kChunkPiece;
  EXPECT_EQ(calls, per_side * per_side - 1);
  ASSERT_EQ(pieces.layers.size(), whole.layers.size());
  for (size_t k = 0; k < whole.layers.size(); ++k) {
    ASSERT_EQ(pieces.layers[k].biome_id, whole.layers[k].biome_id);
    const std::vector<float>& a = pieces.layers[k].weights;
    const std::vector<float>& b = whole.layers[k].weights;
    ASSERT_EQ(a.size(), b.size());
    for (size_t col = 0; col < b.size(); ++col) {
      ASSERT_EQ(FloatBits(a[col]), FloatBits(b[col]))
          << "biome " << whole.layers[k].biome_id << " column " << col;
    }
  }
  ASSERT_EQ(pieces.heights.size(), whole.heights.size());
  for (size_t col = 0; col < whole.heights.size(); ++col) {
    ASSERT_EQ(FloatBits(pieces.heights[col]), FloatBits(whole.heights[col])) << "column " << col;
  }
  EXPECT_EQ(pieces.dominant_biome, whole.dominant_biome);
  EXPECT_EQ(pieces.source_biome, whole.source_biome);
  EXPECT_EQ(pieces.splat_textures, whole.splat_textures);
  const bool lone_layer_of_one =
      whole.layers.size() == 1 &&
      std::all_of(whole.layers[0].weights.begin(), whole.layers[0].weights.end(),
                  [](float w) { return w == 1.0f; });
  EXPECT_EQ(pieces.single_biome, lone_layer_of_one);
  if (whole.single_biome) EXPECT_TRUE(pieces.single_biome);
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
