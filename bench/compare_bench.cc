// Every engine blender in one run on one machine, through the Blender interface (seed 001's
// comparison: scattered against full-resolution blur, convoluted grid and lerped grid).
//
//   BM_Compare/method:<m>/gi:<interval>/r:<radius>   16x16 chunks, ns per column (per_column)
//     m = the engine's BlenderKind (0 scattered, 1 full_resolution, 2 convoluted_grid,
//         3 lerped_grid, ...); gi is the method's sampling interval (ignored by full_resolution)
//   counters: per_column (ns), single_biome (share of chunks answered without per-column work),
//             biomes_per_chunk (mean number of biomes with weight in a chunk)
//
// Every method blends the anchor world (anchor_world.h: seed 001's demo map, the scattered targets'
// world) through the shared sample cache, warmed before timing, so the biome source is excluded for
// all of them alike (seed 001 pre-generated its map). Every method skips chunks whose samples are
// one biome. A method that rejects (gi, r) (e.g. full_resolution above its radius cap) or the world
// (parameter_voronoi, which blends a climate map the noise-max anchor world does not have) is
// skipped with the reason.
//
//   BM_Variant/variant:<v>/gi:<interval>/r:<radius>   the same for the method options the lab also
//     shows as rows (bench::kMethodVariants[v], e.g. scattered:lattice=1; the label names it)
//
//   BM_Radius/method:<m>/gi:8/r:<radius>   the same, radius 16..48 at interval 8: the cost of each
//                                           method against its blend radius (README's plot)
// Run: build/bench/compare_bench --benchmark_counters_tabular=true
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/anchor_world.h"
#include "bench/method_entry.h"
#include "benchmark/benchmark.h"
#include "engine/quality/isotropy.h"
#include "engine/world.h"

namespace worldgen {
namespace {

constexpr int kChunk = 16;

// Times the anchor world blended by `kind` at gi = range(1), r = range(2), then `params` set.
void TimeOnAnchor(benchmark::State& state, BlenderKind kind,
                  const std::map<std::string, double>& params) {
  WorldSpec spec = bench::AnchorWorldSpec(quality::KernelBlenderSpec(
      kind, static_cast<double>(state.range(1)), static_cast<double>(state.range(2))));
  for (const auto& [name, value] : params) spec.blender.params[name] = value;
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
  if (!world.ok()) {
    state.SkipWithError(std::string(world.status().message()).c_str());
    return;
  }
  const Blender& blender = (*world)->blender();
  const auto chunks = bench::SpreadChunks(kChunk, 512);
  BiomeSampleCache cache(256 << 20);
  std::vector<IndexedLayer> layers;
  for (auto [cx, cz] : chunks)
    blender.BlendColumns(cx * kChunk, cz * kChunk, kChunk, &cache, &layers);
  size_t next = 0, single = 0, produced = 0, biomes = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    single += blender.BlendColumns(cx * kChunk, cz * kChunk, kChunk, &cache, &layers);
    biomes += layers.size();
    ++produced;
    benchmark::DoNotOptimize(layers);
  }
  state.counters["per_column"] = benchmark::Counter(
      kChunk * kChunk, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["single_biome"] = static_cast<double>(single) / static_cast<double>(produced);
  state.counters["biomes_per_chunk"] = static_cast<double>(biomes) / static_cast<double>(produced);
}

void BM_Compare(benchmark::State& state) {
  const auto kind = static_cast<BlenderKind>(state.range(0));
  state.SetLabel(std::string(BlenderName(kind)));
  TimeOnAnchor(state, kind, {});
}

void BM_Variant(benchmark::State& state) {
  const char* label = bench::kMethodVariants[state.range(0)];
  absl::StatusOr<bench::MethodEntry> entry = bench::ParseMethodEntry(label, "kMethodVariants");
  state.SetLabel(label);
  if (!entry.ok()) {
    state.SkipWithError(std::string(entry.status().message()).c_str());
    return;
  }
  TimeOnAnchor(state, entry->method->kind, entry->params);
}

constexpr std::pair<int, int> kConfigs[] = {{8, 24}, {4, 24}, {8, 48}, {4, 48}};

void MethodsTimesConfigs(benchmark::internal::Benchmark* b) {
  for (auto [gi, r] : kConfigs) {
    for (const BlenderMethod* method : BlenderMethods()) {
      b->Args({static_cast<int64_t>(method->kind), gi, r});
    }
  }
}
BENCHMARK(BM_Compare)->ArgNames({"method", "gi", "r"})->Apply(MethodsTimesConfigs);

void VariantsTimesConfigs(benchmark::internal::Benchmark* b) {
  for (auto [gi, r] : kConfigs) {
    for (size_t v = 0; v < std::size(bench::kMethodVariants); ++v) {
      b->Args({static_cast<int64_t>(v), gi, r});
    }
  }
}
BENCHMARK(BM_Variant)->ArgNames({"variant", "gi", "r"})->Apply(VariantsTimesConfigs);

void MethodsTimesRadii(benchmark::internal::Benchmark* b) {
  for (int r : {16, 24, 32, 40, 48}) {
    for (const BlenderMethod* method : BlenderMethods()) {
      b->Args({static_cast<int64_t>(method->kind), 8, r});
    }
  }
}
BENCHMARK(BM_Compare)->Name("BM_Radius")->ArgNames({"method", "gi", "r"})->Apply(MethodsTimesRadii);

}  // namespace
}  // namespace worldgen

BENCHMARK_MAIN();
