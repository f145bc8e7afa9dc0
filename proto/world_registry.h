// WorldRegistry: the worlds a server answers for, by name. Always holds the embedded world
// "default" (DefaultWorldSpec()) plus any loaded from configs. The server builds its worlds with
// it, and `worldgen check` (client/cli/world_check.h) the same way, so both refuse the same configs
// and compute the same fingerprints.
//
// Thread safety: immutable after Create; all methods are safe for concurrent use.
#ifndef WORLDGEN_PROTO_WORLD_REGISTRY_H_
#define WORLDGEN_PROTO_WORLD_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/world.h"
#include "engine/world_spec.h"

namespace worldgen {

class WorldRegistry {
 public:
  static constexpr absl::string_view kDefaultWorldName = "default";

  // Builds "default" and every world of `extra_worlds`. INVALID_ARGUMENT if a name repeats
  // (including "default") or a spec is invalid; the message names the world.
  static absl::StatusOr<std::unique_ptr<const WorldRegistry>> Create(
      std::vector<WorldSpec> extra_worlds);

  // The server's worlds from its --world_config paths (LoadWorldFiles, then Create), each checked
  // against the fingerprint its file expects (WorldConfig.expected_fingerprint):
  // FAILED_PRECONDITION naming the file, the world and both fingerprints when they differ.
  static absl::StatusOr<std::unique_ptr<const WorldRegistry>> Load(
      const std::vector<std::string>& paths);

  // The world called `name` (empty = "default"), or null if there is none.
  std::shared_ptr<const World> Find(absl::string_view name) const;

  // The fingerprint of world `name` (WorldDescription.fingerprint: 16 hex digits hashing its config
  // with every default filled in and OutputFingerprint, engine/fingerprint.h), computed once in
  // Create; empty if there is no such world.
  std::string fingerprint(absl::string_view name) const;

  // Every world name, sorted.
  std::vector<std::string> names() const;

 private:
  WorldRegistry() = default;
  struct Entry {
    std::shared_ptr<const World> world;
    std::string fingerprint;
  };
  std::map<std::string, Entry, std::less<>> worlds_;
};

}  // namespace worldgen

#endif  // WORLDGEN_PROTO_WORLD_REGISTRY_H_
