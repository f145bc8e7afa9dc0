// Scattered blending speed, in ns per generated column, for the configurations seed 001 publishes
// (16x16 chunks; sampling interval gi and blend radius r).
//
//   BM_Chunk/<gi>/<r>/<size>/<cache>   cache 0: biome source evaluated at every gathered lattice point
//                                      cache 1: all biome samples already cached (source excluded)
//   BM_Point/<gi>/<r>/<cache>          one point query (SampleWeights' path), cold or warm cache
//   BM_BiomeSource                     one climate-source evaluation
//   BM_HeightNoise/<batch>/<mfreq>     a biome's height noise (4 octaves, mfreq / 1000 cycles per
//                                      block) over a 16x16 chunk: FractalNoise2D per column
//                                      (batch 0) or one FractalNoise2DBatch (batch 1)
//
// per_column is the time per generated column (e.g. 58n = 58 ns).
// Chunks are spread over a 32768-block square, so the mix of border and single-biome chunks is what a
// game sees. Run: build/bench/blend_bench --benchmark_counters_tabular=true
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "engine/hash.h"
#include "engine/noise.h"
#include "engine/world.h"

namespace worldgen {
namespace {

std::shared_ptr<const World> MakeWorld(double interval, double radius) {
  WorldSpec spec = DefaultWorldSpec();
  spec.blender = {BlenderKind::kScattered, {{"sampling_interval", interval}, {"blend_radius", radius}}};
  for (BiomeSpec& b : spec.biomes) b.blend_radius = 0.0;  // One radius for the whole world.
  return *World::Create(spec);
}

std::vector<std::pair<int64_t, int64_t>> SpreadChunks(int size, int count) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  const int64_t span = 32768 / size;
  for (int k = 0; k < count; ++k) {
    chunks.push_back({static_cast<int64_t>(HashCoords(1, k, 0) % span) - span / 2,
                      static_cast<int64_t>(HashCoords(1, k, 1) % span) - span / 2});
  }
  return chunks;
}

void BM_Chunk(benchmark::State& state) {
  const auto world = MakeWorld(static_cast<double>(state.range(0)), static_cast<double>(state.range(1)));
  const int size = static_cast<int>(state.range(2));
  const bool cached = state.range(3) != 0;
  const auto chunks = SpreadChunks(size, 512);
  BiomeSampleCache cache(256 << 20);
  if (cached) {
    for (auto [cx, cz] : chunks) benchmark::DoNotOptimize(world->BlendChunk(cx, cz, size, {}, &cache));
  }
  size_t next = 0, single = 0, produced = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    auto chunk = world->BlendChunk(cx, cz, size, {}, cached ? &cache : nullptr);
    single += chunk->single_biome;
    ++produced;
    benchmark::DoNotOptimize(chunk);
  }
  state.counters["per_column"] = benchmark::Counter(
      static_cast<double>(size) * size, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["single_biome"] = static_cast<double>(single) / static_cast<double>(produced);
}
BENCHMARK(BM_Chunk)
    ->ArgNames({"gi", "r", "size", "cached"})
    ->ArgsProduct({{8}, {24}, {16, 32}, {0, 1}})
    ->ArgsProduct({{4}, {48}, {16, 32}, {0, 1}})
    ->ArgsProduct({{4}, {24}, {16}, {0, 1}})
    ->ArgsProduct({{8}, {48}, {16}, {0, 1}});

void BM_ChunkWithHeights(benchmark::State& state) {
  const auto world = MakeWorld(8, 24);
  const auto chunks = SpreadChunks(16, 512);
  BiomeSampleCache cache(256 << 20);
  size_t next = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    benchmark::DoNotOptimize(world->BlendChunk(cx, cz, 16, {.heights = true, .dominant_biome = true}, &cache));
  }
  state.counters["per_column"] = benchmark::Counter(
      256, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChunkWithHeights);

void BM_Point(benchmark::State& state) {
  const auto world = MakeWorld(static_cast<double>(state.range(0)), static_cast<double>(state.range(1)));
  const bool cached = state.range(2) != 0;
  BiomeSampleCache cache(256 << 20);
  auto point = [](uint64_t k, int axis) {
    return static_cast<double>(HashCoords(2, static_cast<int64_t>(k % 4096), axis) % 32768) - 16384.5;
  };
  if (cached) {
    for (uint64_t k = 0; k < 4096; ++k) benchmark::DoNotOptimize(world->BlendPoint(point(k, 0), point(k, 1), {}, &cache));
  }
  uint64_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(world->BlendPoint(point(k, 0), point(k, 1), {}, cached ? &cache : nullptr));
    ++k;
  }
}
BENCHMARK(BM_Point)->ArgNames({"gi", "r", "cached"})->ArgsProduct({{8}, {24}, {0, 1}})->ArgsProduct({{4}, {48}, {0, 1}});

void BM_BiomeSource(benchmark::State& state) {
  const auto world = MakeWorld(8, 24);
  double x = 0.25;
  for (auto _ : state) {
    benchmark::DoNotOptimize(world->source().BiomeIndexAt(x, -x));
    x += 17.0;
  }
}
BENCHMARK(BM_BiomeSource);

void BM_HeightNoise(benchmark::State& state) {
  const bool batch = state.range(0) != 0;
  const double frequency = static_cast<double>(state.range(1)) / 1000.0;
  const auto chunks = SpreadChunks(16, 512);
  std::vector<double> xs(256), zs(256), out(256);
  size_t next = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    for (int col = 0; col < 256; ++col) {
      xs[col] = static_cast<double>(cx * 16 + col % 16);
      zs[col] = static_cast<double>(cz * 16 + col / 16);
    }
    if (batch) {
      FractalNoise2DBatch(7, xs.data(), zs.data(), 256, frequency, 4, out.data());
    } else {
      for (int col = 0; col < 256; ++col) {
        out[col] = FractalNoise2D(7, xs[col], zs[col], frequency, 4);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["per_column"] = benchmark::Counter(
      256, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HeightNoise)
    ->ArgNames({"batch", "mfreq"})
    ->ArgsProduct({{0, 1}, {10, 100, 250, 500, 1000}});

}  // namespace
}  // namespace worldgen

BENCHMARK_MAIN();
