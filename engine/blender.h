// Blender: how a world turns its biome source into per-column biome weights.
//
// A world holds exactly one Blender, chosen by its spec (WorldSpec::blender) and built by
// MakeBlender. Every implementation keeps this contract, which
// tests/engine/blender_contract_test.cc checks for each of them:
//   * weights lie in [0, 1] and, in every column, sum to 1 within float rounding (1e-6);
//   * BlendColumns returns layers sorted by dense biome index, each non-zero somewhere in the
//   block;
//     when it returns true (single biome) there is exactly one layer and every weight is
//     exactly 1.0f;
//   * BlendPoint at an integer column gives bit-for-bit the weights BlendColumns gives that column,
//     whatever block (chunk position and size) contains it;
//   * BlendColumnGrid gives each of its columns bit-for-bit the weights BlendPoint gives it;
//   * results do not depend on the thread, the order of calls, or whether and how full a
//     BiomeSampleCache is passed (the cache only saves biome-source evaluations);
//   * all const methods are safe for concurrent use.
//
// Adding a method touches, and only touches:
//   - engine/<method>_blender.{h,cc}: the class and its BlenderMethod (parameters with their ranges
//     and defaults, validation, factory), SamplingPoints and SamplingPointBound if the method
//     reads the source at points of the world, and the .cc in engine/CMakeLists.txt;
//   - kMethods in blender.cc, and its value in BlenderKind (world_spec.h);
//   - proto/worldgen/v1/world_config.proto: its BlenderKind value, its config message and the
//     WorldConfig field named like the method, each parameter's comment ending in "Range [min,
//     max], default d." with the engine's figures
//     (WorldConfigTest.MethodParameterCommentsMatchTheEngine); proto/world_config.cc maps them onto
//     the engine by name, and nothing in server/ or client/ changes;
//   - tests/engine/blender_contract_test.cc: its golden hashes (the contract suite runs every
//   method
//     of BlenderMethods() by itself and fails until they are pinned), and its own unit tests
//     (tests/engine/<method>_blender_test.cc, listed in tests/CMakeLists.txt);
//   - docs/blenders.md, and a world in docker/worlds/ if it should ship as an example.
// The lab, the comparison benchmark and the fuzzers pick it up from BlenderMethods().
#ifndef WORLDGEN_ENGINE_BLENDER_H_
#define WORLDGEN_ENGINE_BLENDER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/biome_sample_cache.h"
#include "engine/biome_source.h"
#include "engine/world_spec.h"

namespace worldgen {

// One biome's weights over a block of columns, by dense biome index.
struct IndexedLayer {
  int biome = 0;
  std::vector<float> weights;  // size * size, ColumnIndex layout (chunk.h).
};

// A named figure describing a built blender: its resolved parameters, and derived quantities such
// as the smallest radius its sampling accepts.
struct BlenderFigure {
  std::string name;
  double value = 0.0;
};

// The half-open box of block coordinates [min_x, max_x) x [min_z, max_z).
struct BlockBox {
  double min_x = 0.0, min_z = 0.0, max_x = 0.0, max_z = 0.0;
  bool Contains(double x, double z) const {
    return x >= min_x && x < max_x && z >= min_z && z < max_z;
  }
};

// A point where a blender reads its biome source, and the biome (dense index) it takes from there.
struct SamplingPoint {
  double x = 0.0, z = 0.0;
  int biome = 0;
};

class Blender {
 public:
  virtual ~Blender() = default;

  virtual BlenderKind kind() const = 0;
  // Every declared parameter with the value in force (defaults filled in), in declaration order,
  // then derived figures.
  virtual std::vector<BlenderFigure> Describe() const = 0;

  // Weights of the size x size integer columns whose lowest corner is (x0, z0), size in
  // [1, kMaxChunkSize]. Fills `layers` (see the contract above). Returns true if the block is
  // covered by a single biome. `cache` may be null.
  virtual bool BlendColumns(int64_t x0, int64_t z0, int size, BiomeSampleCache* cache,
                            std::vector<IndexedLayer>* layers) const = 0;

  // Non-zero weights at the point (x, z) as (dense biome index, weight), ascending index.
  // `cache` may be null.
  virtual void BlendPoint(double x, double z, BiomeSampleCache* cache,
                          std::vector<std::pair<int, float>>* weights) const = 0;

  // BlendPoint's weights of the nx x nz columns (x0 + step * a, z0 + step * d), at index
  // d * nx + a: the columns of a 3D chunk's cells (World::BlendVolume). nx, nz >= 1, step >= 1.
  // The default blends the block that spans the grid (if it is at most kMaxChunkSize wide, else
  // point by point) and keeps the grid's columns; a method that can blend a sparse grid for less
  // overrides it.
  virtual void BlendColumnGrid(int64_t x0, int64_t z0, int nx, int nz, int step,
                               BiomeSampleCache* cache,
                               std::vector<std::vector<std::pair<int, float>>>* columns) const;

  // The points inside `box` where the method samples its biome source, each with the biome it
  // blends from there, in the method's canonical order: what a map overlays to show how the method
  // sees the world. Deterministic like the weights (the same with or without a cache). Methods
  // without world-space sampling points (the parameter-space Voronoi reads a climate at every
  // column) keep the default: none.
  virtual void SamplingPoints(const BlockBox& box, BiomeSampleCache* cache,
                              std::vector<SamplingPoint>* out) const {
    (void)box;
    (void)cache;
    out->clear();
  }
  // An upper bound of how many points SamplingPoints returns for `box`, from the sampling's
  // spacing alone (no work): callers check it before asking for a box.
  virtual double SamplingPointBound(const BlockBox& box) const {
    (void)box;
    return 0.0;
  }
};

// Gathers a block's per-column weights (as BlendPoint returns them) into the dense layers
// BlendColumns returns: a layer per biome that has a non-zero weight somewhere, ascending index.
class LayerAccumulator {
 public:
  LayerAccumulator(int biome_count, size_t columns)
      : dense_(static_cast<size_t>(biome_count)), columns_(columns) {}
  // The non-zero weights of column `column` (ColumnIndex layout), each biome at most once.
  void Add(size_t column, const std::vector<std::pair<int, float>>& weights);
  // Moves the layers into `layers` (replacing its contents); returns the number of layers.
  size_t MoveTo(std::vector<IndexedLayer>* layers);

 private:
  std::vector<std::vector<float>> dense_;
  size_t columns_;
};

// Column `at`'s non-zero weights in `layers` (ascending biome, as BlendPoint gives them), replacing
// `column`'s contents: the inverse of LayerAccumulator::Add.
void ColumnWeights(std::span<const IndexedLayer> layers, size_t at,
                   std::vector<std::pair<int, float>>* column);

// The layers of `rows` copies of a row of columns stacked: cell r * columns.size() + c has column
// c's non-zero weights, exactly as a LayerAccumulator given every cell would hold them (a 3D block
// that no cave reaches: each height its columns' 2D weights). Biomes below `biome_count`.
void StackColumns(std::span<const std::vector<std::pair<int, float>>> columns, size_t rows,
                  int biome_count, std::vector<IndexedLayer>* layers);

// The biome every one of `columns` is entirely (its one weight exactly 1.0f), else -1: the rule of
// a single-biome block built from columns' weights (a 3D section's cells, which a point query at
// any of them answers with that column's weights: 1.0f, or the block is not single).
int OneBiomeColumns(std::span<const std::vector<std::pair<int, float>>> columns);

// A declared parameter of a method. Its wire name is the field of the method's config message.
struct BlenderParamDef {
  absl::string_view name;
  double default_value = 0.0;
  double min = 0.0, max = 0.0;  // Inclusive range; every value must also be finite.
  bool integer = false;         // Must be a whole number.
};

// A blending method: its name (the wire name, lower_snake_case), parameters, the rules that tie
// them together, and its factory.
struct BlenderMethod {
  BlenderKind kind;
  absl::string_view name;
  std::span<const BlenderParamDef> params;
  // Rules beyond each parameter's own range (e.g. a radius against an interval, per-biome radii).
  // Called with a spec whose parameters are known and within their ranges.
  absl::Status (*validate)(const WorldSpec& spec);
  // `spec` valid with biomes sorted by id; `source` outlives the blender; `world_uid` keys this
  // world's tiles in a shared BiomeSampleCache.
  std::unique_ptr<Blender> (*make)(const WorldSpec& spec, const BiomeSource& source,
                                   uint64_t world_uid);
};

// Every method, in BlenderKind order.
std::span<const BlenderMethod* const> BlenderMethods();
// The method of `kind` (which must be a declared BlenderKind).
const BlenderMethod& MethodOf(BlenderKind kind);
// The method called `name`, or null.
const BlenderMethod* FindMethod(absl::string_view name);
absl::string_view BlenderName(BlenderKind kind);
// The parameter `name` the method declares, or null.
const BlenderParamDef* FindParam(const BlenderMethod& method, absl::string_view name);

// The value in force of parameter `name` of the spec's method: spec.blender.params[name] if set,
// else its declared default. `name` must be declared by the method.
double BlenderParam(const WorldSpec& spec, absl::string_view name);

// OK, or INVALID_ARGUMENT naming the offending "<method>.<parameter>" (or biome field), its value
// and the rule: unknown kind, undeclared parameter, value out of range, or the method's own rules.
absl::Status ValidateBlenderSpec(const WorldSpec& spec);

// The blender `spec` asks for. `spec` must be valid (ValidateWorldSpec) with biomes sorted by id.
std::unique_ptr<Blender> MakeBlender(const WorldSpec& spec, const BiomeSource& source,
                                     uint64_t world_uid);

// For the kernel methods: checks the method's `blend_radius` parameter and every non-zero biome
// blend_radius against [min_radius, max_radius]; `rule` says where the bounds come from. `method`
// names the method in messages ("scattered.blend_radius = 3 is outside [...]: <rule>").
absl::Status ValidateKernelRadii(const WorldSpec& spec, absl::string_view method, double min_radius,
                                 double max_radius, absl::string_view rule);

// Squared kernel radius per dense biome index for a kernel method: each biome's blend_radius, or
// `default_radius` where that is 0. `spec` must have its biomes sorted by id.
std::vector<double> BiomeRadiiSquared(const WorldSpec& spec, double default_radius);

}  // namespace worldgen

#endif  // WORLDGEN_ENGINE_BLENDER_H_
