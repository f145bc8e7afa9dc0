// Fuzz target: world-config JSON -> validation -> engine. Any input either is refused with a status
// or gives a spec that round-trips through the proto and builds a world that blends a point.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/world.h"
#include "proto/world_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<worldgen::WorldSpec> spec = worldgen::WorldSpecFromJson(json);
  if (!spec.ok()) return 0;
  absl::StatusOr<worldgen::WorldSpec> again =
      worldgen::WorldSpecFromConfig(worldgen::WorldConfigFromSpec(*spec));
  if (!again.ok() || worldgen::WorldConfigFromSpec(*again).SerializeAsString() !=
                         worldgen::WorldConfigFromSpec(*spec).SerializeAsString()) {
    std::abort();  // A valid spec must survive its own proto form.
  }
  absl::StatusOr<std::shared_ptr<const worldgen::World>> world =
      worldgen::World::Create(*std::move(spec));
  if (!world.ok()) std::abort();  // Validation passed, so the engine must accept it.
  if (!(*world)->BlendPoint(0.5, -0.5, {}, nullptr).ok()) std::abort();
  return 0;
}
