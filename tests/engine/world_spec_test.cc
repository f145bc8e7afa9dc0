#include "engine/world_spec.h"

#include "engine/blender.h"
#include "engine/scattered_blender.h"

#include <cmath>
#include <functional>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using ::testing::HasSubstr;

TEST(WorldSpecTest, DefaultWorldIsValidAndRich) {
  WorldSpec spec = DefaultWorldSpec();
  EXPECT_TRUE(ValidateWorldSpec(spec).ok()) << ValidateWorldSpec(spec);
  EXPECT_GE(spec.biomes.size(), 8u);
}

TEST(WorldSpecTest, MinBlendRadiusCoversTheLargestGap) {
  // interval/sqrt(3) (farthest from a vertex) + jitter + a quarter interval of padding.
  EXPECT_NEAR(ScatteredBlender::MinBlendRadius(8.0, 0.35), 8.0 * (0.5773502691896258 + 0.35 + 0.25),
              1e-12);
}

struct BadSpecCase {
  const char* what;
  std::function<void(WorldSpec&)> mutate;
  const char* message;
};

class BadSpecTest : public ::testing::TestWithParam<BadSpecCase> {};

TEST_P(BadSpecTest, IsRejectedWithAMessageNamingTheField) {
  WorldSpec spec = DefaultWorldSpec();
  GetParam().mutate(spec);
  absl::Status status = ValidateWorldSpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << GetParam().what;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().message)) << status;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    AllFields, BadSpecTest,
    ::testing::Values(
        BadSpecCase{"empty name", [](WorldSpec& s) { s.name = ""; }, "name"},
        BadSpecCase{"name with space", [](WorldSpec& s) { s.name = "a b"; }, "name"},
        BadSpecCase{"interval 0", [](WorldSpec& s) { s.blender.params["sampling_interval"] = 0; },
                    "scattered.sampling_interval"},
        BadSpecCase{"interval NaN", [](WorldSpec& s) { s.blender.params["sampling_interval"] = kNaN; },
                    "sampling_interval"},
        BadSpecCase{"interval huge", [](WorldSpec& s) { s.blender.params["sampling_interval"] = 1e9; },
                    "sampling_interval"},
        BadSpecCase{"jitter negative", [](WorldSpec& s) { s.blender.params["jitter"] = -0.1; }, "jitter"},
        BadSpecCase{"jitter > 0.5", [](WorldSpec& s) { s.blender.params["jitter"] = 0.7; }, "jitter"},
        BadSpecCase{"radius too small", [](WorldSpec& s) { s.blender.params["blend_radius"] = 5; },
                    "scattered.blend_radius = 5 is outside"},
        BadSpecCase{"radius too large", [](WorldSpec& s) { s.blender.params["blend_radius"] = 1000; },
                    "blend_radius"},
        BadSpecCase{"radius inf", [](WorldSpec& s) { s.blender.params["blend_radius"] = kInf; },
                    "blend_radius"},
        BadSpecCase{"chunk size 0", [](WorldSpec& s) { s.chunk_size = 0; }, "chunk_size"},
        BadSpecCase{"chunk size 24", [](WorldSpec& s) { s.chunk_size = 24; }, "chunk_size"},
        BadSpecCase{"chunk size 512", [](WorldSpec& s) { s.chunk_size = 512; }, "chunk_size"},
        BadSpecCase{"climate freq 0", [](WorldSpec& s) { s.climate.temperature_frequency = 0; },
                    "climate.temperature_frequency"},
        BadSpecCase{"humidity freq NaN", [](WorldSpec& s) { s.climate.humidity_frequency = kNaN; },
                    "climate.humidity_frequency"},
        BadSpecCase{"octaves 0", [](WorldSpec& s) { s.climate.octaves = 0; }, "climate.octaves"},
        BadSpecCase{"octaves 99", [](WorldSpec& s) { s.climate.octaves = 99; }, "climate.octaves"},
        BadSpecCase{"unknown source", [](WorldSpec& s) { s.biome_source = BiomeSourceKind{7}; },
                    "biome_source = 7 is not a known biome source kind"},
        BadSpecCase{"sea level NaN", [](WorldSpec& s) { s.heights.sea_level = kNaN; },
                    "heights.sea_level = nan is outside"},
        BadSpecCase{"unknown surface", [](WorldSpec& s) { s.biomes[2].surface = BiomeSurface{5}; },
                    "biomes[2] (id 2).surface = 5 is not a known surface"},
        BadSpecCase{"coastal, a biome without a surface",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.biomes[3].surface = BiomeSurface::kUnspecified;
                    },
                    "biomes[3] (id 3).surface is unspecified: HEIGHT_MODE_COASTAL needs every "
                    "biome to be land or water"},
        BadSpecCase{"coastal, land reaching below the sea",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.heights.sea_level = 60.0;  // desert: 66 - 6 = 60
                    },
                    "biomes[4] (id 4) is land, but its height reaches height_base - "
                    "height_amplitude = 60, not above heights.sea_level = 60"},
        BadSpecCase{"coastal, water reaching above the sea",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.biomes[1].surface = BiomeSurface::kWater;  // beach: 62 + 1.5
                    },
                    "biomes[1] (id 1) is water, but its height reaches height_base + "
                    "height_amplitude = 63.5, not below heights.sea_level = 58"},
        BadSpecCase{"coastal with jittered cells",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.blender = {BlenderKind::kJitteredCells, {}};
                    },
                    "the jittered_cells blender moves biomes off it"},
        BadSpecCase{"coastal, width 0.5",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.heights.coast_width = 0.5;
                    },
                    "heights.coast_width = 0.5 is outside [1, 64]"},
        BadSpecCase{"coastal, slope 5",
                    [](WorldSpec& s) {
                      s = testing::CoastalWorldSpec();
                      s.heights.shore_slope = 5;
                    },
                    "heights.shore_slope = 5 is outside [0, 4]"},
        BadSpecCase{"cave band empty",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.biomes.back().cave = CaveBand{-10, -10};
                    },
                    "biomes[12] (id 101).cave = [-10, -10) is invalid: need -100000 <= y_min < "
                    "y_max <= 100000"},
        BadSpecCase{"cave band NaN",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.biomes.back().cave->y_min = kNaN;
                    },
                    "biomes[12] (id 101).cave = [nan, -32) is invalid"},
        BadSpecCase{"only cave biomes",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      for (BiomeSpec& b : s.biomes) b.cave = CaveBand{};
                    },
                    "a world needs at least one surface biome"},
        BadSpecCase{"caves with parameter_voronoi",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.blender = {BlenderKind::kParameterVoronoi, {}};
                    },
                    "is a cave biome, and parameter_voronoi blends every biome's climate point"},
        BadSpecCase{"cave frequency 2",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.caves.frequency = 2;
                    },
                    "caves.frequency = 2 is outside"},
        BadSpecCase{"cave octaves 0",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.caves.octaves = 0;
                    },
                    "caves.octaves = 0 is outside [1, 8]"},
        BadSpecCase{"cave radius below the lattice's gap",
                    [](WorldSpec& s) {
                      s = testing::CaveWorldSpec();
                      s.caves.blending.blend_radius = 8;
                    },
                    "caves.blending.blend_radius = 8 is out of range"},
        BadSpecCase{"noise_max freq 0", [](WorldSpec& s) { s.noise_max.frequency = 0; },
                    "noise_max.frequency = 0 is outside"},
        BadSpecCase{"noise_max freq NaN", [](WorldSpec& s) { s.noise_max.frequency = kNaN; },
                    "noise_max.frequency"},
        BadSpecCase{"noise_max octaves 9", [](WorldSpec& s) { s.noise_max.octaves = 9; },
                    "noise_max.octaves = 9 is outside [1, 8]"},
        BadSpecCase{"noise_max lacunarity 0.5", [](WorldSpec& s) { s.noise_max.lacunarity = 0.5; },
                    "noise_max.lacunarity = 0.5 is outside [1, 8]"},
        BadSpecCase{"noise_max gain 0", [](WorldSpec& s) { s.noise_max.gain = 0; },
                    "noise_max.gain = 0 is outside [0.01, 1]"},
        BadSpecCase{"no biomes", [](WorldSpec& s) { s.biomes.clear(); }, "biomes"},
        BadSpecCase{"too many biomes", [](WorldSpec& s) { s.biomes.resize(kMaxBiomes + 1); },
                    "biomes"},
        BadSpecCase{"duplicate id", [](WorldSpec& s) { s.biomes[1].id = s.biomes[0].id; },
                    "duplicate biome id"},
        BadSpecCase{"duplicate name", [](WorldSpec& s) { s.biomes[1].name = s.biomes[0].name; },
                    "duplicate biome name"},
        BadSpecCase{"empty biome name", [](WorldSpec& s) { s.biomes[2].name = ""; }, "biomes[2]"},
        BadSpecCase{"escape in a biome name",
                    [](WorldSpec& s) { s.biomes[2].name = "red\x1b[31m"; },
                    "biomes[2] (id 2): name has a control character (0x1b at byte 3)"},
        BadSpecCase{"DEL in a biome name", [](WorldSpec& s) { s.biomes[2].name = "a\x7f"; },
                    "(0x7f at byte 1)"},
        BadSpecCase{"temperature 2", [](WorldSpec& s) { s.biomes[3].temperature = 2; },
                    "biomes[3] (id 3).temperature"},
        BadSpecCase{"humidity NaN", [](WorldSpec& s) { s.biomes[3].humidity = kNaN; },
                    "biomes[3] (id 3).humidity"},
        BadSpecCase{"height base", [](WorldSpec& s) { s.biomes[0].height_base = 1e9; },
                    "height_base"},
        BadSpecCase{"negative amplitude", [](WorldSpec& s) { s.biomes[0].height_amplitude = -1; },
                    "height_amplitude"},
        BadSpecCase{"height frequency 0", [](WorldSpec& s) { s.biomes[0].height_frequency = 0; },
                    "height_frequency"},
        BadSpecCase{"biome radius too small", [](WorldSpec& s) { s.biomes[4].blend_radius = 2; },
                    "biomes[4] (id 4).blend_radius"},
        BadSpecCase{"biome radius negative", [](WorldSpec& s) { s.biomes[4].blend_radius = -3; },
                    "biomes[4] (id 4).blend_radius = -3 must be 0"},
        BadSpecCase{"unknown blender", [](WorldSpec& s) { s.blender.kind = BlenderKind(77); },
                    "blender = 77 is not a known blending method"},
        BadSpecCase{"undeclared parameter",
                    [](WorldSpec& s) { s.blender.params["sharpness"] = 1; },
                    "scattered.sharpness is not a parameter of the scattered blender (its "
                    "parameters: sampling_interval, jitter, blend_radius, lattice, interpolation)"},
        BadSpecCase{"another method's parameter",
                    [](WorldSpec& s) { s.blender = {BlenderKind::kLerpedGrid, {{"jitter", 0.3}}}; },
                    "lerped_grid.jitter is not a parameter"},
        BadSpecCase{"fractional grid interval",
                    [](WorldSpec& s) {
                      s.blender = {BlenderKind::kConvolutedGrid, {{"interval", 4.5}}};
                    },
                    "convoluted_grid.interval = 4.5 must be a whole number"},
        BadSpecCase{"grid radius below its gap",
                    [](WorldSpec& s) {
                      s.blender = {BlenderKind::kLerpedGrid, {{"interval", 16}, {"blend_radius", 12}}};
                    },
                    "lerped_grid.blend_radius = 12 is outside [15.3137, 512]: a radius must cover "
                    "the grid's largest gap"},
        BadSpecCase{"full resolution radius too costly",
                    [](WorldSpec& s) {
                      s.blender = {BlenderKind::kFullResolution, {{"blend_radius", 64}}};
                    },
                    "full_resolution.blend_radius = 64 is outside [1, 48]"},
        BadSpecCase{"per-biome radius beyond full resolution's cap",
                    [](WorldSpec& s) {
                      s.blender = {BlenderKind::kFullResolution, {}};
                      s.biomes[2].blend_radius = 60;
                    },
                    "biomes[2] (id 2).blend_radius = 60 is outside [1, 48] (0 = "
                    "full_resolution.blend_radius)"}));

// A biome's name is any text without control characters: other scripts and markup included (the
// viewer shows it as text).
TEST(WorldSpecTest, BiomeNamesMayBeAnyPrintableText) {
  WorldSpec spec = DefaultWorldSpec();
  spec.biomes[0].name = "W\xc3\xbcste <b>&amp;";
  EXPECT_TRUE(ValidateWorldSpec(spec).ok()) << ValidateWorldSpec(spec);
}

TEST(WorldSpecTest, EveryMethodIsValidAtItsDefaults) {
  for (const BlenderMethod* method : BlenderMethods()) {
    WorldSpec spec = DefaultWorldSpec();
    spec.blender = {method->kind, {}};
    EXPECT_TRUE(ValidateWorldSpec(spec).ok()) << method->name << ": " << ValidateWorldSpec(spec);
    EXPECT_EQ(MethodOf(method->kind).name, method->name);
    EXPECT_EQ(FindMethod(method->name), method);
    for (const BlenderParamDef& def : method->params) {
      EXPECT_EQ(BlenderParam(spec, def.name), def.default_value) << method->name << "." << def.name;
    }
  }
}

}  // namespace
}  // namespace worldgen
