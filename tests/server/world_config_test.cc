#include "proto/world_config.h"

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/biome_sample_cache.h"
#include "engine/blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "proto/world_registry.h"
#include "tests/support/scratch_dir_test.h"

namespace worldgen {
namespace {

using ::testing::HasSubstr;

// A small world in protobuf JSON, lowerCamelCase keys, optional fields left out.
constexpr char kTwoBiomeJson[] = R"json({
  "name": "two-biomes",
  "seed": "42",
  "biomes": [
    {"id": 7, "name": "hills", "color": {"r": 10, "g": 200, "b": 30}, "temperature": 0.5,
     "humidity": -0.25, "heightBase": 90},
    {"id": 3, "name": "sea", "temperature": -0.5, "humidity": 0.5, "blendRadius": 40}
  ],
  "samplingInterval": 8,
  "chunkSize": 32
})json";

std::string Serialized(const WorldSpec& spec) {
  return WorldConfigFromSpec(spec).SerializeAsString();
}

TEST(WorldConfigTest, DefaultWorldRoundTripsThroughTheProto) {
  const WorldSpec spec = DefaultWorldSpec();
  absl::StatusOr<WorldSpec> back = WorldSpecFromConfig(WorldConfigFromSpec(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Serialized(*back), Serialized(spec));
  EXPECT_EQ(back->name, spec.name);
  EXPECT_EQ(back->seed, spec.seed);
  ASSERT_EQ(back->biomes.size(), spec.biomes.size());
  for (size_t i = 0; i < spec.biomes.size(); ++i) {
    EXPECT_EQ(back->biomes[i].id, spec.biomes[i].id);
    EXPECT_EQ(back->biomes[i].name, spec.biomes[i].name);
    EXPECT_EQ(back->biomes[i].color_g, spec.biomes[i].color_g);
    EXPECT_EQ(back->biomes[i].height_frequency, spec.biomes[i].height_frequency);
  }
  EXPECT_EQ(back->blender.kind, spec.blender.kind);
  EXPECT_EQ(back->blender.params, spec.blender.params);
  EXPECT_EQ(back->climate.octaves, spec.climate.octaves);
}

TEST(WorldConfigTest, EveryFieldIsSetExplicitly) {
  v1::WorldConfig config = WorldConfigFromSpec(DefaultWorldSpec());
  EXPECT_EQ(config.blender(), v1::BLENDER_KIND_SCATTERED);
  EXPECT_TRUE(config.scattered().has_sampling_interval());
  EXPECT_TRUE(config.scattered().has_jitter());
  EXPECT_TRUE(config.scattered().has_blend_radius());
  // The deprecated aliases are read, never written.
  EXPECT_FALSE(config.has_sampling_interval());
  EXPECT_FALSE(config.has_jitter());
  EXPECT_FALSE(config.has_blend_radius());
  EXPECT_TRUE(config.has_chunk_size());
  EXPECT_TRUE(config.climate().has_octaves());
  ASSERT_GT(config.biomes_size(), 0);
  EXPECT_TRUE(config.biomes(0).has_height_base());
}

TEST(WorldConfigTest, JsonWithAbsentOptionalFieldsTakesEngineDefaults) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(kTwoBiomeJson);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const WorldSpec defaults;
  const BiomeSpec biome_defaults;
  EXPECT_EQ(spec->name, "two-biomes");
  EXPECT_EQ(spec->seed, 42u);
  EXPECT_EQ(spec->chunk_size, 32);
  EXPECT_EQ(spec->blender.kind, BlenderKind::kScattered);
  EXPECT_EQ(spec->blender.params.at("sampling_interval"), 8.0);  // The deprecated alias.
  EXPECT_FALSE(spec->blender.params.contains("jitter"));
  EXPECT_EQ(BlenderParam(*spec, "jitter"), 0.35) << "absent parameters take the method's defaults";
  EXPECT_EQ(BlenderParam(*spec, "blend_radius"), 24.0);
  EXPECT_EQ(spec->climate.temperature_frequency, defaults.climate.temperature_frequency);
  EXPECT_EQ(spec->climate.octaves, defaults.climate.octaves);
  ASSERT_EQ(spec->biomes.size(), 2u);
  EXPECT_EQ(spec->biomes[0].id, 7u);
  EXPECT_EQ(spec->biomes[0].color_g, 200);
  EXPECT_EQ(spec->biomes[0].height_base, 90.0);
  EXPECT_EQ(spec->biomes[0].height_amplitude, biome_defaults.height_amplitude);
  EXPECT_EQ(spec->biomes[1].blend_radius, 40.0);
  EXPECT_EQ(spec->biomes[1].height_base, biome_defaults.height_base);
}

TEST(WorldConfigTest, JsonAcceptsOriginalFieldNames) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a", "height_base": 5}], "chunk_size": 8})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->chunk_size, 8);
  EXPECT_EQ(spec->biomes[0].height_base, 5.0);
}

TEST(WorldConfigTest, NoiseMaxSourceReadsItsParametersAndRoundTrips) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
          "biomeSource": "BIOME_SOURCE_KIND_NOISE_MAX",
          "noiseMax": {"frequency": 0.004, "octaves": 4, "lacunarity": 2.5}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->biome_source, BiomeSourceKind::kNoiseMax);
  EXPECT_EQ(spec->noise_max.frequency, 0.004);
  EXPECT_EQ(spec->noise_max.octaves, 4);
  EXPECT_EQ(spec->noise_max.lacunarity, 2.5);
  EXPECT_EQ(spec->noise_max.gain, NoiseMaxSpec().gain) << "absent fields take the defaults";

  const v1::WorldConfig config = WorldConfigFromSpec(*spec);
  EXPECT_EQ(config.biome_source(), v1::BIOME_SOURCE_KIND_NOISE_MAX);
  EXPECT_TRUE(config.noise_max().has_gain());
  absl::StatusOr<WorldSpec> back = WorldSpecFromConfig(config);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Serialized(*back), Serialized(*spec));
  EXPECT_FALSE(WorldConfigFromSpec(DefaultWorldSpec()).has_noise_max())
      << "a climate world writes no noise_max message";
}

TEST(WorldConfigTest, NoiseMaxErrorsNameTheFieldAndRule) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "noiseMax": {"frequency": 0.01}})");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("noise_max is set, but biome_source"));

  spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "biomeSource": 1,
          "noiseMax": {"gain": 1.5}})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("noise_max.gain = 1.5 is outside [0.01, 1]"));

  spec =
      WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "biomeSource": 9})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(),
              HasSubstr("biome_source = 9 is not a known BiomeSourceKind"));
}

TEST(WorldConfigTest, MalformedJsonIsAnError) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(R"({"name": "w", "biomes": [)");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("WorldConfig"));
}

TEST(WorldConfigTest, UnknownJsonFieldIsAnError) {
  absl::StatusOr<WorldSpec> spec =
      WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "radius": 3})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("radius"));
}

TEST(WorldConfigTest, ColorChannelAbove255NamesTheField) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}, {"id": 2, "name": "b",
          "color": {"r": 1, "g": 2, "b": 300}}]})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("biomes[1].color.b = 300"));
}

TEST(WorldConfigTest, InvalidSpecIsRejectedByEngineValidation) {
  absl::StatusOr<WorldSpec> spec =
      WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "blendRadius": 1})");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("blend_radius"));
}

// Every engine method is reachable from the wire by name alone (no per-method server code): the
// enum value BLENDER_KIND_<NAME>, and a WorldConfig message field <name> with a double field per
// parameter.
TEST(WorldConfigTest, EveryEngineBlenderHasItsEnumValueAndConfigMessage) {
  for (const BlenderMethod* method : BlenderMethods()) {
    SCOPED_TRACE(std::string(method->name));
    WorldSpec spec = DefaultWorldSpec();
    spec.blender = {method->kind, {}};
    const v1::WorldConfig config = WorldConfigFromSpec(spec);
    EXPECT_EQ(static_cast<int>(config.blender()), static_cast<int>(method->kind));
    const google::protobuf::FieldDescriptor* field =
        config.GetDescriptor()->FindFieldByName(std::string(method->name));
    ASSERT_NE(field, nullptr);
    ASSERT_NE(field->message_type(), nullptr);
    ASSERT_TRUE(config.GetReflection()->HasField(config, field));
    for (const BlenderParamDef& def : method->params) {
      const google::protobuf::FieldDescriptor* param =
          field->message_type()->FindFieldByName(std::string(def.name));
      ASSERT_NE(param, nullptr) << def.name;
      EXPECT_EQ(param->cpp_type(), google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) << def.name;
    }
    absl::StatusOr<WorldSpec> back = WorldSpecFromConfig(config);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->blender.kind, method->kind);
    for (const BlenderParamDef& def : method->params) {
      EXPECT_EQ(back->blender.params.at(std::string(def.name)), def.default_value) << def.name;
    }
  }
}

TEST(WorldConfigTest, BlenderParametersComeFromTheChosenMethodsMessage) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
          "blender": "BLENDER_KIND_LERPED_GRID", "lerpedGrid": {"interval": 4, "blendRadius": 20}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->blender.kind, BlenderKind::kLerpedGrid);
  EXPECT_EQ(spec->blender.params.at("interval"), 4.0);
  EXPECT_EQ(spec->blender.params.at("blend_radius"), 20.0);
}

// parameter_voronoi's per-biome radius is a BiomeConfig field (climate units), read and written
// back.
TEST(WorldConfigTest, ParameterRadiusIsABiomeField) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a", "temperature": 0.5, "parameterRadius": 0.08},
          {"id": 2, "name": "b", "temperature": -0.5}], "blender": "BLENDER_KIND_PARAMETER_VORONOI",
          "parameterVoronoi": {"climateRadius": 0.04, "autoRadiusFraction": 0.25}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->blender.kind, BlenderKind::kParameterVoronoi);
  EXPECT_EQ(spec->biomes[0].parameter_radius, 0.08);
  EXPECT_EQ(spec->biomes[1].parameter_radius, 0.0);
  EXPECT_EQ(spec->blender.params.at("auto_radius_fraction"), 0.25);
  const v1::WorldConfig config = WorldConfigFromSpec(*spec);
  EXPECT_EQ(config.biomes(0).parameter_radius(), 0.08);
  EXPECT_EQ(config.parameter_voronoi().climate_radius(), 0.04);
  absl::StatusOr<WorldSpec> bad = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a", "parameterRadius": 3}],
          "blender": "BLENDER_KIND_PARAMETER_VORONOI"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("biomes[0] (id 1).parameter_radius = 3"));
}

// 3D biomes: a biome's cave band and the world's cave parameters, both ways; `caves` without a
// cave biome, and a bad band, are errors naming the field.
TEST(WorldConfigTest, CaveBiomesAndTheirParameters) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w",
          "biomes": [{"id": 1, "name": "a"},
                     {"id": 2, "name": "lush", "temperature": 0.3, "cave": {"yMin": -64, "yMax": 0}}],
          "caves": {"frequency": 0.02, "octaves": 3, "samplingInterval": 6, "jitter": 0.3,
                    "blendRadius": 20, "verticalBlendRadius": 5}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(spec->biomes[0].cave.has_value());
  ASSERT_TRUE(spec->biomes[1].cave.has_value());
  EXPECT_EQ(spec->biomes[1].cave->y_min, -64.0);
  EXPECT_EQ(spec->biomes[1].cave->y_max, 0.0);
  EXPECT_EQ(spec->caves.frequency, 0.02);
  EXPECT_EQ(spec->caves.octaves, 3);
  EXPECT_EQ(spec->caves.blending.sampling_interval, 6.0);
  EXPECT_EQ(spec->caves.blending.jitter, 0.3);
  EXPECT_EQ(spec->caves.blending.blend_radius, 20.0);
  EXPECT_EQ(spec->caves.blending.vertical_blend_radius, 5.0);
  const v1::WorldConfig config = WorldConfigFromSpec(*spec);
  EXPECT_FALSE(config.biomes(0).has_cave());
  EXPECT_EQ(config.biomes(1).cave().y_min(), -64.0);
  EXPECT_EQ(config.caves().vertical_blend_radius(), 5.0);
  EXPECT_EQ(config.caves().octaves(), 3);
  absl::StatusOr<WorldSpec> again = WorldSpecFromConfig(config);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->caves.blending.blend_radius, 20.0);
  // A 2D world's description has no caves.
  EXPECT_FALSE(WorldConfigFromSpec(DefaultWorldSpec()).has_caves());

  EXPECT_THAT(WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"}],
                                    "caves": {"octaves": 2}})")
                  .status()
                  .message(),
              HasSubstr("caves is set, but no biome has a cave band"));
  EXPECT_THAT(WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"},
                                    {"id": 2, "name": "c", "cave": {"yMin": 5, "yMax": -5}}]})")
                  .status()
                  .message(),
              HasSubstr("biomes[1] (id 2).cave = [5, -5) is invalid"));
  EXPECT_THAT(WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"},
                                    {"id": 2, "name": "c", "cave": {"yMin": -5, "yMax": 5}}],
                                    "caves": {"verticalBlendRadius": 0.5}})")
                  .status()
                  .message(),
              HasSubstr("caves.blending.vertical_blend_radius = 0.5 is out of range"));
}

TEST(WorldConfigTest, HeightModeAndItsParameters) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}],
          "heights": {"mode": "HEIGHT_MODE_CHUNK_INTERPOLATED", "chunkSize": 24, "blendReach": 2}})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->heights.mode, HeightMode::kChunkInterpolated);
  EXPECT_EQ(spec->heights.chunk_size, 24);
  EXPECT_EQ(spec->heights.blend_reach, 2.0);
  const v1::WorldConfig config = WorldConfigFromSpec(*spec);
  EXPECT_EQ(config.heights().mode(), v1::HEIGHT_MODE_CHUNK_INTERPOLATED);
  EXPECT_EQ(config.heights().chunk_size(), 24u);
  EXPECT_EQ(config.heights().blend_reach(), 2.0);

  absl::StatusOr<WorldSpec> coastal = WorldSpecFromJson(
      R"({"name": "w",
          "biomes": [{"id": 1, "name": "a", "heightBase": 70, "surface": "BIOME_SURFACE_LAND"},
                     {"id": 2, "name": "b", "heightBase": 30, "surface": "BIOME_SURFACE_WATER"}],
          "heights": {"mode": "HEIGHT_MODE_COASTAL", "seaLevel": 50, "coastWidth": 12,
                      "shoreSlope": 0.5}})");
  ASSERT_TRUE(coastal.ok()) << coastal.status();
  EXPECT_EQ(coastal->heights.mode, HeightMode::kCoastal);
  EXPECT_EQ(coastal->heights.sea_level, 50.0);
  EXPECT_EQ(coastal->heights.coast_width, 12.0);
  EXPECT_EQ(coastal->heights.shore_slope, 0.5);
  EXPECT_EQ(coastal->biomes[0].surface, BiomeSurface::kLand);
  EXPECT_EQ(coastal->biomes[1].surface, BiomeSurface::kWater);
  const v1::WorldConfig coastal_config = WorldConfigFromSpec(*coastal);
  EXPECT_EQ(coastal_config.heights().mode(), v1::HEIGHT_MODE_COASTAL);
  EXPECT_EQ(coastal_config.heights().sea_level(), 50.0);
  EXPECT_EQ(coastal_config.heights().coast_width(), 12.0);
  EXPECT_EQ(coastal_config.heights().shore_slope(), 0.5);
  EXPECT_EQ(coastal_config.biomes(1).surface(), v1::BIOME_SURFACE_WATER);
  absl::StatusOr<WorldSpec> no_surface = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}],
          "heights": {"mode": "HEIGHT_MODE_COASTAL"}})");
  EXPECT_EQ(no_surface.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_surface.status().message(), HasSubstr("biomes[0] (id 1).surface is unspecified"));
  absl::StatusOr<WorldSpec> bad_surface =
      WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a", "surface": 7}]})");
  EXPECT_THAT(bad_surface.status().message(),
              HasSubstr("biomes[0].surface = 7 is not a known BiomeSurface"));

  absl::StatusOr<WorldSpec> defaults =
      WorldSpecFromJson(R"({"name": "w", "biomes": [{"id": 1, "name": "a"}]})");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->heights.mode, HeightMode::kBlendedWeights);
  EXPECT_EQ(defaults->heights.chunk_size, 16);

  absl::StatusOr<WorldSpec> huge = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "heights": {"chunkSize": 4294967295}})");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("heights.chunk_size"));
  absl::StatusOr<WorldSpec> reach = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "heights": {"blendReach": 1}})");
  ASSERT_FALSE(reach.ok());
  EXPECT_THAT(reach.status().message(), HasSubstr("heights.blend_reach = 1 is outside [1.25, 4]"));
  v1::WorldConfig unknown = WorldConfigFromSpec(DefaultWorldSpec());
  unknown.mutable_heights()->set_mode(static_cast<v1::HeightMode>(7));
  absl::StatusOr<WorldSpec> bad_mode = WorldSpecFromConfig(unknown);
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_THAT(bad_mode.status().message(), HasSubstr("heights.mode = 7 is not a known HeightMode"));
}

TEST(WorldConfigTest, AnotherMethodsMessageIsAnError) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "blender": "BLENDER_KIND_CONVOLUTED_GRID",
          "scattered": {"jitter": 0.2}})");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("scattered is set, but blender is BLENDER_KIND_CONVOLUTED_GRID"));
}

TEST(WorldConfigTest, DeprecatedTopLevelAliasesSetTheChosenMethodsParameter) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "samplingInterval": 4, "blendRadius": 12})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->blender.params.at("sampling_interval"), 4.0);
  EXPECT_EQ(spec->blender.params.at("blend_radius"), 12.0);

  absl::StatusOr<WorldSpec> both = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "blendRadius": 12,
          "scattered": {"blendRadius": 14}})");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(), HasSubstr("blend_radius is set both at the top level"));

  absl::StatusOr<WorldSpec> foreign = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "jitter": 0.1,
          "blender": "BLENDER_KIND_FULL_RESOLUTION"})");
  ASSERT_FALSE(foreign.ok());
  EXPECT_THAT(foreign.status().message(),
              HasSubstr("jitter (a deprecated top-level alias) is not a parameter of the "
                        "full_resolution blender"));
}

TEST(WorldConfigTest, UnknownBlenderValueIsAnError) {
  v1::WorldConfig config = WorldConfigFromSpec(DefaultWorldSpec());
  config.set_blender(static_cast<v1::BlenderKind>(99));
  absl::StatusOr<WorldSpec> spec = WorldSpecFromConfig(config);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("blender = 99 is not a known BlenderKind"));
}

TEST(WorldConfigTest, HugeChunkSizeIsRejectedNotTruncated) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(
      R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "chunkSize": 4294967295})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("chunk_size"));
}

TEST(WorldConfigTest, NoBiomesIsAnError) {
  EXPECT_FALSE(WorldSpecFromJson(R"({"name": "w"})").ok());
}

using WorldConfigFilesTest = ::worldgen::testing::ScratchDirTest;

TEST_F(WorldConfigFilesTest, LoadsFilesAndDirectoriesOfJson) {
  Write("b.json", R"({"name": "bravo", "biomes": [{"id": 1, "name": "a"}]})");
  Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "a"}]})");
  Write("notes.txt", "not a world");
  const std::string single =
      Write("single.config", R"({"name": "single", "biomes": [{"id": 1, "name": "a"}]})");
  absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({dir_.string(), single});
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].name, "alpha");
  EXPECT_EQ((*specs)[1].name, "bravo");
  EXPECT_EQ((*specs)[2].name, "single");
}

TEST_F(WorldConfigFilesTest, ErrorsNameTheFile) {
  const std::string bad = Write("bad.json", R"({"name": "w", "biomes": [{"id": 1}]})");
  absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({bad});
  ASSERT_FALSE(specs.ok());
  EXPECT_THAT(specs.status().message(), HasSubstr(bad));
  absl::StatusOr<std::vector<WorldSpec>> missing =
      LoadWorldSpecs({(dir_ / "missing.json").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("missing.json"));
}

// A file's expected_fingerprint: kept beside its world, not in it; one that cannot be a fingerprint
// is an error naming the field.
TEST_F(WorldConfigFilesTest, ExpectedFingerprintsAreTheFilesNotTheWorlds) {
  const std::string pinned =
      Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "a"}],)"
                      R"( "expectedFingerprint": "0123456789abcdef"})");
  Write("b.json", R"({"name": "bravo", "biomes": [{"id": 1, "name": "a"}]})");
  absl::StatusOr<std::vector<WorldFile>> files = LoadWorldFiles({dir_.string()});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, pinned);
  EXPECT_EQ((*files)[0].spec.name, "alpha");
  EXPECT_EQ((*files)[0].expected_fingerprint, "0123456789abcdef");
  EXPECT_EQ((*files)[1].expected_fingerprint, "");
  EXPECT_EQ(WorldConfigFromSpec((*files)[0].spec).expected_fingerprint(), "");

  for (const char* pin : {"0123456789ABCDEF", "0123456789abcde", "0123456789abcdefa", "xyz"}) {
    absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(absl::StrCat(
        R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "expectedFingerprint": ")", pin,
        R"("})"));
    ASSERT_FALSE(spec.ok()) << pin;
    EXPECT_THAT(spec.status().message(), HasSubstr("expected_fingerprint")) << pin;
  }
}

// WorldRegistry::Load, as the server and `worldgen check` load their worlds: a file's expected
// fingerprint must be the world's, or loading fails naming the file and both fingerprints.
TEST_F(WorldConfigFilesTest, AWorldWhoseFingerprintIsNotTheExpectedOneIsRefused) {
  const std::string world = R"({"name": "alpha", "seed": "5", "biomes": [{"id": 1, "name": "a"},)"
                            R"( {"id": 2, "name": "b", "temperature": 0.5}])";
  const std::string path = Write("alpha.json", world + "}");
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> unpinned = WorldRegistry::Load({path});
  ASSERT_TRUE(unpinned.ok()) << unpinned.status();
  const std::string fingerprint = (*unpinned)->fingerprint("alpha");
  ASSERT_EQ(fingerprint.size(), 16u);

  Write("alpha.json", absl::StrCat(world, R"(, "expectedFingerprint": ")", fingerprint, R"("})"));
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> pinned = WorldRegistry::Load({path});
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ((*pinned)->fingerprint("alpha"), fingerprint) << "the pin is not hashed";

  const std::string other =
      fingerprint[0] == '0' ? "1" + fingerprint.substr(1) : "0" + fingerprint.substr(1);
  Write("alpha.json", absl::StrCat(world, R"(, "expectedFingerprint": ")", other, R"("})"));
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> refused = WorldRegistry::Load({path});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr(absl::StrCat(path, ": world \"alpha\" has fingerprint ", fingerprint,
                                     ", not its expected_fingerprint ", other)));

  // Another seed under the old pin: the edit is caught.
  std::string reseeded = world;
  reseeded.replace(reseeded.find("\"5\""), 3, "\"6\"");
  Write("alpha.json",
        absl::StrCat(reseeded, R"(, "expectedFingerprint": ")", fingerprint, R"("})"));
  EXPECT_EQ(WorldRegistry::Load({path}).status().code(), absl::StatusCode::kFailedPrecondition);
}

// Paths an operator can get wrong: each is an error naming the path and the reason, returned at
// once (no hang on a FIFO, no unbounded read of a device, no exception from a symlink loop).
TEST_F(WorldConfigFilesTest, SpecialFilesLoopsAndHugeFilesAreErrorsNotHangsOrCrashes) {
  const std::filesystem::path fifo = dir_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directories(dir_ / "loops");
  std::filesystem::create_symlink(dir_ / "loops" / "a.json", dir_ / "loops" / "b.json");
  std::filesystem::create_symlink(dir_ / "loops" / "b.json", dir_ / "loops" / "a.json");
  std::filesystem::create_directory_symlink(dir_ / "self", dir_ / "self");
  const std::string huge =
      Write("huge.json", std::string(static_cast<size_t>(kMaxWorldConfigBytes) + 1, ' '));
  struct Case {
    std::string path;
    std::string reason;
  } cases[] = {
      {fifo.string(), "is a FIFO"},
      {"/dev/zero", "is a character device"},
      {(dir_ / "loops").string(), "Too many levels of symbolic links"},
      {(dir_ / "self").string(), "Too many levels of symbolic links"},
      {huge, "at most 1048576"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({c.path});
    ASSERT_FALSE(specs.ok()) << c.path;
    EXPECT_THAT(specs.status().message(), HasSubstr(c.reason)) << c.path;
  }
  EXPECT_THAT(LoadWorldSpecs({(dir_ / "loops").string()}).status().message(),
              HasSubstr("loops/a.json"));
}

TEST_F(WorldConfigFilesTest, ADirectoryWithTooManyConfigsIsAnError) {
  for (size_t i = 0; i <= kMaxWorldConfigFilesPerDirectory; ++i) {
    Write("w" + std::to_string(i) + ".json", "{}");
  }
  absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({dir_.string()});
  ASSERT_FALSE(specs.ok());
  EXPECT_THAT(specs.status().message(), HasSubstr("more than 1024"));
}

// The example worlds shipped in docker/worlds (mounted by docker/compose.yaml): every file there is
// a world that loads, validates, and produces more than one biome (an operator copying one starts
// from something real), and every blending method has at least one.
TEST(ShippedWorldsTest, DockerWorldsLoadAndBlend) {
  const std::filesystem::path dir = std::filesystem::path(WORLDGEN_SOURCE_DIR) / "docker/worlds";
  absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({dir.string()});
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_FALSE(specs->empty());
  // Nothing in the directory is skipped by the loader (it reads only *.json).
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path() << " is not loaded by the server";
    names.insert(entry.path().stem().string());
  }
  EXPECT_EQ(names.size(), specs->size());
  std::set<std::string> methods;
  for (const WorldSpec& spec : *specs) {
    EXPECT_TRUE(names.contains(spec.name))
        << "world " << spec.name << " should be in " << spec.name << ".json";
    methods.insert(std::string(BlenderName(spec.blender.kind)));
  }
  for (const BlenderMethod* method : BlenderMethods()) {
    EXPECT_TRUE(methods.contains(std::string(method->name)))
        << "docker/worlds has no example world for blender " << method->name;
  }
  std::set<HeightMode> height_modes;
  int cave_worlds = 0;
  for (const WorldSpec& spec : *specs) {
    SCOPED_TRACE(spec.name);
    absl::StatusOr<std::shared_ptr<const World>> world = World::Create(spec);
    ASSERT_TRUE(world.ok()) << world.status();
    BiomeSampleCache cache(1 << 20);
    std::set<uint32_t> seen;
    for (int64_t c = -40; c <= 40; c += 8) {
      absl::StatusOr<ChunkBlend> chunk =
          (*world)->BlendChunk(c, -c / 2, static_cast<int>(spec.chunk_size),
                               {.heights = true, .dominant_biome = true}, &cache);
      ASSERT_TRUE(chunk.ok()) << chunk.status();
      seen.insert(chunk->dominant_biome.begin(), chunk->dominant_biome.end());
      for (float h : chunk->heights) ASSERT_TRUE(std::isfinite(h)) << "chunk " << c;
    }
    EXPECT_GE(seen.size(), 3u) << "a shipped world should show several biomes over ~2500 blocks";
    height_modes.insert(spec.heights.mode);
    if ((*world)->volume_blender() == nullptr) continue;
    // A cave world: its 3D blend shows cave biomes below ground (sections of 16 x 16 x 16 in
    // cells of 4, down to y = -64).
    ++cave_worlds;
    std::set<uint32_t> underground;
    for (int64_t c = -40; c <= 40; c += 8) {
      for (int64_t y = -64; y < 0; y += 16) {
        std::vector<IndexedLayer> layers;
        (*world)->volume_blender()->BlendCells(c * 16, y, -c * 8, 4, 4, 4, 4, &layers);
        for (const IndexedLayer& layer : layers) {
          underground.insert(spec.biomes[static_cast<size_t>(layer.biome)].id);
        }
      }
    }
    EXPECT_TRUE(std::any_of(spec.biomes.begin(), spec.biomes.end(), [&](const BiomeSpec& b) {
      return b.cave.has_value() && underground.contains(b.id);
    })) << "no cave biome underground";
  }
  EXPECT_GE(cave_worlds, 1) << "docker/worlds has no example world with cave biomes";
  EXPECT_TRUE(height_modes.contains(HeightMode::kChunkInterpolated))
      << "docker/worlds has no example world for HEIGHT_MODE_CHUNK_INTERPOLATED";
  EXPECT_TRUE(height_modes.contains(HeightMode::kCoastal))
      << "docker/worlds has no example world for HEIGHT_MODE_COASTAL";
}

// Every example world pins its fingerprint (expectedFingerprint), as docs/operations.md tells
// operators to, and loads the way the server loads it, pin checked. So a change to the engine that
// alters any example world's terrain fails here, naming the world and its new fingerprint, and
// the change's author either fixes the engine or updates the pin on purpose.
TEST(ShippedWorldsTest, EveryDockerWorldIsPinnedToTheFingerprintItHas) {
  const std::string dir = (std::filesystem::path(WORLDGEN_SOURCE_DIR) / "docker/worlds").string();
  absl::StatusOr<std::vector<WorldFile>> files = LoadWorldFiles({dir});
  ASSERT_TRUE(files.ok()) << files.status();
  for (const WorldFile& file : *files) {
    EXPECT_THAT(file.expected_fingerprint, ::testing::MatchesRegex("[0-9a-f]{16}"))
        << file.path << " sets no expectedFingerprint";
  }
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> registry = WorldRegistry::Load({dir});
  EXPECT_TRUE(registry.ok()) << registry.status();
}

// Each method's parameters are declared twice: in the engine (BlenderParamDef: range and default)
// and in the proto comments operators read. The last comment line above each parameter's field must
// be "Range [min, max], default d." with the engine's figures, and every field of a method's config
// message must be a parameter the engine declares.
TEST(WorldConfigTest, MethodParameterCommentsMatchTheEngine) {
  std::ifstream in(std::string(WORLDGEN_SOURCE_DIR) + "/proto/worldgen/v1/world_config.proto");
  ASSERT_TRUE(in) << "proto/worldgen/v1/world_config.proto";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::regex field(R"(^\s*optional double (\w+) = \d+;)");
  const std::regex range(R"(^\s*// Range \[(\S+), (\S+)\], default (\S+)\.$)");
  int checked = 0;
  for (const BlenderMethod* method : BlenderMethods()) {
    const google::protobuf::FieldDescriptor* config =
        v1::WorldConfig::descriptor()->FindFieldByName(std::string(method->name));
    ASSERT_NE(config, nullptr) << "WorldConfig has no field " << method->name;
    ASSERT_NE(config->message_type(), nullptr) << method->name;
    const std::string message = config->message_type()->name();
    // The message's lines.
    size_t begin = 0;
    while (begin < lines.size() && lines[begin] != "message " + message + " {") ++begin;
    ASSERT_LT(begin, lines.size()) << "message " << message;
    std::set<std::string> declared;
    for (const BlenderParamDef& def : method->params) declared.insert(std::string(def.name));
    for (size_t i = begin + 1; i < lines.size() && lines[i] != "}"; ++i) {
      std::smatch f;
      if (!std::regex_search(lines[i], f, field)) continue;
      const std::string name = f[1];
      SCOPED_TRACE(std::string(method->name) + "." + name);
      const BlenderParamDef* def = FindParam(*method, name);
      ASSERT_NE(def, nullptr) << message << " has a field the engine does not declare";
      std::smatch r;
      ASSERT_TRUE(std::regex_search(lines[i - 1], r, range))
          << "the line above is not \"// Range [min, max], default d.\": " << lines[i - 1];
      double min = 0, max = 0, value = 0;
      ASSERT_TRUE(absl::SimpleAtod(r[1].str(), &min) && absl::SimpleAtod(r[2].str(), &max) &&
                  absl::SimpleAtod(r[3].str(), &value))
          << lines[i - 1];
      EXPECT_EQ(min, def->min);
      EXPECT_EQ(max, def->max);
      EXPECT_EQ(value, def->default_value);
      declared.erase(name);
      ++checked;
    }
    EXPECT_TRUE(declared.empty()) << message << " lacks fields for " << *declared.begin();
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace worldgen
