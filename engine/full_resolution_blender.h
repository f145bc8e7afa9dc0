// FullResolutionBlender: seed 001's reference blur. Every integer column within the kernel radius
// contributes max(0, r^2 - d^2)^2 to its own biome's weight, normalized per column; the ideal the
// sparse methods approximate, and the slowest (cost grows with r^2 per column).
//
// Parameters (world config message `full_resolution`): blend_radius (blocks, [1, 48]; per-biome
// radii allowed). Implemented as a SquareGridKernelBlender of spacing 1.
#ifndef WORLDGEN_ENGINE_FULL_RESOLUTION_BLENDER_H_
#define WORLDGEN_ENGINE_FULL_RESOLUTION_BLENDER_H_

#include "engine/blender.h"

namespace worldgen {

struct FullResolutionBlender {
  static const BlenderMethod kMethod;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_FULL_RESOLUTION_BLENDER_H_
