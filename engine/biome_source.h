// BiomeSource: the unblended biome map ("callback" in seed 001): world coordinate -> biome.
//
// Blenders only ever sample a source at lattice points; a source knows nothing about blending.
// Thread safety: implementations are immutable after construction and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_BIOME_SOURCE_H_
#define WORLDGEN_ENGINE_BIOME_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/world_spec.h"

namespace worldgen {

class BiomeSource {
 public:
  virtual ~BiomeSource() = default;
  // Dense index into the world's id-sorted biome table, in [0, biome_count). Pure function of (x,
  // z).
  virtual int BiomeIndexAt(double x, double z) const = 0;

  // out[k] = BiomeIndexAt(xs[k], zs[k]) for k < n, exactly. Sources override it with a batched
  // evaluation (the blenders fill a whole cache tile per call); this default loops.
  virtual void BiomeIndices(const double* xs, const double* zs, size_t n, uint16_t* out) const;
};

// Two fractal noise fields, temperature and humidity, evaluated at (x, z); the biome whose climate
// point is nearest (squared Euclidean distance; ties to the lower index) wins.
class ClimateBiomeSource final : public BiomeSource {
 public:
  // `spec` must be valid and its biomes sorted by id.
  explicit ClimateBiomeSource(const WorldSpec& spec);
  int BiomeIndexAt(double x, double z) const override;
  void BiomeIndices(const double* xs, const double* zs, size_t n, uint16_t* out) const override;

  // The climate values at (x, z), each in [-1, 1]; exposed for tests and tools.
  double TemperatureAt(double x, double z) const;
  double HumidityAt(double x, double z) const;
  // TemperatureAt and HumidityAt at n points, bit for bit, through FractalNoise2DBatch (cheapest
  // for runs of neighbouring columns). Outputs must not overlap the inputs.
  void ClimateAt(const double* xs, const double* zs, size_t n, double* temperature,
                 double* humidity) const;

 private:
  struct ClimatePoint {
    double temperature;
    double humidity;
    int index;  // Dense biome index (cave biomes have no point: the 2D map never picks them).
  };
  int Nearest(double temperature, double humidity) const;

  uint64_t temperature_seed_;
  uint64_t humidity_seed_;
  ClimateSpec climate_;
  std::vector<ClimatePoint> points_;
};

// Seed 001's demo map: one fractal noise field per biome (NoiseMaxSpec), seeded from the world seed
// and the biome's id; the biome whose field is highest at (x, z) wins (ties to the lower index).
// Adding a biome to a world leaves the others' fields unchanged.
class NoiseMaxBiomeSource final : public BiomeSource {
 public:
  // `spec` must be valid and its biomes sorted by id.
  explicit NoiseMaxBiomeSource(const WorldSpec& spec);
  int BiomeIndexAt(double x, double z) const override;
  void BiomeIndices(const double* xs, const double* zs, size_t n, uint16_t* out) const override;

  // Biome `index`'s field at (x, z), in [-1, 1]; exposed for tests and tools.
  double FieldAt(int index, double x, double z) const;

 private:
  NoiseMaxSpec params_;
  std::vector<uint64_t> seeds_;          // Per dense biome index.
  std::vector<uint16_t> surface_;        // Dense indices of the biomes the 2D map picks from
  std::vector<uint64_t> surface_seeds_;  // (not cave biomes), and their seeds.
};

// The source a spec asks for. `spec` must be valid and its biomes sorted by id.
std::unique_ptr<BiomeSource> MakeBiomeSource(const WorldSpec& spec);

// The unblended 3D biome map (3D biomes, engine/volume_blender.h): world coordinate -> dense
// biome index.
class VolumeSource {
 public:
  virtual ~VolumeSource() = default;
  virtual int BiomeIndexAt(double x, double y, double z) const = 0;
  // Whether a point with lo <= y <= hi may get a cave biome (false lets 3D blending over a
  // surface skip the samples of a block no cave reaches). Conservative: true when unsure.
  virtual bool MayHoldCaves(double /*lo*/, double /*hi*/) const { return true; }
  // For k < n: out[k] = the biome at (xs[k], ys[k], zs[k]) if it is a cave biome, else -1 or any
  // biome that is not (3D blending over a surface only tells the two apart). This default answers
  // BiomeIndexAt; CaveBiomeSource answers -1 without reading the 2D map outside the bands, and
  // reads it in one batch inside them.
  virtual void CaveIndicesAt(const double* xs, const double* ys, const double* zs, size_t n,
                             int* out) const;
};

// A world's 3D map: the surface biome of (x, z) (the 2D map) everywhere, except at heights where
// cave biomes exist (their bands, CaveBand): there the cave climate, two 3D fractal noise fields
// (CaveSpec), picks among the surface biome and those cave biomes the one whose climate point
// (temperature, humidity) is nearest (squared distance; ties to the surface biome, then to the
// lower index). 2D worlds (no cave band) never build one.
class CaveBiomeSource final : public VolumeSource {
 public:
  // `spec` must be valid with its biomes sorted by id; `surface` is its 2D map and must outlive
  // this source.
  CaveBiomeSource(const WorldSpec& spec, const BiomeSource& surface);
  int BiomeIndexAt(double x, double y, double z) const override;
  bool MayHoldCaves(double lo, double hi) const override;
  void CaveIndicesAt(const double* xs, const double* ys, const double* zs, size_t n,
                     int* out) const override;

  // The cave climate at (x, y, z), each in [-1, 1]; exposed for tests and tools.
  double TemperatureAt(double x, double y, double z) const;
  double HumidityAt(double x, double y, double z) const;

 private:
  struct Cave {
    int index;
    double y_min, y_max;
  };
  bool InSomeBand(double y) const;
  // The biome at height y inside some band, the surface biome there being `above` and the cave
  // climate (temperature, humidity) there t, h.
  int Pick(int above, double y, double t, double h) const;
  const BiomeSource& surface_;
  uint64_t temperature_seed_, humidity_seed_;
  CaveSpec caves_spec_;
  std::vector<Cave> caves_;                        // Ascending index.
  std::vector<std::pair<double, double>> points_;  // Climate point per dense biome index.
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_BIOME_SOURCE_H_
