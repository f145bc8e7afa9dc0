// End-to-end tests of worldgen-server: real server processes on 127.0.0.1 (ServerProcess), real gRPC
// calls, results compared bit-for-bit with the engine run in this process.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/scattered_blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "reflection_probe.grpc.pb.h"
#include "server/wire_encoding.h"
#include "server/world_config.h"
#include "tests/server/service_calls.h"
#include "tests/support/server_process.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::worldgen::testing::HttpGet;
using ::worldgen::testing::RunServerToExit;
using ::worldgen::testing::ServerExit;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::Connect;
using ::worldgen::testing::Deadline;
using ::worldgen::testing::Describe;
using ::worldgen::testing::GenerateAll;
using ::worldgen::testing::kCallTimeout;
using ::worldgen::testing::ListRequest;
using ::worldgen::testing::RegionRequest;
using ::worldgen::testing::Sample;
using ::worldgen::testing::SameBits;
using ::worldgen::testing::StreamResult;

// A world served from a JSON config (protobuf JSON mapping, camelCase and original names mixed).
constexpr char kTinyWorldJson[] = R"json({
  "name": "tiny",
  "seed": "7",
  "biomes": [
    {"id": 1, "name": "low", "temperature": -0.6, "humidity": 0.1, "heightBase": 40},
    {"id": 2, "name": "mid", "temperature": 0.0, "humidity": -0.2},
    {"id": 5, "name": "high", "temperature": 0.7, "humidity": 0.4, "height_amplitude": 30,
     "blendRadius": 28}
  ],
  "climate": {"temperatureFrequency": 0.004, "humidityFrequency": 0.003},
  "samplingInterval": 8,
  "blendRadius": 20,
  "chunkSize": 16
})json";

// Chunks keyed by coordinate, as serialized bytes (bit-exact floats).
std::map<std::pair<int64_t, int64_t>, std::string> ByCoord(const std::vector<v1::ChunkData>& chunks) {
  std::map<std::pair<int64_t, int64_t>, std::string> out;
  for (const v1::ChunkData& chunk : chunks) {
    out[{chunk.coord().x(), chunk.coord().z()}] = chunk.SerializeAsString();
  }
  return out;
}

// --- /metrics parsing -------------------------------------------------------------------------------

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<MetricSample> ParseMetrics(const std::string& text) {
  std::vector<MetricSample> samples;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    MetricSample sample;
    size_t brace = line.find('{');
    size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    if (brace != absl::string_view::npos && brace < space) {
      sample.name = std::string(line.substr(0, brace));
      size_t close = line.find('}', brace);
      for (absl::string_view pair :
           absl::StrSplit(line.substr(brace + 1, close - brace - 1), ',', absl::SkipEmpty())) {
        size_t eq = pair.find('=');
        std::string value(pair.substr(eq + 1));
        if (value.size() >= 2) value = value.substr(1, value.size() - 2);
        sample.labels[std::string(pair.substr(0, eq))] = value;
      }
    } else {
      sample.name = std::string(line.substr(0, line.find(' ')));
    }
    if (!absl::SimpleAtod(line.substr(space + 1), &sample.value)) continue;
    samples.push_back(std::move(sample));
  }
  return samples;
}

// Sum of the samples called `name` whose labels include `labels`; -1 if there is none.
double MetricValue(const std::vector<MetricSample>& samples, const std::string& name,
                   const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  bool found = false;
  for (const MetricSample& sample : samples) {
    if (sample.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = sample.labels.find(key);
      if (it == sample.labels.end() || it->second != value) match = false;
    }
    if (!match) continue;
    sum += sample.value;
    found = true;
  }
  return found ? sum : -1;
}

std::vector<MetricSample> Scrape(const ServerProcess& server) {
  absl::StatusOr<std::string> text = HttpGet("127.0.0.1", server.metrics_port(), "/metrics");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? ParseMetrics(*text) : std::vector<MetricSample>{};
}

// Waits (bounded) until no call is in flight, so counters can no longer move.
void WaitUntilIdle(const ServerProcess& server) {
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (absl::Now() < give_up) {
    std::vector<MetricSample> samples = Scrape(server);
    if (MetricValue(samples, "worldgen_inflight_calls") == 0 &&
        MetricValue(samples, "worldgen_queue_depth") == 0) {
      return;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ADD_FAILURE() << "server did not become idle";
}

// --- One shared server (default flags plus a JSON world) for the tests that only make calls ---------

class WorldGenServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                            absl::StrCat("worldgen_server_test_", getpid()));
    std::filesystem::create_directories(*config_dir_);
    std::ofstream(*config_dir_ / "tiny.json") << kTinyWorldJson;
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
        {"--blend_threads=2", absl::StrCat("--world_config=", config_dir_->string())});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    std::filesystem::remove_all(*config_dir_);
    delete config_dir_;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    stub_ = Connect(server_->target());
  }

  static std::shared_ptr<const World> DefaultWorld() {
    static auto* world = new std::shared_ptr<const World>(*World::Create(DefaultWorldSpec()));
    return *world;
  }

  // A chunk of size 16 whose blend has more than one biome (a border), found by scanning a region.
  v1::ChunkData BorderChunk(bool with_extras) {
    v1::GenerateChunkRequest request = RegionRequest(-16, -16, 15, 15, 16);
    request.set_include_heights(with_extras);
    request.set_include_dominant_biome(with_extras);
    StreamResult result = GenerateAll(*stub_, request);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    for (const v1::ChunkData& chunk : result.chunks) {
      if (!chunk.single_biome()) return chunk;
    }
    ADD_FAILURE() << "no border chunk in a 512-block square of the default world";
    return {};
  }

  static ServerProcess* server_;
  static std::filesystem::path* config_dir_;
  std::unique_ptr<v1::WorldGen::Stub> stub_;
};

ServerProcess* WorldGenServerTest::server_ = nullptr;
std::filesystem::path* WorldGenServerTest::config_dir_ = nullptr;

TEST_F(WorldGenServerTest, GenerateChunkEqualsTheEngineBitForBit) {
  const std::vector<std::pair<int64_t, int64_t>> coords = {
      {0, 0}, {-1, -1}, {3, -2}, {20, -3}, {-7, 11}, {100, 100}, {-2000, 4321}, {65535, -65536}};
  for (uint32_t size : {4u, 16u, 64u}) {
    for (bool extras : {false, true}) {
      v1::GenerateChunkRequest request = ListRequest(coords, size);
      request.set_include_heights(extras);
      request.set_include_dominant_biome(extras);
      StreamResult result = GenerateAll(*stub_, request);
      ASSERT_TRUE(result.status.ok()) << result.status.error_message();
      ASSERT_EQ(result.chunks.size(), coords.size());
      for (const v1::ChunkData& got : result.chunks) {
        BlendOptions options;
        options.heights = extras;
        options.dominant_biome = extras;
        absl::StatusOr<ChunkBlend> blend = DefaultWorld()->BlendChunk(
            got.coord().x(), got.coord().z(), static_cast<int>(size), options);
        ASSERT_TRUE(blend.ok()) << blend.status();
        v1::ChunkData expected;
        EncodeChunk(*blend, &expected);
        EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString())
            << "chunk (" << got.coord().x() << ", " << got.coord().z() << ") size " << size;
        EXPECT_EQ(got.chunk_size(), size);
        if (extras) {
          EXPECT_EQ(got.heights_size(), static_cast<int>(size * size));
          EXPECT_EQ(got.dominant_biome_size(), static_cast<int>(size * size));
        } else {
          EXPECT_EQ(got.heights_size(), 0);
          EXPECT_EQ(got.dominant_biome_size(), 0);
        }
      }
    }
  }
}

TEST_F(WorldGenServerTest, SingleBiomeChunksHaveOneEntryAndNoArray) {
  StreamResult result = GenerateAll(*stub_, RegionRequest(-8, -8, 7, 7, 16));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  int single = 0, mixed = 0;
  for (const v1::ChunkData& chunk : result.chunks) {
    if (chunk.single_biome()) {
      ++single;
      ASSERT_EQ(chunk.biomes_size(), 1);
      EXPECT_EQ(chunk.biomes(0).weights_size(), 0);
    } else {
      ++mixed;
      ASSERT_GE(chunk.biomes_size(), 2);
      for (int b = 0; b < chunk.biomes_size(); ++b) {
        EXPECT_EQ(chunk.biomes(b).weights_size(), 256);
        if (b > 0) {
          EXPECT_LT(chunk.biomes(b - 1).biome_id(), chunk.biomes(b).biome_id());
        }
      }
      for (int column = 0; column < 256; ++column) {
        double sum = 0;
        for (const v1::BiomeWeights& biome : chunk.biomes()) sum += biome.weights(column);
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
  EXPECT_GT(single, 0);
  EXPECT_GT(mixed, 0);
}

TEST_F(WorldGenServerTest, SampleWeightsEqualsGenerateChunkAtIntegerColumns) {
  const v1::ChunkData chunk = BorderChunk(/*with_extras=*/true);
  ASSERT_FALSE(chunk.single_biome());
  const int n = static_cast<int>(chunk.chunk_size());
  v1::SampleWeightsRequest request;
  request.set_include_heights(true);
  for (int lz = 0; lz < n; ++lz) {
    for (int lx = 0; lx < n; ++lx) {
      v1::Point* point = request.add_points();
      point->set_x(static_cast<double>(chunk.coord().x() * n + lx));
      point->set_z(static_cast<double>(chunk.coord().z() * n + lz));
    }
  }
  v1::SampleWeightsResponse response;
  grpc::Status status = Sample(*stub_, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.samples_size(), n * n);
  for (int column = 0; column < n * n; ++column) {
    const v1::PointWeights& sample = response.samples(column);
    std::map<uint32_t, float> expected;  // Non-zero chunk weights at this column.
    for (const v1::BiomeWeights& biome : chunk.biomes()) {
      if (biome.weights(column) != 0.0f) expected[biome.biome_id()] = biome.weights(column);
    }
    ASSERT_EQ(sample.weights_size(), static_cast<int>(expected.size())) << "column " << column;
    for (const v1::BiomeWeight& weight : sample.weights()) {
      ASSERT_TRUE(expected.contains(weight.biome_id())) << "column " << column;
      EXPECT_TRUE(SameBits(weight.weight(), expected[weight.biome_id()])) << "column " << column;
    }
    EXPECT_TRUE(SameBits(sample.height(), chunk.heights(column))) << "column " << column;
    EXPECT_EQ(sample.dominant_biome(), chunk.dominant_biome(column)) << "column " << column;
  }
}

TEST_F(WorldGenServerTest, SampleWeightsEqualsTheEngineAtFractionalPoints) {
  v1::SampleWeightsRequest request;
  const std::vector<std::pair<double, double>> points = {
      {100.5, -7.25}, {320, 640}, {-33554432, 33554432}, {12345.678, -9876.54321}, {0, 0}};
  for (auto [x, z] : points) {
    v1::Point* p = request.add_points();
    p->set_x(x);
    p->set_z(z);
  }
  v1::SampleWeightsResponse response;
  grpc::Status status = Sample(*stub_, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.samples_size(), static_cast<int>(points.size()));
  for (size_t i = 0; i < points.size(); ++i) {
    BlendOptions options;
    options.dominant_biome = true;
    absl::StatusOr<PointBlend> blend =
        DefaultWorld()->BlendPoint(points[i].first, points[i].second, options);
    ASSERT_TRUE(blend.ok());
    v1::PointWeights expected;
    EncodePoint(*blend, options, &expected);
    EXPECT_EQ(response.samples(i).SerializeAsString(), expected.SerializeAsString()) << i;
    EXPECT_EQ(response.samples(i).height(), 0.0f);  // Not requested.
  }
}

TEST_F(WorldGenServerTest, RegionStreamsEveryChunkExactlyOnce) {
  StreamResult result = GenerateAll(*stub_, RegionRequest(-5, 3, 6, 7, 8));  // 12 x 5
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const v1::ChunkData& chunk : result.chunks) {
    EXPECT_TRUE(seen.insert({chunk.coord().x(), chunk.coord().z()}).second)
        << "duplicate chunk " << chunk.coord().ShortDebugString();
    EXPECT_GE(chunk.coord().x(), -5);
    EXPECT_LE(chunk.coord().x(), 6);
    EXPECT_GE(chunk.coord().z(), 3);
    EXPECT_LE(chunk.coord().z(), 7);
    EXPECT_EQ(chunk.chunk_size(), 8u);
  }
  EXPECT_EQ(seen.size(), 60u);
  EXPECT_EQ(result.chunks.size(), 60u);
}

TEST_F(WorldGenServerTest, ZeroChunkSizeUsesTheWorldsChunkSize) {
  StreamResult result = GenerateAll(*stub_, ListRequest({{1, 2}}, 0));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.chunks.size(), 1u);
  EXPECT_EQ(result.chunks[0].chunk_size(), static_cast<uint32_t>(DefaultWorldSpec().chunk_size));
}

TEST_F(WorldGenServerTest, EveryBadInputGetsTheRightCodeAndNamesTheField) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  struct ChunkCase {
    std::string what;
    v1::GenerateChunkRequest request;
    grpc::StatusCode code;
    std::string needle;
  };
  std::vector<std::pair<int64_t, int64_t>> too_many;
  for (int i = 0; i < 1025; ++i) too_many.push_back({i, 0});
  v1::GenerateChunkRequest unknown_world = ListRequest({{0, 0}}, 16);
  unknown_world.set_world("atlantis");
  v1::GenerateChunkRequest no_selection;
  std::vector<ChunkCase> chunk_cases = {
      {"size not a power of two", ListRequest({{0, 0}}, 12), grpc::StatusCode::INVALID_ARGUMENT,
       "chunk_size = 12"},
      {"size too small", ListRequest({{0, 0}}, 2), grpc::StatusCode::INVALID_ARGUMENT,
       "chunk_size = 2"},
      {"size too large", ListRequest({{0, 0}}, 512), grpc::StatusCode::INVALID_ARGUMENT,
       "chunk_size = 512"},
      {"no selection", no_selection, grpc::StatusCode::INVALID_ARGUMENT, "selection"},
      {"empty list", ListRequest({}, 16), grpc::StatusCode::INVALID_ARGUMENT, "chunks.coords"},
      {"too many listed", ListRequest(too_many, 16), grpc::StatusCode::INVALID_ARGUMENT,
       "max_chunks_per_request = 1024"},
      {"region too large", RegionRequest(0, 0, 32, 31, 16), grpc::StatusCode::INVALID_ARGUMENT,
       "max_chunks_per_request = 1024"},
      {"region of the whole world", RegionRequest(-(1 << 21), -(1 << 21), (1 << 21) - 1, 5, 16),
       grpc::StatusCode::INVALID_ARGUMENT, "max_chunks_per_request = 1024"},
      {"region of the whole int64 range", RegionRequest(kMin, kMin, kMax, kMax, 16),
       grpc::StatusCode::INVALID_ARGUMENT, "region.min_x"},
      {"region min > max", RegionRequest(3, 0, 2, 0, 16), grpc::StatusCode::INVALID_ARGUMENT,
       "region.min_x = 3"},
      {"chunk outside the world", ListRequest({{0, 0}, {1 << 21, 0}}, 16),
       grpc::StatusCode::INVALID_ARGUMENT, "chunks.coords[1].x"},
      {"chunk far outside the world", ListRequest({{0, kMin}}, 256),
       grpc::StatusCode::INVALID_ARGUMENT, "chunks.coords[0].z"},
      {"region outside the world", RegionRequest(0, 0, 0, 1 << 21, 16),
       grpc::StatusCode::INVALID_ARGUMENT, "region.max_z"},
      {"unknown world", unknown_world, grpc::StatusCode::NOT_FOUND, "atlantis"},
  };
  for (const ChunkCase& c : chunk_cases) {
    StreamResult result = GenerateAll(*stub_, c.request);
    EXPECT_EQ(result.status.error_code(), c.code) << c.what << ": " << result.status.error_message();
    EXPECT_THAT(result.status.error_message(), HasSubstr(c.needle)) << c.what;
    EXPECT_TRUE(result.chunks.empty()) << c.what;
  }

  struct PointCase {
    std::string what;
    std::vector<std::pair<double, double>> points;
    std::string world;
    grpc::StatusCode code;
    std::string needle;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, double>> too_many_points(4097, {1.0, 2.0});
  std::vector<PointCase> point_cases = {
      {"nan", {{0, 0}, {nan, 0}}, "", grpc::StatusCode::INVALID_ARGUMENT, "points[1].x"},
      {"infinite", {{0, -inf}}, "", grpc::StatusCode::INVALID_ARGUMENT, "points[0].z"},
      {"outside the world", {{4e7, 0}}, "", grpc::StatusCode::INVALID_ARGUMENT, "points[0].x"},
      {"too many", too_many_points, "", grpc::StatusCode::INVALID_ARGUMENT,
       "max_points_per_request = 4096"},
      {"unknown world", {{0, 0}}, "atlantis", grpc::StatusCode::NOT_FOUND, "atlantis"},
  };
  for (const PointCase& c : point_cases) {
    v1::SampleWeightsRequest request;
    request.set_world(c.world);
    for (auto [x, z] : c.points) {
      v1::Point* p = request.add_points();
      p->set_x(x);
      p->set_z(z);
    }
    v1::SampleWeightsResponse response;
    grpc::Status status = Sample(*stub_, request, &response);
    EXPECT_EQ(status.error_code(), c.code) << c.what << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(c.needle)) << c.what;
  }

  v1::WorldDescription description;
  grpc::Status status = Describe(*stub_, "atlantis", &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("atlantis"));
  EXPECT_THAT(status.error_message(), HasSubstr("default"));  // Lists what is available.
}

TEST_F(WorldGenServerTest, DescribeWorldReportsConfigBlenderAndLimits) {
  v1::WorldDescription description;
  grpc::Status status = Describe(*stub_, "", &description);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const WorldSpec spec = DefaultWorldSpec();
  EXPECT_EQ(description.config().name(), "default");
  EXPECT_EQ(description.config().biomes_size(), static_cast<int>(spec.biomes.size()));
  EXPECT_EQ(description.config().scattered().blend_radius(), spec.blender.params.at("blend_radius"));
  EXPECT_EQ(description.config().chunk_size(), static_cast<uint32_t>(spec.chunk_size));
  EXPECT_EQ(description.blender(), "scattered");
  EXPECT_EQ(description.min_blend_radius(), ScatteredBlender::MinBlendRadius(8.0, 0.35));
  // The engine's own figures of the built blender, parameters first.
  ASSERT_GE(description.blender_figures_size(), 4);
  EXPECT_EQ(description.blender_figures(0).name(), "sampling_interval");
  EXPECT_EQ(description.blender_figures(0).value(), 8.0);
  EXPECT_EQ(description.blender_figures(3).name(), "min_blend_radius");
  EXPECT_EQ(description.limits().min_chunk_size(), 4u);
  EXPECT_EQ(description.limits().max_chunk_size(), 256u);
  EXPECT_EQ(description.limits().max_chunks_per_request(), 1024u);
  EXPECT_EQ(description.limits().max_points_per_request(), 4096u);
  EXPECT_EQ(description.limits().world_coordinate_bound(), kMaxWorldCoordinate);
  EXPECT_THAT(description.available_worlds(), Contains("default"));
  EXPECT_THAT(description.available_worlds(), Contains("tiny"));
  // The config converts back to the very spec the server runs.
  absl::StatusOr<WorldSpec> back = WorldSpecFromConfig(description.config());
  ASSERT_TRUE(back.ok()) << back.status();
  v1::WorldDescription again;
  ASSERT_TRUE(Describe(*stub_, "default", &again).ok());
  EXPECT_EQ(again.SerializeAsString(), description.SerializeAsString());
}

TEST_F(WorldGenServerTest, JsonWorldConfigIsLoadedAndServed) {
  absl::StatusOr<WorldSpec> spec = WorldSpecFromJson(kTinyWorldJson);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(*spec);
  ASSERT_TRUE(world.ok()) << world.status();

  v1::WorldDescription description;
  ASSERT_TRUE(Describe(*stub_, "tiny", &description).ok());
  EXPECT_EQ(description.config().name(), "tiny");
  EXPECT_EQ(description.config().seed(), 7u);
  EXPECT_EQ(description.config().biomes_size(), 3);
  EXPECT_EQ(description.config().scattered().blend_radius(), 20.0);

  v1::GenerateChunkRequest request = RegionRequest(-3, -3, 2, 2, 16);
  request.set_world("tiny");
  request.set_include_heights(true);
  StreamResult result = GenerateAll(*stub_, request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.chunks.size(), 36u);
  for (const v1::ChunkData& got : result.chunks) {
    absl::StatusOr<ChunkBlend> blend =
        (*world)->BlendChunk(got.coord().x(), got.coord().z(), 16, {.heights = true});
    ASSERT_TRUE(blend.ok());
    v1::ChunkData expected;
    EncodeChunk(*blend, &expected);
    EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
    for (const v1::BiomeWeights& biome : got.biomes()) {
      EXPECT_THAT((std::set<uint32_t>{1, 2, 5}), Contains(biome.biome_id()));
    }
  }
}

TEST_F(WorldGenServerTest, HealthIsServingForTheServerAndTheService) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  for (const std::string service : {"", "worldgen.v1.WorldGen"}) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(kCallTimeout));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = health->Check(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

TEST_F(WorldGenServerTest, ReflectionListsAndDescribesTheService) {
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& service : response.list_services_response().service()) {
    services.push_back(service.name());
  }
  EXPECT_THAT(services, Contains("worldgen.v1.WorldGen"));
  EXPECT_THAT(services, Contains("grpc.health.v1.Health"));

  grpc::reflection::v1alpha::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("worldgen.v1.WorldGen");
  ASSERT_TRUE(stream->Write(symbol));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0);
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// --- Tests that need a server of their own ----------------------------------------------------------

std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(std::move(flags));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(WorldGenServerProcessTest, CacheOnAndOffAndSeparateProcessesGiveIdenticalBytes) {
  std::unique_ptr<ServerProcess> cached = StartServer({"--blend_threads=2"});
  std::unique_ptr<ServerProcess> uncached =
      StartServer({"--blend_threads=1", "--cache_bytes=0", "--stream_buffer_chunks=1"});
  ASSERT_TRUE(cached && uncached);
  v1::GenerateChunkRequest request = RegionRequest(-10, -6, 9, 5, 16);
  request.set_include_heights(true);
  request.set_include_dominant_biome(true);
  auto cached_stub = Connect(cached->target());
  auto uncached_stub = Connect(uncached->target());
  StreamResult cold = GenerateAll(*cached_stub, request);
  StreamResult warm = GenerateAll(*cached_stub, request);  // Answered from a warm cache.
  StreamResult off = GenerateAll(*uncached_stub, request);
  ASSERT_TRUE(cold.status.ok() && warm.status.ok() && off.status.ok());
  ASSERT_EQ(cold.chunks.size(), 240u);
  EXPECT_TRUE(ByCoord(cold.chunks) == ByCoord(warm.chunks));
  EXPECT_TRUE(ByCoord(cold.chunks) == ByCoord(off.chunks));

  std::vector<MetricSample> metrics = Scrape(*cached);
  EXPECT_GT(MetricValue(metrics, "worldgen_cache_hits_total"), 0);
  EXPECT_GT(MetricValue(metrics, "worldgen_cache_bytes"), 0);
  std::vector<MetricSample> off_metrics = Scrape(*uncached);
  EXPECT_EQ(MetricValue(off_metrics, "worldgen_cache_bytes"), 0);
}

TEST(WorldGenServerProcessTest, CancellationStopsQueuedWork) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--stream_buffer_chunks=2"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  // 1024 chunks of 256 x 256 columns: many seconds of blending on one thread.
  v1::GenerateChunkRequest request = RegionRequest(0, 0, 31, 31, 256);
  request.set_include_heights(true);
  {
    grpc::ClientContext context;
    context.set_deadline(Deadline(kCallTimeout));
    auto reader = stub->GenerateChunk(&context, request);
    v1::ChunkData chunk;
    ASSERT_TRUE(reader->Read(&chunk));
    context.TryCancel();
    while (reader->Read(&chunk)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  WaitUntilIdle(*server);
  const double after_cancel = MetricValue(Scrape(*server), "worldgen_chunks_generated_total");
  EXPECT_GE(after_cancel, 1);
  EXPECT_LT(after_cancel, 64) << "a cancelled stream kept blending";

  // A deadline that passes while the client reads nothing stops the stream the same way. (Four
  // chunks: few enough to be admitted within the deadline; 1024 would be refused at once.)
  {
    grpc::ClientContext context;
    context.set_deadline(Deadline(absl::Milliseconds(300)));
    v1::GenerateChunkRequest small = RegionRequest(0, 0, 1, 1, 256);
    small.set_include_heights(true);
    auto reader = stub->GenerateChunk(&context, small);
    absl::SleepFor(absl::Milliseconds(600));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  WaitUntilIdle(*server);
  std::vector<MetricSample> metrics = Scrape(*server);
  EXPECT_LT(MetricValue(metrics, "worldgen_chunks_generated_total") - after_cancel, 64);
  EXPECT_EQ(MetricValue(metrics, "worldgen_rpc_duration_seconds_count",
                        {{"method", "GenerateChunk"}, {"code", "CANCELLED"}}),
            1);
  EXPECT_EQ(MetricValue(metrics, "worldgen_rpc_duration_seconds_count",
                        {{"method", "GenerateChunk"}, {"code", "DEADLINE_EXCEEDED"}}),
            1);
  // Nothing moves once idle.
  EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_chunks_generated_total"),
            MetricValue(metrics, "worldgen_chunks_generated_total"));
}

TEST(WorldGenServerProcessTest, SlowReaderHoldsOnlyAFewChunks) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=2", "--stream_buffer_chunks=2"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  auto reader = stub->GenerateChunk(&context, RegionRequest(0, 0, 31, 31, 256));
  v1::ChunkData chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  // Stop reading. The server may fill its stream buffer and the transport's flow-control window, then
  // must stop blending; wait until the count stops moving (bounded).
  double last = -1;
  int unchanged = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (unchanged < 5 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(100));
    double now = MetricValue(Scrape(*server), "worldgen_chunks_generated_total");
    unchanged = now == last ? unchanged + 1 : 0;
    last = now;
  }
  EXPECT_LT(last, 64) << "the server kept blending for a client that does not read";
  RecordProperty("chunks_blended_for_a_stalled_reader", static_cast<int>(last));
  context.TryCancel();
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST(WorldGenServerProcessTest, FullQueueGivesResourceExhaustedWhileOtherCallsSucceed) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--max_queue=1", "--stream_buffer_chunks=4"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  // A long stream keeps the single blend thread busy and the one queue slot taken.
  grpc::ClientContext busy_context;
  busy_context.set_deadline(Deadline(kCallTimeout));
  absl::Notification busy_streaming;
  std::thread busy([&] {
    auto reader = stub->GenerateChunk(&busy_context, RegionRequest(0, 0, 31, 31, 256));
    v1::ChunkData chunk;
    bool first = true;
    while (reader->Read(&chunk)) {
      if (first) busy_streaming.Notify();
      first = false;
    }
    grpc::Status status = reader->Finish();
    if (first) {
      ADD_FAILURE() << "the long stream got no chunk: " << status.error_message();
      busy_streaming.Notify();
    }
  });
  busy_streaming.WaitForNotification();  // Probe only once the stream owns the blend thread.

  v1::SampleWeightsRequest probe;
  v1::Point* point = probe.add_points();
  point->set_x(1);
  point->set_z(2);
  int exhausted = 0;
  for (int attempt = 0; attempt < 2000 && exhausted == 0; ++attempt) {
    v1::SampleWeightsResponse response;
    grpc::Status status = Sample(*stub, probe, &response);
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
      EXPECT_THAT(status.error_message(), HasSubstr("max_queue = 1"));
      // Calls that need no blend thread still succeed meanwhile.
      v1::WorldDescription description;
      EXPECT_TRUE(Describe(*stub, "", &description).ok());
    } else {
      EXPECT_TRUE(status.ok()) << status.error_message();
    }
  }
  busy_context.TryCancel();
  busy.join();
  EXPECT_EQ(exhausted, 1) << "the queue never filled up";

  WaitUntilIdle(*server);
  v1::SampleWeightsResponse response;
  grpc::Status status = Sample(*stub, probe, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.samples_size(), 1);
  std::vector<MetricSample> metrics = Scrape(*server);
  EXPECT_EQ(MetricValue(metrics, "worldgen_rejected_calls_total", {{"reason", "queue_full"}}),
            exhausted);
}

TEST(WorldGenServerProcessTest, SigtermTurnsHealthNotServingDrainsStreamsAndExitsZero) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=2"});
  ASSERT_TRUE(server);
  auto channel = grpc::CreateChannel(server->target(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  auto stub = v1::WorldGen::NewStub(channel);

  grpc::ClientContext watch_context;
  watch_context.set_deadline(Deadline(kCallTimeout));
  grpc::health::v1::HealthCheckRequest watch_request;
  watch_request.set_service("worldgen.v1.WorldGen");
  auto watch = health->Watch(&watch_context, watch_request);
  grpc::health::v1::HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  // A stream in flight when the signal arrives still delivers every chunk.
  grpc::ClientContext stream_context;
  stream_context.set_deadline(Deadline(kCallTimeout));
  auto reader = stub->GenerateChunk(&stream_context, RegionRequest(0, 0, 7, 7, 64));
  v1::ChunkData chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  int chunks = 1;

  ASSERT_EQ(kill(server->pid(), SIGTERM), 0);
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  watch_context.TryCancel();
  watch->Finish();

  while (reader->Read(&chunk)) ++chunks;
  grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(chunks, 64);

  absl::StatusOr<int> code = server->Wait();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
}

TEST(WorldGenServerProcessTest, MetricsCountTheCallsMade) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=2"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  for (int i = 0; i < 3; ++i) {
    v1::SampleWeightsRequest request;
    for (int p = 0; p < 5; ++p) {
      v1::Point* point = request.add_points();
      point->set_x(p * 17.5);
      point->set_z(i * 100.25);
    }
    v1::SampleWeightsResponse response;
    ASSERT_TRUE(Sample(*stub, request, &response).ok());
  }
  ASSERT_TRUE(GenerateAll(*stub, ListRequest({{0, 0}, {1, 0}, {5, 5}, {-9, 2}}, 16)).status.ok());
  ASSERT_TRUE(GenerateAll(*stub, RegionRequest(10, 10, 11, 12, 32)).status.ok());
  EXPECT_EQ(GenerateAll(*stub, ListRequest({{0, 0}}, 7)).status.error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::WorldDescription description;
  EXPECT_EQ(Describe(*stub, "nowhere", &description).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Describe(*stub, "", &description).ok());

  WaitUntilIdle(*server);
  absl::StatusOr<std::string> text = HttpGet("127.0.0.1", server->metrics_port(), "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  for (const char* name :
       {"worldgen_rpc_duration_seconds", "worldgen_chunk_generation_seconds",
        "worldgen_chunks_generated_total", "worldgen_points_sampled_total", "worldgen_queue_depth",
        "worldgen_inflight_calls", "worldgen_cache_hits_total", "worldgen_cache_misses_total",
        "worldgen_cache_evictions_total", "worldgen_cache_bytes", "worldgen_rejected_calls_total"}) {
    EXPECT_THAT(*text, HasSubstr(absl::StrCat("# TYPE ", name, " "))) << name;
  }
  std::vector<MetricSample> m = ParseMetrics(*text);
  auto rpcs = [&](const char* method, const char* code) {
    return MetricValue(m, "worldgen_rpc_duration_seconds_count", {{"method", method}, {"code", code}});
  };
  EXPECT_EQ(rpcs("SampleWeights", "OK"), 3);
  EXPECT_EQ(rpcs("GenerateChunk", "OK"), 2);
  EXPECT_EQ(rpcs("GenerateChunk", "INVALID_ARGUMENT"), 1);
  EXPECT_EQ(rpcs("DescribeWorld", "NOT_FOUND"), 1);
  EXPECT_EQ(rpcs("DescribeWorld", "OK"), 1);
  EXPECT_EQ(MetricValue(m, "worldgen_chunks_generated_total"), 10);
  EXPECT_EQ(MetricValue(m, "worldgen_chunk_generation_seconds_count"), 10);
  EXPECT_EQ(MetricValue(m, "worldgen_points_sampled_total"), 15);
  EXPECT_EQ(MetricValue(m, "worldgen_rejected_calls_total", {{"reason", "invalid_argument"}}), 1);
  EXPECT_EQ(MetricValue(m, "worldgen_rejected_calls_total", {{"reason", "not_found"}}), 1);
  EXPECT_EQ(MetricValue(m, "worldgen_rejected_calls_total", {{"reason", "queue_full"}}), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_inflight_calls"), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_queue_depth"), 0);
  EXPECT_GT(MetricValue(m, "worldgen_cache_misses_total"), 0);
  EXPECT_GE(MetricValue(m, "worldgen_cache_hits_total"), 0);
  EXPECT_GE(MetricValue(m, "worldgen_cache_evictions_total"), 0);
  EXPECT_GT(MetricValue(m, "worldgen_cache_bytes"), 0);

  // SIGINT shuts down as cleanly as SIGTERM.
  ASSERT_EQ(kill(server->pid(), SIGINT), 0);
  absl::StatusOr<int> code = server->Wait();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(server->output(), HasSubstr("Interrupt: draining"));
}

// --- Startup failures -------------------------------------------------------------------------------

class WorldGenServerStartupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("worldgen_startup_test_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  static ServerExit Run(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--listen_address=127.0.0.1", "--port=0", "--metrics_port=0"});
    absl::StatusOr<ServerExit> exit = RunServerToExit(flags);
    EXPECT_TRUE(exit.ok()) << exit.status();
    return exit.ok() ? *exit : ServerExit{-1, ""};
  }
  std::filesystem::path dir_;
};

TEST_F(WorldGenServerStartupTest, BadWorldConfigsExitWithCodeTwoAndAMessage) {
  struct Case {
    std::string file;
    std::string json;
    std::string needle;
  } cases[] = {
      {"malformed.json", R"({"name": "w", "biomes": [)", "WorldConfig"},
      {"invalid.json", R"({"name": "w", "biomes": [{"id": 1, "name": "a"}], "blendRadius": 1})",
       "blend_radius"},
      {"clash.json", R"({"name": "default", "biomes": [{"id": 1, "name": "a"}]})", "twice"},
  };
  for (const Case& c : cases) {
    const std::string path = Write(c.file, c.json);
    ServerExit exit = Run({"--world_config=" + path});
    EXPECT_EQ(exit.exit_code, 2) << c.file << ": " << exit.output;
    EXPECT_THAT(exit.output, HasSubstr(c.needle)) << c.file;
    EXPECT_THAT(exit.output, HasSubstr("--world_config")) << c.file;
  }
  ServerExit missing = Run({"--world_config=" + (dir_ / "missing.json").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("missing.json"));
  // Special files and loops stop start-up too, at once (RunServerToExit is bounded in time).
  ASSERT_EQ(mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
  std::filesystem::create_directory_symlink(dir_ / "loop", dir_ / "loop");
  for (const std::string& path : {(dir_ / "fifo.json").string(), std::string("/dev/zero"),
                                  (dir_ / "loop").string()}) {
    ServerExit exit = Run({"--world_config=" + path});
    EXPECT_EQ(exit.exit_code, 2) << path << ": " << exit.output;
    EXPECT_THAT(exit.output, HasSubstr("--world_config: " + path)) << path;
  }
}

TEST_F(WorldGenServerStartupTest, RepeatedAndCommaSeparatedWorldConfigsAllLoad) {
  const std::string a = Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string b = Write("b.json", R"({"name": "bravo", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string c = Write("c.json", R"({"name": "charlie", "biomes": [{"id": 1, "name": "x"}]})");
  auto server = ServerProcess::Start({"--world_config=" + a + "," + b, "--world_config=" + c});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->output(), HasSubstr("worlds=[alpha,bravo,charlie,default]"));
}

TEST_F(WorldGenServerStartupTest, MetricsPortInUseExitsWithCodeOne) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ServerExit exit = Run({absl::StrCat("--metrics_port=", ntohs(addr.sin_port))});
  close(fd);
  EXPECT_EQ(exit.exit_code, 1) << exit.output;
  EXPECT_THAT(exit.output, HasSubstr("metrics"));
}

TEST_F(WorldGenServerStartupTest, GrpcPortInUseExitsWithCodeOne) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  ServerExit exit = Run({absl::StrCat("--port=", (*first)->grpc_port())});
  EXPECT_EQ(exit.exit_code, 1) << exit.output;
  EXPECT_THAT(exit.output, HasSubstr("cannot serve gRPC"));
}

TEST_F(WorldGenServerStartupTest, HelpListsTheFlags) {
  absl::StatusOr<ServerExit> exit = RunServerToExit({"--help"});
  ASSERT_TRUE(exit.ok()) << exit.status();
  for (const char* flag :
       {"--port", "--listen_address", "--metrics_port", "--blend_threads", "--cache_bytes",
        "--world_config", "--max_chunks_per_request", "--max_points_per_request", "--max_queue",
        "--stream_buffer_chunks", "--shutdown_grace_seconds"}) {
    EXPECT_THAT(exit->output, HasSubstr(flag)) << flag;
  }
}

}  // namespace
}  // namespace worldgen
