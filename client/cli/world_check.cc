#include "client/cli/world_check.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/output.h"
#include "engine/blender.h"
#include "proto/world_config.h"
#include "proto/world_registry.h"

namespace worldgen::cli {

absl::StatusOr<WorldCheck> LoadWorldCheck(const std::vector<std::string>& paths) {
  // As the server reads --world_config: a path may be a comma-separated list.
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> registry =
      WorldRegistry::Load(WorldConfigPaths(paths));
  if (!registry.ok()) return registry.status();
  WorldCheck check;
  for (const std::string& name : (*registry)->names()) {
    CheckedWorld& world = check.worlds.emplace_back();
    world.name = name;
    world.blender = std::string(BlenderName((*registry)->Find(name)->blender().kind()));
    world.fingerprint = (*registry)->fingerprint(name);
  }
  return check;
}

absl::Status CompareWithLive(Client& client, WorldCheck* check) {
  // The default world's description lists every world; each one's fingerprint is its own call.
  absl::StatusOr<v1::WorldDescription> first = client.DescribeWorld("");
  if (!first.ok()) {
    return absl::Status(first.status().code(),
                        absl::StrCat("describing the default world: ", first.status().message()));
  }
  std::map<std::string, std::string> live;
  live[first->config().name()] = first->fingerprint();
  for (const std::string& name : first->available_worlds()) {
    if (live.contains(name)) continue;
    absl::StatusOr<v1::WorldDescription> world = client.DescribeWorld(name);
    if (!world.ok()) {
      return absl::Status(world.status().code(),
                          absl::StrCat("describing world \"", name,
                                       "\" (listed by the service): ", world.status().message()));
    }
    live[name] = world->fingerprint();
  }
  for (CheckedWorld& world : check->worlds) {
    auto it = live.find(world.name);
    if (it == live.end()) continue;
    world.live_fingerprint = it->second;
    live.erase(it);
  }
  for (auto& [name, fingerprint] : live) {
    CheckedWorld& world = check->worlds.emplace_back();
    world.name = name;
    world.live_fingerprint = std::move(fingerprint);
  }
  std::sort(check->worlds.begin(), check->worlds.end(),
            [](const CheckedWorld& a, const CheckedWorld& b) { return a.name < b.name; });
  check->compared = true;
  return absl::OkStatus();
}

WorldVerdict VerdictOf(const CheckedWorld& world, bool compared) {
  if (!compared) return WorldVerdict::kNotCompared;
  if (world.live_fingerprint.empty()) return WorldVerdict::kNew;
  if (world.fingerprint.empty()) return WorldVerdict::kRemoved;
  return world.fingerprint == world.live_fingerprint ? WorldVerdict::kSame : WorldVerdict::kChanged;
}

const char* VerdictName(WorldVerdict verdict) {
  switch (verdict) {
    case WorldVerdict::kNotCompared:
      return "not_compared";
    case WorldVerdict::kNew:
      return "new";
    case WorldVerdict::kSame:
      return "same";
    case WorldVerdict::kChanged:
      return "changed";
    case WorldVerdict::kRemoved:
      return "removed";
  }
  return "?";
}

namespace {

bool ChangesForPlayers(WorldVerdict verdict) {
  return verdict == WorldVerdict::kChanged || verdict == WorldVerdict::kRemoved;
}

// A change players would see that --allow_changed names: shown as allowed in both outputs.
bool IsAllowedChange(WorldVerdict verdict, const std::string& name,
                     const std::set<std::string>& allowed) {
  return ChangesForPlayers(verdict) && allowed.contains(name);
}

}  // namespace

std::vector<std::string> UnintendedChanges(const WorldCheck& check,
                                           const std::set<std::string>& allowed) {
  std::vector<std::string> names;
  for (const CheckedWorld& world : check.worlds) {
    if (ChangesForPlayers(VerdictOf(world, check.compared)) && !allowed.contains(world.name)) {
      names.push_back(world.name);
    }
  }
  return names;
}

std::string WorldCheckText(const WorldCheck& check, const std::set<std::string>& allowed) {
  size_t name_width = 5, blender_width = 7;  // "world", "blender"
  for (const CheckedWorld& world : check.worlds) {
    name_width = std::max(name_width, world.name.size());
    blender_width = std::max(blender_width, world.blender.size());
  }
  const auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::string out = absl::StrFormat("%-*s  %-*s  ", name_width, "world", blender_width, "blender");
  absl::StrAppend(
      &out, check.compared ? "fingerprint       live              verdict\n" : "fingerprint\n");
  std::map<std::string, int> counts;
  for (const CheckedWorld& world : check.worlds) {
    absl::StrAppendFormat(&out, "%-*s  %-*s  ", name_width, world.name, blender_width,
                          or_dash(world.blender));
    if (!check.compared) {
      absl::StrAppend(&out, or_dash(world.fingerprint), "\n");
      continue;
    }
    const WorldVerdict verdict = VerdictOf(world, true);
    ++counts[VerdictName(verdict)];
    absl::StrAppendFormat(&out, "%-16s  %-16s  %s%s\n", or_dash(world.fingerprint),
                          or_dash(world.live_fingerprint), VerdictName(verdict),
                          IsAllowedChange(verdict, world.name, allowed) ? " (allowed)" : "");
  }
  if (!check.compared) {
    absl::StrAppend(&out, check.worlds.size(), " worlds load as worldgen-server loads them\n");
    return out;
  }
  std::vector<std::string> tally;
  for (const auto& [verdict, n] : counts) tally.push_back(absl::StrCat(n, " ", verdict));
  absl::StrAppend(&out, absl::StrJoin(tally, ", "), "\n");
  const std::vector<std::string> unintended = UnintendedChanges(check, allowed);
  if (!unintended.empty()) {
    absl::StrAppend(&out, "players' terrain would change in: ", absl::StrJoin(unintended, ", "),
                    " (give a changed world a new name, or name it in --allow_changed)\n");
  }
  return out;
}

std::string WorldCheckJson(const WorldCheck& check, const std::set<std::string>& allowed) {
  std::vector<std::string> rows;
  for (const CheckedWorld& world : check.worlds) {
    const WorldVerdict verdict = VerdictOf(world, check.compared);
    rows.push_back(absl::StrCat(
        "{\"name\":", JsonString(world.name), ",\"blender\":", JsonString(world.blender),
        ",\"fingerprint\":", JsonString(world.fingerprint), ",\"live_fingerprint\":",
        JsonString(world.live_fingerprint), ",\"verdict\":\"", VerdictName(verdict),
        "\",\"allowed\":", IsAllowedChange(verdict, world.name, allowed) ? "true" : "false", "}"));
  }
  return absl::StrCat("{\"worlds\":[", absl::StrJoin(rows, ","),
                      "],\"compared\":", check.compared ? "true" : "false",
                      ",\"ok\":", UnintendedChanges(check, allowed).empty() ? "true" : "false",
                      "}");
}

}  // namespace worldgen::cli
