// Shared fixtures for the engine's blending tests.
#ifndef WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_
#define WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "engine/floor_div.h"
#include "engine/hash.h"
#include "engine/world.h"

namespace worldgen::testing {

inline const World& DefaultWorld() {
  static const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  return *world;
}

inline uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// FNV-1a over everything a chunk answers with: ids, weight bits, heights, dominant biomes.
inline uint64_t HashChunk(const ChunkBlend& chunk, uint64_t h = 0xcbf29ce484222325ULL) {
  auto add = [&h](uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h ^= (v >> (8 * k)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  add(static_cast<uint64_t>(chunk.chunk_x));
  add(static_cast<uint64_t>(chunk.chunk_z));
  add(static_cast<uint64_t>(chunk.single_biome));
  for (const BiomeLayer& layer : chunk.layers) {
    add(layer.biome_id);
    for (float w : layer.weights) add(FloatBits(w));
  }
  for (float v : chunk.heights) add(FloatBits(v));
  for (uint32_t v : chunk.dominant_biome) add(v);
  return h;
}

// A deterministic pseudo-random integer in [lo, hi] for test case k.
inline int64_t TestCoordinate(uint64_t k, uint64_t stream, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(HashCoords(0x7e57, static_cast<int64_t>(k),
                                              static_cast<int64_t>(stream)) %
                                   static_cast<uint64_t>(hi - lo + 1));
}

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_ENGINE_BLEND_TEST_UTIL_H_
