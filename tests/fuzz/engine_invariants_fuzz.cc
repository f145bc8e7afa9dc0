// Fuzz target: the engine (every blender method) with random valid parameters, checked against its
// invariants: every weight in [0, 1], the weights of every column sum to 1 within 1e-5, and a
// chunk's column equals BlendPoint at that column bit for bit. Some inputs make the world coastal
// (HeightMode::kCoastal): then heights are compared too, and every column must be above the sea
// exactly where its raw biome is land. The chunk's other outputs hold to their contracts (sparse
// layers in ascending id, the dominant biome, the single-biome flag, splat bytes summing to 255),
// and a small BiomeSampleCache that must evict changes no bit of a chunk, a point or a stack of
// sections.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/biome_sample_cache.h"
#include "engine/blender.h"
#include "engine/splat.h"
#include "engine/volume_blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"

namespace {

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// Bit for bit (memcmp is not given the null data() of empty vectors).
bool SameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), SameBits);
}

bool SameLayers(const std::vector<worldgen::BiomeLayer>& a,
                const std::vector<worldgen::BiomeLayer>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const worldgen::BiomeLayer& x, const worldgen::BiomeLayer& y) {
                      return x.biome_id == y.biome_id && SameFloats(x.weights, y.weights);
                    });
}

// Every bit of two chunks: weights, heights, the per-column ids and the splat bytes.
bool SameChunk(const worldgen::ChunkBlend& a, const worldgen::ChunkBlend& b) {
  return a.single_biome == b.single_biome && SameLayers(a.layers, b.layers) &&
         SameFloats(a.heights, b.heights) && a.dominant_biome == b.dominant_biome &&
         a.source_biome == b.source_biome && a.splat_textures == b.splat_textures;
}

// The layers' own contract (chunk.h): ascending ids, each non-zero somewhere; the arg-max per
// column with ties to the lowest id; a single-biome result is one layer of exact 1.0f.
void CheckLayers(const std::vector<worldgen::BiomeLayer>& layers, size_t cells, bool single_biome,
                 const std::vector<uint32_t>& dominant) {
  for (size_t k = 0; k < layers.size(); ++k) {
    if (k > 0 && layers[k - 1].biome_id >= layers[k].biome_id) std::abort();
    if (std::none_of(layers[k].weights.begin(), layers[k].weights.end(),
                     [](float w) { return w > 0.0f; })) {
      std::abort();
    }
  }
  if (single_biome &&
      (layers.size() != 1 || std::any_of(layers[0].weights.begin(), layers[0].weights.end(),
                                         [](float w) { return w != 1.0f; }))) {
    std::abort();
  }
  if (dominant.size() != cells) std::abort();
  for (size_t c = 0; c < cells; ++c) {
    size_t best = 0;
    for (size_t k = 1; k < layers.size(); ++k) {
      if (layers[k].weights[c] > layers[best].weights[c]) best = k;
    }
    if (dominant[c] != layers[best].biome_id) std::abort();
  }
}

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
    v.vertical_blend_radius =
        in.ConsumeFloatingPointInRange(worldgen::ScatteredVolumeBlender::MinVerticalBlendRadius(
                                           v.sampling_interval, v.blend_radius),
                                       v.blend_radius);
  }
  if (!worldgen::ValidateWorldSpec(spec).ok()) return 0;  // e.g. repeated ids, radius too small.
  absl::StatusOr<std::shared_ptr<const worldgen::World>> world = worldgen::World::Create(spec);
  if (!world.ok()) std::abort();

  const int chunk_size = 1 << in.ConsumeIntegralInRange(2, 4);
  const int64_t limit = static_cast<int64_t>(worldgen::kMaxWorldCoordinate) / chunk_size;
  const int64_t cx = in.ConsumeIntegralInRange<int64_t>(-limit, limit - 1);
  const int64_t cz = in.ConsumeIntegralInRange<int64_t>(-limit, limit - 1);
  const worldgen::BlendOptions options{
      .heights = coastal, .dominant_biome = true, .source_biome = coastal, .splat = true};
  absl::StatusOr<worldgen::ChunkBlend> chunk =
      (*world)->BlendChunk(cx, cz, chunk_size, options, nullptr);
  if (!chunk.ok()) std::abort();
  const int columns = chunk_size * chunk_size;
  CheckLayers(chunk->layers, static_cast<size_t>(columns), chunk->single_biome,
              chunk->dominant_biome);
  // A cache of a few tiles in a few shards (from the seed, so that the inputs' bytes keep their
  // meaning), which this chunk's gather overflows: a cold and a warm pass change no bit.
  worldgen::BiomeSampleCache cache(worldgen::BiomeSampleCache::kBytesPerEntry * (1 + spec.seed % 4),
                                   1 + static_cast<int>((spec.seed >> 8) % 3));
  for (int pass = 0; pass < 2; ++pass) {
    absl::StatusOr<worldgen::ChunkBlend> cached =
        (*world)->BlendChunk(cx, cz, chunk_size, options, &cache);
    if (!cached.ok() || !SameChunk(*chunk, *cached)) std::abort();
  }
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
  for (int c = 0; c < columns; ++c) {
    double sum = 0;
    for (const worldgen::BiomeLayer& layer : chunk->layers) {
      const float w = layer.weights[static_cast<size_t>(c)];
      if (!(w >= 0.0f && w <= 1.0f)) std::abort();
      sum += w;
    }
    if (std::fabs(sum - 1.0) > 1e-5) std::abort();
  }
  // Splat (splat.h): texture t's channel k is the biome at position 4t + k of the id-sorted table;
  // a column's bytes sum to 255, a biome absent from it has 0, the unused channels are 0.
  std::vector<uint32_t> ids;
  for (const worldgen::BiomeSpec& b : spec.biomes) ids.push_back(b.id);
  std::sort(ids.begin(), ids.end());
  if (chunk->splat_textures.size() !=
      static_cast<size_t>(worldgen::SplatTextureCount(static_cast<int>(ids.size())))) {
    std::abort();
  }
  for (int c = 0; c < columns; ++c) {
    int bytes = 0;
    for (size_t d = 0; d < chunk->splat_textures.size() * worldgen::kSplatChannels; ++d) {
      const std::vector<uint8_t>& texture = chunk->splat_textures[d / worldgen::kSplatChannels];
      if (texture.size() != static_cast<size_t>(columns) * worldgen::kSplatChannels) std::abort();
      const uint8_t byte =
          texture[static_cast<size_t>(c) * worldgen::kSplatChannels + d % worldgen::kSplatChannels];
      float weight = 0.0f;
      for (const worldgen::BiomeLayer& layer : chunk->layers) {
        if (d < ids.size() && layer.biome_id == ids[d])
          weight = layer.weights[static_cast<size_t>(c)];
      }
      if (weight == 0.0f && byte != 0) std::abort();
      bytes += byte;
    }
    if (bytes != 255) std::abort();
  }
  // Chunk == point, bit for bit, at a few columns the input picks.
  for (int probe = 0; probe < 3; ++probe) {
    const int lx = in.ConsumeIntegralInRange(0, chunk_size - 1);
    const int lz = in.ConsumeIntegralInRange(0, chunk_size - 1);
    absl::StatusOr<worldgen::PointBlend> point =
        (*world)->BlendPoint(static_cast<double>(cx * chunk_size + lx),
                             static_cast<double>(cz * chunk_size + lz), options, nullptr);
    if (!point.ok()) std::abort();
    const size_t at = static_cast<size_t>(worldgen::ColumnIndex(chunk_size, lx, lz));
    if (point->dominant_biome != chunk->dominant_biome[at]) std::abort();
    absl::StatusOr<worldgen::PointBlend> cached_point =
        (*world)->BlendPoint(static_cast<double>(cx * chunk_size + lx),
                             static_cast<double>(cz * chunk_size + lz), options, &cache);
    if (!cached_point.ok() || cached_point->weights.size() != point->weights.size() ||
        !SameBits(cached_point->height, point->height) ||
        cached_point->dominant_biome != point->dominant_biome) {
      std::abort();
    }
    for (size_t k = 0; k < point->weights.size(); ++k) {
      if (cached_point->weights[k].biome_id != point->weights[k].biome_id ||
          !SameBits(cached_point->weights[k].weight, point->weights[k].weight)) {
        std::abort();
      }
    }
    if (coastal && !SameBits(chunk->heights[at], point->height)) std::abort();
    std::map<uint32_t, float> at_point;
    for (const worldgen::BiomeWeight& w : point->weights) at_point[w.biome_id] = w.weight;
    for (const worldgen::BiomeLayer& layer : chunk->layers) {
      const float w = layer.weights[at];
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
      (*world)->BlendVolume(cx, cz, chunk_size, min_y, min_y + 32, vcell, {.dominant_biome = true});
  if (!stack.ok()) std::abort();
  const int m = chunk_size / vcell, rows = 16 / vcell;
  for (const worldgen::SectionBlend& section : stack->sections) {
    CheckLayers(section.layers, static_cast<size_t>(m) * rows * m, section.single_biome,
                section.dominant_biome);
  }
  absl::StatusOr<worldgen::VolumeBlend> cached_stack = (*world)->BlendVolume(
      cx, cz, chunk_size, min_y, min_y + 32, vcell, {.dominant_biome = true}, &cache);
  if (!cached_stack.ok() || cached_stack->sections.size() != stack->sections.size()) std::abort();
  for (size_t t = 0; t < stack->sections.size(); ++t) {
    const worldgen::SectionBlend& a = stack->sections[t];
    const worldgen::SectionBlend& b = cached_stack->sections[t];
    if (a.min_y != b.min_y || a.single_biome != b.single_biome || !SameLayers(a.layers, b.layers) ||
        a.dominant_biome != b.dominant_biome) {
      std::abort();
    }
  }
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
