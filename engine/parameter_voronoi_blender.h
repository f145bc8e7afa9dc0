// ParameterVoronoiBlender: seed 000's blending of the Voronoi cells of biome points in parameter
// (climate) space.
//
// Every biome is a point in parameter space, today (temperature, humidity) as given in its
// BiomeSpec. The climate noise at a column gives a point I (the same noise fields, seeds and
// operations as ClimateBiomeSource, so the nearest biome point is the source's biome there). Each
// biome k has a radius r_k in parameter units. The weights at I:
//   * D = distance from I to the nearest point; candidates = points within 4 R + D of I, where R is
//     the largest radius of any biome (plus a 1e-6 margin against rounding);
//   * every candidate starts at weight 1; for each pair (A, B) of candidates in ascending
//     (index A, index B) order: F = dot(I - (A + B) / 2, B - A) / |B - A| (signed distance from the
//     dividing line, positive toward B), R_AB = (r_A + r_B) / 2,
//     H = fade(clamp(F / R_AB, -1, 1) / 2 + 1/2) with fade(t) = t^2 (3 - 2t); B's weight is
//     multiplied by H and A's by 1 - H;
//   * weights are divided by their sum (ascending index, double) and rounded to float once.
// Why the cull never changes a bit: a point C with non-zero weight is within D + 2 R of I (pitted
// against the nearest point it would get H = 0 otherwise), so a point B beyond 4 R + D is at least
// R_CB beyond the dividing line of every such pair: its H is exactly 0 and the factor it would give
// C is exactly 1. R must bound R_CB, which involves B's own radius, hence the largest radius of all
// biomes rather than of the candidates. tests/engine/parameter_voronoi_blender_test.cc compares the
// culled weights with the unculled O(N^2) evaluation bit for bit.
//
// Radii: a biome's parameter_radius if non-zero; else, if auto_radius_fraction f > 0, f times the
// distance from its point to the nearest other biome point (the automatic radius: tightly packed
// points get narrow transitions, isolated ones wide); else climate_radius. f <= 1/2 keeps every
// pair's transition band clear of both its points, so each biome has weight exactly 1 at and around
// its own point unless a third point is closer.
//
// More axes: ParameterSpace works in any number of dimensions. Adding an axis (say,
// "continentalness") takes a value per biome in BiomeSpec and the wire's BiomeConfig, one more
// noise field in ClimateBiomeSource (and its nearest-point rule), and one more coordinate per point
// and per column where this blender fills them (points in the constructor, inputs in
// BlendColumns/BlendPoint).
//
// Parameters (world config message `parameter_voronoi`): climate_radius (parameter units,
// [0.001, 1], default 0.05), auto_radius_fraction ([0, 0.5], default 0 = off).
// Per-biome radius: BiomeSpec::parameter_radius.
//
// The cache is not used: the blender samples no biome source, only the climate noise per column
// (batched, FractalNoise2DBatch, bit-identical to the point path).
//
// Thread safety: immutable after construction; safe for concurrent use.
#ifndef WORLDGEN_ENGINE_PARAMETER_VORONOI_BLENDER_H_
#define WORLDGEN_ENGINE_PARAMETER_VORONOI_BLENDER_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/biome_source.h"
#include "engine/blender.h"

namespace worldgen {

// Biome points with radii in a parameter space of `dims` axes, and seed 000's weights among them.
class ParameterSpace {
 public:
  // Extra cull distance beyond 4 R + D: far above the rounding of any distance here (inputs and
  // points are O(1)), so the exactness argument holds in floating point too.
  static constexpr double kCullMargin = 1e-6;

  // Point k is coords[k * dims, (k + 1) * dims); radii[k] > 0; points pairwise distinct.
  ParameterSpace(int dims, std::vector<double> coords, std::vector<double> radii);

  int dims() const { return dims_; }
  int size() const { return static_cast<int>(radii_.size()); }
  double max_radius() const { return max_radius_; }
  const double* point(int k) const { return coords_.data() + static_cast<size_t>(k) * dims_; }
  double radius(int k) const { return radii_[static_cast<size_t>(k)]; }

  // Indices, ascending, of the points within 4 R + D + kCullMargin of `input` (dims values).
  void Candidates(const double* input, std::vector<int>* out) const;

  // Normalized weights at `input` of the points `candidates` (ascending indices): out[i] belongs to
  // candidates[i]. Every candidate is compared with every other; weights of points left out are
  // taken as exactly 0.
  void Weights(const double* input, std::span<const int> candidates,
               std::vector<double>* out) const;

 private:
  int dims_;
  std::vector<double> coords_;
  std::vector<double> radii_;
  double max_radius_ = 0.0;
};

class ParameterVoronoiBlender final : public Blender {
 public:
  static const BlenderMethod kMethod;

  // Each biome's radius in parameter units (see the header comment). `spec` valid, biomes sorted.
  static std::vector<double> BiomeRadii(const WorldSpec& spec);

  explicit ParameterVoronoiBlender(const WorldSpec& spec);

  BlenderKind kind() const override { return BlenderKind::kParameterVoronoi; }
  std::vector<BlenderFigure> Describe() const override;
  bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                    std::vector<IndexedLayer>* layers) const override;
  void BlendPoint(double x, double z, BiomeSampleCache* cache,
                  std::vector<std::pair<int, float>>* weights) const override;

  const ParameterSpace& space() const { return space_; }

 private:
  // Non-zero weights (ascending index) at the climate point (temperature, humidity).
  void WeightsAtClimate(double temperature, double humidity, std::vector<int>* candidates,
                        std::vector<double>* scratch,
                        std::vector<std::pair<int, float>>* weights) const;

  ClimateBiomeSource climate_;
  double climate_radius_;
  double auto_radius_fraction_;
  ParameterSpace space_;
};

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_PARAMETER_VORONOI_BLENDER_H_
