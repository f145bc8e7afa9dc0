#include "engine/convoluted_grid_blender.h"

#include <algorithm>
#include <memory>

#include "engine/square_grid.h"

namespace worldgen {
namespace {

constexpr BlenderParamDef kParams[] = {
    {.name = "interval", .default_value = 8.0, .min = 1.0, .max = 256.0, .integer = true},
    {.name = "blend_radius", .default_value = 24.0, .min = 1.0, .max = 1024.0},
};

absl::Status Validate(const WorldSpec& spec) { return ValidateGridRadii(spec, "convoluted_grid"); }

std::unique_ptr<Blender> Make(const WorldSpec& spec, const BiomeSource& source,
                              uint64_t world_uid) {
  return std::make_unique<SquareGridKernelBlender>(BlenderKind::kConvolutedGrid,
                                                   static_cast<int>(BlenderParam(spec, "interval")),
                                                   spec, source, world_uid);
}

}  // namespace

absl::Status ValidateGridRadii(const WorldSpec& spec, absl::string_view method) {
  const int interval = static_cast<int>(BlenderParam(spec, "interval"));
  return ValidateKernelRadii(spec, method, MinSquareGridRadius(interval),
                             std::min(1024.0, 32.0 * interval),
                             "a radius must cover the grid's largest gap (interval * (1/sqrt(2) + "
                             "1/4)) and span at most 32 intervals");
}

const BlenderMethod ConvolutedGridBlender::kMethod = {BlenderKind::kConvolutedGrid,
                                                      "convoluted_grid", kParams, &Validate, &Make};

}  // namespace worldgen
