// A world's complete, plain-value description: seed, biome table, climate and blending parameters.
//
// A WorldSpec is all a replica needs to reproduce a world bit-for-bit. It has no behaviour beyond
// validation; World (world.h) turns a valid spec into something that answers queries.
#ifndef WORLDGEN_ENGINE_WORLD_SPEC_H_
#define WORLDGEN_ENGINE_WORLD_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace worldgen {

// World coordinates (block columns) are limited to [-kMaxWorldCoordinate, kMaxWorldCoordinate] on both
// axes. Inside this range every lattice and noise computation is exact enough in double precision that
// borders and heights keep their full detail.
inline constexpr double kMaxWorldCoordinate = 33554432.0;  // 2^25 blocks

// The engine accepts chunks of 1..kMaxChunkSize columns per side (services may restrict further).
inline constexpr int kMaxChunkSize = 1024;

// At most this many biomes per world (biome indices are stored as uint16).
inline constexpr int kMaxBiomes = 1024;

struct BiomeSpec {
  uint32_t id = 0;     // Stable identifier used on the wire; unique within a world.
  std::string name;    // Unique, non-empty, at most 64 characters.
  uint8_t color_r = 0, color_g = 0, color_b = 0;  // Display colour (maps, splat previews).
  // Climate point: the climate biome source picks the biome whose point is nearest to the local
  // (temperature, humidity) noise values. Both in [-1, 1].
  double temperature = 0.0;
  double humidity = 0.0;
  // Height function of this biome alone: base + amplitude * fractal noise(frequency). Blocks.
  double height_base = 64.0;       // [-100000, 100000]
  double height_amplitude = 8.0;   // [0, 100000]
  double height_frequency = 0.01;  // cycles per block, (0, 1]
  // Kernel radius of this biome's lattice samples, in blocks; 0 means the world's blend_radius.
  // Larger radii make this biome's borders softer and wider (seed 000's per-biome radius).
  double blend_radius = 0.0;
};

enum class BiomeSourceKind {
  kClimate,  // Two fractal noise fields (temperature, humidity) pick the nearest climate point.
};

struct ClimateSpec {
  double temperature_frequency = 1.0 / 2400.0;  // cycles per block, (0, 1]
  double humidity_frequency = 1.0 / 1800.0;     // cycles per block, (0, 1]
  int octaves = 3;                              // [1, 8]
};

struct WorldSpec {
  std::string name = "default";  // Non-empty, at most 64 characters of [A-Za-z0-9_.-].
  uint64_t seed = 0;
  std::vector<BiomeSpec> biomes;  // 1..kMaxBiomes entries; any order (the engine sorts by id).
  BiomeSourceKind biome_source = BiomeSourceKind::kClimate;
  ClimateSpec climate;
  // Spacing of the jittered triangular sampling lattice, in blocks: [1, 256].
  double sampling_interval = 8.0;
  // Jitter of each lattice point, as a fraction of sampling_interval: [0, 0.5].
  double jitter = 0.35;
  // Kernel radius r of w = max(0, r^2 - d^2)^2, in blocks. Must be at least MinBlendRadius(...) so
  // every column sees a sample, and at most 32 sampling intervals (and 1024 blocks).
  double blend_radius = 24.0;
  // Chunk size (columns per side) used when a request names none: a power of two in [4, 256].
  int chunk_size = 16;
};

// Smallest kernel radius accepted for a lattice: the farthest a column can be from its nearest
// jittered point, plus a padding of a quarter interval so every column has a strictly positive total
// weight and borders have a minimum width.
double MinBlendRadius(double sampling_interval, double jitter);

// OK, or INVALID_ARGUMENT naming the first offending field, its value, and the accepted range.
absl::Status ValidateWorldSpec(const WorldSpec& spec);

// The embedded default world: 11 biomes (ocean, beach, plains, forest, desert, savanna, taiga,
// mountains, snowy tundra, swamp, jungle) with climate points and heights that render well.
WorldSpec DefaultWorldSpec();

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_WORLD_SPEC_H_
