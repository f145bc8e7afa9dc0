#include "bench/lab/layered_volume.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/hash.h"
#include "engine/volume_blender.h"

namespace worldgen::lab {
namespace {

// The layers' 2D lattice: its own seed stream, not the engine's 3D lattice's.
constexpr uint64_t kLayeredLatticeStream = 0x1a7e;

}  // namespace

std::string LayeredMethod::Name() const {
  return absl::StrFormat("layers %g, %s, %s", spacing, separable ? "separable" : "radial",
                         own_lattices ? "own (x, z)" : "shared (x, z)");
}

absl::StatusOr<std::vector<LayeredMethod>> ParseLayeredMethods(const std::string& text) {
  std::vector<LayeredMethod> methods;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const absl::string_view whole = part;
    bool own = false;
    if (!part.empty() && part.back() == 'i') {
      own = true;
      part.remove_suffix(1);
    }
    std::vector<bool> kernels = {true, false};
    if (!part.empty() && (part.back() == 's' || part.back() == 'r')) {
      kernels = {part.back() == 's'};
      part.remove_suffix(1);
    }
    double spacing = 0.0;
    if (!absl::SimpleAtod(part, &spacing) || !(spacing > 0.0 && spacing <= 64.0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--layered: \"%s\" is not a layer spacing in (0, 64] blocks, optionally followed by s "
          "(separable kernel) or r (radial), then optionally i (a lattice per layer)",
          whole));
    }
    for (const bool separable : kernels) methods.push_back({spacing, separable, own});
  }
  return methods;
}

LayeredVolumePrototype::LayeredVolumePrototype(const World& world, LayeredMethod method)
    : world_(world),
      method_(method),
      seed_(DeriveSeed(world.spec().seed, kLayeredLatticeStream)),
      radius_(world.spec().caves.blending.blend_radius),
      vertical_radius_(world.spec().caves.blending.vertical_blend_radius),
      is_cave_(CaveFlags(world.spec())) {}

JitteredLattice LayeredVolumePrototype::LatticeOf(int64_t layer) const {
  const VolumeBlendParams& p = world_.spec().caves.blending;
  return JitteredLattice(
      method_.own_lattices ? DeriveSeed(seed_, static_cast<uint64_t>(layer)) : seed_,
      p.sampling_interval, p.jitter);
}

int LayeredVolumePrototype::BiomeAt(int32_t i, int32_t j, int64_t layer, double x, double z) {
  const auto [it, inserted] = biomes_.try_emplace(std::tuple{i, j, layer}, 0);
  if (inserted) {
    it->second =
        world_.volume_source()->BiomeIndexAt(x, method_.spacing * static_cast<double>(layer), z);
  }
  return it->second;
}

void LayeredVolumePrototype::BlendPoint(double x, double y, double z, BiomeSampleCache* cache,
                                        std::vector<std::pair<int, float>>* weights,
                                        uint64_t* terms) {
  const double r_sq = radius_ * radius_, rv_sq = vertical_radius_ * vertical_radius_;
  const double scale = radius_ / vertical_radius_;
  const int64_t layer0 = static_cast<int64_t>(std::ceil((y - vertical_radius_) / method_.spacing));
  const int64_t layer1 = static_cast<int64_t>(std::floor((y + vertical_radius_) / method_.spacing));
  std::vector<double> sums(is_cave_.size(), 0.0);
  double surface = 0.0;
  for (int64_t layer = layer0; layer <= layer1; ++layer) {
    const JitteredLattice lattice = LatticeOf(layer);
    const double dy = y - method_.spacing * static_cast<double>(layer);
    // Vertices whose jittered position may lie within r of (x, z), with a block of slack.
    const double reach = radius_ + lattice.jitter() + 1.0;
    const auto j0 = static_cast<int32_t>(std::floor((z - reach) / lattice.row_height()));
    const auto j1 = static_cast<int32_t>(std::ceil((z + reach) / lattice.row_height()));
    for (int32_t j = j0; j <= j1; ++j) {
      const double shift = lattice.row_shift() * j;
      const auto i0 = static_cast<int32_t>(std::floor((x - reach) / lattice.interval() - shift));
      const auto i1 = static_cast<int32_t>(std::ceil((x + reach) / lattice.interval() - shift));
      for (int32_t i = i0; i <= i1; ++i) {
        double px = 0.0, pz = 0.0;
        lattice.Position(i, j, &px, &pz);
        const double dxz_sq = (x - px) * (x - px) + (z - pz) * (z - pz);
        double w = 0.0;
        if (method_.separable) {
          const double h = r_sq - dxz_sq, v = rv_sq - dy * dy;
          w = h > 0.0 && v > 0.0 ? (h * h) * (v * v) : 0.0;
        } else {
          const double t = (r_sq - dxz_sq) - (scale * dy) * (scale * dy);
          w = t > 0.0 ? t * t : 0.0;
        }
        if (!(w > 0.0)) continue;
        ++*terms;
        const int biome = BiomeAt(i, j, layer, px, pz);
        if (is_cave_[static_cast<size_t>(biome)]) {
          sums[static_cast<size_t>(biome)] += w;
        } else {
          surface += w;
        }
      }
    }
  }
  std::vector<std::pair<int, float>> column;
  world_.blender().BlendPoint(x, z, cache, &column);
  std::vector<int> caves;
  for (size_t b = 0; b < is_cave_.size(); ++b) {
    if (is_cave_[b]) caves.push_back(static_cast<int>(b));
  }
  ShareOutSums(caves, sums, surface, column, weights);
}

}  // namespace worldgen::lab
