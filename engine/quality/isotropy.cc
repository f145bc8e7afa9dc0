#include "engine/quality/isotropy.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "engine/hash.h"

namespace worldgen::quality {
namespace {

// A hash as a double in [0, 1).
double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace

DiscFieldSource::DiscFieldSource(uint64_t seed, double spacing, double min_radius,
                                 double max_radius)
    : seed_(seed), spacing_(spacing), min_radius_(min_radius), max_radius_(max_radius) {}

int DiscFieldSource::BiomeIndexAt(double x, double z) const {
  // The nearest grid point's disc is the only one that can contain (x, z): discs are much smaller
  // than half the spacing.
  const int64_t k = static_cast<int64_t>(std::floor(x / spacing_ + 0.5));
  const int64_t l = static_cast<int64_t>(std::floor(z / spacing_ + 0.5));
  const double cx =
      static_cast<double>(k) * spacing_ + 4.0 * Unit(HashCoords(seed_, k, l, 1)) - 2.0;
  const double cz =
      static_cast<double>(l) * spacing_ + 4.0 * Unit(HashCoords(seed_, k, l, 2)) - 2.0;
  const double r = min_radius_ + (max_radius_ - min_radius_) * Unit(HashCoords(seed_, k, l, 3));
  const double dx = x - cx, dz = z - cz;
  return dx * dx + dz * dz <= r * r ? 1 : 0;
}

HalfPlaneSource::HalfPlaneSource(double phi_radians, double cx, double cz)
    : cos_(std::cos(phi_radians)), sin_(std::sin(phi_radians)), cx_(cx), cz_(cz) {}

int HalfPlaneSource::BiomeIndexAt(double x, double z) const {
  return (x - cx_) * cos_ + (z - cz_) * sin_ >= 0.0 ? 1 : 0;
}

BlenderSpec KernelBlenderSpec(BlenderKind kind, double interval, double blend_radius) {
  BlenderSpec blender{kind, {}};
  const BlenderMethod& method = MethodOf(kind);
  for (const char* name : {"sampling_interval", "interval"}) {
    if (FindParam(method, name) != nullptr) blender.params[name] = interval;
  }
  if (FindParam(method, "blend_radius") != nullptr) blender.params["blend_radius"] = blend_radius;
  return blender;
}

WorldSpec TwoBiomeSpec(BlenderKind kind, double interval, double blend_radius, uint64_t seed) {
  WorldSpec spec = DefaultWorldSpec();
  spec.name = "isotropy";
  spec.seed = seed;
  spec.blender = KernelBlenderSpec(kind, interval, blend_radius);
  spec.biomes.resize(2);
  for (uint32_t id = 0; id < 2; ++id) {
    spec.biomes[id].id = id;
    spec.biomes[id].blend_radius = 0.0;
  }
  return spec;
}

std::vector<float> WeightField(const ChunkBlendFn& blend, int64_t origin, int extent,
                               int chunk_size) {
  const RegionWeights field = BlendRegion(blend, origin, origin, extent, extent, chunk_size, 2);
  return std::vector<float>(field.layer(1), field.layer(1) + field.columns());
}

OrientationHarmonics MeasureHarmonics(const std::vector<float>& field, int extent) {
  const size_t n = static_cast<size_t>(extent);
  OrientationHarmonics out;
  for (size_t z = 1; z + 1 < n; ++z) {
    for (size_t x = 1; x + 1 < n; ++x) {
      const double gx = 0.5 * (static_cast<double>(field[z * n + x + 1]) - field[z * n + x - 1]);
      const double gz =
          0.5 * (static_cast<double>(field[(z + 1) * n + x]) - field[(z - 1) * n + x]);
      const double m2 = gx * gx + gz * gz;
      if (m2 == 0.0) continue;
      const std::complex<double> g2 = std::complex<double>(gx, gz) * std::complex<double>(gx, gz);
      out.sum4 += g2 * g2 / m2;              // |g|^2 e^{4i theta}
      out.sum6 += g2 * g2 * g2 / (m2 * m2);  // |g|^2 e^{6i theta}
      out.energy += m2;
      out.gradient_columns += 1.0;
    }
  }
  return out;
}

double GridLock(const std::vector<float>& field, int extent, int period) {
  RegionWeights region(0, 0, extent, extent, 1);
  region.weights = field;
  return GridLock(region, period);
}

double EdgeWidth(const std::vector<float>& field, int extent, double radius) {
  const size_t n = static_cast<size_t>(extent);
  const double c = static_cast<double>(extent / 2);
  double sum = 0.0;
  for (size_t z = 0; z < n; ++z) {
    for (size_t x = 0; x < n; ++x) {
      const double dx = static_cast<double>(x) - c, dz = static_cast<double>(z) - c;
      if (dx * dx + dz * dz > radius * radius) continue;
      const double w = field[z * n + x];
      sum += 4.0 * w * (1.0 - w);
    }
  }
  return sum / (2.0 * radius);
}

namespace {

constexpr int kChunk = 16;

// Biome 1's weight over [origin, origin + extent)^2 with `method`'s blender reading `source`.
std::vector<float> BlendField(BlenderKind method, const BiomeSource& source, int interval,
                              int radius, uint64_t seed, int64_t origin, int extent) {
  const WorldSpec spec = TwoBiomeSpec(method, interval, radius, seed);
  const std::unique_ptr<Blender> blender = MakeBlender(spec, source, /*world_uid=*/1);
  return WeightField(
      [&](int64_t x0, int64_t z0, int size, std::vector<IndexedLayer>* layers) {
        blender->BlendColumns(x0, z0, size, nullptr, layers);
      },
      origin, extent, kChunk);
}

}  // namespace

IsotropyReport MeasureIsotropy(BlenderKind method, int interval, int radius, int extent,
                               int edge_extent, int edge_angles, uint64_t seed) {
  IsotropyReport report;
  // Discs of radius 20..60 every 256 blocks: no column is within reach of two discs for radii up
  // to 64 (60 + 64 + 2 < 128).
  const DiscFieldSource discs(DeriveSeed(seed, 0x15071), 256.0, 20.0, 60.0);
  const std::vector<float> field =
      BlendField(method, discs, interval, radius, seed, -extent / 2, extent);
  report.discs = MeasureHarmonics(field, extent);
  RegionWeights region(0, 0, extent, extent, 1);
  region.weights = field;
  report.grid_lock = IntervalGridLock(region, interval);

  // Straight edges through the field's centre column, offset by a fraction of a block so the edge
  // never runs exactly through a row of columns.
  const int64_t origin = -edge_extent / 2;
  const double centre = static_cast<double>(origin + edge_extent / 2);
  const double disc_radius = edge_extent / 2 - radius - 2 * interval;
  for (int a = 0; a < edge_angles; ++a) {
    const double phi = 0.5 * std::numbers::pi * a / edge_angles;
    const HalfPlaneSource edge(phi, centre + 0.37, centre - 0.21);
    const double width =
        EdgeWidth(BlendField(method, edge, interval, radius, seed, origin, edge_extent),
                  edge_extent, disc_radius);
    report.edge_width_min = a == 0 ? width : std::min(report.edge_width_min, width);
    report.edge_width_max = a == 0 ? width : std::max(report.edge_width_max, width);
  }
  return report;
}

}  // namespace worldgen::quality
