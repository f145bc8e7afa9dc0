// Squareness of scattered blending against seed 001's comparison methods (bench/isotropy.h).
//
//   BM_Isotropy/method:<m>/gi:<interval>/r:<radius>
//     m = the engine's BlenderKind (every kernel method in the table: 0 scattered, 1
//     full_resolution,
//         2 convoluted_grid, 3 lerped_grid, ...)
//   counters, each the mean over kSeeds seeds (disc placement and, for scattered, lattice jitter):
//     grid_lock   how much of the disc field's curvature sits on grid lines at the interval
//                 (1 = a crease on every grid line, 0 = no grid); grid_lock_max = the worst seed
//     a4          4-fold orientation harmonic of the weight gradient on the disc fields of all
//                 seeds pooled (0 = no preferred axes); a4_max = the worst single seed
//     edge_ratio  max/min transition width of a straight edge over 12 angles in [0, 90)
//     edge_width  mean transition width in blocks
//   A figure whose max is far above its mean is mostly noise of the measured sample, not structure.
//
// One iteration each: the figures are deterministic; the time is only how long measuring took.
// Run: build/bench/quality_bench --benchmark_counters_tabular=true
#include <algorithm>
#include <complex>
#include <string>
#include <utility>

#include "benchmark/benchmark.h"
#include "engine/quality/isotropy.h"

namespace worldgen::quality {
namespace {

constexpr int kSeeds = 8;

void BM_Isotropy(benchmark::State& state) {
  const auto method = static_cast<BlenderKind>(state.range(0));
  const int gi = static_cast<int>(state.range(1)), r = static_cast<int>(state.range(2));
  double lock = 0, lock_max = 0, a4_max = 0, ratio = 0, width = 0, energy = 0;
  std::complex<double> sum4 = 0;
  for (auto _ : state) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      const IsotropyReport report = MeasureIsotropy(method, gi, r, /*extent=*/1024,
                                                    /*edge_extent=*/512, /*edge_angles=*/12, seed);
      lock += report.grid_lock / kSeeds;
      lock_max = std::max(lock_max, report.grid_lock);
      sum4 += report.discs.sum4;
      energy += report.discs.energy;
      a4_max = std::max(a4_max, report.discs.a4());
      ratio += report.edge_width_ratio() / kSeeds;
      width += 0.5 * (report.edge_width_min + report.edge_width_max) / kSeeds;
    }
  }
  state.SetLabel(std::string(BlenderName(method)));
  state.counters["grid_lock"] = lock;
  state.counters["grid_lock_max"] = lock_max;
  state.counters["a4"] = std::abs(sum4) / energy;
  state.counters["a4_max"] = a4_max;
  state.counters["edge_ratio"] = ratio;
  state.counters["edge_width"] = width;
}

// Every method of the engine's table that is parameterised by a kernel radius (the measurements'
// synthetic maps are read through the biome source at that radius), at seed 001's (gi, r); a method
// without a sampling interval (full_resolution) only once, at gi 8.
void KernelMethodsTimesConfigs(benchmark::internal::Benchmark* b) {
  for (auto [gi, r] : {std::pair{8, 24}, std::pair{4, 24}, std::pair{4, 48}}) {
    for (const BlenderMethod* method : BlenderMethods()) {
      if (FindParam(*method, "blend_radius") == nullptr) continue;
      const bool has_interval = FindParam(*method, "sampling_interval") != nullptr ||
                                FindParam(*method, "interval") != nullptr;
      if (!has_interval && gi != 8) continue;
      b->Args({static_cast<int64_t>(method->kind), gi, r});
    }
  }
}
BENCHMARK(BM_Isotropy)
    ->ArgNames({"method", "gi", "r"})
    ->Apply(KernelMethodsTimesConfigs)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace worldgen::quality

BENCHMARK_MAIN();
