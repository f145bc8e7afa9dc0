// Splat textures: a chunk's blend as RGBA8 textures that a terrain shader samples directly.
//
// Layout. A world of B biomes has dense biome indices d = 0..B-1 (the position of the biome in its
// biome table sorted by id). Its splat output is SplatTextureCount(B) = ceil(B / 4) textures;
// channel k (0 R, 1 G, 2 B, 3 A) of texture t holds the weight of dense index 4t + k, and the
// channels past B - 1 in the last texture are always 0. A texture is size x size texels in
// ColumnIndex order (chunk.h: row-major, x fastest), 4 bytes per texel: byte (lz * size + lx) * 4 +
// k.
//
// Quantization is per column, over all of its channels in all textures together: the bytes of a
// column sum to exactly 255 (QuantizeSplatWeights). A biome with weight 0 gets 0; a column covered
// by one biome gets 255 in that biome's channel. The bytes depend only on the column's weights,
// which are bit-identical whatever chunk (position, size) contains the column, so the texels are
// too.
//
// Thread safety: pure functions.
#ifndef WORLDGEN_ENGINE_SPLAT_H_
#define WORLDGEN_ENGINE_SPLAT_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "engine/blender.h"

namespace worldgen {

inline constexpr int kSplatChannels = 4;

// The largest splat payload of one chunk, in bytes: 4 MiB. It admits every chunk of a world of up
// to 64 biomes at the largest served size (256), and every world (up to kMaxBiomes = 1024 biomes,
// 256 textures) at chunk size 64 and below.
inline constexpr int64_t kMaxSplatBytesPerChunk = int64_t{4} << 20;

// ceil(biome_count / 4).
int SplatTextureCount(int biome_count);

// SplatTextureCount(biome_count) * size * size * 4.
int64_t SplatBytes(int biome_count, int size);

// OK, or INVALID_ARGUMENT with the numbers if SplatBytes(biome_count, size) exceeds
// kMaxSplatBytesPerChunk.
absl::Status ValidateSplatSize(int biome_count, int size);

// Largest-remainder quantization of one column's weights to bytes that sum to exactly 255. Each
// weight gets floor(255 * w / S) (S = the sum of the weights, in order, in double), and the units
// still missing to 255 go one each to the largest remainders, ties to the lower position. `weights`
// are finite and >= 0 with a positive sum; `out` has the same length. Deterministic (double
// arithmetic in a fixed order).
void QuantizeSplatWeights(std::span<const float> weights, std::span<uint8_t> out);

// The splat textures of a block of size x size columns from its layers (dense biome indices,
// ascending, ColumnIndex layout: what Blender::BlendColumns returns) in a world of `biome_count`
// biomes. Call ValidateSplatSize first.
std::vector<std::vector<uint8_t>> SplatTextures(std::span<const IndexedLayer> layers,
                                                int biome_count, int size);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_SPLAT_H_
