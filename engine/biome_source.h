// BiomeSource: the unblended biome map ("callback" in seed 001): world coordinate -> biome.
//
// Blenders only ever sample a source at lattice points; a source knows nothing about blending.
// Thread safety: implementations are immutable after construction and safe for concurrent use.
#ifndef WORLDGEN_ENGINE_BIOME_SOURCE_H_
#define WORLDGEN_ENGINE_BIOME_SOURCE_H_

#include <memory>
#include <vector>

#include "engine/world_spec.h"

namespace worldgen {

class BiomeSource {
 public:
  virtual ~BiomeSource() = default;
  // Dense index into the world's id-sorted biome table, in [0, biome_count). Pure function of (x, z).
  virtual int BiomeIndexAt(double x, double z) const = 0;
};

// Two fractal noise fields, temperature and humidity, evaluated at (x, z); the biome whose climate
// point is nearest (squared Euclidean distance; ties to the lower index) wins.
class ClimateBiomeSource final : public BiomeSource {
 public:
  // `spec` must be valid and its biomes sorted by id.
  explicit ClimateBiomeSource(const WorldSpec& spec);
  int BiomeIndexAt(double x, double z) const override;

  // The climate values at (x, z), each in [-1, 1]; exposed for tests and tools.
  double TemperatureAt(double x, double z) const;
  double HumidityAt(double x, double z) const;

 private:
  struct ClimatePoint {
    double temperature;
    double humidity;
  };
  uint64_t temperature_seed_;
  uint64_t humidity_seed_;
  ClimateSpec climate_;
  std::vector<ClimatePoint> points_;
};

// The source a spec asks for. `spec` must be valid and its biomes sorted by id.
std::unique_ptr<BiomeSource> MakeBiomeSource(const WorldSpec& spec);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_BIOME_SOURCE_H_
