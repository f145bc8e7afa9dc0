// Squareness of scattered blending against seed 001's comparison methods (bench/isotropy.h).
//
//   BM_Isotropy/method:<m>/gi:<interval>/r:<radius>
//     m = 0 scattered (engine), 1 full-resolution blur, 2 convoluted grid, 3 lerped grid
//   counters: a4, a6   orientation harmonics of the weight gradient on a field of discs
//                      (0 = isotropic; the full-resolution blur shows the floor of the column grid)
//             grid_lock   how much the curvature of that field sits on grid lines at the interval
//                      (1 = creases on every grid line, 0 = no grid)
//             edge_ratio  max/min transition width of a straight edge over 12 angles in [0, 90)
//             edge_width  mean of that min and max, in blocks
//
// One iteration each: the figures are deterministic; the time is only how long measuring took.
// Run: build/bench/quality_bench --benchmark_counters_tabular=true
#include "bench/isotropy.h"
#include "benchmark/benchmark.h"

namespace worldgen::bench {
namespace {

void BM_Isotropy(benchmark::State& state) {
  const auto method = static_cast<Method>(state.range(0));
  const int gi = static_cast<int>(state.range(1)), r = static_cast<int>(state.range(2));
  IsotropyReport report;
  for (auto _ : state) {
    report = MeasureIsotropy(method, gi, r, /*extent=*/1024, /*edge_extent=*/512, /*edge_angles=*/12);
  }
  state.SetLabel(MethodName(method));
  state.counters["a4"] = report.discs.a4;
  state.counters["a6"] = report.discs.a6;
  state.counters["grid_lock"] = report.grid_lock;
  state.counters["edge_ratio"] = report.edge_width_ratio();
  state.counters["edge_width"] = 0.5 * (report.edge_width_min + report.edge_width_max);
}

BENCHMARK(BM_Isotropy)
    ->ArgNames({"method", "gi", "r"})
    ->ArgsProduct({{0, 1, 2, 3}, {8}, {24}})
    ->ArgsProduct({{0, 2, 3}, {4}, {24}})
    ->ArgsProduct({{0, 2, 3}, {4}, {48}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace worldgen::bench

BENCHMARK_MAIN();
