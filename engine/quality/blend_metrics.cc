#include "engine/quality/blend_metrics.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "engine/floor_div.h"

namespace worldgen::quality {

RegionWeights::RegionWeights(int64_t x0, int64_t z0, int width, int height, int biome_count)
    : x0(x0),
      z0(z0),
      width(width),
      height(height),
      biome_count(biome_count),
      weights(static_cast<size_t>(biome_count) * static_cast<size_t>(width) *
                  static_cast<size_t>(height),
              0.0f) {}

RegionWeights BlendRegion(const ChunkBlendFn& blend, int64_t x0, int64_t z0, int width, int height,
                          int chunk_size, int biome_count) {
  RegionWeights field(x0, z0, width, height, biome_count);
  const size_t n = static_cast<size_t>(chunk_size), w = static_cast<size_t>(width);
  std::vector<IndexedLayer> layers;
  for (int cz = 0; cz < height; cz += chunk_size) {
    for (int cx = 0; cx < width; cx += chunk_size) {
      blend(x0 + cx, z0 + cz, chunk_size, &layers);
      for (const IndexedLayer& layer : layers) {
        float* out =
            field.layer(layer.biome) + static_cast<size_t>(cz) * w + static_cast<size_t>(cx);
        for (size_t lz = 0; lz < n; ++lz) {
          std::copy_n(layer.weights.data() + lz * n, n, out + lz * w);
        }
      }
    }
  }
  return field;
}

double MaxSumError(const RegionWeights& field) {
  double worst = 0.0;
  for (size_t i = 0; i < field.columns(); ++i) {
    double sum = 0.0;
    for (int b = 0; b < field.biome_count; ++b) sum += field.layer(b)[i];
    worst = std::max(worst, std::abs(sum - 1.0));
  }
  return worst;
}

double MaxNeighbourJump(const RegionWeights& field) {
  const size_t w = static_cast<size_t>(field.width), h = static_cast<size_t>(field.height);
  double worst = 0.0;
  for (int b = 0; b < field.biome_count; ++b) {
    const float* v = field.layer(b);
    for (size_t z = 0; z < h; ++z) {
      for (size_t x = 0; x < w; ++x) {
        const double here = v[z * w + x];
        if (x + 1 < w) worst = std::max(worst, std::abs(here - v[z * w + x + 1]));
        if (z + 1 < h) worst = std::max(worst, std::abs(here - v[(z + 1) * w + x]));
      }
    }
  }
  return worst;
}

ChunkCoverage MeasureChunks(const RegionWeights& field, int chunk_size) {
  const size_t n = static_cast<size_t>(chunk_size), w = static_cast<size_t>(field.width);
  ChunkCoverage out;
  int64_t biomes = 0, single = 0;
  for (int cz = 0; cz < field.height; cz += chunk_size) {
    for (int cx = 0; cx < field.width; cx += chunk_size) {
      int present = 0;
      for (int b = 0; b < field.biome_count; ++b) {
        const float* v = field.layer(b) + static_cast<size_t>(cz) * w + static_cast<size_t>(cx);
        bool any = false;
        for (size_t lz = 0; lz < n && !any; ++lz) {
          any = std::any_of(v + lz * w, v + lz * w + n, [](float x) { return x != 0.0f; });
        }
        present += any ? 1 : 0;
      }
      ++out.chunks;
      biomes += present;
      single += present == 1 ? 1 : 0;
    }
  }
  if (out.chunks > 0) {
    out.biomes_per_chunk = static_cast<double>(biomes) / static_cast<double>(out.chunks);
    out.single_biome_share = static_cast<double>(single) / static_cast<double>(out.chunks);
  }
  return out;
}

double RmsDistance(const RegionWeights& a, const RegionWeights& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.weights.size(); ++i) {
    const double d = static_cast<double>(a.weights[i]) - b.weights[i];
    sum += d * d;
  }
  return a.columns() > 0 ? std::sqrt(sum / static_cast<double>(a.columns())) : 0.0;
}

double GridLock(const RegionWeights& field, int period) {
  // Curvature energy per phase (world coordinate mod period) along each axis, over every layer;
  // then the energy-weighted phase vector's length relative to the total.
  std::vector<double> ex(static_cast<size_t>(period), 0.0), ez(static_cast<size_t>(period), 0.0);
  const size_t w = static_cast<size_t>(field.width), h = static_cast<size_t>(field.height);
  for (int b = 0; b < field.biome_count; ++b) {
    const float* v = field.layer(b);
    for (size_t z = 1; z + 1 < h; ++z) {
      const size_t pz =
          static_cast<size_t>(field.z0 + static_cast<int64_t>(z) -
                              FloorDiv(field.z0 + static_cast<int64_t>(z), period) * period);
      for (size_t x = 1; x + 1 < w; ++x) {
        const size_t px =
            static_cast<size_t>(field.x0 + static_cast<int64_t>(x) -
                                FloorDiv(field.x0 + static_cast<int64_t>(x), period) * period);
        const double c = v[z * w + x];
        const double dxx = v[z * w + x + 1] - 2.0 * c + v[z * w + x - 1];
        const double dzz = v[(z + 1) * w + x] - 2.0 * c + v[(z - 1) * w + x];
        ex[px] += dxx * dxx;
        ez[pz] += dzz * dzz;
      }
    }
  }
  auto lock = [period](const std::vector<double>& energy) {
    std::complex<double> phasor = 0.0;
    double total = 0.0;
    for (int r = 0; r < period; ++r) {
      phasor +=
          energy[static_cast<size_t>(r)] * std::polar(1.0, 2.0 * std::numbers::pi * r / period);
      total += energy[static_cast<size_t>(r)];
    }
    return total > 0.0 ? std::abs(phasor) / total : 0.0;
  };
  return std::max(lock(ex), lock(ez));
}

double IntervalGridLock(const RegionWeights& field, int interval) {
  double lock = GridLock(field, interval);
  if (interval % 2 == 0) lock = std::max(lock, GridLock(field, interval / 2));
  return lock;
}

}  // namespace worldgen::quality
