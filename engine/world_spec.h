// A world's complete, plain-value description: seed, biome table, climate and blending parameters.
//
// A WorldSpec is all a replica needs to reproduce a world bit-for-bit. It has no behaviour beyond
// validation; World (world.h) turns a valid spec into something that answers queries.
#ifndef WORLDGEN_ENGINE_WORLD_SPEC_H_
#define WORLDGEN_ENGINE_WORLD_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace worldgen {

// World coordinates (block columns) are limited to [-kMaxWorldCoordinate, kMaxWorldCoordinate] on
// both axes. Inside this range every lattice and noise computation is exact enough in double
// precision that borders and heights keep their full detail.
inline constexpr double kMaxWorldCoordinate = 33554432.0;  // 2^25 blocks

// The engine accepts chunks of 1..kMaxChunkSize columns per side (services may restrict further).
inline constexpr int kMaxChunkSize = 1024;

// 3D (a world's cave biomes, World::BlendVolume): block y is limited to [-kMaxWorldY, kMaxWorldY];
// a volume is blended in sections of kSectionHeight blocks (Minecraft's chunk sections), each cut
// into cubic cells of a power-of-two side dividing the section height and the chunk size, and one
// chunk's volume holds at most kMaxVolumeCells cells (2^18: a 16 x 1024 x 16 column of single
// blocks, or 64 x 256 x 64 at cell 4).
inline constexpr int64_t kMaxWorldY = 65536;
inline constexpr int kSectionHeight = 16;
inline constexpr int64_t kMaxVolumeCells = int64_t{1} << 18;

// At most this many biomes per world (biome indices are stored as uint16).
inline constexpr int kMaxBiomes = 1024;

// Whether a biome is dry land or under water, for coastlines (HeightMode::kCoastal) and the lab's
// coast figures. Values are stable: they are the wire enum's values (worldgen.v1.BiomeSurface).
enum class BiomeSurface {
  kUnspecified = 0,
  kLand = 1,   // Its own height stays above the world's sea level.
  kWater = 2,  // Its own height stays below the world's sea level.
};

// A cave biome's vertical extent (3D biomes, engine/volume_blender.h): absolute blocks.
struct CaveBand {
  double y_min = -64.0;  // Inclusive; [-100000, 100000], below y_max.
  double y_max = 0.0;    // Exclusive.
};

struct BiomeSpec {
  uint32_t id = 0;   // Stable identifier used on the wire; unique within a world.
  std::string name;  // Unique, non-empty, at most 64 characters.
  uint8_t color_r = 0, color_g = 0, color_b = 0;  // Display colour (maps, splat previews).
  // Climate point: the climate biome source picks the biome whose point is nearest to the local
  // (temperature, humidity) noise values. Both in [-1, 1].
  double temperature = 0.0;
  double humidity = 0.0;
  // Height function of this biome alone: base + amplitude * fractal noise(frequency). Blocks.
  double height_base = 64.0;       // [-100000, 100000]
  double height_amplitude = 8.0;   // [0, 100000]
  double height_frequency = 0.01;  // cycles per block, (0, 1]
  // Kernel radius of this biome's samples, in blocks, for the kernel blenders (scattered,
  // full_resolution, convoluted_grid, lerped_grid); 0 means the method's blend_radius. Larger radii
  // make this biome's borders softer and wider (seed 000's per-biome radius).
  double blend_radius = 0.0;
  // Blending radius of this biome's climate point for the parameter_voronoi blender, in climate
  // (parameter-space) units, not blocks; 0 means the method's own (climate_radius, or the automatic
  // radius). A pair of biomes blends over the mean of their two radii (seed 000).
  double parameter_radius = 0.0;
  // Land or water: the raw map's land/water border is where HeightMode::kCoastal puts sea level.
  // Under kCoastal every biome must declare one, a land biome's lowest height (height_base −
  // height_amplitude) must lie above heights.sea_level and a water biome's highest below it.
  BiomeSurface surface = BiomeSurface::kUnspecified;
  // Set: a cave biome. The 2D map never picks it; the 3D map (CaveBiomeSource) may, at y in the
  // band, where the cave climate at (x, y, z) is nearer its climate point (temperature, humidity)
  // than the surface biome's and any other cave biome's there.
  std::optional<CaveBand> cave;
};

// Values are stable: they are the wire enum's values (worldgen.v1.BiomeSourceKind).
enum class BiomeSourceKind {
  kClimate = 0,  // Two fractal noise fields (temperature, humidity) pick the nearest climate point.
  kNoiseMax = 1,  // One fractal noise field per biome; the highest value wins (seed 001's demo).
};

struct ClimateSpec {
  double temperature_frequency = 1.0 / 2400.0;  // cycles per block, (0, 1]
  double humidity_frequency = 1.0 / 1800.0;     // cycles per block, (0, 1]
  int octaves = 3;                              // [1, 8]
};

// Parameters of 3D blending (engine/volume_blender.h), the scattered method's in 3D.
struct VolumeBlendParams {
  double sampling_interval = 8.0;  // Horizontal lattice spacing, blocks, [1, 256].
  double jitter = 0.35;            // Fraction of the interval (kernel space), [0, 0.5].
  double blend_radius = 24.0;      // Horizontal kernel radius, blocks, up to 8 intervals.
  // Vertical kernel radius, blocks, [max(1, blend_radius / sampling_interval), blend_radius]
  // (ScatteredVolumeBlender::Validate).
  double vertical_blend_radius = 8.0;
};

// The cave climate: two 3D fractal noise fields (temperature, humidity) that cave biomes and the
// surface biome above them compete in, below ground; read only when a biome declares a cave band.
struct CaveSpec {
  double frequency = 1.0 / 96.0;  // Cycles per block, (0, 1].
  int octaves = 2;                // [1, 8]
  VolumeBlendParams blending;
};

// The noise-max source: biome k's field is FractalNoise2D(seed derived from the world seed and the
// biome's id, x, z, frequency, octaves, lacunarity, gain). The defaults are seed 001's demo map.
struct NoiseMaxSpec {
  double frequency = 0.002;  // cycles per block of the first octave, (0, 1]
  int octaves = 3;           // [1, 8]
  double lacunarity = 2.0;   // frequency factor between octaves, [1, 8]
  double gain = 0.5;         // amplitude factor between octaves, [0.01, 1]
};

// The blending methods (engine/blender.h describes each and the contract they all keep).
// Values are stable: they are the wire enum's values (worldgen.v1.BlenderKind).
enum class BlenderKind {
  kScattered = 0,  // Normalized sparse convolution over a jittered triangular lattice (seed 001).
  kFullResolution = 1,  // The same kernel over every integer column (seed 001's reference blur).
  kConvolutedGrid = 2,  // The same kernel over the vertices of a square grid (seed 001).
  kLerpedGrid = 3,  // Convoluted-grid weights at the grid vertices, bilinear in between (seed 001).
  kParameterVoronoi = 4,  // Smoothstep blending of the Voronoi cells of climate points (seed 000).
  kJitteredCells = 5,     // Jittered cells, closest-cell transition curve, domain warp (seed 003).
};

// How a column's height is made (World::BlendChunk and BlendPoint with heights requested).
// Values are stable: they are the wire enum's values (worldgen.v1.HeightMode).
enum class HeightMode {
  // Σ blended weight × biome height, over the blender's weights (ascending id, double).
  kBlendedWeights = 0,
  // Seed 004: the plane is cut into square height chunks of HeightSpec::chunk_size blocks (anchored
  // at
  // the world origin, independent of any request's chunk size); chunk C has one biome, the source's
  // biome at its centre, and so one height function h_C. A column's height is
  // Σ_C h_C · w_C / Σ_C w_C with w_C = max(0, reach · chunk_size − manhattan(column, centre_C))^4
  // (engine/interpolated_heights.h). Independent of the blender.
  kChunkInterpolated = 1,
  // Blended weights with the coastline pinned to the raw map (engine/coast.h): every biome is land
  // or water, and a column's height is above HeightSpec::sea_level exactly where the raw map's
  // biome nearest to it is land. Within coast_width blocks of the raw land/water border the height
  // follows a smooth profile of the distance to it; farther away it is the blended relief of that
  // side (the blended height itself where the weights hold only that side's biomes).
  kCoastal = 2,
};

struct HeightSpec {
  HeightMode mode = HeightMode::kBlendedWeights;
  // kChunkInterpolated only. Side of a height chunk in blocks, [2, 1024].
  int chunk_size = 16;
  // kChunkInterpolated only. Reach of a chunk's weight, as a multiple of chunk_size, [1.25, 4]. The
  // seed's formula is reach 1, where every weight vanishes at the chunk corners and the height
  // jumps there (README, "Heights"); from 1.25 on the weights are smooth everywhere.
  double blend_reach = 1.5;
  // The height of the water surface, in blocks, [-100000, 100000]. kCoastal puts the coastline
  // here; the lab measures every mode's sea-level contour against the raw land/water border.
  double sea_level = 63.0;
  // kCoastal only. Width of the coastal profile on each side of the raw border, blocks, [1, 64].
  double coast_width = 16.0;
  // kCoastal only. The terrain's slope where it crosses sea level, blocks per block, [0, 4] (0: a
  // flat shore); lowered where the land or the sea bed rises less than coast_width * slope / 3,
  // so that the profile never overshoots.
  double shore_slope = 0.25;
};

// Which blender a world uses and its parameters, by name. The names, defaults and ranges of each
// method's parameters are declared by the method itself (BlenderMethod::params in blender.h); a
// parameter absent here takes its default. Validation rejects names the method does not declare.
struct BlenderSpec {
  BlenderKind kind = BlenderKind::kScattered;
  std::map<std::string, double> params;
};

struct WorldSpec {
  std::string name = "default";  // Non-empty, at most 64 characters of [A-Za-z0-9_.-].
  uint64_t seed = 0;
  std::vector<BiomeSpec> biomes;  // 1..kMaxBiomes entries; any order (the engine sorts by id).
  BiomeSourceKind biome_source = BiomeSourceKind::kClimate;
  ClimateSpec climate;     // Read by the climate source only.
  NoiseMaxSpec noise_max;  // Read by the noise-max source only.
  BlenderSpec blender;
  HeightSpec heights;
  CaveSpec caves;  // 3D biomes: read only when a biome has a cave band.
  // Chunk size (columns per side) used when a request names none: a power of two in [4, 256].
  int chunk_size = 16;
};

// The chunk sizes a service accepts in requests and world configs: powers of two in
// [kMinServedChunkSize, kMaxServedChunkSize]. (The engine itself blends any size in [1,
// kMaxChunkSize].)
inline constexpr int kMinServedChunkSize = 4;
inline constexpr int kMaxServedChunkSize = 256;
bool IsServedChunkSize(int64_t size);

// Dense indices (spec.biomes' order) of the surface biomes: every biome without a cave band. Cave
// biomes belong to the 3D map only (engine/volume_blender.h), so every 2D source and blender picks
// from these.
std::vector<uint16_t> SurfaceBiomes(const WorldSpec& spec);
// Per dense index: 1 for a cave biome, 0 for a surface one (the 3D blenders' `is_cave`).
std::vector<char> CaveFlags(const WorldSpec& spec);

// OK, or INVALID_ARGUMENT naming the first offending field, its value, and the accepted range.
absl::Status ValidateWorldSpec(const WorldSpec& spec);

// The embedded default world: 11 biomes (ocean, beach, plains, forest, desert, savanna, taiga,
// mountains, snowy tundra, swamp, jungle) with climate points and heights that render well.
WorldSpec DefaultWorldSpec();

// Coastlines (HeightMode::kCoastal, engine/coast.h) for a world with the default world's biome
// names: its ocean is water, every other biome land above sea level 58 (the default's heights put
// the ocean floor near 40 and the land near 62 and above).
void AddDefaultCoasts(WorldSpec* spec);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_WORLD_SPEC_H_
