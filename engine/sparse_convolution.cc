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

bool ConvolveColumns(std::span<const KernelSample> samples, int64_t x0, int64_t z0, int size,
                     std::vector<IndexedLayer>* layers) {
  layers->clear();
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  // Block inside one biome: every column's weight is exactly 1 (sum / total with sum == total).
  if (SingleBiome(samples)) {
    layers->push_back({samples.empty() ? 0 : samples.front().biome, std::vector<float>(columns, 1.0f)});
    return true;
  }

  // Dense slot per biome present among the samples, in ascending biome order.
  std::vector<int> present;
  for (const KernelSample& s : samples) present.push_back(s.biome);
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  const size_t slots = present.size();
  std::vector<int> slot_of_sample(samples.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    slot_of_sample[k] = static_cast<int>(
        std::lower_bound(present.begin(), present.end(), samples[k].biome) - present.begin());
  }

  std::vector<std::vector<float>> weights(slots, std::vector<float>(columns));
  const size_t n = static_cast<size_t>(size);
  std::vector<double> column_x(n), acc(slots * n), total(n);
  for (size_t lx = 0; lx < n; ++lx) column_x[lx] = static_cast<double>(x0 + static_cast<int64_t>(lx));
  std::vector<size_t> row_samples;
  std::vector<double> row_dz_sq;

  for (size_t lz = 0; lz < n; ++lz) {
    const double z = static_cast<double>(z0 + static_cast<int64_t>(lz));
    // Samples whose kernel reaches this row at all, in their given order.
    row_samples.clear();
    row_dz_sq.clear();
    for (size_t k = 0; k < samples.size(); ++k) {
      double dz = z - samples[k].z;
      double dz_sq = dz * dz;
      if (dz_sq < samples[k].radius_sq) {
        row_samples.push_back(k);
        row_dz_sq.push_back(dz_sq);
      }
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(total.begin(), total.end(), 0.0);
    // Sample-outer, column-inner: each column still sums its samples in the given order, and the
    // inner loop vectorizes across columns (kernel_row.h). Samples out of a column's reach add
    // exactly +0.0, which changes no sum.
    for (size_t r = 0; r < row_samples.size(); ++r) {
      const KernelSample& s = samples[row_samples[r]];
      double* slot_acc = acc.data() + static_cast<size_t>(slot_of_sample[row_samples[r]]) * n;
      AccumulateSampleRow(column_x.data(), n, s.x, row_dz_sq[r], s.radius_sq, slot_acc, total.data());
    }
    for (size_t slot = 0; slot < slots; ++slot) {
      const double* slot_acc = acc.data() + slot * n;
      float* out = weights[slot].data() + lz * n;
      for (size_t lx = 0; lx < n; ++lx) out[lx] = static_cast<float>(slot_acc[lx] / total[lx]);
    }
  }

  for (size_t slot = 0; slot < slots; ++slot) {
    const std::vector<float>& w = weights[slot];
    if (std::any_of(w.begin(), w.end(), [](float v) { return v != 0.0f; })) {
      layers->push_back({present[slot], std::move(weights[slot])});
    }
  }
  return false;
}

void ConvolvePoint(std::span<const KernelSample> samples, double x, double z,
                   std::vector<std::pair<int, float>>* weights) {
  weights->clear();
  // (biome, sum) in order of first appearance; each biome's sum runs in the samples' order.
  std::vector<std::pair<int, double>> sums;
  double total = 0.0;
  for (const KernelSample& s : samples) {
    double dx = x - s.x;
    double dz = z - s.z;
    double d_sq = dx * dx + dz * dz;
    if (!(d_sq < s.radius_sq)) continue;  // Would add exactly +0.0.
    double t = s.radius_sq - d_sq;
    double w = t * t;
    auto it = std::find_if(sums.begin(), sums.end(),
                           [&](const std::pair<int, double>& p) { return p.first == s.biome; });
    if (it == sums.end()) {
      sums.emplace_back(s.biome, w);
    } else {
      it->second += w;
    }
    total += w;
  }
  std::sort(sums.begin(), sums.end());
  for (const auto& [biome, sum] : sums) {
    float w = static_cast<float>(sum / total);
    if (w != 0.0f) weights->emplace_back(biome, w);
  }
}

}  // namespace worldgen
