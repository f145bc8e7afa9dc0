// Fingerprints of what the engine answers: 64-bit FNV-1a hashes over the exact bits of blends, and
// OutputFingerprint, one world's answers to a fixed set of probes.
//
// Replicas promise bit-identical answers (engine/world.h), whatever their CPU, SIMD variant or
// build. OutputFingerprint makes that promise observable where it matters, on every running
// replica: two processes whose fingerprints of a world differ answer some request differently
// (another world config, another engine version, or a determinism bug), and equal fingerprints
// mean they agreed bit for bit on probes that take every path of an answer: the world's method,
// heights, the per-column options, far coordinates, fractional points and 3D cells.
//
//   uint64_t f = OutputFingerprint(**World::Create(DefaultWorldSpec()));
//
// The tests' golden hashes use HashChunk and HashVolume too.
#ifndef WORLDGEN_ENGINE_FINGERPRINT_H_
#define WORLDGEN_ENGINE_FINGERPRINT_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "engine/chunk.h"
#include "engine/world.h"

namespace worldgen {

inline uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// FNV-1a, 64-bit, fed 8 bytes at a time (little end first).
class Fnv1a {
 public:
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;

  explicit Fnv1a(uint64_t h = kOffsetBasis) : h_(h) {}
  void Add(uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h_ ^= (v >> (8 * k)) & 0xff;
      h_ *= 0x100000001b3ULL;
    }
  }
  // One byte at a time.
  void AddBytes(std::string_view bytes) {
    for (unsigned char c : bytes) {
      h_ ^= c;
      h_ *= 0x100000001b3ULL;
    }
  }
  // Each layer's biome id, then its weights' bits.
  void Add(const std::vector<BiomeLayer>& layers) {
    for (const BiomeLayer& layer : layers) {
      Add(layer.biome_id);
      for (float w : layer.weights) Add(FloatBits(w));
    }
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_;
};

// Everything a chunk answers with: position, single_biome, ids and weight bits, then whichever of
// heights, dominant biomes, source biomes and splat bytes it holds (absent ones add nothing).
uint64_t HashChunk(const ChunkBlend& chunk, uint64_t h = Fnv1a::kOffsetBasis);
// Everything a 3D chunk answers with: position, cell, and per section its y, single_biome, ids and
// weight bits, dominant and source biomes.
uint64_t HashVolume(const VolumeBlend& volume, uint64_t h = Fnv1a::kOffsetBasis);
// A point's weights (ids and bits), height bits, dominant and source biome.
uint64_t HashPoint(const PointBlend& point, uint64_t h = Fnv1a::kOffsetBasis);

// The hash of `world`'s answers to fixed probes, without a cache: 2D chunks of sizes 16 and 32
// with every per-column option (heights, dominant and source biomes, splat textures) near the
// origin and out to 2^24 blocks, points at fractional coordinates, and two 3D chunks of two
// sections in cells of 4 with 3D points, from one section below the lowest cave band's floor (from
// y = 0 in a world without caves). It costs about a dozen chunk blends: 1.4 ms for the default
// world, 1.9 for the tests' cave world, at most 17 ms at the ends of the parameter ranges (AMD
// EPYC, Zen 4). A world whose probes all lie inside one biome fingerprints its heights and ids
// only; callers that must tell configs apart hash the config as well (the server does).
uint64_t OutputFingerprint(const World& world);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_FINGERPRINT_H_
