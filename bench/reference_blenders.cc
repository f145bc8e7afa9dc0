#include "bench/reference_blenders.h"

#include <algorithm>
#include <cmath>

namespace worldgen::bench {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

struct GridPoint {
  double x, z;
  int biome;
};

// Grid points (multiples of `interval`) whose kernel reaches the box [x0, x1] x [z0, z1].
void GatherGrid(const PregeneratedBiomeMap& map, int interval, int radius, int64_t x0, int64_t z0,
                int64_t x1, int64_t z1, std::vector<GridPoint>* out) {
  out->clear();
  for (int64_t gz = FloorDiv(z0 - radius, interval); gz * interval <= z1 + radius; ++gz) {
    for (int64_t gx = FloorDiv(x0 - radius, interval); gx * interval <= x1 + radius; ++gx) {
      int64_t px = gx * interval, pz = gz * interval;
      int64_t dx = std::max<int64_t>({0, x0 - px, px - x1}), dz = std::max<int64_t>({0, z0 - pz, pz - z1});
      if (dx * dx + dz * dz < int64_t{radius} * radius) {
        out->push_back({static_cast<double>(px), static_cast<double>(pz), map.biome(px, pz)});
      }
    }
  }
}

bool AllOneBiome(const std::vector<GridPoint>& points) {
  return std::all_of(points.begin(), points.end(),
                     [&](const GridPoint& p) { return p.biome == points.front().biome; });
}

// Normalized sparse-convolution weights at (x, z) into by_biome[biome_count].
void GridWeightsAt(const std::vector<GridPoint>& points, double radius_sq, double x, double z,
                   int biome_count, double* by_biome) {
  std::fill(by_biome, by_biome + biome_count, 0.0);
  double total = 0.0;
  for (const GridPoint& p : points) {
    double dx = x - p.x, dz = z - p.z;
    double t = radius_sq - (dx * dx + dz * dz);
    if (t <= 0.0) continue;
    by_biome[p.biome] += t * t;
    total += t * t;
  }
  for (int b = 0; b < biome_count; ++b) by_biome[b] /= total;
}

// Dense per-biome weights [biome][column] -> sparse layers of non-zero biomes.
void EmitLayers(const std::vector<double>& dense, int biome_count, size_t columns,
                std::vector<IndexedLayer>* layers) {
  layers->clear();
  for (int b = 0; b < biome_count; ++b) {
    const double* w = dense.data() + static_cast<size_t>(b) * columns;
    if (std::none_of(w, w + columns, [](double v) { return v != 0.0; })) continue;
    IndexedLayer layer{b, std::vector<float>(columns)};
    for (size_t c = 0; c < columns; ++c) layer.weights[c] = static_cast<float>(w[c]);
    layers->push_back(std::move(layer));
  }
}

void EmitSingle(int biome, size_t columns, std::vector<IndexedLayer>* layers) {
  layers->assign(1, IndexedLayer{biome, std::vector<float>(columns, 1.0f)});
}

}  // namespace

PregeneratedBiomeMap::PregeneratedBiomeMap(const BiomeSource& source, int64_t origin, int extent)
    : origin_(origin), extent_(static_cast<size_t>(extent)), map_(extent_ * extent_) {
  for (size_t z = 0; z < extent_; ++z) {
    for (size_t x = 0; x < extent_; ++x) {
      map_[z * extent_ + x] = static_cast<uint16_t>(source.BiomeIndexAt(
          static_cast<double>(origin + static_cast<int64_t>(x)), static_cast<double>(origin + static_cast<int64_t>(z))));
    }
  }
}

FullResolutionBlender::FullResolutionBlender(const PregeneratedBiomeMap& map, int radius, int biome_count)
    : map_(map), radius_(radius), biome_count_(biome_count) {
  const int side = 2 * radius + 1;
  kernel_.resize(static_cast<size_t>(side) * side);
  double total = 0.0;
  for (int dz = -radius; dz <= radius; ++dz) {
    for (int dx = -radius; dx <= radius; ++dx) {
      double t = std::max(0.0, double(radius) * radius - dx * dx - dz * dz);
      kernel_[static_cast<size_t>((dz + radius) * side + dx + radius)] = t * t;
      total += t * t;
    }
  }
  for (double& k : kernel_) k /= total;  // Constant normalization, folded into the table.
}

bool FullResolutionBlender::Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers) {
  const size_t columns = static_cast<size_t>(size) * size;
  const int r = radius_, side = 2 * r + 1;
  const int first = map_.biome(x0 - r, z0 - r);
  bool single = true;
  for (int64_t z = z0 - r; single && z < z0 + size + r; ++z) {
    for (int64_t x = x0 - r; x < x0 + size + r; ++x) {
      if (map_.biome(x, z) != first) {
        single = false;
        break;
      }
    }
  }
  if (single) {
    EmitSingle(first, columns, layers);
    return true;
  }
  acc_.assign(static_cast<size_t>(biome_count_) * columns, 0.0);
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      const size_t col = static_cast<size_t>(lz) * size + lx;
      for (int dz = -r; dz <= r; ++dz) {
        const double* krow = kernel_.data() + static_cast<size_t>((dz + r) * side + r);
        for (int dx = -r; dx <= r; ++dx) {
          double w = krow[dx];
          if (w == 0.0) continue;
          acc_[static_cast<size_t>(map_.biome(x0 + lx + dx, z0 + lz + dz)) * columns + col] += w;
        }
      }
    }
  }
  EmitLayers(acc_, biome_count_, columns, layers);
  return false;
}

ConvolutedGridBlender::ConvolutedGridBlender(const PregeneratedBiomeMap& map, int interval, int radius,
                                             int biome_count)
    : map_(map), interval_(interval), radius_(radius), biome_count_(biome_count) {}

bool ConvolutedGridBlender::Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers) {
  const size_t columns = static_cast<size_t>(size) * size;
  std::vector<GridPoint> points;
  GatherGrid(map_, interval_, radius_, x0, z0, x0 + size - 1, z0 + size - 1, &points);
  if (AllOneBiome(points)) {
    EmitSingle(points.front().biome, columns, layers);
    return true;
  }
  acc_.assign(static_cast<size_t>(biome_count_) * columns, 0.0);
  std::vector<double> here(static_cast<size_t>(biome_count_));
  const double r_sq = double(radius_) * radius_;
  for (int lz = 0; lz < size; ++lz) {
    for (int lx = 0; lx < size; ++lx) {
      GridWeightsAt(points, r_sq, double(x0 + lx), double(z0 + lz), biome_count_, here.data());
      for (int b = 0; b < biome_count_; ++b) acc_[static_cast<size_t>(b) * columns + lz * size + lx] = here[b];
    }
  }
  EmitLayers(acc_, biome_count_, columns, layers);
  return false;
}

LerpedGridBlender::LerpedGridBlender(const PregeneratedBiomeMap& map, int interval, int radius, int biome_count)
    : map_(map), interval_(interval), radius_(radius), biome_count_(biome_count),
      vertex_blender_(map, interval, radius, biome_count) {}

bool LerpedGridBlender::Blend(int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers) {
  const size_t columns = static_cast<size_t>(size) * size;
  const int64_t g = interval_;
  const int64_t gx0 = FloorDiv(x0, g), gz0 = FloorDiv(z0, g);
  const int64_t gx1 = FloorDiv(x0 + size - 1, g) + 1, gz1 = FloorDiv(z0 + size - 1, g) + 1;
  std::vector<GridPoint> points;
  GatherGrid(map_, interval_, radius_, gx0 * g, gz0 * g, gx1 * g, gz1 * g, &points);
  if (AllOneBiome(points)) {
    EmitSingle(points.front().biome, columns, layers);
    return true;
  }
  // Weights at every grid vertex of the chunk, then bilinear interpolation per column.
  const size_t vx = static_cast<size_t>(gx1 - gx0 + 1), vz = static_cast<size_t>(gz1 - gz0 + 1);
  const size_t nb = static_cast<size_t>(biome_count_);
  std::vector<double> vertex(vx * vz * nb);
  const double r_sq = double(radius_) * radius_;
  for (size_t j = 0; j < vz; ++j) {
    for (size_t i = 0; i < vx; ++i) {
      GridWeightsAt(points, r_sq, double((gx0 + int64_t(i)) * g), double((gz0 + int64_t(j)) * g), biome_count_,
                    vertex.data() + (j * vx + i) * nb);
    }
  }
  std::vector<double> dense(nb * columns);
  for (int lz = 0; lz < size; ++lz) {
    const int64_t z = z0 + lz;
    const size_t j = static_cast<size_t>(FloorDiv(z, g) - gz0);
    const double fz = double(z - FloorDiv(z, g) * g) / double(g);
    for (int lx = 0; lx < size; ++lx) {
      const int64_t x = x0 + lx;
      const size_t i = static_cast<size_t>(FloorDiv(x, g) - gx0);
      const double fx = double(x - FloorDiv(x, g) * g) / double(g);
      const double* a = vertex.data() + (j * vx + i) * nb;
      const double* b = a + nb;
      const double* c = a + vx * nb;
      const double* d = c + nb;
      for (size_t k = 0; k < nb; ++k) {
        double top = a[k] + (b[k] - a[k]) * fx, bottom = c[k] + (d[k] - c[k]) * fx;
        dense[k * columns + static_cast<size_t>(lz) * size + lx] = top + (bottom - top) * fz;
      }
    }
  }
  EmitLayers(dense, biome_count_, columns, layers);
  return false;
}

}  // namespace worldgen::bench
