#include "engine/full_resolution_blender.h"

#include <memory>

#include "engine/square_grid.h"

namespace worldgen {
namespace {

// Every column within r weighs in, so a column costs about pi r^2 kernel evaluations: 48 (the
// largest radius seed 001 measures) keeps a 256-column chunk within a second on one core.
constexpr double kMaxRadius = 48.0;

constexpr BlenderParamDef kParams[] = {
    {.name = "blend_radius", .default_value = 24.0, .min = 1.0, .max = kMaxRadius},
};

absl::Status Validate(const WorldSpec& spec) {
  return ValidateKernelRadii(spec, "full_resolution", 1.0, kMaxRadius,
                             "every column within the radius is summed, so the cost grows with its "
                             "square; at least 1 so a column reaches itself");
}

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source,
                              uint64_t world_uid) {
  return std::make_unique<SquareGridKernelBlender>(BlenderKind::kFullResolution, 1, spec, source,
                                                   world_uid);
}

}  // namespace

const BlenderMethod FullResolutionBlender::kMethod = {BlenderKind::kFullResolution,
                                                      "full_resolution", kParams, &Validate, &Make};

}  // namespace worldgen
