// `worldgen check`: world config files checked the way worldgen-server loads them at start, and,
// before a rollout, compared with what the live service serves.
//
// A world's fingerprint (WorldDescription.fingerprint) hashes its config and the engine's answers
// to fixed probes, so a world whose fingerprint would change is a world whose terrain changes for
// players who already have it: an edited file, or an engine release that answers differently.
// The check computes the fingerprints the servers will export from the files and this binary's
// engine (use the CLI of the release being deployed), then asks the live service for its own.
//
//   absl::StatusOr<WorldCheck> check = LoadWorldCheck({"docker/worlds"});
//   CompareWithLive(client, &*check);   // optional
//   std::cout << WorldCheckText(*check, allowed);
//
// Thread safety: free functions without shared state.
#ifndef WORLDGEN_CLIENT_CLI_WORLD_CHECK_H_
#define WORLDGEN_CLIENT_CLI_WORLD_CHECK_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/worldgen_client.h"

namespace worldgen::cli {

struct CheckedWorld {
  std::string name;
  // From the files (empty for a world only the live service serves).
  std::string blender;
  std::string fingerprint;
  // From the live service (empty when it does not serve the world, or was not asked).
  std::string live_fingerprint;
};

struct WorldCheck {
  std::vector<CheckedWorld> worlds;  // Sorted by name.
  bool compared = false;             // CompareWithLive succeeded.
};

// Loads every world of `paths` (files or directories of *.json) as the server's --world_config
// does (WorldRegistry::Load), the embedded "default" included, and fingerprints each. The errors
// are the ones the server would stop with (the file, the field and the reason; a name defined
// twice; a world that is not the fingerprint its file expects).
absl::StatusOr<WorldCheck> LoadWorldCheck(const std::vector<std::string>& paths);

// Asks `client`'s service for every world it serves (the default world's available_worlds) and
// each one's fingerprint; adds the worlds only it serves. An RPC error is returned as it came,
// with the world named.
absl::Status CompareWithLive(Client& client, WorldCheck* check);

enum class WorldVerdict {
  kNotCompared,  // No live service asked.
  kNew,          // In the files only: players do not have it yet.
  kSame,         // Same fingerprint: the rollout leaves it as players know it.
  kChanged,      // Another fingerprint: its terrain changes for players who have it.
  kRemoved,      // Served live, not in the files: calls for it will get NOT_FOUND.
};
WorldVerdict VerdictOf(const CheckedWorld& world, bool compared);
const char* VerdictName(WorldVerdict verdict);

// The worlds whose verdict is changed or removed and whose name is not in `allowed`: what makes
// the check fail.
std::vector<std::string> UnintendedChanges(const WorldCheck& check,
                                           const std::set<std::string>& allowed);

// One row per world (name, blender, fingerprint, and with a comparison the live fingerprint and
// the verdict, "(allowed)" beside an allowed change), then a summary line.
std::string WorldCheckText(const WorldCheck& check, const std::set<std::string>& allowed);
// The same as one line of JSON: {"worlds":[{"name", "blender", "fingerprint",
// "live_fingerprint", "verdict", "allowed"}...], "compared", "ok"}.
std::string WorldCheckJson(const WorldCheck& check, const std::set<std::string>& allowed);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_WORLD_CHECK_H_
