// What the `worldgen` CLI prints: proto3 JSON for scripts (--json) and plain text for people.
//
// JSON output is the proto3 JSON mapping of the response message (worldgen.v1.WorldDescription,
// ChunkData, SampleWeightsResponse) with the .proto field names and every field printed, on one
// line. Floats are printed with enough digits to parse back to the same float, so a script that
// rounds each number to float32 recovers the exact bits.
#ifndef WORLDGEN_CLIENT_CLI_OUTPUT_H_
#define WORLDGEN_CLIENT_CLI_OUTPUT_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/chunk_view.h"
#include "google/protobuf/message.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen::cli {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// `text` as a JSON string (quoted and escaped); text that is not UTF-8 becomes "(not UTF-8)".
std::string JsonString(absl::string_view text);

// Biome id -> name, from a world description.
absl::flat_hash_map<uint32_t, std::string> BiomeNames(const v1::WorldDescription& world);

// World name, seed, blender parameters, limits and the biome table.
std::string DescribeText(const v1::WorldDescription& world);

// The chunk's biomes (id, name, mean/min/max weight), then for each biome its weights as a grid
// (rows are z, columns x), then heights (if present), dominant biomes and source biomes (if
// present).
std::string ChunkText(const ChunkView& chunk, const v1::WorldDescription& world);

// A 3D chunk (ChunkView::is_volume): a header, then per section from the top down its y range, its
// biomes with their mean weight over the cells, and its dominant biome per cell row by row (cells
// of one y level as a grid, rows z, columns x; source biomes beside them when present).
std::string VolumeText(const ChunkView& chunk, const v1::WorldDescription& world);

// One line per point: coordinates, dominant biome, height and source biome (if requested) and the
// weights.
std::string SamplesText(const v1::SampleWeightsRequest& request,
                        const v1::SampleWeightsResponse& response,
                        const v1::WorldDescription& world);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_OUTPUT_H_
