// Normalized sparse convolution: the blending arithmetic shared by every kernel method (scattered,
// full-resolution, convoluted grid, and the lerped grid's vertices).
//
// Each sample carries a biome and a kernel radius r. A column at (x, z) receives from each sample
// at distance d the weight w = max(0, r^2 - d^2)^2, and biome b's weight is
//     sum_{samples of b} w / sum_{all samples} w,
// each biome's sum in double precision in the samples' order (which callers make canonical: a fixed
// order of their lattice), the total the biomes' sums in ascending biome order, and the quotient
// rounded to float once. (Summing per biome first lets the kernel keep each biome's sums in
// registers; a biome absent from a column adds +0.0 to its total.) A sample whose kernel does not
// reach a column adds exactly +0.0 to its sums, so any superset of the reaching samples, in the
// same relative order, gives the same bits: a chunk (which gathers once for all its columns) and a
// point query agree bit for bit.
//
// Thread safety: free functions of their arguments; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_SPARSE_CONVOLUTION_H_
#define WORLDGEN_ENGINE_SPARSE_CONVOLUTION_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/blender.h"

namespace worldgen {

struct KernelSample {
  double x = 0.0, z = 0.0;  // Position in blocks.
  double radius_sq = 0.0;   // Squared kernel radius (> 0).
  uint16_t biome = 0;       // Dense biome index.
};

// Weights of the size x size integer columns (x0 + step * lx, z0 + step * lz) from `samples`,
// which must include every sample whose kernel reaches one of them and at least one per column.
// Fills `layers` per the Blender contract (column (lx, lz) at lz * size + lx); returns true when
// every sample has the same biome (then one layer of exactly 1.0f, with no per-column work).
bool ConvolveColumns(std::span<const KernelSample> samples, int64_t x0, int64_t z0, int size,
                     std::vector<IndexedLayer>* layers, int step = 1);

// Weights at the point (x, z): (dense biome index, weight) for the non-zero ones, ascending index.
// `samples` must include every sample whose kernel reaches (x, z), in the same relative order as
// for ConvolveColumns, and at least one that reaches it.
//
// With `gradient` (the scattered mesh's smooth interpolation, which needs the blend's slope at its
// vertices): also the exact gradient of each weight w_b = S_b / S (S_b biome b's kernel sum, S
// their total) with respect to (x, z), d w_b = (dS_b - w_b dS) / S with d max(0, r^2 - d^2)^2 =
// -4 max(0, r^2 - d^2) (x - x_s, z - z_s), in double, rounded to float once; one entry per entry
// of `weights`, same biomes. The weights' bits do not depend on whether it is asked for. The
// gradients sum to 0 over the biomes (up to rounding), as the weights sum to 1.
struct PointGradient {
  std::vector<std::pair<int, float>> dx, dz;
};
void ConvolvePoint(std::span<const KernelSample> samples, double x, double z,
                   std::vector<std::pair<int, float>>* weights, PointGradient* gradient = nullptr);

// Per-biome sums of a point's kernel terms, which arrive in the samples' order (ConvolvePoint,
// ConvolveVolumePoint): each biome's sum takes its terms in that order from +0.0 (its first term
// is stored as is: +0.0 + w == w). The sum of the latest term's biome stays in a register while
// the next terms share its biome, as most do (a gather's rows cross few borders), and goes back
// to `sums` when another biome's term comes, so a term costs no store and reload. `seen` (-1 for
// a biome without a term), `sums` and `present` (the biomes in the order of their first terms)
// are the caller's scratch, grown as biomes come; call Finish() before reading `sums`, and reset
// `seen` to -1 for the present biomes after.
class BiomeRunSums {
 public:
  BiomeRunSums(std::vector<int32_t>* seen, std::vector<double>* sums,
               std::vector<uint16_t>* present)
      : seen_(*seen), sums_(*sums), present_(*present) {}

  // Adds w to `biome`'s sum; true when it is the biome's first term.
  bool Add(uint16_t biome, double w) {
    if (biome == run_biome_) {
      run_ += w;
      return false;
    }
    if (run_biome_ >= 0) sums_[static_cast<size_t>(run_biome_)] = run_;
    run_biome_ = biome;
    if (biome >= seen_.size()) seen_.resize(biome + 1u, -1);
    if (biome >= sums_.size()) sums_.resize(biome + 1u, 0.0);
    if (seen_[biome] < 0) {
      seen_[biome] = 0;
      run_ = w;
      present_.push_back(biome);
      return true;
    }
    run_ = sums_[biome] + w;
    return false;
  }
  void Finish() {
    if (run_biome_ >= 0) sums_[static_cast<size_t>(run_biome_)] = run_;
  }

 private:
  std::vector<int32_t>& seen_;
  std::vector<double>& sums_;
  std::vector<uint16_t>& present_;
  int run_biome_ = -1;
  double run_ = 0.0;
};

// Whether every sample has the same biome (true for an empty span).
bool SingleBiome(std::span<const KernelSample> samples);

// The samples inside `box`, in their order, as SamplingPoints (replacing `out`'s contents): for
// methods whose gather (a superset of the samples in a box) gives the positions and biomes.
void KeepSamplingPointsIn(const BlockBox& box, std::span<const KernelSample> samples,
                          std::vector<SamplingPoint>* out);

// Sets each sample's biome to the source's biome at its position, with one batched source call.
void SampleSourceBiomes(const BiomeSource& source, std::span<KernelSample> samples);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_SPARSE_CONVOLUTION_H_
