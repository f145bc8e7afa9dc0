// Every blending method through a real server: one world per entry of BlenderMethods(), each loaded
// from a JSON file that names its method by enum value ("blender": "BLENDER_KIND_<NAME>") and sets
// no parameter. Checks, per method, that the service's chunks equal its points bit-for-bit at every
// column of several border chunks, that they equal the engine run in this process, that the raw map
// view (include_source_biome) is the engine's World::SourceBiomeAt, and that DescribeWorld reports
// the method's name and the engine's figures. A new method is covered by adding it to the engine.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/blender.h"
#include "engine/world.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "proto/world_config.h"
#include "server/service/wire_encoding.h"
#include "tests/server/service_calls.h"
#include "tests/support/server_process.h"

namespace worldgen {
namespace {

using ::worldgen::testing::Connect;
using ::worldgen::testing::Describe;
using ::worldgen::testing::GenerateAll;
using ::worldgen::testing::ListRequest;
using ::worldgen::testing::RegionRequest;
using ::worldgen::testing::SameBits;
using ::worldgen::testing::Sample;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::StreamResult;

constexpr uint32_t kChunkSize = 16;

// Five biomes with climate noise fast enough that a few chunks around the origin hold borders; one
// biome has its own kernel radius (valid for every method's default range).
std::string WorldJson(absl::string_view method) {
  return absl::StrCat(R"json({
  "name": ")json",
                      method, R"json(",
  "seed": "20240611",
  "blender": "BLENDER_KIND_)json",
                      absl::AsciiStrToUpper(method), R"json(",
  "biomes": [
    {"id": 3, "name": "cold", "temperature": -0.7, "humidity": 0.0, "color": {"r": 200, "g": 220, "b": 255}},
    {"id": 4, "name": "wet", "temperature": 0.0, "humidity": 0.6, "color": {"r": 30, "g": 120, "b": 60}},
    {"id": 9, "name": "dry", "temperature": 0.1, "humidity": -0.6, "color": {"r": 220, "g": 190, "b": 90},
     "blendRadius": 28},
    {"id": 12, "name": "hot", "temperature": 0.7, "humidity": 0.1, "heightAmplitude": 30},
    {"id": 20, "name": "mild", "temperature": 0.0, "humidity": 0.0, "heightBase": 70}
  ],
  "climate": {"temperatureFrequency": 0.006, "humidityFrequency": 0.005},
  "chunkSize": 16
})json");
}

std::vector<std::string> MethodNames() {
  std::vector<std::string> names;
  for (const BlenderMethod* method : BlenderMethods()) names.emplace_back(method->name);
  return names;
}

class BlenderServiceTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One server for all methods: one JSON file per method in a temporary directory.
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     absl::StrCat("worldgen_blender_service_test_", getpid()));
    std::filesystem::create_directories(*dir_);
    for (const std::string& name : MethodNames()) {
      std::ofstream(*dir_ / (name + ".json")) << WorldJson(name);
    }
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
        {"--blend_threads=2", absl::StrCat("--world_config=", dir_->string())});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    stub_ = Connect(server_->target());
    absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(WorldJson(GetParam()));
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_EQ(BlenderName(spec->blender.kind), GetParam());
    ASSERT_TRUE(spec->blender.params.empty());
    absl::StatusOr<std::shared_ptr<const World>> world = World::Create(*std::move(spec));
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = *std::move(world);
  }

  // This method's world, with every optional field of ChunkData.
  void AskForEverything(v1::GenerateChunkRequest* request) const {
    request->set_world(GetParam());
    request->set_include_heights(true);
    request->set_include_dominant_biome(true);
    request->set_include_source_biome(true);
    request->set_include_splat(true);
  }

  // Up to `count` chunks of kChunkSize whose blend has more than one biome, from a scan around the
  // origin, with heights, dominant and source biomes and splat textures.
  std::vector<v1::ChunkData> BorderChunks(size_t count) {
    v1::GenerateChunkRequest request = RegionRequest(-6, -6, 5, 5, kChunkSize);
    AskForEverything(&request);
    StreamResult result = GenerateAll(*stub_, request);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    std::map<std::pair<int64_t, int64_t>, v1::ChunkData>
        borders;  // Sorted: the same picks each run.
    for (v1::ChunkData& chunk : result.chunks) {
      if (!chunk.single_biome()) borders[{chunk.coord().x(), chunk.coord().z()}] = std::move(chunk);
    }
    std::vector<v1::ChunkData> picked;
    for (auto& [coord, chunk] : borders) {
      if (picked.size() == count) break;
      picked.push_back(std::move(chunk));
    }
    EXPECT_EQ(picked.size(), count) << "too few border chunks in a 192-block square";
    return picked;
  }

  static ServerProcess* server_;
  static std::filesystem::path* dir_;
  std::unique_ptr<v1::WorldGen::Stub> stub_;
  std::shared_ptr<const World> world_;
};

ServerProcess* BlenderServiceTest::server_ = nullptr;
std::filesystem::path* BlenderServiceTest::dir_ = nullptr;

TEST_P(BlenderServiceTest, ChunkEqualsPointAtEveryColumnOfBorderChunks) {
  for (const v1::ChunkData& chunk : BorderChunks(4)) {
    const int n = static_cast<int>(chunk.chunk_size());
    const int64_t x0 = chunk.coord().x() * n, z0 = chunk.coord().z() * n;
    v1::SampleWeightsRequest request;
    request.set_world(GetParam());
    request.set_include_heights(true);
    request.set_include_source_biome(true);
    for (int lz = 0; lz < n; ++lz) {
      for (int lx = 0; lx < n; ++lx) {
        v1::Point* point = request.add_points();
        point->set_x(static_cast<double>(x0 + lx));
        point->set_z(static_cast<double>(z0 + lz));
      }
    }
    v1::SampleWeightsResponse response;
    grpc::Status status = Sample(*stub_, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.samples_size(), n * n);
    int columns_with_several_biomes = 0;
    for (int column = 0; column < n * n; ++column) {
      const v1::PointWeights& point = response.samples(column);
      std::map<uint32_t, float> expected;  // The chunk's non-zero weights at this column.
      for (const v1::BiomeWeights& biome : chunk.biomes()) {
        if (biome.weights(column) != 0.0f) expected[biome.biome_id()] = biome.weights(column);
      }
      columns_with_several_biomes += expected.size() > 1;
      const std::string where =
          absl::StrCat("chunk (", chunk.coord().x(), ", ", chunk.coord().z(), ") column ", column);
      ASSERT_EQ(point.weights_size(), static_cast<int>(expected.size())) << where;
      for (const v1::BiomeWeight& weight : point.weights()) {
        ASSERT_TRUE(expected.contains(weight.biome_id())) << where;
        EXPECT_TRUE(SameBits(weight.weight(), expected[weight.biome_id()])) << where;
      }
      EXPECT_TRUE(SameBits(point.height(), chunk.heights(column))) << where;
      EXPECT_EQ(point.dominant_biome(), chunk.dominant_biome(column)) << where;
      EXPECT_EQ(point.source_biome(), chunk.source_biome(column)) << where;
    }
    EXPECT_GT(columns_with_several_biomes, 0);
  }
}

TEST_P(BlenderServiceTest, ChunksEqualTheEngineBitForBit) {
  const std::vector<std::pair<int64_t, int64_t>> coords = {{0, 0}, {-1, 2}, {3, -4}, {-5, -5}};
  for (uint32_t size : {8u, 16u, 32u}) {
    v1::GenerateChunkRequest request = ListRequest(coords, size);
    AskForEverything(&request);
    StreamResult result = GenerateAll(*stub_, request);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.chunks.size(), coords.size());
    for (const v1::ChunkData& got : result.chunks) {
      absl::StatusOr<ChunkBlend> blend = world_->BlendChunk(
          got.coord().x(), got.coord().z(), static_cast<int>(size),
          {.heights = true, .dominant_biome = true, .source_biome = true, .splat = true});
      ASSERT_TRUE(blend.ok()) << blend.status();
      v1::ChunkData expected;
      EncodeChunk(*blend, &expected);
      EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString())
          << "chunk (" << got.coord().x() << ", " << got.coord().z() << ") size " << size;
    }
  }
}

TEST_P(BlenderServiceTest, RawMapIsTheEnginesSourceBiome) {
  v1::GenerateChunkRequest request = RegionRequest(-3, -3, 2, 2, kChunkSize);
  request.set_world(GetParam());
  request.set_include_source_biome(true);
  StreamResult result = GenerateAll(*stub_, request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.chunks.size(), 36u);
  std::set<uint32_t> seen;
  for (const v1::ChunkData& chunk : result.chunks) {
    const int n = static_cast<int>(chunk.chunk_size());
    ASSERT_EQ(chunk.source_biome_size(), n * n);
    EXPECT_EQ(chunk.heights_size(), 0);  // Only what was asked for.
    EXPECT_EQ(chunk.dominant_biome_size(), 0);
    for (int lz = 0; lz < n; ++lz) {
      for (int lx = 0; lx < n; ++lx) {
        const double x = static_cast<double>(chunk.coord().x() * n + lx);
        const double z = static_cast<double>(chunk.coord().z() * n + lz);
        ASSERT_EQ(chunk.source_biome(lz * n + lx), world_->SourceBiomeAt(x, z)) << x << ", " << z;
        seen.insert(chunk.source_biome(lz * n + lx));
      }
    }
  }
  EXPECT_GE(seen.size(), 3u) << "the raw map of a 96-block square should cross borders";

  // full_resolution samples the raw map at every integer column within its radius, the column
  // itself included (kernel weight r^4 of a total over ~pi r^2 columns), so a weight of exactly 1.0
  // can only belong to the column's own source biome: the raw map view is the map the blender read.
  if (GetParam() == "full_resolution") {
    int64_t whole = 0;
    for (const v1::ChunkData& chunk : result.chunks) {
      for (int column = 0; column < chunk.source_biome_size(); ++column) {
        for (const v1::BiomeWeights& biome : chunk.biomes()) {
          if (chunk.single_biome() || biome.weights(column) == 1.0f) {
            ++whole;
            EXPECT_EQ(chunk.source_biome(column), biome.biome_id()) << column;
          }
        }
      }
    }
    EXPECT_GT(whole, 0);
  }

  // Points, integer or not, and the flag's absence.
  v1::SampleWeightsRequest points;
  points.set_world(GetParam());
  points.set_include_source_biome(true);
  const std::vector<std::pair<double, double>> where = {
      {0, 0}, {-47.5, 31.25}, {12345.678, -9876.5}, {-33554432, 33554432}, {95.999, -0.001}};
  for (auto [x, z] : where) {
    v1::Point* p = points.add_points();
    p->set_x(x);
    p->set_z(z);
  }
  v1::SampleWeightsResponse response;
  grpc::Status status = Sample(*stub_, points, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.samples_size(), static_cast<int>(where.size()));
  for (size_t i = 0; i < where.size(); ++i) {
    EXPECT_EQ(response.samples(i).source_biome(),
              world_->SourceBiomeAt(where[i].first, where[i].second))
        << i;
  }
  points.set_include_source_biome(false);
  ASSERT_TRUE(Sample(*stub_, points, &response).ok());
  for (const v1::PointWeights& sample : response.samples()) EXPECT_EQ(sample.source_biome(), 0u);
}

TEST_P(BlenderServiceTest, DescribeWorldReportsTheMethodAndTheEnginesFigures) {
  v1::WorldDescription description;
  grpc::Status status = Describe(*stub_, GetParam(), &description);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const BlenderMethod& method = MethodOf(world_->blender().kind());
  EXPECT_EQ(description.blender(), GetParam());
  EXPECT_EQ(v1::BlenderKind_Name(description.config().blender()),
            absl::StrCat("BLENDER_KIND_", absl::AsciiStrToUpper(GetParam())));

  // The engine's figures, in its order, with the same bits.
  const std::vector<BlenderFigure> figures = world_->blender().Describe();
  ASSERT_EQ(description.blender_figures_size(), static_cast<int>(figures.size()));
  for (size_t i = 0; i < figures.size(); ++i) {
    EXPECT_EQ(description.blender_figures(i).name(), figures[i].name);
    EXPECT_EQ(description.blender_figures(i).value(), figures[i].value) << figures[i].name;
    if (figures[i].name == "min_blend_radius") {
      EXPECT_EQ(description.min_blend_radius(), figures[i].value);
    }
  }
  // The JSON set no parameter: every declared one is reported first, at its default, both as a
  // figure and in the config's message of the method's name.
  const google::protobuf::FieldDescriptor* message_field =
      v1::WorldConfig::descriptor()->FindFieldByName(std::string(method.name));
  ASSERT_NE(message_field, nullptr);
  const google::protobuf::Message& params =
      description.config().GetReflection()->GetMessage(description.config(), message_field);
  ASSERT_GE(figures.size(), method.params.size());
  for (size_t i = 0; i < method.params.size(); ++i) {
    const BlenderParamDef& def = method.params[i];
    EXPECT_EQ(description.blender_figures(static_cast<int>(i)).name(), def.name);
    EXPECT_EQ(description.blender_figures(static_cast<int>(i)).value(), def.default_value);
    const google::protobuf::FieldDescriptor* field =
        params.GetDescriptor()->FindFieldByName(std::string(def.name));
    ASSERT_NE(field, nullptr) << def.name;
    EXPECT_TRUE(params.GetReflection()->HasField(params, field)) << def.name;
    EXPECT_EQ(params.GetReflection()->GetDouble(params, field), def.default_value) << def.name;
  }
  // Every method's world is listed.
  for (const std::string& name : MethodNames()) {
    EXPECT_NE(std::find(description.available_worlds().begin(),
                        description.available_worlds().end(), name),
              description.available_worlds().end())
        << name;
  }
}

// Splat textures as a client reads them: DescribeWorld's channel table maps every channel to a
// biome, each texel's channels sum to 255 over all textures, and each byte is the biome's weight in
// 255ths (within one unit: largest-remainder rounding). Five biomes need a second texture, whose
// channel 0 is dense index 4 (the seed's decoder reads texture t channel k as biome t * k, i.e.
// biome 0 here).
TEST_P(BlenderServiceTest, SplatTexturesDecodeToTheChunksWeights) {
  v1::WorldDescription description;
  grpc::Status status = Describe(*stub_, GetParam(), &description);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(description.limits().max_splat_bytes_per_chunk(), 4u << 20);
  std::vector<uint32_t> channel_ids(description.splat_channel_biome_ids().begin(),
                                    description.splat_channel_biome_ids().end());
  EXPECT_EQ(channel_ids, (std::vector<uint32_t>{3, 4, 9, 12, 20}));

  std::vector<v1::ChunkData> chunks = BorderChunks(4);
  // And a chunk inside one biome (found with the engine, asked of the service): 255 in its channel.
  int64_t single_x = 0, single_z = 0;
  bool found = false;
  for (int64_t ring = 0; ring < 40 && !found; ++ring) {
    for (int64_t cz = -ring; cz <= ring && !found; ++cz) {
      for (int64_t cx = -ring; cx <= ring && !found; ++cx) {
        if (std::max(std::abs(cx), std::abs(cz)) != ring) continue;
        found = world_->BlendChunk(cx, cz, 4, {})->single_biome;
        single_x = cx;
        single_z = cz;
      }
    }
  }
  ASSERT_TRUE(found) << "no single-biome chunk of 4 within 160 blocks";
  v1::GenerateChunkRequest inside = ListRequest({{single_x, single_z}}, 4);
  inside.set_world(GetParam());
  inside.set_include_splat(true);
  StreamResult single = GenerateAll(*stub_, inside);
  ASSERT_TRUE(single.status.ok()) << single.status.error_message();
  ASSERT_EQ(single.chunks.size(), 1u);
  ASSERT_TRUE(single.chunks[0].single_biome());
  chunks.push_back(single.chunks[0]);
  for (const v1::ChunkData& chunk : chunks) {
    const int n = static_cast<int>(chunk.chunk_size());
    ASSERT_EQ(chunk.splat_textures_size(), 2);  // ceil(5 / 4), not a fixed count.
    for (const std::string& texture : chunk.splat_textures()) {
      ASSERT_EQ(texture.size(), static_cast<size_t>(n * n * 4));
    }
    for (int column = 0; column < n * n; ++column) {
      std::map<uint32_t, double> weight;  // By biome id; absent = 0.
      double sum = 0.0;
      for (const v1::BiomeWeights& biome : chunk.biomes()) {
        const double w = chunk.single_biome() ? 1.0 : biome.weights(column);
        weight[biome.biome_id()] = w;
        sum += w;
      }
      int total = 0;
      for (int channel = 0; channel < 8; ++channel) {
        const uint8_t byte = static_cast<uint8_t>(
            chunk.splat_textures(channel / 4)[static_cast<size_t>(column * 4 + channel % 4)]);
        total += byte;
        if (channel >= static_cast<int>(channel_ids.size())) {
          EXPECT_EQ(byte, 0) << "unused channel " << channel;
          continue;
        }
        const double want = 255.0 * weight[channel_ids[static_cast<size_t>(channel)]] / sum;
        EXPECT_LT(std::abs(byte - want), 1.0)
            << "chunk (" << chunk.coord().x() << ", " << chunk.coord().z() << ") column " << column
            << " channel " << channel;
      }
      EXPECT_EQ(total, 255) << "column " << column;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryMethod, BlenderServiceTest, ::testing::ValuesIn(MethodNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// A world of 65 biomes needs 17 splat textures: 4.25 MiB per chunk of 256, over the 4 MiB cap. The
// server refuses before blending, names the field and the numbers; 128 fits.
TEST(SplatLimitServiceTest, OversizedSplatRequestsAreRefusedWithTheNumbers) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("worldgen_splat_limit_test_", getpid());
  std::filesystem::create_directories(dir);
  std::string biomes;
  for (int i = 0; i < 65; ++i) {
    absl::StrAppend(&biomes, i ? ", " : "", R"({"id": )", i, R"(, "name": "b)", i,
                    R"(", "temperature": )", -1.0 + i / 32.0, "}");
  }
  std::ofstream(dir / "many.json") << R"({"name": "many", "biomes": [)" << biomes << "]}";
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({absl::StrCat("--world_config=", (dir / "many.json").string())});
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = Connect((*server)->target());

  v1::GenerateChunkRequest request = ListRequest({{0, 0}}, 256);
  request.set_world("many");
  request.set_include_splat(true);
  StreamResult refused = GenerateAll(*stub, request);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(refused.chunks.empty());
  EXPECT_NE(
      refused.status.error_message().find(
          "include_splat: splat textures of 65 biomes at chunk size 256 would be 17 textures x "
          "256 x 256 texels x 4 bytes = 4456448 bytes per chunk, over the limit of 4194304"),
      std::string::npos)
      << refused.status.error_message();

  request.set_chunk_size(128);
  StreamResult fits = GenerateAll(*stub, request);
  ASSERT_TRUE(fits.status.ok()) << fits.status.error_message();
  ASSERT_EQ(fits.chunks.size(), 1u);
  EXPECT_EQ(fits.chunks[0].splat_textures_size(), 17);
}

}  // namespace
}  // namespace worldgen
