// The full-resolution 3D reference (issue 25): seed 001's full-resolution blur (the 2D
// FullResolutionBlender) generalised to a cave world's 3D blend. It is the ideal that the
// scattered 3D blend (engine/volume_blender.h) approximates, and worldgen-lab --slices measures
// that blend against it.
//
// At a point p, every integer block b within the kernel's reach counts with
// max(0, r^2 - d(p, b)^2)^2, where d is measured in kernel space (y scaled by the world's
// y_scale). A block whose 3D-map biome is a cave biome counts for that biome; every other block
// counts for "the surface", whose share goes to the world's own 2D blend of p's column:
//     w_b(p) = S_b(p) / S(p) + (S_surface(p) / S(p)) * w2D_b(x, z).
// The radius, y scale, kernel, surface formula and its arithmetic (ConvolveVolumePoint) and w2D
// (world.blender()) are all the world's own. So the reference differs from World::BlendPoint(x, y,
// z) only in where the 3D map is sampled: every block instead of a jittered lattice.
//
// Cost: about (4/3) pi r^2 r_v kernel terms per point (19,300 at r = 24 and vertical radius 8).
// The 3D map is read once at every block in reach of the box the reference is built for, and
// kept, 32 bytes a block. It is meant for slices in tools and tests, never for serving.
//
// Thread safety: immutable after Create; BlendPoint is safe for concurrent use.
#ifndef WORLDGEN_ENGINE_QUALITY_FULL_RESOLUTION_VOLUME_H_
#define WORLDGEN_ENGINE_QUALITY_FULL_RESOLUTION_VOLUME_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/biome_sample_cache.h"
#include "engine/volume_blender.h"
#include "engine/world.h"

namespace worldgen::quality {

class FullResolutionVolumeReference {
 public:
  // The most blocks of the 3D map one reference keeps (256 MiB).
  static constexpr int64_t kMaxBlocks = int64_t{1} << 23;

  // Reads the 3D map of `world` at every block whose kernel may reach a point of `box`. `world`
  // must outlive the reference. FAILED_PRECONDITION for a world without cave biomes (its 3D blend
  // is its 2D blend). INVALID_ARGUMENT for a box that is empty, not finite, or needs more than
  // kMaxBlocks blocks.
  static absl::StatusOr<FullResolutionVolumeReference> Create(const World& world,
                                                              const VolumeBox& box);

  // The weights at (x, y, z): (dense biome index, weight) for the non-zero ones, ascending index,
  // like ScatteredVolumeBlender::BlendPoint. `cache` (may be null) serves the world's 2D blender.
  // INVALID_ARGUMENT if the point lies outside the box given to Create.
  absl::Status BlendPoint(double x, double y, double z, BiomeSampleCache* cache,
                          std::vector<std::pair<int, float>>* weights) const;

  const VolumeBox& box() const { return box_; }

 private:
  FullResolutionVolumeReference() = default;

  const World* world_ = nullptr;
  VolumeBox box_;
  double radius_ = 0.0, y_scale_ = 0.0;
  std::vector<char> is_cave_;  // Per dense biome index.
  // Blocks [x0, x0 + nx) x [y0, y0 + ny) x [z0, z0 + nz), block (x, y, z) at index
  // ((y - y0) * nz + (z - z0)) * nx + (x - x0), so a row along x is one run of samples. Each
  // sample's y is in kernel space and its biome is the 3D map's.
  int64_t x0_ = 0, y0_ = 0, z0_ = 0;
  int64_t nx_ = 0, ny_ = 0, nz_ = 0;
  std::vector<VolumeSample> blocks_;
};

}  // namespace worldgen::quality

#endif  // WORLDGEN_ENGINE_QUALITY_FULL_RESOLUTION_VOLUME_H_
