#include "engine/sparse_convolution.h"

#include <algorithm>

#include "engine/kernel_row.h"

namespace worldgen {

bool SingleBiome(std::span<const KernelSample> samples) {
  return std::all_of(samples.begin(), samples.end(),
                     [&](const KernelSample& s) { return s.biome == samples.front().biome; });
}

void SampleSourceBiomes(const BiomeSource& source, std::span<KernelSample> samples) {
  std::vector<double> xs(samples.size()), zs(samples.size());
  std::vector<uint16_t> biomes(samples.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    xs[k] = samples[k].x;
    zs[k] = samples[k].z;
  }
  source.BiomeIndices(xs.data(), zs.data(), samples.size(), biomes.data());
  for (size_t k = 0; k < samples.size(); ++k) samples[k].biome = biomes[k];
}

void KeepSamplingPointsIn(const BlockBox& box, std::span<const KernelSample> samples,
                          std::vector<SamplingPoint>* out) {
  out->clear();
  for (const KernelSample& s : samples) {
    if (box.Contains(s.x, s.z)) out->push_back({s.x, s.z, s.biome});
  }
}

namespace {

// Per-thread scratch reused by every block this thread convolves: no allocation per chunk once the
// vectors have grown to the largest block seen.
struct ConvolutionScratch {
  std::vector<KernelPoint> points;  // Grouped by slot.
  std::vector<size_t> slot_begin;
  std::vector<double> acc, total;
  std::vector<float> weights;
  std::vector<uint8_t> nonzero;
  std::vector<int32_t> slot_of_biome;  // -1 = not present; reset after each use.
  std::vector<uint16_t> present;       // Biomes present, ascending after sorting.
  std::vector<double> sums;            // ConvolvePoint: per-biome sums, indexed like slot_of_biome,
  std::vector<double> slopes;          // and their gradients (x, z) when asked for.
  std::vector<int32_t> layer_of_biome;     // Sub-blocks: each biome's output layer; -1 = none yet.
  std::vector<KernelSample> band_samples;  // Sub-blocks: the samples reaching the current band,
  std::vector<double> band_row_part;       // with (r^2 - dz^2) at its nearest row,
  std::vector<KernelSample> sub_samples;   // and those reaching the current sub-block.
};

// Scratch beyond this many accumulator doubles (4 MiB) is released after use.
constexpr size_t kKeptScratchDoubles = size_t{1} << 19;

ConvolutionScratch& Scratch() {
  thread_local ConvolutionScratch scratch;
  return scratch;
}

}  // namespace

namespace {

// Blocks that are a multiple of this size wide are convolved in sub-blocks of this size, each with
// only the samples that reach it: a sub-block inside one biome then costs nothing, as a chunk of
// this size would, so bigger chunks cost no more per column than small ones.
constexpr int kSubBlockSize = 16;

// Runs the block kernel on the size x size block at (x0, z0): scratch.present holds the biomes of
// `samples` ascending (slot k is biome present[k]), scratch.weights each slot's size * size weights
// and scratch.nonzero whether they are non-zero anywhere. `samples` has more than one biome.
void KernelOnBlock(std::span<const KernelSample> samples, int64_t x0, int64_t z0, int size,
                   int step, ConvolutionScratch& scratch) {
  // Dense slot per biome present among the samples, in ascending biome order, counting each
  // biome's samples on the way (slot_of holds -1 - count until the slots are known).
  std::vector<int32_t>& slot_of = scratch.slot_of_biome;
  scratch.present.clear();
  for (const KernelSample& s : samples) {
    if (s.biome >= slot_of.size()) slot_of.resize(s.biome + 1u, -1);
    if (slot_of[s.biome] == -1) scratch.present.push_back(s.biome);
    --slot_of[s.biome];
  }
  std::sort(scratch.present.begin(), scratch.present.end());
  const size_t slots = scratch.present.size();
  // The points grouped by slot, each slot's in the samples' order (a stable counting sort).
  std::vector<size_t>& next = scratch.slot_begin;
  next.resize(slots + 1);
  next[0] = 0;
  for (size_t k = 0; k < slots; ++k) {
    int32_t& slot = slot_of[scratch.present[k]];
    next[k + 1] = next[k] + static_cast<size_t>(-1 - slot);
    slot = static_cast<int32_t>(k);
  }
  scratch.points.resize(samples.size());
  for (const KernelSample& s : samples) {
    const uint32_t slot = static_cast<uint32_t>(slot_of[s.biome]);
    scratch.points[next[slot]++] = {s.x, s.z, s.radius_sq, slot};
  }
  for (size_t k = slots; k > 0; --k) next[k] = next[k - 1];  // Back to each slot's start.
  next[0] = 0;
  for (uint16_t b : scratch.present) slot_of[b] = -1;

  const size_t n = static_cast<size_t>(size);
  const size_t stride = KernelStride(n);
  scratch.acc.resize(slots * n * stride);
  scratch.total.resize(n * stride);
  scratch.weights.resize(slots * n * n);
  scratch.nonzero.resize(slots);
  KernelBlock block;
  block.points = scratch.points.data();
  block.count = scratch.points.size();
  block.slot_begin = next.data();
  block.slots = slots;
  block.x0 = static_cast<double>(x0);
  block.z0 = static_cast<double>(z0);
  block.step = static_cast<double>(step);
  block.size = size;
  block.stride = stride;
  block.acc = scratch.acc.data();
  block.total = scratch.total.data();
  block.weights = scratch.weights.data();
  block.nonzero = scratch.nonzero.data();
  KernelBlockWeights(block);
}

}  // namespace

bool ConvolveColumns(std::span<const KernelSample> samples, int64_t x0, int64_t z0, int size,
                     std::vector<IndexedLayer>* layers, int step) {
  layers->clear();
  const size_t n = static_cast<size_t>(size);
  const size_t columns = n * n;
  // Block inside one biome: every column's weight is exactly 1 (sum / total with sum == total).
  if (SingleBiome(samples)) {
    layers->push_back(
        {samples.empty() ? 0 : samples.front().biome, std::vector<float>(columns, 1.0f)});
    return true;
  }
  ConvolutionScratch& scratch = Scratch();
  if (size <= kSubBlockSize || size % kSubBlockSize != 0) {
    KernelOnBlock(samples, x0, z0, size, step, scratch);
    for (size_t slot = 0; slot < scratch.present.size(); ++slot) {
      if (scratch.nonzero[slot] == 0) continue;
      const float* w = scratch.weights.data() + slot * columns;
      layers->push_back({scratch.present[slot], std::vector<float>(w, w + columns)});
    }
  } else {
    // Sub-block by sub-block. A column's sums and total only ever see the samples that reach it
    // (the others add +0.0), in the same relative order, so every column gets the bits the whole
    // block would give it; a biome absent from a sub-block has weight 0 there.
    std::vector<int32_t>& layer_of = scratch.layer_of_biome;
    auto layer = [&](uint16_t biome) -> float* {
      if (biome >= layer_of.size()) layer_of.resize(biome + 1u, -1);
      if (layer_of[biome] < 0) {
        layer_of[biome] = static_cast<int32_t>(layers->size());
        layers->push_back({biome, std::vector<float>(columns, 0.0f)});
      }
      return (*layers)[static_cast<size_t>(layer_of[biome])].weights.data();
    };
    for (int bz = 0; bz < size; bz += kSubBlockSize) {
      // The samples whose kernel reaches the band's nearest row, with that row's part of their term
      // ((r^2 - dz^2) > 0; kept without a branch per sample: the index advances by the test).
      const double lo_z = static_cast<double>(z0 + int64_t{step} * bz);
      const double hi_z = static_cast<double>(z0 + int64_t{step} * (bz + kSubBlockSize - 1));
      std::vector<KernelSample>& band = scratch.band_samples;
      std::vector<double>& band_row_part = scratch.band_row_part;
      band.resize(samples.size());
      band_row_part.resize(samples.size());
      size_t in_band = 0;
      for (const KernelSample& s : samples) {
        const double near_z = KernelNearestOffset(s.z, lo_z, hi_z);
        const double row_part = s.radius_sq - near_z * near_z;
        band[in_band] = s;
        band_row_part[in_band] = row_part;
        in_band += row_part > 0.0;
      }
      for (int bx = 0; bx < size; bx += kSubBlockSize) {
        // Of those, the ones reaching the sub-block's nearest column: the kernel's own test, so a
        // sample left out adds +0.0 to every column of the sub-block.
        const double lo_x = static_cast<double>(x0 + int64_t{step} * bx);
        const double hi_x = static_cast<double>(x0 + int64_t{step} * (bx + kSubBlockSize - 1));
        std::vector<KernelSample>& sub = scratch.sub_samples;
        sub.resize(in_band);
        size_t reaching = 0;
        for (size_t k = 0; k < in_band; ++k) {
          const double near_x = KernelNearestOffset(band[k].x, lo_x, hi_x);
          sub[reaching] = band[k];
          reaching += band_row_part[k] - near_x * near_x > 0.0;
        }
        sub.resize(reaching);
        if (SingleBiome(sub)) {
          // (Empty only outside the contract: every column is reached by some sample.)
          float* out = layer(sub.empty() ? samples.front().biome : sub.front().biome);
          for (int lz = bz; lz < bz + kSubBlockSize; ++lz) {
            float* row = out + static_cast<size_t>(lz) * n + static_cast<size_t>(bx);
            std::fill(row, row + kSubBlockSize, 1.0f);
          }
          continue;
        }
        KernelOnBlock(sub, x0 + int64_t{step} * bx, z0 + int64_t{step} * bz, kSubBlockSize, step,
                      scratch);
        constexpr size_t kSub = kSubBlockSize;
        for (size_t slot = 0; slot < scratch.present.size(); ++slot) {
          if (scratch.nonzero[slot] == 0) continue;
          const float* w = scratch.weights.data() + slot * kSub * kSub;
          float* out = layer(scratch.present[slot]);
          for (size_t lz = 0; lz < kSub; ++lz) {
            std::copy(w + lz * kSub, w + (lz + 1) * kSub,
                      out + (static_cast<size_t>(bz) + lz) * n + static_cast<size_t>(bx));
          }
        }
      }
    }
    for (const IndexedLayer& l : *layers) layer_of[static_cast<size_t>(l.biome)] = -1;
    std::sort(layers->begin(), layers->end(),
              [](const IndexedLayer& a, const IndexedLayer& b) { return a.biome < b.biome; });
  }
  // A rare huge block (up to kMaxChunkSize^2 columns times its biomes) does not stay resident.
  if (scratch.acc.capacity() > kKeptScratchDoubles) scratch = ConvolutionScratch();
  return false;
}

void ConvolvePoint(std::span<const KernelSample> samples, double x, double z,
                   std::vector<std::pair<int, float>>* weights, PointGradient* gradient) {
  weights->clear();
  ConvolutionScratch& scratch = Scratch();
  // Per-biome sums in dense arrays; each biome's sum runs in the samples' order.
  std::vector<int32_t>& seen = scratch.slot_of_biome;
  std::vector<double>& sums = scratch.sums;
  std::vector<double>& slopes = scratch.slopes;  // Per biome: d sum / dx, d sum / dz.
  scratch.present.clear();
  double total = 0.0;
  BiomeRunSums biome_sums(&seen, &sums, &scratch.present);
  for (const KernelSample& s : samples) {
    double dx = x - s.x;
    double dz = z - s.z;
    double t = (s.radius_sq - dz * dz) - dx * dx;
    if (!(t > 0.0)) continue;  // Would add exactly +0.0.
    double w = t * t;
    const bool first = biome_sums.Add(s.biome, w);
    if (gradient != nullptr) {
      if (2u * s.biome + 1u >= slopes.size()) slopes.resize(2u * s.biome + 2u, 0.0);
      if (first) {
        slopes[2u * s.biome] = -4.0 * t * dx;
        slopes[2u * s.biome + 1] = -4.0 * t * dz;
      } else {
        slopes[2u * s.biome] += -4.0 * t * dx;
        slopes[2u * s.biome + 1] += -4.0 * t * dz;
      }
    }
  }
  biome_sums.Finish();
  std::sort(scratch.present.begin(), scratch.present.end());
  // The total is the biomes' sums in ascending biome order, as the block kernel forms it.
  for (uint16_t biome : scratch.present) total += sums[biome];
  double total_dx = 0.0, total_dz = 0.0;
  if (gradient != nullptr) {
    gradient->dx.clear();
    gradient->dz.clear();
    for (uint16_t biome : scratch.present) {
      total_dx += slopes[2u * biome];
      total_dz += slopes[2u * biome + 1];
    }
  }
  for (uint16_t biome : scratch.present) {
    seen[biome] = -1;
    const double share = sums[biome] / total;
    float w = static_cast<float>(share);
    if (w == 0.0f) continue;
    weights->emplace_back(biome, w);
    if (gradient != nullptr) {
      gradient->dx.emplace_back(
          biome, static_cast<float>((slopes[2u * biome] - share * total_dx) / total));
      gradient->dz.emplace_back(
          biome, static_cast<float>((slopes[2u * biome + 1] - share * total_dz) / total));
    }
  }
}

}  // namespace worldgen
