#include "engine/quality/full_resolution_volume.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "absl/strings/str_format.h"

namespace worldgen::quality {

absl::StatusOr<FullResolutionVolumeReference> FullResolutionVolumeReference::Create(
    const World& world, const VolumeBox& box) {
  const ScatteredVolumeBlender* blender = world.volume_blender();
  const VolumeSource* source = world.volume_source();
  if (blender == nullptr || source == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "world %s has no cave biomes: its 3D blend is its 2D blend", world.spec().name));
  }
  for (const auto& [x, z] : {std::pair{box.min_x, box.min_z}, std::pair{box.max_x, box.max_z}}) {
    if (absl::Status s = World::ValidatePoint(x, z); !s.ok()) return s;
  }
  if (!(std::abs(box.min_y) <= static_cast<double>(kMaxWorldY) &&
        std::abs(box.max_y) <= static_cast<double>(kMaxWorldY))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "box y [%g, %g] is not within [-%d, %d]", box.min_y, box.max_y, kMaxWorldY, kMaxWorldY));
  }
  if (!(box.min_x <= box.max_x && box.min_y <= box.max_y && box.min_z <= box.max_z)) {
    return absl::InvalidArgumentError("box is empty (a minimum exceeds its maximum)");
  }

  FullResolutionVolumeReference ref;
  ref.world_ = &world;
  ref.box_ = box;
  ref.radius_ = world.spec().caves.blending.blend_radius;
  ref.y_scale_ = blender->lattice().y_scale();
  ref.is_cave_ = CaveFlags(world.spec());

  // A block reaches a point within r of it horizontally and r / y_scale vertically. Rounding the
  // range outwards keeps blocks at exactly that distance too: they add exactly 0.
  const double reach_y = ref.radius_ / ref.y_scale_;
  ref.x0_ = static_cast<int64_t>(std::floor(box.min_x - ref.radius_));
  ref.y0_ = static_cast<int64_t>(std::floor(box.min_y - reach_y));
  ref.z0_ = static_cast<int64_t>(std::floor(box.min_z - ref.radius_));
  ref.nx_ = static_cast<int64_t>(std::ceil(box.max_x + ref.radius_)) - ref.x0_ + 1;
  ref.ny_ = static_cast<int64_t>(std::ceil(box.max_y + reach_y)) - ref.y0_ + 1;
  ref.nz_ = static_cast<int64_t>(std::ceil(box.max_z + ref.radius_)) - ref.z0_ + 1;
  // Each factor is below 2^27 inside the world bounds: the product cannot overflow.
  const int64_t blocks = ref.nx_ * ref.ny_ * ref.nz_;
  if (blocks > kMaxBlocks) {
    return absl::InvalidArgumentError(
        absl::StrFormat("box needs the 3D map at %d x %d x %d = %d blocks, more than %d", ref.nx_,
                        ref.ny_, ref.nz_, blocks, kMaxBlocks));
  }
  ref.blocks_.reserve(static_cast<size_t>(blocks));
  for (int64_t y = ref.y0_; y < ref.y0_ + ref.ny_; ++y) {
    for (int64_t z = ref.z0_; z < ref.z0_ + ref.nz_; ++z) {
      for (int64_t x = ref.x0_; x < ref.x0_ + ref.nx_; ++x) {
        const double bx = static_cast<double>(x), by = static_cast<double>(y),
                     bz = static_cast<double>(z);
        ref.blocks_.push_back(
            {bx, by * ref.y_scale_, bz, static_cast<uint16_t>(source->BiomeIndexAt(bx, by, bz))});
      }
    }
  }
  return ref;
}

absl::Status FullResolutionVolumeReference::BlendPoint(
    double x, double y, double z, BiomeSampleCache* cache,
    std::vector<std::pair<int, float>>* weights) const {
  if (!(x >= box_.min_x && x <= box_.max_x && y >= box_.min_y && y <= box_.max_y &&
        z >= box_.min_z && z <= box_.max_z)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("point (%g, %g, %g) is outside the reference's box", x, y, z));
  }
  std::vector<std::pair<int, float>> column;
  world_->blender().BlendPoint(x, z, cache, &column);

  // The rows along x of the blocks that may reach p, each cut to the part within reach (plus a
  // block each side against the rounding of the square root). The blocks left out would add
  // exactly 0, so the sums are those over every block in reach.
  const double ys = y * y_scale_, r_sq = radius_ * radius_;
  auto rows = [](double centre, double reach, int64_t origin, int64_t count) {
    return std::pair{
        std::max<int64_t>(0, static_cast<int64_t>(std::floor(centre - reach)) - origin),
        std::min<int64_t>(count - 1, static_cast<int64_t>(std::ceil(centre + reach)) - origin)};
  };
  const auto [j_lo, j_hi] = rows(y, radius_ / y_scale_, y0_, ny_);
  const auto [k_lo, k_hi] = rows(z, radius_, z0_, nz_);
  std::vector<std::span<const VolumeSample>> runs;
  for (int64_t j = j_lo; j <= j_hi; ++j) {
    for (int64_t k = k_lo; k <= k_hi; ++k) {
      const VolumeSample* row = blocks_.data() + static_cast<size_t>((j * nz_ + k) * nx_);
      const double dy = ys - row->y, dz = z - row->z;
      // ConvolveVolumePoint's kernel term is rest - dx * dx, never above rest: a row with
      // rest <= 0 adds nothing.
      const double rest = (r_sq - dz * dz) - dy * dy;
      if (!(rest > 0.0)) continue;
      const double half = std::sqrt(rest);
      const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(x - half)) - 1 - x0_);
      const int64_t hi =
          std::min<int64_t>(nx_ - 1, static_cast<int64_t>(std::ceil(x + half)) + 1 - x0_);
      if (lo <= hi) runs.emplace_back(row + lo, static_cast<size_t>(hi - lo + 1));
    }
  }
  ConvolveVolumePoint(runs, r_sq, x, ys, z, is_cave_, column, weights);
  return absl::OkStatus();
}

}  // namespace worldgen::quality
