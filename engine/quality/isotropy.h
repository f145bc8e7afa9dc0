// Squareness measurements: how much a blender's output depends on direction.
//
// A blender that is free of grid artifacts treats every direction alike. Three measurements make
// that a number, all on synthetic two-biome maps whose exact answer is known to be isotropic, so
// any directional preference in the output comes from the blender and not from the map:
//
//  * Disc field: biome 1 inside discs of hashed radii (20..60 blocks) and sub-block hashed centres,
//    placed far enough apart that no column sees two discs. The gradient of a blurred disc points
//    in every direction equally, so for an isotropic blender the orientation harmonics
//        A_k = |sum g^k / |g|^(k-2)| / sum |g|^2        (g = gx + i*gz, the weight gradient)
//    vanish. A_4 measures square (4-fold) structure, A_6 hexagonal (6-fold) structure such as a
//    triangular lattice could leave. The full-resolution blur gives the floor that the integer
//    column grid and the finite-difference gradient set.
//
//  * Grid lock: the same disc field's curvature, tested for alignment with the world axes at the
//    sampling interval. A lerped grid bends only on grid lines (its creases) and scores near 1.
//
//  * Straight edge: biome 1 on one side of a line through the region centre at angle phi. The
//    transition width, sum of 4 w (1 - w) over a disc of columns divided by the chord length 2R, is
//    the same for every phi if the blender is isotropic. Reported as max/min over phi in [0, 90).
//
// All are deterministic: they are pure functions of the blender and the (hashed) synthetic map.
#ifndef WORLDGEN_ENGINE_QUALITY_ISOTROPY_H_
#define WORLDGEN_ENGINE_QUALITY_ISOTROPY_H_

#include <complex>
#include <cstdint>
#include <vector>

#include "engine/biome_source.h"
#include "engine/blender.h"
#include "engine/quality/blend_metrics.h"
#include "engine/world_spec.h"

namespace worldgen::quality {

// Biome 1 inside discs centred near the points (k * spacing, l * spacing), radius in
// [min_radius, max_radius], both hashed from `seed`; biome 0 elsewhere.
class DiscFieldSource final : public BiomeSource {
 public:
  DiscFieldSource(uint64_t seed, double spacing, double min_radius, double max_radius);
  int BiomeIndexAt(double x, double z) const override;

 private:
  uint64_t seed_;
  double spacing_, min_radius_, max_radius_;
};

// Biome 1 where (x - cx) cos(phi) + (z - cz) sin(phi) >= 0, biome 0 elsewhere.
class HalfPlaneSource final : public BiomeSource {
 public:
  HalfPlaneSource(double phi_radians, double cx, double cz);
  int BiomeIndexAt(double x, double z) const override;

 private:
  double cos_, sin_, cx_, cz_;
};

// `kind`'s blender with its sampling interval (whichever of `sampling_interval` or `interval` the
// method declares; none for full_resolution) and blend_radius set, where the method declares them.
BlenderSpec KernelBlenderSpec(BlenderKind kind, double interval, double blend_radius);

// A two-biome world spec (ids 0 and 1, the method's radius for both) with the given blender and
// seed.
WorldSpec TwoBiomeSpec(BlenderKind kind, double interval, double blend_radius, uint64_t seed);

// Biome 1's weight at every column of the square [origin, origin + extent)^2, row-major, x fastest,
// blended chunk by chunk (extent must be a multiple of chunk_size; BlendRegion's layer 1).
std::vector<float> WeightField(const ChunkBlendFn& blend, int64_t origin, int extent,
                               int chunk_size);

struct OrientationHarmonics {
  // sum |g|^2 e^{4i theta}, sum |g|^2 e^{6i theta} and sum |g|^2 over the columns. Kept as sums so
  // measurements of several fields can be pooled: a magnitude is never negative, so averaging a4
  // over fields keeps their noise; pooling the sums cancels it.
  std::complex<double> sum4 = 0.0, sum6 = 0.0;
  double energy = 0.0;
  double gradient_columns = 0.0;  // Columns with a non-zero gradient (how much edge was measured)

  // 4-fold (square) anisotropy, 0 = none, 1 = every gradient on the axes.
  double a4() const { return energy > 0.0 ? std::abs(sum4) / energy : 0.0; }
  // 6-fold (hexagonal) anisotropy.
  double a6() const { return energy > 0.0 ? std::abs(sum6) / energy : 0.0; }
};

// A_4 and A_6 of a weight field (extent x extent, row-major) from central differences.
OrientationHarmonics MeasureHarmonics(const std::vector<float>& field, int extent);

// How strongly the field's curvature is locked to the world axes at `period` blocks: with
// E = (second difference of w along x)^2 at each column, |sum E exp(2 pi i x / period)| / sum E,
// and the same along z; the larger of the two. 1 = every bend sits on the same grid line phase (the
// creases of a lerped grid), about 0 = bends fall anywhere (no grid to see). period >= 2. The
// one-layer case of GridLock(RegionWeights) (blend_metrics.h), with the field's corner at phase 0.
double GridLock(const std::vector<float>& field, int extent, int period);

// Transition width of a straight edge through the centre of an extent x extent field, measured over
// the disc of columns within `radius` of the centre: sum 4 w (1 - w) / (2 radius).
double EdgeWidth(const std::vector<float>& field, int extent, double radius);

struct IsotropyReport {
  OrientationHarmonics discs;
  // GridLock of the disc field, the larger at period = interval and interval / 2 (where an
  // unjittered triangular lattice repeats along x).
  double grid_lock = 0.0;
  double edge_width_min = 0.0, edge_width_max = 0.0;  // Over the angles measured
  double edge_width_ratio() const { return edge_width_max / edge_width_min; }
};

// Measures `method` (with KernelBlenderSpec(method, interval, radius)) on a disc field of extent x
// extent columns and on straight edges at `edge_angles` angles evenly spread over [0, 90) degrees,
// each on a field of edge_extent columns. `seed` picks the discs and the scattered blender's
// lattice jitter: figures that change with it are noise, figures that do not are the method's own
// structure.
IsotropyReport MeasureIsotropy(BlenderKind method, int interval, int radius, int extent,
                               int edge_extent, int edge_angles, uint64_t seed);

}  // namespace worldgen::quality

#endif  // WORLDGEN_ENGINE_QUALITY_ISOTROPY_H_
