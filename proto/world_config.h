// Conversion between the wire/JSON form of a world (worldgen.v1.WorldConfig) and the engine's
// WorldSpec, and loading world configs from JSON files (protobuf's JSON mapping).
//
// Absent optional proto fields take the engine's defaults (engine/world_spec.h); a converted spec
// is always checked with ValidateWorldSpec, so a returned WorldSpec is valid.
//
// Thread safety: free functions without shared state; safe for concurrent use.
#ifndef WORLDGEN_PROTO_WORLD_CONFIG_H_
#define WORLDGEN_PROTO_WORLD_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/world_spec.h"
#include "worldgen/v1/world_config.pb.h"

namespace worldgen {

// INVALID_ARGUMENT naming the field (e.g. "biomes[2].color.r") and the accepted range if `config`
// is not a valid world. expected_fingerprint is checked for its form only and not kept: it is the
// file's expectation of the world, not part of it (WorldRegistry::Load compares it).
absl::StatusOr<WorldSpec> WorldSpecFromConfig(const v1::WorldConfig& config);

// Every field set explicitly (optional ones included, and every parameter of the spec's blender in
// its method's message, the deprecated top-level aliases never), biomes in the spec's order.
// WorldSpecFromConfig(WorldConfigFromSpec(s)) == s for every valid s, up to blender parameters left
// at their defaults in s, which come back set explicitly.
//
// Blenders are mapped by name, with no per-method code: enum value BLENDER_KIND_<NAME> is the
// engine method "<name>" (engine/blender.h), and the fields of WorldConfig's message field "<name>"
// are its parameters (all doubles).
v1::WorldConfig WorldConfigFromSpec(const WorldSpec& spec);

// Parses one WorldConfig in protobuf JSON form and converts it. Unknown fields are errors.
absl::StatusOr<WorldSpec> WorldSpecFromJson(absl::string_view json);

// Largest world config file accepted, and most *.json files one directory may hold.
inline constexpr int64_t kMaxWorldConfigBytes = int64_t{1} << 20;
inline constexpr size_t kMaxWorldConfigFilesPerDirectory = 1024;

// The paths --world_config values name: each value split at its commas (empty parts dropped).
std::vector<std::string> WorldConfigPaths(const std::vector<std::string>& values);

// Loads every world named by `paths`: each is a JSON file, or a directory whose *.json files are
// all loaded (sorted by name, not recursive). Files are read without blocking and with bounded
// memory: a path that is not a regular file (FIFO, device, socket, directory), a symlink loop, or a
// file over kMaxWorldConfigBytes is an error. Never throws. Errors name the file and say why.
absl::StatusOr<std::vector<WorldSpec>> LoadWorldSpecs(const std::vector<std::string>& paths);

// One loaded world config file: its world, and the fingerprint the file expects it to have
// (WorldConfig.expected_fingerprint, checked by WorldRegistry::Load; empty when it sets none).
struct WorldFile {
  std::string path;
  WorldSpec spec;
  std::string expected_fingerprint;
};
// LoadWorldSpecs with each world's file.
absl::StatusOr<std::vector<WorldFile>> LoadWorldFiles(const std::vector<std::string>& paths);

}  // namespace worldgen

#endif  // WORLDGEN_PROTO_WORLD_CONFIG_H_
