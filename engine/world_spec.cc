#include "engine/world_spec.h"

#include <cmath>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "engine/blender.h"
#include "engine/volume_blender.h"

namespace worldgen {
namespace {

constexpr size_t kMaxNameLength = 64;

absl::Status OutOfRange(absl::string_view field, double value, double lo, double hi,
                        absl::string_view why = "") {
  return absl::InvalidArgumentError(absl::StrFormat("%s = %g is outside [%g, %g]%s%s", field, value,
                                                    lo, hi, why.empty() ? "" : ": ", why));
}

// Finite and within [lo, hi].
bool InRange(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

bool ValidWorldName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The sea level and, under HeightMode::kCoastal, the coast's parameters and every biome's surface:
// land biomes must stay above the sea and water biomes below it, so that the coastal heights can
// put the coastline where the raw map's border is (engine/coast.h).
absl::Status ValidateCoast(const WorldSpec& spec) {
  const HeightSpec& h = spec.heights;
  if (!InRange(h.sea_level, -100000.0, 100000.0)) {
    return OutOfRange("heights.sea_level", h.sea_level, -100000.0, 100000.0);
  }
  if (h.mode != HeightMode::kCoastal) return absl::OkStatus();
  if (spec.blender.kind == BlenderKind::kJitteredCells) {
    return absl::InvalidArgumentError(
        "heights.mode HEIGHT_MODE_COASTAL puts the coast on the biome source's land/water border, "
        "but the jittered_cells blender moves biomes off it (cells, domain warp): its weights "
        "would show land where the heights are under water; use another blender");
  }
  if (!InRange(h.coast_width, 1.0, 64.0)) {
    return OutOfRange("heights.coast_width", h.coast_width, 1.0, 64.0);
  }
  if (!InRange(h.shore_slope, 0.0, 4.0)) {
    return OutOfRange("heights.shore_slope", h.shore_slope, 0.0, 4.0);
  }
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    const std::string where = absl::StrFormat("biomes[%d] (id %u)", k, b.id);
    const double lowest = b.height_base - b.height_amplitude;
    const double highest = b.height_base + b.height_amplitude;
    if (b.surface == BiomeSurface::kLand && !(lowest > h.sea_level)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is land, but its height reaches height_base - height_amplitude = %g, not above "
          "heights.sea_level = %g: a land biome must stay above the sea under HEIGHT_MODE_COASTAL",
          where, lowest, h.sea_level));
    }
    if (b.surface == BiomeSurface::kWater && !(highest < h.sea_level)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is water, but its height reaches height_base + height_amplitude = %g, not below "
          "heights.sea_level = %g: a water biome must stay below the sea under HEIGHT_MODE_COASTAL",
          where, highest, h.sea_level));
    }
    if (b.surface == BiomeSurface::kUnspecified) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.surface is unspecified: HEIGHT_MODE_COASTAL needs every biome to be land or water",
          where));
    }
  }
  return absl::OkStatus();
}

// 3D biomes: cave bands, the cave climate and 3D blending, when any biome has a cave band.
absl::Status ValidateCaves(const WorldSpec& spec) {
  bool caves = false, surface = false;
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    if (!b.cave.has_value()) {
      surface = true;
      continue;
    }
    caves = true;
    if (!(b.cave->y_min >= -100000.0 && b.cave->y_max <= 100000.0 &&
          b.cave->y_min < b.cave->y_max)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "biomes[%d] (id %u).cave = [%g, %g) is invalid: need -100000 <= y_min < y_max <= 100000",
          k, b.id, b.cave->y_min, b.cave->y_max));
    }
  }
  if (!caves) return absl::OkStatus();
  if (!surface) {
    return absl::InvalidArgumentError(
        "every biome has a cave band: a world needs at least one surface biome (no cave band) for "
        "its 2D map");
  }
  if (!InRange(spec.caves.frequency, 1e-9, 1.0)) {
    return OutOfRange("caves.frequency", spec.caves.frequency, 1e-9, 1.0);
  }
  if (spec.caves.octaves < 1 || spec.caves.octaves > 8) {
    return OutOfRange("caves.octaves", spec.caves.octaves, 1, 8);
  }
  return ScatteredVolumeBlender::Validate(spec.caves.blending);
}

}  // namespace

std::vector<uint16_t> SurfaceBiomes(const WorldSpec& spec) {
  std::vector<uint16_t> surface;
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    if (!spec.biomes[k].cave.has_value()) surface.push_back(static_cast<uint16_t>(k));
  }
  return surface;
}

std::vector<char> CaveFlags(const WorldSpec& spec) {
  std::vector<char> is_cave;
  is_cave.reserve(spec.biomes.size());
  for (const BiomeSpec& b : spec.biomes) is_cave.push_back(b.cave.has_value() ? 1 : 0);
  return is_cave;
}

bool IsServedChunkSize(int64_t size) {
  return size >= kMinServedChunkSize && size <= kMaxServedChunkSize && (size & (size - 1)) == 0;
}

absl::Status ValidateWorldSpec(const WorldSpec& spec) {
  if (!ValidWorldName(spec.name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "name = \"%s\" is invalid: need 1..64 characters of [A-Za-z0-9_.-]", spec.name));
  }
  if (!IsServedChunkSize(spec.chunk_size)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("chunk_size = %d is invalid: need a power of two in [%d, %d]",
                        spec.chunk_size, kMinServedChunkSize, kMaxServedChunkSize));
  }
  if (!InRange(spec.climate.temperature_frequency, 1e-9, 1.0)) {
    return OutOfRange("climate.temperature_frequency", spec.climate.temperature_frequency, 1e-9,
                      1.0);
  }
  if (!InRange(spec.climate.humidity_frequency, 1e-9, 1.0)) {
    return OutOfRange("climate.humidity_frequency", spec.climate.humidity_frequency, 1e-9, 1.0);
  }
  if (spec.climate.octaves < 1 || spec.climate.octaves > 8) {
    return OutOfRange("climate.octaves", spec.climate.octaves, 1, 8);
  }
  if (spec.biome_source != BiomeSourceKind::kClimate &&
      spec.biome_source != BiomeSourceKind::kNoiseMax) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "biome_source = %d is not a known biome source kind (0 climate, 1 noise_max)",
        static_cast<int>(spec.biome_source)));
  }
  const NoiseMaxSpec& noise_max = spec.noise_max;
  if (!InRange(noise_max.frequency, 1e-9, 1.0)) {
    return OutOfRange("noise_max.frequency", noise_max.frequency, 1e-9, 1.0);
  }
  if (noise_max.octaves < 1 || noise_max.octaves > 8) {
    return OutOfRange("noise_max.octaves", noise_max.octaves, 1, 8);
  }
  if (!InRange(noise_max.lacunarity, 1.0, 8.0)) {
    return OutOfRange("noise_max.lacunarity", noise_max.lacunarity, 1.0, 8.0);
  }
  if (!InRange(noise_max.gain, 0.01, 1.0)) {
    return OutOfRange("noise_max.gain", noise_max.gain, 0.01, 1.0);
  }
  if (spec.biomes.empty() || spec.biomes.size() > static_cast<size_t>(kMaxBiomes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "biomes has %d entries; a world needs 1..%d biomes", spec.biomes.size(), kMaxBiomes));
  }
  absl::flat_hash_set<uint32_t> ids;
  absl::flat_hash_set<std::string> names;
  for (size_t k = 0; k < spec.biomes.size(); ++k) {
    const BiomeSpec& b = spec.biomes[k];
    std::string where = absl::StrFormat("biomes[%d] (id %u)", k, b.id);
    if (!ids.insert(b.id).second) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: duplicate biome id", where));
    }
    if (b.name.empty() || b.name.size() > kMaxNameLength) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: name must have 1..64 characters", where));
    }
    // Names reach terminals (worldgen describe) and pages (the viewer's legend) as they are.
    if (const auto control = absl::c_find_if(
            b.name, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        control != b.name.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: name has a control character (0x%02x at byte %d)", where,
                          static_cast<unsigned char>(*control), control - b.name.begin()));
    }
    if (!names.insert(b.name).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: duplicate biome name \"%s\"", where, b.name));
    }
    if (!InRange(b.temperature, -1.0, 1.0)) {
      return OutOfRange(where + ".temperature", b.temperature, -1.0, 1.0);
    }
    if (!InRange(b.humidity, -1.0, 1.0)) {
      return OutOfRange(where + ".humidity", b.humidity, -1.0, 1.0);
    }
    if (!InRange(b.height_base, -100000.0, 100000.0)) {
      return OutOfRange(where + ".height_base", b.height_base, -100000.0, 100000.0);
    }
    if (!InRange(b.height_amplitude, 0.0, 100000.0)) {
      return OutOfRange(where + ".height_amplitude", b.height_amplitude, 0.0, 100000.0);
    }
    if (!InRange(b.height_frequency, 1e-9, 1.0)) {
      return OutOfRange(where + ".height_frequency", b.height_frequency, 1e-9, 1.0);
    }
    if (!std::isfinite(b.blend_radius) || b.blend_radius < 0.0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.blend_radius = %g must be 0 (the method's radius) or a positive radius", where,
          b.blend_radius));
    }
    if (!std::isfinite(b.parameter_radius) || b.parameter_radius < 0.0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.parameter_radius = %g must be 0 (the method's radius) or a positive radius", where,
          b.parameter_radius));
    }
    if (b.surface != BiomeSurface::kUnspecified && b.surface != BiomeSurface::kLand &&
        b.surface != BiomeSurface::kWater) {
      return absl::InvalidArgumentError(absl::StrFormat("%s.surface = %d is not a known surface",
                                                        where, static_cast<int>(b.surface)));
    }
  }
  if (spec.heights.mode != HeightMode::kBlendedWeights &&
      spec.heights.mode != HeightMode::kChunkInterpolated &&
      spec.heights.mode != HeightMode::kCoastal) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "heights.mode = %d is not a known height mode", static_cast<int>(spec.heights.mode)));
  }
  if (spec.heights.chunk_size < 2 || spec.heights.chunk_size > 1024) {
    return OutOfRange("heights.chunk_size", spec.heights.chunk_size, 2, 1024);
  }
  if (!InRange(spec.heights.blend_reach, 1.25, 4.0)) {
    return OutOfRange("heights.blend_reach", spec.heights.blend_reach, 1.25, 4.0,
                      "below 1.25 the weights of all chunks nearly vanish at chunk corners and the "
                      "height jumps there; above 4 a column blends too many chunks");
  }
  if (absl::Status s = ValidateCoast(spec); !s.ok()) return s;
  if (absl::Status s = ValidateCaves(spec); !s.ok()) return s;
  return ValidateBlenderSpec(spec);
}

WorldSpec DefaultWorldSpec() {
  WorldSpec spec;
  spec.name = "default";
  spec.seed = 0x5eed2026ULL;
  spec.blender = {BlenderKind::kScattered,
                  {{"sampling_interval", 8.0},
                   {"jitter", 0.35},
                   {"blend_radius", 24.0},
                   {"lattice", 0.0},
                   {"interpolation", 0.0}}};
  spec.chunk_size = 16;
  auto biome = [](uint32_t id, const char* name, uint8_t r, uint8_t g, uint8_t b,
                  double temperature, double humidity, double base, double amplitude,
                  double frequency, double radius = 0.0) {
    BiomeSpec s;
    s.id = id;
    s.name = name;
    s.color_r = r;
    s.color_g = g;
    s.color_b = b;
    s.temperature = temperature;
    s.humidity = humidity;
    s.height_base = base;
    s.height_amplitude = amplitude;
    s.height_frequency = frequency;
    s.blend_radius = radius;
    return s;
  };
  spec.biomes = {
      biome(0, "ocean", 38, 82, 168, 0.05, 0.55, 40.0, 6.0, 0.006, 32.0),
      biome(1, "beach", 226, 212, 150, 0.20, 0.30, 62.0, 1.5, 0.02),
      biome(2, "plains", 132, 190, 92, 0.10, 0.00, 68.0, 4.0, 0.008),
      biome(3, "forest", 52, 128, 56, -0.05, 0.20, 70.0, 8.0, 0.012),
      biome(4, "desert", 222, 196, 120, 0.55, -0.40, 66.0, 6.0, 0.01),
      biome(5, "savanna", 182, 168, 84, 0.40, -0.10, 70.0, 5.0, 0.009),
      biome(6, "taiga", 62, 104, 86, -0.35, 0.15, 74.0, 10.0, 0.012),
      biome(7, "mountains", 128, 128, 132, -0.20, -0.35, 104.0, 42.0, 0.007, 32.0),
      biome(8, "snowy_tundra", 236, 242, 250, -0.55, -0.05, 72.0, 4.0, 0.01),
      biome(9, "swamp", 72, 92, 60, 0.30, 0.45, 61.0, 2.0, 0.015),
      biome(10, "jungle", 36, 150, 40, 0.55, 0.25, 76.0, 12.0, 0.014),
  };
  return spec;
}

void AddDefaultCoasts(WorldSpec* spec) {
  for (BiomeSpec& b : spec->biomes) {
    b.surface = b.name == "ocean" ? BiomeSurface::kWater : BiomeSurface::kLand;
  }
  spec->heights.mode = HeightMode::kCoastal;
  spec->heights.sea_level = 58.0;
}

}  // namespace worldgen
