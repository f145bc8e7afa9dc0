#include "engine/interpolated_heights.h"

#include <algorithm>
#include <cmath>

#include "engine/chunk.h"

namespace worldgen {
namespace {

// w_C at (x, z) for chunk (i, j): the one expression both paths use. 0 beyond the reach.
inline double ChunkWeight(double x, double z, int64_t i, int64_t j, double size,
                          double reach_blocks) {
  const double cx = (static_cast<double>(i) + 0.5) * size;
  const double cz = (static_cast<double>(j) + 0.5) * size;
  const double a = reach_blocks - (std::fabs(x - cx) + std::fabs(z - cz));
  return a > 0.0 ? (a * a) * (a * a) : 0.0;
}

// Lowest and highest chunk index whose centre can be within `reach_blocks` of [lo, hi] on one axis.
inline int64_t FirstChunk(double lo, double size, double reach_blocks) {
  return static_cast<int64_t>(std::floor((lo - reach_blocks) / size - 0.5));
}
inline int64_t LastChunk(double hi, double size, double reach_blocks) {
  return static_cast<int64_t>(std::floor((hi + reach_blocks) / size - 0.5)) + 1;
}

}  // namespace

void HeightChunkWeights(double x, double z, int chunk_size, double reach,
                        std::vector<HeightChunkWeight>* out) {
  out->clear();
  const double size = static_cast<double>(chunk_size);
  const double reach_blocks = reach * size;
  const int64_t i0 = FirstChunk(x, size, reach_blocks), i1 = LastChunk(x, size, reach_blocks);
  const int64_t j0 = FirstChunk(z, size, reach_blocks), j1 = LastChunk(z, size, reach_blocks);
  for (int64_t j = j0; j <= j1; ++j) {
    for (int64_t i = i0; i <= i1; ++i) {
      const double w = ChunkWeight(x, z, i, j, size, reach_blocks);
      if (w > 0.0) out->push_back({i, j, w});
    }
  }
}

ChunkInterpolatedHeights::ChunkInterpolatedHeights(const HeightSpec& spec,
                                                   const BiomeSource& source,
                                                   const HeightField& heights)
    : source_(source), heights_(heights), chunk_size_(spec.chunk_size), reach_(spec.blend_reach) {}

int ChunkInterpolatedHeights::ChunkBiome(int64_t i, int64_t j) const {
  const double size = static_cast<double>(chunk_size_);
  return source_.BiomeIndexAt((static_cast<double>(i) + 0.5) * size,
                              (static_cast<double>(j) + 0.5) * size);
}

float ChunkInterpolatedHeights::HeightAt(double x, double z) const {
  std::vector<HeightChunkWeight> chunks;
  HeightChunkWeights(x, z, chunk_size_, reach_, &chunks);
  double sum = 0.0, total = 0.0;
  for (const HeightChunkWeight& c : chunks) {
    sum += c.weight * heights_.BiomeHeight(ChunkBiome(c.i, c.j), x, z);
    total += c.weight;
  }
  return static_cast<float>(sum / total);
}

void ChunkInterpolatedHeights::Heights(int64_t x0, int64_t z0, int size,
                                       std::vector<float>* out) const {
  const double chunk = static_cast<double>(chunk_size_);
  const double reach_blocks = reach_ * chunk;
  const int64_t i0 = FirstChunk(static_cast<double>(x0), chunk, reach_blocks);
  const int64_t i1 = LastChunk(static_cast<double>(x0 + size - 1), chunk, reach_blocks);
  const int64_t j0 = FirstChunk(static_cast<double>(z0), chunk, reach_blocks);
  const int64_t j1 = LastChunk(static_cast<double>(z0 + size - 1), chunk, reach_blocks);
  const size_t ni = static_cast<size_t>(i1 - i0 + 1), nj = static_cast<size_t>(j1 - j0 + 1);

  // The window's chunks, their biomes, and a slot per distinct biome.
  std::vector<int> biomes;
  std::vector<int> chunk_biome(ni * nj);
  for (size_t b = 0; b < nj; ++b) {
    for (size_t a = 0; a < ni; ++a) {
      const int biome = ChunkBiome(i0 + static_cast<int64_t>(a), j0 + static_cast<int64_t>(b));
      chunk_biome[b * ni + a] = biome;
      biomes.push_back(biome);
    }
  }
  std::sort(biomes.begin(), biomes.end());
  biomes.erase(std::unique(biomes.begin(), biomes.end()), biomes.end());
  std::vector<size_t> chunk_slot(chunk_biome.size());
  for (size_t c = 0; c < chunk_biome.size(); ++c) {
    chunk_slot[c] = static_cast<size_t>(
        std::lower_bound(biomes.begin(), biomes.end(), chunk_biome[c]) - biomes.begin());
  }

  // Each biome's height, batched, at the columns where one of its chunks weighs in.
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  std::vector<std::vector<uint8_t>> needed(biomes.size(), std::vector<uint8_t>(columns, 0));
  // A column visits the chunks HeightChunkWeights would (a sub-window of the block's), in its
  // order.
  auto for_each_weight = [&](size_t col, double x, double z, auto&& visit) {
    const size_t a0 = static_cast<size_t>(FirstChunk(x, chunk, reach_blocks) - i0);
    const size_t a1 = static_cast<size_t>(LastChunk(x, chunk, reach_blocks) - i0);
    const size_t b0 = static_cast<size_t>(FirstChunk(z, chunk, reach_blocks) - j0);
    const size_t b1 = static_cast<size_t>(LastChunk(z, chunk, reach_blocks) - j0);
    for (size_t b = b0; b <= b1; ++b) {
      for (size_t a = a0; a <= a1; ++a) {
        const double w = ChunkWeight(x, z, i0 + static_cast<int64_t>(a),
                                     j0 + static_cast<int64_t>(b), chunk, reach_blocks);
        if (w > 0.0) visit(col, chunk_slot[b * ni + a], w);
      }
    }
  };
  auto column_x = [&](int lx) { return static_cast<double>(x0 + lx); };
  auto column_z = [&](int lz) { return static_cast<double>(z0 + lz); };
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      for_each_weight(static_cast<size_t>(ColumnIndex(size, lx, lz)), column_x(lx), column_z(lz),
                      [&](size_t col, size_t slot, double) { needed[slot][col] = 1; });
    }
  }
  std::vector<std::vector<double>> height(biomes.size());
  std::vector<double> xs, zs, batch;
  std::vector<size_t> cols;
  for (size_t slot = 0; slot < biomes.size(); ++slot) {
    xs.clear();
    zs.clear();
    cols.clear();
    for (int lz = 0; lz < size; ++lz) {
      for (int lx = 0; lx < size; ++lx) {
        const size_t col = static_cast<size_t>(ColumnIndex(size, lx, lz));
        if (!needed[slot][col]) continue;
        xs.push_back(column_x(lx));
        zs.push_back(column_z(lz));
        cols.push_back(col);
      }
    }
    if (cols.empty()) continue;
    batch.resize(cols.size());
    heights_.BiomeHeights(biomes[slot], xs.data(), zs.data(), cols.size(), batch.data());
    height[slot].assign(columns, 0.0);
    for (size_t t = 0; t < cols.size(); ++t) height[slot][cols[t]] = batch[t];
  }

  // HeightAt's sums, chunk for chunk in the same (j, i) order.
  out->resize(columns);
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      double sum = 0.0, total = 0.0;
      for_each_weight(static_cast<size_t>(ColumnIndex(size, lx, lz)), column_x(lx), column_z(lz),
                      [&](size_t col, size_t slot, double w) {
                        sum += w * height[slot][col];
                        total += w;
                      });
      (*out)[static_cast<size_t>(ColumnIndex(size, lx, lz))] = static_cast<float>(sum / total);
    }
  }
}

}  // namespace worldgen
