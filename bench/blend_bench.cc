// Scattered blending speed on the anchor world (anchor_world.h: seed 001's demo map), one thread.
//
//   BM_Anchor/gi:G/r:R/cached:C      16x16 chunks, sampling interval G, blend radius R.
//                                    cached 0: the biome source runs at every gathered lattice
//                                    point; cached 1: every lattice sample already in the cache
//   BM_ChunkSize/gi/r/size/cached    the same for chunk sizes 16, 32, 64 (per column must not grow)
//   BM_Threads/gi/r/cached/threads   1 and 2 threads blending independent chunks through one shared
//                                    cache: items_per_second = columns/s over all threads
//   BM_Point/gi/r/cached/points      one point query (World::BlendPoint, SampleWeights' path), over
//                                    `points` random points of a 32,768-block square: 4,096 spread
//                                    their tiles over ~40 MB (mostly DRAM), 256 keep them in the
//                                    CPU caches
//   BM_ColdPoints/spacing/cached     points nobody asked for before, `spacing` blocks apart: what
//                                    a zoomed-out map or scattered queries cost
//   BM_ColdChunks/cached             chunks nobody asked for before, region by region: what
//                                    players exploring or a pre-generation run cost
//   BM_BigChunk/size                 chunks of 32 to 256 with heights (per column must not grow)
//   BM_ChunkWithHeights/coastal      16x16 chunk with heights and dominant biomes, cached samples;
//                                    coastal 1: HeightMode::kCoastal (the raw map read over the
//                                    chunk padded by the coast width, a distance transform)
//   BM_PointWithHeights/coastal      one point query with its height, cached samples
//   BM_SourceTile/source             the biome source over one cache tile (16x16 lattice points of
//                                    interval 8), batched: items_per_second = lattice samples/s
//   BM_LatticeRow/row                jittered lattice positions of one cache tile's 16 rows of 16
//                                    vertices: one Position call each (row 0) or one PositionRow
//                                    per row (row 1): items_per_second = vertices/s
//   BM_BccRow/row                    the same for the 3D lattice: a 3D cache tile's 8 x 2 rows of 8
//                                    points (interval 8, vertical interval 4)
//   BM_CaveNoise                     the cave climate's 3D noise (FractalNoise3DMultiBatch: two
//                                    fields, two octaves, 0.015 cycles per block, as
//                                    docker/worlds/caves.json) at one 3D cache tile's 128 points:
//                                    items_per_second = points/s
//   BM_SourcePoint/source            one BiomeIndexAt call (source 0 climate, 1 noise_max)
//   BM_HeightNoise/batch/mfreq       a biome's height noise (4 octaves, mfreq / 1000 cycles per
//                                    block) over a 16x16 chunk: per column (batch 0) or batched
//                                    (batch 1)
//   BM_OutputFingerprint/world       OutputFingerprint (engine/fingerprint.h), what a server pays
//                                    per world at start: world 0 the default, 1 the example cave
//                                    world
//
// Counters: per_column (ns per generated column), biomes_per_chunk (mean number of layers),
// single_biome (share of chunks answered without per-column work).
// Run: build/bench/blend_bench --benchmark_counters_tabular=true
// The context names the SIMD variants run; WORLDGEN_SIMD_VARIANT=avx512|avx2|baseline forces one
// (bench/variants.sh runs the benchmarks under each this CPU can run).
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "bench/anchor_world.h"
#include "benchmark/benchmark.h"
#include "engine/fingerprint.h"
#include "engine/hash.h"
#include "engine/jittered_bcc_lattice.h"
#include "engine/jittered_lattice.h"
#include "engine/noise.h"
#include "engine/world.h"
#include "proto/world_config.h"

namespace worldgen {
namespace {

using bench::AnchorWorldSpec;
using bench::SpreadChunks;

std::shared_ptr<const World> MakeWorld(double interval, double radius) {
  return *World::Create(AnchorWorldSpec(
      {BlenderKind::kScattered, {{"sampling_interval", interval}, {"blend_radius", radius}}}));
}

void RunChunks(benchmark::State& state, double interval, double radius, int size, bool cached) {
  const auto world = MakeWorld(interval, radius);
  const auto chunks = SpreadChunks(size, 512);
  BiomeSampleCache cache(1 << 30);
  if (cached) {
    for (auto [cx, cz] : chunks)
      benchmark::DoNotOptimize(world->BlendChunk(cx, cz, size, {}, &cache));
  }
  size_t next = 0, single = 0, produced = 0, layers = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    auto chunk = world->BlendChunk(cx, cz, size, {}, cached ? &cache : nullptr);
    single += chunk->single_biome;
    layers += chunk->layers.size();
    ++produced;
    benchmark::DoNotOptimize(chunk);
  }
  state.counters["per_column"] = benchmark::Counter(
      static_cast<double>(size) * size,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["single_biome"] = static_cast<double>(single) / static_cast<double>(produced);
  state.counters["biomes_per_chunk"] = static_cast<double>(layers) / static_cast<double>(produced);
}

void BM_Anchor(benchmark::State& state) {
  RunChunks(state, static_cast<double>(state.range(0)), static_cast<double>(state.range(1)), 16,
            state.range(2) != 0);
}
BENCHMARK(BM_Anchor)
    ->ArgNames({"gi", "r", "cached"})
    ->ArgsProduct({{8}, {24}, {0, 1}})
    ->ArgsProduct({{4}, {48}, {0, 1}})
    ->ArgsProduct({{4}, {24}, {0, 1}})
    ->ArgsProduct({{8}, {48}, {0, 1}});

// Threads blending independent chunks of one world through one shared sample cache, as the
// server's blend pool does: columns/s over all threads (items_per_second, wall time); per thread it
// must not fall as threads are added while the CPU has a core for each.
void BM_Threads(benchmark::State& state) {
  const bool cached = state.range(2) != 0;
  static auto* shared = [] {
    struct Shared {
      std::shared_ptr<const World> world = MakeWorld(8, 24);
      std::vector<std::pair<int64_t, int64_t>> chunks = SpreadChunks(16, 4096);
      BiomeSampleCache cache{size_t{1} << 30};
    };
    auto* s = new Shared;
    for (auto [cx, cz] : s->chunks)
      benchmark::DoNotOptimize(s->world->BlendChunk(cx, cz, 16, {}, &s->cache));
    return s;
  }();
  // Each thread walks its own stretch of the chunk list.
  size_t next = static_cast<size_t>(state.thread_index()) * shared->chunks.size() /
                static_cast<size_t>(state.threads());
  for (auto _ : state) {
    auto [cx, cz] = shared->chunks[next++ % shared->chunks.size()];
    benchmark::DoNotOptimize(
        shared->world->BlendChunk(cx, cz, 16, {}, cached ? &shared->cache : nullptr));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 256);
}
BENCHMARK(BM_Threads)
    ->ArgNames({"gi", "r", "cached"})
    ->ArgsProduct({{8}, {24}, {0, 1}})
    ->ThreadRange(1, 2)
    ->UseRealTime();

void BM_ChunkSize(benchmark::State& state) {
  RunChunks(state, static_cast<double>(state.range(0)), static_cast<double>(state.range(1)),
            static_cast<int>(state.range(2)), state.range(3) != 0);
}
BENCHMARK(BM_ChunkSize)
    ->ArgNames({"gi", "r", "size", "cached"})
    ->ArgsProduct({{8}, {24}, {16, 32, 64}, {1}})
    ->ArgsProduct({{4}, {48}, {16, 32, 64}, {1}});

// Chunks of 32 to 256 with heights and dominant biomes on the anchor world at (8, 24), cached
// samples: per column it must not grow with the size (chunks above 32 are blended in pieces of 32,
// World::kChunkPiece; blended whole, 256 cost 1.7 times 32 per column).
void BM_BigChunk(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  const auto world = MakeWorld(8, 24);
  const auto chunks = SpreadChunks(size, 64);
  BiomeSampleCache cache(1 << 30);
  const BlendOptions options{.heights = true, .dominant_biome = true};
  for (auto [cx, cz] : chunks)
    benchmark::DoNotOptimize(world->BlendChunk(cx, cz, size, {}, &cache));
  size_t next = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    benchmark::DoNotOptimize(world->BlendChunk(cx, cz, size, options, &cache));
  }
  state.counters["per_column"] = benchmark::Counter(
      static_cast<double>(size) * size,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_BigChunk)->ArgNames({"size"})->Arg(32)->Arg(64)->Arg(128)->Arg(256);

// The anchor world at (8, 24); coastal: with HeightMode::kCoastal, its ocean water and its other
// three biomes land above sea level 58 (engine/coast.h).
std::shared_ptr<const World> MakeHeightsWorld(bool coastal) {
  WorldSpec spec = AnchorWorldSpec(
      {BlenderKind::kScattered, {{"sampling_interval", 8.0}, {"blend_radius", 24.0}}});
  if (coastal) AddDefaultCoasts(&spec);
  return *World::Create(spec);
}

void BM_ChunkWithHeights(benchmark::State& state) {
  const auto world = MakeHeightsWorld(state.range(0) != 0);
  const auto chunks = SpreadChunks(16, 512);
  BiomeSampleCache cache(1 << 30);
  for (auto [cx, cz] : chunks) {
    benchmark::DoNotOptimize(
        world->BlendChunk(cx, cz, 16, {.heights = true, .dominant_biome = true}, &cache));
  }
  size_t next = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    benchmark::DoNotOptimize(
        world->BlendChunk(cx, cz, 16, {.heights = true, .dominant_biome = true}, &cache));
  }
  state.counters["per_column"] = benchmark::Counter(
      256, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChunkWithHeights)->ArgName("coastal")->Arg(0)->Arg(1);

// The example cave world (docker/worlds/caves.json), its 3D lattice interval set to `interval`
// (the file's is 8), created once per interval; interval 0: the same world without its cave
// biomes (the same 2D map: it never picks a cave biome), which answers every cell from its
// column's 2D weights.
std::shared_ptr<const World> CaveWorld(double interval) {
  static std::map<double, std::shared_ptr<const World>> worlds;
  std::shared_ptr<const World>& world = worlds[interval];
  if (world == nullptr) {
    absl::StatusOr<std::vector<WorldSpec>> specs =
        LoadWorldSpecs({std::string(WORLDGEN_SOURCE_DIR) + "/docker/worlds/caves.json"});
    WorldSpec spec = specs->front();
    if (interval == 0.0) {
      std::erase_if(spec.biomes, [](const BiomeSpec& b) { return b.cave.has_value(); });
    } else {
      spec.caves.blending.sampling_interval = interval;
    }
    world = *World::Create(spec);
  }
  return world;
}

// 3D biomes (issue 25): one chunk's 16 x 384 x 16 column range (y in [-64, 320), Minecraft's) of
// the example cave world in cells of 4 or 1 blocks, as GenerateChunk's vertical range blends it
// (World::BlendVolume), over 64 chunks spread apart; cached: a BiomeSampleCache warmed by one pass.
// ns per cell, the share of sections that are one biome and the biomes per section. The issue's
// target: at cell size 4 no more than BM_ChunkWithHeights/coastal:0 per chunk. Range 2 is the 3D
// lattice interval: the lab's trade-off between the lattice's density and the distance from the
// full-resolution blur (docs/performance.md, "3D biomes"); interval 0 is the world without its
// cave biomes, the floor of any 3D method: the chunk's 2D blend of its columns and 24 sections of
// layers, which every 3D chunk pays before any cave work.
void BM_VolumeColumn(benchmark::State& state) {
  const std::shared_ptr<const World> world = CaveWorld(static_cast<double>(state.range(2)));
  const int cell = static_cast<int>(state.range(0));
  const bool cached = state.range(1) != 0;
  const int n = 16 / cell;
  const auto chunks = SpreadChunks(16, 64);
  BiomeSampleCache cache(1 << 30);
  if (cached) {
    for (const auto& [cx, cz] : chunks)
      (void)world->BlendVolume(cx, cz, 16, -64, 320, cell, {}, &cache);
  }
  size_t next = 0, sections = 0, single = 0, biomes = 0;
  for (auto _ : state) {
    auto [cx, cz] = chunks[next++ % chunks.size()];
    absl::StatusOr<VolumeBlend> volume =
        world->BlendVolume(cx, cz, 16, -64, 320, cell, {}, cached ? &cache : nullptr);
    for (const SectionBlend& section : volume->sections) {
      single += section.single_biome;
      biomes += section.layers.size();
      ++sections;
    }
  }
  state.counters["per_cell"] = benchmark::Counter(
      static_cast<double>(n * n * n * 24),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["single_biome_sections"] =
      static_cast<double>(single) / static_cast<double>(std::max<size_t>(sections, 1));
  state.counters["biomes_per_section"] =
      static_cast<double>(biomes) / static_cast<double>(std::max<size_t>(sections, 1));
}
BENCHMARK(BM_VolumeColumn)
    ->ArgNames({"cell", "cached", "interval"})
    ->ArgsProduct({{4, 1}, {0, 1}, {8}})
    ->Args({4, 1, 12})
    ->Args({4, 1, 16})
    ->Args({4, 1, 0})
    ->Unit(benchmark::kMicrosecond);

// A world's fingerprint (engine/fingerprint.h): its probes blended without a cache.
void BM_OutputFingerprint(benchmark::State& state) {
  const std::shared_ptr<const World> world =
      state.range(0) == 0 ? *World::Create(DefaultWorldSpec()) : CaveWorld(8.0);
  for (auto _ : state) benchmark::DoNotOptimize(OutputFingerprint(*world));
}
BENCHMARK(BM_OutputFingerprint)->ArgName("world")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// One 3D point query (SampleWeights with y: World::BlendPoint(x, y, z)) of the example cave world,
// inside the cave bands (y in [-64, 0)), over 4,096 points; cached: a cache warmed by one pass.
void BM_VolumePoint(benchmark::State& state) {
  const std::shared_ptr<const World> world = CaveWorld(8.0);
  const bool cached = state.range(0) != 0;
  BiomeSampleCache cache(1 << 30);
  auto at = [](uint64_t k, int axis) {
    const uint64_t h = HashCoords(5, static_cast<int64_t>(k % 4096), axis);
    return axis == 1 ? -64.0 + static_cast<double>(h % 64) + 0.5
                     : static_cast<double>(h % 32768) - 16384.5;
  };
  if (cached) {
    for (uint64_t k = 0; k < 4096; ++k) {
      benchmark::DoNotOptimize(world->BlendPoint(at(k, 0), at(k, 1), at(k, 2), {}, &cache));
    }
  }
  const BiomeSampleCache::Stats warm = cache.stats();
  uint64_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        world->BlendPoint(at(k, 0), at(k, 1), at(k, 2), {}, cached ? &cache : nullptr));
    ++k;
  }
  if (cached) {
    const BiomeSampleCache::Stats end = cache.stats();
    const double hits = static_cast<double>(end.hits - warm.hits);
    state.counters["hit_ratio"] =
        hits / std::max(1.0, hits + static_cast<double>(end.misses - warm.misses));
    state.counters["tiles"] = static_cast<double>(end.entries);
  }
}
BENCHMARK(BM_VolumePoint)->ArgName("cached")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// One point query with its height (World::BlendPoint), cached samples, over 4,096 points.
void BM_PointWithHeights(benchmark::State& state) {
  const auto world = MakeHeightsWorld(state.range(0) != 0);
  BiomeSampleCache cache(1 << 30);
  auto point = [](uint64_t k, int axis) {
    return static_cast<double>(HashCoords(3, static_cast<int64_t>(k % 4096), axis) % 32768) -
           16384.5;
  };
  for (uint64_t k = 0; k < 4096; ++k) {
    benchmark::DoNotOptimize(
        world->BlendPoint(point(k, 0), point(k, 1), {.heights = true}, &cache));
  }
  uint64_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        world->BlendPoint(point(k, 0), point(k, 1), {.heights = true}, &cache));
    ++k;
  }
}
BENCHMARK(BM_PointWithHeights)->ArgName("coastal")->Arg(0)->Arg(1);

void BM_Point(benchmark::State& state) {
  const auto world =
      MakeWorld(static_cast<double>(state.range(0)), static_cast<double>(state.range(1)));
  const bool cached = state.range(2) != 0;
  BiomeSampleCache cache(1 << 30);
  const uint64_t points = static_cast<uint64_t>(state.range(3));
  auto point = [points](uint64_t k, int axis) {
    return static_cast<double>(HashCoords(2, static_cast<int64_t>(k % points), axis) % 32768) -
           16384.5;
  };
  if (cached) {
    for (uint64_t k = 0; k < points; ++k) {
      benchmark::DoNotOptimize(world->BlendPoint(point(k, 0), point(k, 1), {}, &cache));
    }
  }
  uint64_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        world->BlendPoint(point(k, 0), point(k, 1), {}, cached ? &cache : nullptr));
    ++k;
  }
}
BENCHMARK(BM_Point)
    ->ArgNames({"gi", "r", "cached", "points"})
    ->ArgsProduct({{8}, {24}, {0, 1}, {4096}})
    ->ArgsProduct({{8}, {24}, {1}, {256}})
    ->ArgsProduct({{4}, {48}, {0, 1}, {4096}});

// Fills `cache` through `world`'s point queries, 256 blocks apart in a region the cold benchmarks
// never visit, until it evicts: full, as a server's cache is after a while. A miss then reuses an
// evicted tile's memory, where a cache still growing would also pay the kernel for zeroing fresh
// pages (most of the time, measured so).
void FillUntilEvicting(const World& world, BiomeSampleCache& cache) {
  for (int64_t k = 0; cache.stats().evictions < cache.stats().entries; ++k) {
    const double x = static_cast<double>((k % 4096) * 256 - 524288) + 0.5;
    const double z = static_cast<double>((k / 4096) * 256 + 20000000) + 0.25;
    benchmark::DoNotOptimize(world.BlendPoint(x, z, {}, &cache));
  }
}

// Points nobody asked for before: a 64 x 64 grid of points `spacing` blocks apart, each iteration
// at a new place, through a cache (the server's default size, full) or none; time per point; the
// default world. What a zoomed-out map tile or a game server's scattered queries (spawn or
// structure candidates) cost.
void BM_ColdPoints(benchmark::State& state) {
  const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  const int64_t spacing = state.range(0);
  const bool cached = state.range(1) != 0;
  BiomeSampleCache cache(64 << 20);
  if (cached) FillUntilEvicting(*world, cache);
  constexpr int kSide = 64;
  int64_t grid = 0;
  for (auto _ : state) {
    // Grids 32,768 blocks apart (a grid spans at most 16,128): no tile is shared between them.
    const double x0 = static_cast<double>((grid % 1024) * 32768 - 16777216) + 0.5;
    const double z0 = static_cast<double>((grid / 1024) * 32768 - 16777216) + 0.25;
    ++grid;
    for (int b = 0; b < kSide; ++b) {
      for (int a = 0; a < kSide; ++a) {
        const absl::StatusOr<PointBlend> blend =
            world->BlendPoint(x0 + static_cast<double>(a * spacing),
                              z0 + static_cast<double>(b * spacing), {}, cached ? &cache : nullptr);
        if (!blend.ok()) state.SkipWithError(std::string(blend.status().message()).c_str());
        benchmark::DoNotOptimize(blend);
      }
    }
  }
  state.counters["per_point"] = benchmark::Counter(
      kSide * kSide, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ColdPoints)
    ->ArgNames({"spacing", "cached"})
    ->ArgsProduct({{1, 4, 16, 32, 64, 128, 256}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// Chunks nobody asked for before: a region of 16 x 16 chunks of 16 blocks, blended row by row
// (players exploring, a pre-generation run), each iteration at a new place, through a cache (the
// server's default size, full) or none; the default world; time per column.
void BM_ColdChunks(benchmark::State& state) {
  const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  const bool cached = state.range(0) != 0;
  BiomeSampleCache cache(64 << 20);
  if (cached) FillUntilEvicting(*world, cache);
  constexpr int kSide = 16;
  int64_t region = 0;
  for (auto _ : state) {
    // Regions 64 chunks apart: no tile is shared between them.
    const int64_t cx0 = (region % 1024) * 64 - 32768, cz0 = (region / 1024) * 64 - 32768;
    ++region;
    for (int b = 0; b < kSide; ++b) {
      for (int a = 0; a < kSide; ++a) {
        benchmark::DoNotOptimize(
            world->BlendChunk(cx0 + a, cz0 + b, 16, {}, cached ? &cache : nullptr));
      }
    }
  }
  state.counters["per_column"] =
      benchmark::Counter(kSide * kSide * 256, benchmark::Counter::kIsIterationInvariantRate |
                                                  benchmark::Counter::kInvert);
}
BENCHMARK(BM_ColdChunks)->ArgName("cached")->Arg(0)->Arg(1);

std::shared_ptr<const World> SourceWorld(int64_t source) {
  WorldSpec spec =
      source == 0 ? DefaultWorldSpec() : AnchorWorldSpec({BlenderKind::kScattered, {}});
  return *World::Create(spec);
}

void BM_SourceTile(benchmark::State& state) {
  const auto world = SourceWorld(state.range(0));
  const JitteredLattice lattice(5, 8.0, 0.35);
  constexpr int kSide = 16;  // BiomeTile::kTileSize
  constexpr int kPoints = kSide * kSide;
  const auto tiles = SpreadChunks(kSide * 8, 256);  // 16x16 vertices of interval 8: ~128 blocks.
  std::vector<double> xs(tiles.size() * kPoints), zs(tiles.size() * kPoints);
  for (size_t t = 0; t < tiles.size(); ++t) {
    for (int v = 0; v < kPoints; ++v) {
      lattice.Position(static_cast<int32_t>(tiles[t].first * kSide + v % kSide),
                       static_cast<int32_t>(tiles[t].second * kSide + v / kSide),
                       &xs[t * kPoints + v], &zs[t * kPoints + v]);
    }
  }
  uint16_t out[kPoints];
  size_t next = 0;
  for (auto _ : state) {
    const size_t t = next++ % tiles.size();
    world->source().BiomeIndices(&xs[t * kPoints], &zs[t * kPoints], kPoints, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kPoints);
  state.SetLabel(state.range(0) == 0 ? "climate" : "noise_max");
}
BENCHMARK(BM_SourceTile)->ArgName("source")->Arg(0)->Arg(1);

void BM_LatticeRow(benchmark::State& state) {
  const bool row = state.range(0) != 0;
  const JitteredLattice lattice(5, 8.0, 0.35);
  constexpr int kSide = 16;  // BiomeTile::kTileSize
  const auto tiles = SpreadChunks(kSide * 8, 256);
  double xs[kSide * kSide], zs[kSide * kSide];
  size_t next = 0;
  for (auto _ : state) {
    const auto [ti, tj] = tiles[next++ % tiles.size()];
    for (int b = 0; b < kSide; ++b) {
      const auto i = static_cast<int32_t>(ti * kSide), j = static_cast<int32_t>(tj * kSide + b);
      if (row) {
        lattice.PositionRow(i, kSide, j, xs + b * kSide, zs + b * kSide);
      } else {
        for (int a = 0; a < kSide; ++a)
          lattice.Position(i + a, j, &xs[b * kSide + a], &zs[b * kSide + a]);
      }
    }
    benchmark::DoNotOptimize(xs);
    benchmark::DoNotOptimize(zs);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kSide * kSide);
}
BENCHMARK(BM_LatticeRow)->ArgName("row")->Arg(0)->Arg(1);

void BM_BccRow(benchmark::State& state) {
  const bool row = state.range(0) != 0;
  const JitteredBccLattice lattice(5, 8.0, 4.0, 0.35);
  constexpr int kSide = 8;  // Rows of 8 points: two vectors of the AVX-512 and AVX2 variants.
  const auto tiles = SpreadChunks(kSide * 8, 256);
  double xs[kSide], ys[kSide], zs[kSide];
  size_t next = 0;
  for (auto _ : state) {
    const auto [ti, tk] = tiles[next++ % tiles.size()];
    const auto i = static_cast<int32_t>(ti * kSide);
    for (int b = 0; b < kSide; ++b) {
      for (int c = 0; c < 2; ++c) {
        const auto k = static_cast<int32_t>(tk * kSide + b);
        if (row) {
          lattice.PositionRow(i, kSide, 3, k, c, xs, ys, zs);
        } else {
          for (int a = 0; a < kSide; ++a)
            lattice.Position({i + a, 3, k, c}, &xs[a], &ys[a], &zs[a]);
        }
        benchmark::DoNotOptimize(xs);
        benchmark::DoNotOptimize(ys);
        benchmark::DoNotOptimize(zs);
      }
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kSide * kSide * 2);
}
BENCHMARK(BM_BccRow)->ArgName("row")->Arg(0)->Arg(1);

void BM_CaveNoise(benchmark::State& state) {
  const JitteredBccLattice lattice(5, 8.0, 8.0 / 3.0, 0.35);
  constexpr int kSide = 8;
  constexpr int kPoints = kSide * kSide * 2;  // As many as a 3D cache tile (FillTile) holds.
  // The points of 256 tiles spread apart (one lattice layer in the caves), computed beforehand.
  const auto tiles = SpreadChunks(kSide * 8, 256);
  std::vector<double> xs(tiles.size() * kPoints), ys(xs.size()), zs(xs.size());
  for (size_t t = 0; t < tiles.size(); ++t) {
    for (int b = 0; b < kSide; ++b) {
      for (int c = 0; c < 2; ++c) {
        const size_t at = t * kPoints + static_cast<size_t>((b * 2 + c) * kSide);
        lattice.PositionRow(static_cast<int32_t>(tiles[t].first * kSide), kSide, -9,
                            static_cast<int32_t>(tiles[t].second * kSide + b), c, &xs[at], &ys[at],
                            &zs[at]);
      }
    }
  }
  const uint64_t seeds[2] = {HashCoords(9, 1, 2), HashCoords(9, 3, 4)};
  double out[2 * kPoints];
  size_t next = 0;
  for (auto _ : state) {
    const size_t at = (next++ % tiles.size()) * kPoints;
    FractalNoise3DMultiBatch(seeds, 2, &xs[at], &ys[at], &zs[at], kPoints, 0.015, 2, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kPoints);
}
BENCHMARK(BM_CaveNoise);

void BM_SourcePoint(benchmark::State& state) {
  const auto world = SourceWorld(state.range(0));
  double x = 0.25;
  for (auto _ : state) {
    benchmark::DoNotOptimize(world->source().BiomeIndexAt(x, -x));
    x += 17.0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetLabel(state.range(0) == 0 ? "climate" : "noise_max");
}
BENCHMARK(BM_SourcePoint)->ArgName("source")->Arg(0)->Arg(1);

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
      for (int col = 0; col < 256; ++col)
        out[col] = FractalNoise2D(7, xs[col], zs[col], frequency, 4);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["per_column"] = benchmark::Counter(
      256, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_HeightNoise)
    ->ArgNames({"batch", "mfreq"})
    ->ArgsProduct({{0, 1}, {10, 100, 250, 1000}});

}  // namespace
}  // namespace worldgen

int main(int argc, char** argv) {
  if (absl::Status forced = worldgen::CheckForcedSimdVariant(); !forced.ok()) {
    std::fprintf(stderr, "blend_bench: %s\n", std::string(forced.message()).c_str());
    return 2;
  }
  benchmark::AddCustomContext("simd", worldgen::SimdVariantsInUse());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
