// Scattered blending against seed 001's three comparison methods, in one run on one machine.
//
//   BM_Compare/method:<m>/gi:<interval>/r:<radius>   16x16 chunks, ns per column (per_column)
//     m = 0 scattered (engine, biome samples cached: the source is excluded, as the baselines read
//           a pre-generated map), 1 full-resolution blur, 2 convoluted grid, 3 lerped grid
//
// Every method skips chunks whose inputs are one biome (the seed's optimization, applied to all).
// Chunks are spread over a 4096-block square whose biome map is generated once before timing.
// Run: build/bench/compare_bench --benchmark_counters_tabular=true
#include <memory>
#include <vector>

#include "bench/reference_blenders.h"
#include "benchmark/benchmark.h"
#include "engine/hash.h"
#include "engine/world.h"

namespace worldgen::bench {
namespace {

constexpr int64_t kOrigin = -2048;
constexpr int kExtent = 4096;
constexpr int kChunk = 16;

std::shared_ptr<const World> MakeWorld(int interval, int radius) {
  WorldSpec spec = DefaultWorldSpec();
  spec.sampling_interval = interval;
  spec.blend_radius = radius;
  for (BiomeSpec& b : spec.biomes) b.blend_radius = 0.0;
  return *World::Create(spec);
}

const PregeneratedBiomeMap& Map() {
  static const PregeneratedBiomeMap map(MakeWorld(8, 24)->source(), kOrigin, kExtent);
  return map;
}

std::vector<std::pair<int64_t, int64_t>> Chunks() {
  // Chunk origins at least 64 blocks inside the pre-generated square.
  const int64_t lo = (kOrigin + 64) / kChunk, span = (kExtent - 128) / kChunk;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (int k = 0; k < 512; ++k) {
    chunks.push_back({lo + static_cast<int64_t>(HashCoords(5, k, 0) % span),
                      lo + static_cast<int64_t>(HashCoords(5, k, 1) % span)});
  }
  return chunks;
}

void BM_Compare(benchmark::State& state) {
  const int method = static_cast<int>(state.range(0));
  const int gi = static_cast<int>(state.range(1)), r = static_cast<int>(state.range(2));
  const auto world = MakeWorld(gi, r);
  const int biomes = static_cast<int>(world->spec().biomes.size());
  const auto chunks = Chunks();
  BiomeSampleCache cache(256 << 20);
  FullResolutionBlender full(Map(), r, biomes);
  ConvolutedGridBlender grid(Map(), gi, r, biomes);
  LerpedGridBlender lerp(Map(), gi, r, biomes);
  std::vector<IndexedLayer> layers;
  auto run = [&](int64_t cx, int64_t cz) {
    const int64_t x0 = cx * kChunk, z0 = cz * kChunk;
    switch (method) {
      case 0: return world->blender().BlendColumns(x0, z0, kChunk, &cache, &layers);
      case 1: return full.Blend(x0, z0, kChunk, &layers);
      case 2: return grid.Blend(x0, z0, kChunk, &layers);
      default: return lerp.Blend(x0, z0, kChunk, &layers);
    }
  };
  if (method == 0) {
    for (auto [cx, cz] : chunks) run(cx, cz);  // Warm the sample cache: source excluded.
  }
  size_t next = 0, single = 0, produced = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    single += run(cx, cz);
    ++produced;
    benchmark::DoNotOptimize(layers);
  }
  state.counters["per_column"] = benchmark::Counter(
      kChunk * kChunk, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["single_biome"] = static_cast<double>(single) / static_cast<double>(produced);
}
BENCHMARK(BM_Compare)
    ->ArgNames({"method", "gi", "r"})
    ->ArgsProduct({{0, 1, 2, 3}, {8}, {24}})
    ->ArgsProduct({{0, 1, 2, 3}, {4}, {24}})
    ->ArgsProduct({{0, 1, 2, 3}, {8}, {48}})
    ->ArgsProduct({{0, 1, 2, 3}, {4}, {48}});

}  // namespace
}  // namespace worldgen::bench

BENCHMARK_MAIN();
