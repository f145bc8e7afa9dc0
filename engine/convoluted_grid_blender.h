// ConvolutedGridBlender: seed 001's "convoluted grid". The biome map is sampled on the vertices of
// a square grid of spacing `interval` anchored at the world origin, and every column is blended by
// normalized sparse convolution over those vertices. Smooth, but borders are pulled toward the
// grid's axes (measured as grid lock by the quality metrics).
//
// Parameters (world config message `convoluted_grid`): interval (whole blocks, [1, 256]),
// blend_radius (blocks, at least interval * (1/sqrt(2) + 1/4), at most 32 intervals; per-biome
// radii allowed). Implemented as a SquareGridKernelBlender.
#ifndef WORLDGEN_ENGINE_CONVOLUTED_GRID_BLENDER_H_
#define WORLDGEN_ENGINE_CONVOLUTED_GRID_BLENDER_H_

#include "absl/status/status.h"
#include "engine/blender.h"

namespace worldgen {

struct ConvolutedGridBlender {
  static const BlenderMethod kMethod;
};

// The grid methods' shared radius rule: `method`'s blend_radius and per-biome radii within
// [MinSquareGridRadius(interval), min(1024, 32 * interval)].
absl::Status ValidateGridRadii(const WorldSpec& spec, absl::string_view method);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_CONVOLUTED_GRID_BLENDER_H_
