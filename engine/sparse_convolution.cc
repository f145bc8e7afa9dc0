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
  std::vector<double> sums;            // ConvolvePoint: per-biome sums, indexed like slot_of_biome.
};

// Scratch beyond this many accumulator doubles (4 MiB) is released after use.
constexpr size_t kKeptScratchDoubles = size_t{1} << 19;

ConvolutionScratch& Scratch() {
  thread_local ConvolutionScratch scratch;
  return scratch;
}

}  // namespace

bool ConvolveColumns(std::span<const KernelSample> samples, int64_t x0, int64_t z0, int size,
                     std::vector<IndexedLayer>* layers) {
  layers->clear();
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  // Block inside one biome: every column's weight is exactly 1 (sum / total with sum == total).
  if (SingleBiome(samples)) {
    layers->push_back({samples.empty() ? 0 : samples.front().biome, std::vector<float>(columns, 1.0f)});
    return true;
  }

  ConvolutionScratch& scratch = Scratch();
  // Dense slot per biome present among the samples, in ascending biome order.
  std::vector<int32_t>& slot_of = scratch.slot_of_biome;
  scratch.present.clear();
  for (const KernelSample& s : samples) {
    if (s.biome >= slot_of.size()) slot_of.resize(s.biome + 1u, -1);
    if (slot_of[s.biome] < 0) {
      slot_of[s.biome] = 0;
      scratch.present.push_back(s.biome);
    }
  }
  std::sort(scratch.present.begin(), scratch.present.end());
  const size_t slots = scratch.present.size();
  for (size_t k = 0; k < slots; ++k) slot_of[scratch.present[k]] = static_cast<int32_t>(k);
  // The points grouped by slot, each slot's in the samples' order (a stable counting sort).
  std::vector<size_t>& next = scratch.slot_begin;
  next.assign(slots + 1, 0);
  for (const KernelSample& s : samples) ++next[static_cast<size_t>(slot_of[s.biome]) + 1];
  for (size_t k = 0; k < slots; ++k) next[k + 1] += next[k];
  scratch.points.resize(samples.size());
  for (const KernelSample& s : samples) {
    const uint32_t slot = static_cast<uint32_t>(slot_of[s.biome]);
    scratch.points[next[slot]++] = {s.x, s.z, s.radius_sq, slot};
  }
  for (size_t k = slots; k > 0; --k) next[k] = next[k - 1];  // Back to each slot's start.
  next[0] = 0;
  for (uint16_t b : scratch.present) slot_of[b] = -1;

  const size_t n = static_cast<size_t>(size);
  const size_t stride = (n + kKernelLanes - 1) / kKernelLanes * kKernelLanes;
  scratch.acc.resize(slots * n * stride);
  scratch.total.resize(n * stride);
  scratch.weights.resize(slots * columns);
  scratch.nonzero.resize(slots);
  KernelBlock block;
  block.points = scratch.points.data();
  block.count = scratch.points.size();
  block.slot_begin = next.data();
  block.slots = slots;
  block.x0 = static_cast<double>(x0);
  block.z0 = static_cast<double>(z0);
  block.size = size;
  block.stride = stride;
  block.acc = scratch.acc.data();
  block.total = scratch.total.data();
  block.weights = scratch.weights.data();
  block.nonzero = scratch.nonzero.data();
  KernelBlockWeights(block);

  for (size_t slot = 0; slot < slots; ++slot) {
    if (scratch.nonzero[slot] == 0) continue;
    const float* w = scratch.weights.data() + slot * columns;
    layers->push_back({scratch.present[slot], std::vector<float>(w, w + columns)});
  }
  // A rare huge block (up to kMaxChunkSize^2 columns times its biomes) does not stay resident.
  if (scratch.acc.capacity() > kKeptScratchDoubles) scratch = ConvolutionScratch();
  return false;
}

void ConvolvePoint(std::span<const KernelSample> samples, double x, double z,
                   std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  ConvolutionScratch& scratch = Scratch();
  // Per-biome sums in dense arrays; each biome's sum runs in the samples' order.
  std::vector<int32_t>& seen = scratch.slot_of_biome;
  std::vector<double>& sums = scratch.sums;
  scratch.present.clear();
  double total = 0.0;
  for (const KernelSample& s : samples) {
    double dx = x - s.x;
    double dz = z - s.z;
    double t = (s.radius_sq - dz * dz) - dx * dx;
    if (!(t > 0.0)) continue;  // Would add exactly +0.0.
    double w = t * t;
    if (s.biome >= seen.size()) seen.resize(s.biome + 1u, -1);
    if (s.biome >= sums.size()) sums.resize(s.biome + 1u, 0.0);
    if (seen[s.biome] < 0) {
      seen[s.biome] = 0;
      sums[s.biome] = w;
      scratch.present.push_back(s.biome);
    } else {
      sums[s.biome] += w;
    }
  }
  std::sort(scratch.present.begin(), scratch.present.end());
  // The total is the biomes' sums in ascending biome order, as the block kernel forms it.
  for (uint16_t biome : scratch.present) total += sums[biome];
  for (uint16_t biome : scratch.present) {
    seen[biome] = -1;
    float w = static_cast<float>(sums[biome] / total);
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

}  // namespace worldgen
