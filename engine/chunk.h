// Results of blending: a chunk of columns, or one point.
#ifndef WORLDGEN_ENGINE_CHUNK_H_
#define WORLDGEN_ENGINE_CHUNK_H_

#include <cstdint>
#include <vector>

namespace worldgen {

// Column layout used by every per-column array of a chunk: row-major with x fastest,
//   index = (z - chunk_z * size) * size + (x - chunk_x * size),
// so column (x, z) of chunk (cx, cz) is world column (cx * size + lx, cz * size + lz) and sits at
// lz * size + lx. A column's sample point is its integer corner (x, z), not its centre.
inline int ColumnIndex(int size, int local_x, int local_z) { return local_z * size + local_x; }

// One biome's weights over a chunk.
struct BiomeLayer {
  uint32_t biome_id = 0;
  std::vector<float> weights;  // size * size values in [0, 1], ColumnIndex layout.
};

// The blend of one chunk. Sparse: only biomes whose weight is non-zero somewhere in the chunk
// appear, sorted by biome id. For every column the layers' weights sum to 1 (within float
// rounding).
struct ChunkBlend {
  int64_t chunk_x = 0;
  int64_t chunk_z = 0;
  int size = 0;
  // True when every lattice sample near the chunk has the same biome: then `layers` has exactly one
  // entry whose weights are all exactly 1.0f. For a chunk blended in pieces (World::BlendChunk),
  // true exactly when that is so.
  bool single_biome = false;
  std::vector<BiomeLayer> layers;
  std::vector<float> heights;            // Blended height per column (if requested), else empty.
  std::vector<uint32_t> dominant_biome;  // Arg-max biome id per column (if requested), else empty.
  // The biome source's own, unblended biome id at each column (if requested), else empty.
  std::vector<uint32_t> source_biome;
  // RGBA8 splat textures (if requested), else empty: see engine/splat.h for the layout.
  std::vector<std::vector<uint8_t>> splat_textures;
};

struct BiomeWeight {
  uint32_t biome_id = 0;
  float weight = 0.0f;
};

// The blend at one point: non-zero weights only, sorted by biome id.
struct PointBlend {
  std::vector<BiomeWeight> weights;
  float height = 0.0f;          // Blended height (if requested), else 0.
  uint32_t dominant_biome = 0;  // Arg-max biome id; ties go to the lowest id.
  uint32_t source_biome = 0;    // The biome source's unblended biome id (if requested), else 0.
};

// 3D: the blend of one chunk section (World::BlendVolume), kSectionHeight blocks high, in cubic
// cells of `cell` blocks. With m = size / cell, the section holds m * (kSectionHeight / cell) * m
// cells in section order, y then z then x:
//   index = (ly * m + lz) * m + lx,
// and cell (lx, ly, lz) is blended at its lowest corner (chunk_x * size + cell * lx, min_y +
// cell * ly, chunk_z * size + cell * lz). Sparse per section: only biomes with a non-zero weight
// in some cell of the section, ascending id; in every cell the weights sum to 1 (within float
// rounding).
struct SectionBlend {
  int64_t min_y = 0;
  // Every cell is one biome at weight exactly 1.0f: one layer, all 1.0f.
  bool single_biome = false;
  std::vector<BiomeLayer> layers;        // Weights in section order.
  std::vector<uint32_t> dominant_biome;  // Arg-max biome id per cell (if requested), else empty.
  // The 3D biome map's own, unblended biome id at each cell (if requested), else empty.
  std::vector<uint32_t> source_biome;
};

// 3D: the blend of a chunk's vertical range, one SectionBlend per section, ascending y.
struct VolumeBlend {
  int64_t chunk_x = 0;
  int64_t chunk_z = 0;
  int size = 0;  // Columns per chunk side.
  int cell = 0;  // Blocks per cell side.
  std::vector<SectionBlend> sections;
};

// What to compute besides weights.
struct BlendOptions {
  bool heights = false;
  bool dominant_biome = false;
  // The biome source's unblended biome at each column / the point: the raw map the blender samples.
  bool source_biome = false;
  // Chunks only: the weights as RGBA8 splat textures (engine/splat.h), bounded by
  // kMaxSplatBytesPerChunk.
  bool splat = false;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_CHUNK_H_
