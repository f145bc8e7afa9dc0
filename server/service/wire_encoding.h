// Encoding of engine results (engine/chunk.h) as worldgen.v1 messages. Floats are copied
// bit-for-bit.
//
// Thread safety: free functions without shared state; safe for concurrent use.
#ifndef WORLDGEN_SERVER_SERVICE_WIRE_ENCODING_H_
#define WORLDGEN_SERVER_SERVICE_WIRE_ENCODING_H_

#include <cstdint>

#include "engine/chunk.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

// Single-biome chunks (flagged by the engine, or with one layer whose weights are all exactly 1.0f)
// become one BiomeWeights entry with an empty array and single_biome = true; otherwise one entry
// per layer, in the engine's (ascending id) order. Heights, dominant and source biomes and splat
// textures are copied when present.
void EncodeChunk(const ChunkBlend& blend, v1::ChunkData* out);

// A 3D chunk (World::BlendVolume): coord, chunk_size, cell_size and one ChunkSection per section,
// each single_biome as EncodeChunk decides it for a chunk.
void EncodeVolume(const VolumeBlend& blend, v1::ChunkData* out);

// Weights in the engine's (ascending id) order; height and source biome only if `options` asked.
void EncodePoint(const PointBlend& blend, const BlendOptions& options, v1::PointWeights* out);

// Upper bounds of the serialized size of one ChunkData of `chunk_size`² columns from a world with
// `biome_count` biomes, of one SampleWeightsResponse of `points` points, and of one
// ListSamplingPointsResponse of `points` sampling points: what the server
// reserves for a reply before blending it (CallScheduler's reply budget). Tests check encoded
// replies against them.
int64_t MaxEncodedChunkBytes(int chunk_size, int biome_count, const BlendOptions& options);
// The same for a 3D chunk of `sections` sections in cells of `cell` blocks (options: dominant and
// source biome only).
int64_t MaxEncodedVolumeBytes(int chunk_size, int cell, int64_t sections, int biome_count,
                              const BlendOptions& options);
int64_t MaxEncodedSampleBytes(int64_t points, int biome_count, const BlendOptions& options);
int64_t MaxEncodedSamplingPointsBytes(int64_t points);

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_WIRE_ENCODING_H_
