#include "proto/world_registry.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/fingerprint.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/world_config.h"

namespace worldgen {
namespace {

// The config as DescribeWorld sends it, serialized deterministically, then what the engine answers.
std::string FingerprintOf(const World& world) {
  std::string config;
  {
    google::protobuf::io::StringOutputStream stream(&config);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    WorldConfigFromSpec(world.spec()).SerializeToCodedStream(&coded);
  }
  Fnv1a fnv;
  fnv.AddBytes(config);
  fnv.Add(OutputFingerprint(world));
  return absl::StrFormat("%016x", fnv.value());
}

}  // namespace

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
    std::string fingerprint = FingerprintOf(**world);
    registry->worlds_.emplace(name, Entry{*std::move(world), std::move(fingerprint)});
  }
  return std::unique_ptr<const WorldRegistry>(std::move(registry));
}

absl::StatusOr<std::unique_ptr<const WorldRegistry>> WorldRegistry::Load(
    const std::vector<std::string>& paths) {
  absl::StatusOr<std::vector<WorldFile>> files = LoadWorldFiles(paths);
  if (!files.ok()) return files.status();
  // A name defined twice, said with its files (Create knows only the worlds).
  absl::flat_hash_map<std::string, std::string> file_of;
  for (const WorldFile& file : *files) {
    if (file.spec.name == kDefaultWorldName) {
      return absl::InvalidArgumentError(absl::StrCat(file.path, ": world \"", kDefaultWorldName,
                                                     "\" is the embedded world's name"));
    }
    auto [it, inserted] = file_of.emplace(file.spec.name, file.path);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("world \"", file.spec.name,
                                                     "\" is defined twice: in ", it->second,
                                                     " and in ", file.path));
    }
  }
  std::vector<WorldSpec> specs;
  specs.reserve(files->size());
  for (const WorldFile& file : *files) specs.push_back(file.spec);
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> registry = Create(std::move(specs));
  if (!registry.ok()) return registry.status();
  for (const WorldFile& file : *files) {
    if (file.expected_fingerprint.empty()) continue;
    const std::string actual = (*registry)->fingerprint(file.spec.name);
    if (actual == file.expected_fingerprint) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        file.path, ": world \"", file.spec.name, "\" has fingerprint ", actual,
        ", not its expected_fingerprint ", file.expected_fingerprint,
        ": this config or this engine answers differently from the world the file pins, so "
        "players would get other terrain. Serve a changed world under a new name; if the change "
        "is intended, set expected_fingerprint to ",
        actual));
  }
  return registry;
}

std::shared_ptr<const World> WorldRegistry::Find(absl::string_view name) const {
  if (name.empty()) name = kDefaultWorldName;
  auto it = worlds_.find(name);
  return it == worlds_.end() ? nullptr : it->second.world;
}

std::string WorldRegistry::fingerprint(absl::string_view name) const {
  if (name.empty()) name = kDefaultWorldName;
  auto it = worlds_.find(name);
  return it == worlds_.end() ? std::string() : it->second.fingerprint;
}

std::vector<std::string> WorldRegistry::names() const {
  std::vector<std::string> names;
  names.reserve(worlds_.size());
  for (const auto& [name, world] : worlds_) names.push_back(name);
  return names;
}

}  // namespace worldgen
