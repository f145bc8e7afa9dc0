#include "server/service/world_registry.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace worldgen {

absl::StatusOr<std::unique_ptr<const WorldRegistry>> WorldRegistry::Create(
    std::vector<WorldSpec> extra_worlds) {
  std::unique_ptr<WorldRegistry> registry(new WorldRegistry());
  WorldSpec default_spec = DefaultWorldSpec();
  default_spec.name = std::string(kDefaultWorldName);
  std::vector<WorldSpec> specs;
  specs.push_back(std::move(default_spec));
  for (WorldSpec& spec : extra_worlds) specs.push_back(std::move(spec));

  for (WorldSpec& spec : specs) {
    const std::string name = spec.name;
    if (registry->worlds_.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("world \"", name, "\" is defined twice",
                       name == kDefaultWorldName ? " (\"default\" is the embedded world)" : ""));
    }
    absl::StatusOr<std::shared_ptr<const World>> world = World::Create(std::move(spec));
    if (!world.ok()) {
      return absl::Status(world.status().code(),
                          absl::StrCat("world \"", name, "\": ", world.status().message()));
    }
    registry->worlds_.emplace(name, *std::move(world));
  }
  return std::unique_ptr<const WorldRegistry>(std::move(registry));
}

std::shared_ptr<const World> WorldRegistry::Find(absl::string_view name) const {
  if (name.empty()) name = kDefaultWorldName;
  auto it = worlds_.find(name);
  return it == worlds_.end() ? nullptr : it->second;
}

std::vector<std::string> WorldRegistry::names() const {
  std::vector<std::string> names;
  names.reserve(worlds_.size());
  for (const auto& [name, world] : worlds_) names.push_back(name);
  return names;
}

}  // namespace worldgen
