// Encoding of engine results (engine/chunk.h) as worldgen.v1 messages. Floats are copied bit-for-bit.
//
// Thread safety: free functions without shared state; safe for concurrent use.
#ifndef WORLDGEN_SERVER_WIRE_ENCODING_H_
#define WORLDGEN_SERVER_WIRE_ENCODING_H_

#include "engine/chunk.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

// Single-biome chunks (flagged by the engine, or with one layer whose weights are all exactly 1.0f)
// become one BiomeWeights entry with an empty array and single_biome = true; otherwise one entry per
// layer, in the engine's (ascending id) order. Heights, dominant and source biomes and splat textures
// are copied when present.
void EncodeChunk(const ChunkBlend& blend, v1::ChunkData* out);

// Weights in the engine's (ascending id) order; height and source biome only if `options` asked.
void EncodePoint(const PointBlend& blend, const BlendOptions& options, v1::PointWeights* out);

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_WIRE_ENCODING_H_
