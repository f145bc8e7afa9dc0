// Fuzz target: the engine (every blender method) with random valid parameters, checked against its
// invariants: every weight in [0, 1], the weights of every column sum to 1 within 1e-5, and a
// chunk's column equals BlendPoint at that column bit for bit. Some inputs make the world coastal
// (HeightMode::kCoastal): then heights are compared too, and every column must be above the sea
// exactly where its raw biome is land.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "engine/blender.h"
#include "engine/volume_blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"

namespace {

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  // Decided first, so that short inputs (whose later fields run out and read 0) reach 3D too.
  const bool caves = in.ConsumeBool();
  worldgen::WorldSpec spec;
  spec.name = "fuzz";
  spec.seed = in.ConsumeIntegral<uint64_t>();
  const int biomes = in.ConsumeIntegralInRange(1, 6);
  for (int i = 0; i < biomes; ++i) {
    worldgen::BiomeSpec biome;
    biome.id = in.ConsumeIntegralInRange<uint32_t>(0, 1000);
    biome.name = "b" + std::to_string(i);
    biome.temperature = in.ConsumeFloatingPointInRange(-1.0, 1.0);
    biome.humidity = in.ConsumeFloatingPointInRange(-1.0, 1.0);
    biome.blend_radius = in.ConsumeBool() ? 0.0 : in.ConsumeFloatingPointInRange(1.0, 64.0);
    spec.biomes.push_back(biome);
  }
  spec.climate.temperature_frequency = in.ConsumeFloatingPointInRange(1e-4, 0.05);
  spec.climate.humidity_frequency = in.ConsumeFloatingPointInRange(1e-4, 0.05);
  spec.climate.octaves = in.ConsumeIntegralInRange(1, 4);
  // Any blender method, each declared parameter somewhere in the lower part of its range (kept
  // small so one input stays fast); validation refuses the combinations its rules forbid.
  const auto methods = worldgen::BlenderMethods();
  const worldgen::BlenderMethod& method =
      *methods[in.ConsumeIntegralInRange<size_t>(0, methods.size() - 1)];
  spec.blender.kind = method.kind;
  for (const worldgen::BlenderParamDef& param : method.params) {
    if (in.ConsumeBool()) continue;  // Default.
    const double high = std::min(param.max, std::max(param.min * 4, param.min + 48));
    // An integer parameter takes each of its values alike (a floor of a real would reach the top
    // of the range, e.g. scattered.interpolation = 2, only at its very end).
    const double value = param.integer
                             ? static_cast<double>(in.ConsumeIntegralInRange<int64_t>(
                                   static_cast<int64_t>(param.min), static_cast<int64_t>(high)))
                             : in.ConsumeFloatingPointInRange(param.min, high);
    spec.blender.params[std::string(param.name)] = value;
  }
  // Coastal: each biome land (its lowest height above the sea) or water (its highest below).
  const bool coastal = in.ConsumeBool();
  if (coastal) {
    spec.heights.mode = worldgen::HeightMode::kCoastal;
    spec.heights.sea_level = in.ConsumeFloatingPointInRange(-100.0, 100.0);
    spec.heights.coast_width = in.ConsumeFloatingPointInRange(1.0, 24.0);
    spec.heights.shore_slope = in.ConsumeFloatingPointInRange(0.0, 4.0);
    for (worldgen::BiomeSpec& b : spec.biomes) {
      const bool land = in.ConsumeBool();
      b.surface = land ? worldgen::BiomeSurface::kLand : worldgen::BiomeSurface::kWater;
      b.height_amplitude = in.ConsumeFloatingPointInRange(0.0, 40.0);
      const double margin = in.ConsumeFloatingPointInRange(0.001, 60.0);
      b.height_base = spec.heights.sea_level +
                      (land ? margin + b.height_amplitude : -margin - b.height_amplitude);
    }
  }
  // Caves (3D biomes): some biomes get a y band; the 3D lattice stays small so one input stays
  // fast. Biome 0 stays on the surface, biome 1 always gets a band.
  if (caves) {
    for (size_t k = 1; k < spec.biomes.size(); ++k) {
      worldgen::BiomeSpec& b = spec.biomes[k];
      if (k > 1 && !in.ConsumeBool()) continue;
      const double lo = in.ConsumeFloatingPointInRange(-200.0, 200.0);
      b.cave = worldgen::CaveBand{lo, lo + in.ConsumeFloatingPointInRange(0.5, 200.0)};
    }
    spec.caves.frequency = in.ConsumeFloatingPointInRange(1e-3, 0.2);
    spec.caves.octaves = in.ConsumeIntegralInRange(1, 3);
    worldgen::VolumeBlendParams& v = spec.caves.blending;
    v.sampling_interval = in.ConsumeFloatingPointInRange(4.0, 16.0);
    v.jitter = in.ConsumeFloatingPointInRange(0.0, 0.5);
    v.blend_radius =
        worldgen::ScatteredVolumeBlender::MinBlendRadius(v.sampling_interval, v.jitter) +
        in.ConsumeFloatingPointInRange(0.0, 16.0);
    v.vertical_blend_radius = in.ConsumeFloatingPointInRange(1.0, v.blend_radius);
  }
  if (!worldgen::ValidateWorldSpec(spec).ok()) return 0;  // e.g. repeated ids, radius too small.
  absl::StatusOr<std::shared_ptr<const worldgen::World>> world = worldgen::World::Create(spec);
  if (!world.ok()) std::abort();

  const int chunk_size = 1 << in.ConsumeIntegralInRange(2, 4);
  const int64_t limit = static_cast<int64_t>(worldgen::kMaxWorldCoordinate) / chunk_size;
  const int64_t cx = in.ConsumeIntegralInRange<int64_t>(-limit, limit - 1);
  const int64_t cz = in.ConsumeIntegralInRange<int64_t>(-limit, limit - 1);
  const worldgen::BlendOptions options{.heights = coastal, .source_biome = coastal};
  absl::StatusOr<worldgen::ChunkBlend> chunk =
      (*world)->BlendChunk(cx, cz, chunk_size, options, nullptr);
  if (!chunk.ok()) std::abort();
  if (coastal) {
    std::map<uint32_t, bool> land;
    for (const worldgen::BiomeSpec& b : spec.biomes) {
      land[b.id] = b.surface == worldgen::BiomeSurface::kLand;
    }
    for (size_t c = 0; c < chunk->heights.size(); ++c) {
      const double h = chunk->heights[c];
      if (!std::isfinite(h) || (h > spec.heights.sea_level) != land[chunk->source_biome[c]]) {
        std::abort();
      }
    }
  }
  const int columns = chunk_size * chunk_size;
  for (int c = 0; c < columns; ++c) {
    double sum = 0;
    for (const worldgen::BiomeLayer& layer : chunk->layers) {
      const float w = layer.weights[static_cast<size_t>(c)];
      if (!(w >= 0.0f && w <= 1.0f)) std::abort();
      sum += w;
    }
    if (std::fabs(sum - 1.0) > 1e-5) std::abort();
  }
  // Chunk == point, bit for bit, at a few columns the input picks.
  for (int probe = 0; probe < 3; ++probe) {
    const int lx = in.ConsumeIntegralInRange(0, chunk_size - 1);
    const int lz = in.ConsumeIntegralInRange(0, chunk_size - 1);
    absl::StatusOr<worldgen::PointBlend> point =
        (*world)->BlendPoint(static_cast<double>(cx * chunk_size + lx),
                             static_cast<double>(cz * chunk_size + lz), options, nullptr);
    if (!point.ok()) std::abort();
    if (coastal &&
        !SameBits(chunk->heights[static_cast<size_t>(worldgen::ColumnIndex(chunk_size, lx, lz))],
                  point->height)) {
      std::abort();
    }
    std::map<uint32_t, float> at_point;
    for (const worldgen::BiomeWeight& w : point->weights) at_point[w.biome_id] = w.weight;
    for (const worldgen::BiomeLayer& layer : chunk->layers) {
      const float w = layer.weights[static_cast<size_t>(worldgen::ColumnIndex(chunk_size, lx, lz))];
      auto it = at_point.find(layer.biome_id);
      const float p = it == at_point.end() ? 0.0f : it->second;
      if (!SameBits(w, p)) std::abort();
    }
  }
  // 3D: a block of cells is a partition of unity in [0, 1] and equals the point query bit for bit.
  const worldgen::ScatteredVolumeBlender* volume = (*world)->volume_blender();
  if (volume == nullptr) return 0;
  const int cell = 1 << in.ConsumeIntegralInRange(0, 2);
  const int n = in.ConsumeIntegralInRange(1, 4);
  const int64_t x0 = cx * chunk_size, z0 = cz * chunk_size;
  // Near the bottom of a cave band, most of the time.
  double band = 0.0;
  for (const worldgen::BiomeSpec& b : spec.biomes) band = b.cave ? b.cave->y_min : band;
  const int64_t y0 = static_cast<int64_t>(std::floor(band)) - cell * (n / 2) +
                     in.ConsumeIntegralInRange<int64_t>(-2, 2);
  std::vector<worldgen::IndexedLayer> layers;
  volume->BlendCells(x0, y0, z0, n, n, n, cell, &layers);
  const size_t cells = static_cast<size_t>(n) * n * n;
  for (size_t c = 0; c < cells; ++c) {
    double sum = 0;
    for (const worldgen::IndexedLayer& layer : layers) {
      const float w = layer.weights[c];
      if (!(w >= 0.0f && w <= 1.0f)) std::abort();
      sum += w;
    }
    if (std::fabs(sum - 1.0) > 1e-5) std::abort();
  }
  for (int probe = 0; probe < 2; ++probe) {
    const int a = in.ConsumeIntegralInRange(0, n - 1), b = in.ConsumeIntegralInRange(0, n - 1),
              d = in.ConsumeIntegralInRange(0, n - 1);
    std::vector<std::pair<int, float>> point;
    volume->BlendPoint(static_cast<double>(x0 + cell * a), static_cast<double>(y0 + cell * b),
                       static_cast<double>(z0 + cell * d), &point);
    std::map<int, float> at_point(point.begin(), point.end());
    for (const worldgen::IndexedLayer& layer : layers) {
      auto it = at_point.find(layer.biome);
      const float p = it == at_point.end() ? 0.0f : it->second;
      if (!SameBits(layer.weights[(static_cast<size_t>(b) * n + d) * n + a], p)) std::abort();
    }
  }
  // A chunk's stack of sections (one gather for all) equals the point query too.
  const int vcell = 1 << in.ConsumeIntegralInRange(1, 2);
  if (chunk_size % vcell != 0 || chunk_size / vcell > 16) return 0;
  const int64_t min_y = (static_cast<int64_t>(std::floor(band)) / 16 - 1) * 16;
  absl::StatusOr<worldgen::VolumeBlend> stack =
      (*world)->BlendVolume(cx, cz, chunk_size, min_y, min_y + 32, vcell, {});
  if (!stack.ok()) std::abort();
  const int m = chunk_size / vcell, rows = 16 / vcell;
  for (int probe = 0; probe < 2; ++probe) {
    const int t = in.ConsumeIntegralInRange(0, 1);
    const int a = in.ConsumeIntegralInRange(0, m - 1), b = in.ConsumeIntegralInRange(0, rows - 1),
              d = in.ConsumeIntegralInRange(0, m - 1);
    const worldgen::SectionBlend& section = stack->sections[static_cast<size_t>(t)];
    absl::StatusOr<worldgen::PointBlend> point = (*world)->BlendPoint(
        static_cast<double>(x0 + vcell * a), static_cast<double>(section.min_y + vcell * b),
        static_cast<double>(z0 + vcell * d), {});
    if (!point.ok()) std::abort();
    std::map<uint32_t, float> at_point;
    for (const worldgen::BiomeWeight& w : point->weights) at_point[w.biome_id] = w.weight;
    double sum = 0.0;
    for (const worldgen::BiomeLayer& layer : section.layers) {
      const float w = layer.weights[(static_cast<size_t>(b) * m + d) * m + a];
      auto it = at_point.find(layer.biome_id);
      if (!SameBits(w, it == at_point.end() ? 0.0f : it->second)) std::abort();
      sum += w;
    }
    if (std::fabs(sum - 1.0) > 1e-5) std::abort();
  }
  return 0;
}
