// End-to-end tests of the calls of one shared worldgen-server (127.0.0.1): results compared
// bit-for-bit with the engine run in this process, every bad input's code and message,
// DescribeWorld, JSON worlds, health and reflection.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
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
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/scattered_blender.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "proto/world_config.h"
#include "reflection_probe.grpc.pb.h"
#include "server/service/wire_encoding.h"
#include "tests/support/server_process.h"
#include "tests/support/worldgen_calls.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using namespace ::worldgen::testing;  // NOLINT: the shared test helpers (tests/support).

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

// --- One shared server (default flags plus a JSON world) for the tests that only make calls
// ---------

class WorldGenServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                            absl::StrCat("worldgen_server_test_", getpid()));
    std::filesystem::create_directories(*config_dir_);
    std::ofstream(*config_dir_ / "tiny.json") << kTinyWorldJson;
    std::filesystem::copy_file(
        std::filesystem::path(WORLDGEN_SOURCE_DIR) / "docker/worlds/caves.json",
        *config_dir_ / "caves.json");
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

std::shared_ptr<const World> CaveWorld() {
  static auto* world = new std::shared_ptr<const World>([] {
    absl::StatusOr<std::vector<WorldSpec>> specs =
        LoadWorldSpecs({std::string(WORLDGEN_SOURCE_DIR) + "/docker/worlds/caves.json"});
    return *World::Create(specs->front());
  }());
  return *world;
}

v1::GenerateChunkRequest VolumeRequest(std::vector<std::pair<int64_t, int64_t>> coords,
                                       uint32_t size, int64_t min_y, int64_t max_y, uint32_t cell) {
  v1::GenerateChunkRequest request = ListRequest(coords, size);
  request.set_world("caves");
  request.mutable_vertical()->set_min_y(min_y);
  request.mutable_vertical()->set_max_y(max_y);
  request.mutable_vertical()->set_cell_size(cell);
  return request;
}

// 3D over the wire: sections equal the engine's BlendVolume byte for byte (cell size 0 is 4), and
// SampleWeights at (x, y, z) equals the cell at that corner.
TEST_F(WorldGenServerTest, VerticalChunksAndPointsWithYEqualTheEngine) {
  const std::vector<std::pair<int64_t, int64_t>> coords = {{-1, -1}, {5, -9}, {-6, 3}};
  for (const auto& [size, cell] : {std::pair{16u, 0u}, std::pair{16u, 1u}, std::pair{32u, 2u}}) {
    v1::GenerateChunkRequest request = VolumeRequest(coords, size, -64, 32, cell);
    request.set_include_dominant_biome(true);
    request.set_include_source_biome(cell == 1);
    StreamResult result = GenerateAll(*stub_, request);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.chunks.size(), coords.size());
    for (const v1::ChunkData& got : result.chunks) {
      const int c = cell == 0 ? 4 : static_cast<int>(cell);
      absl::StatusOr<VolumeBlend> blend =
          CaveWorld()->BlendVolume(got.coord().x(), got.coord().z(), static_cast<int>(size), -64,
                                   32, c, {.dominant_biome = true, .source_biome = cell == 1});
      ASSERT_TRUE(blend.ok()) << blend.status();
      v1::ChunkData expected;
      EncodeVolume(*blend, &expected);
      EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
      EXPECT_EQ(got.cell_size(), static_cast<uint32_t>(c));
      EXPECT_EQ(got.sections_size(), 6);
      EXPECT_EQ(got.biomes_size(), 0);
    }
  }
  // Points with y: the engine's 3D point; one at a cell corner equals the cell.
  const v1::ChunkData chunk =
      GenerateAll(*stub_, VolumeRequest({{5, -9}}, 16, -64, -48, 4)).chunks.at(0);
  v1::SampleWeightsRequest request;
  request.set_world("caves");
  request.set_include_source_biome(true);
  const std::vector<std::array<double, 3>> points = {
      {80, -60, -144}, {92, -52, -132}, {80.5, -33.25, -140.75}, {10, 200, 10}};
  for (const auto& [x, y, z] : points) {
    v1::Point* p = request.add_points();
    p->set_x(x);
    p->set_y(y);
    p->set_z(z);
  }
  v1::SampleWeightsResponse response;
  grpc::Status status = Sample(*stub_, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.samples_size(), static_cast<int>(points.size()));
  for (size_t i = 0; i < points.size(); ++i) {
    BlendOptions options{.dominant_biome = true, .source_biome = true};
    absl::StatusOr<PointBlend> blend =
        CaveWorld()->BlendPoint(points[i][0], points[i][1], points[i][2], options);
    ASSERT_TRUE(blend.ok());
    v1::PointWeights expected;
    EncodePoint(*blend, options, &expected);
    EXPECT_EQ(response.samples(i).SerializeAsString(), expected.SerializeAsString()) << i;
  }
  // (80, -60, -144) is cell (0, 1, 0) and (92, -52, -132) cell (3, 3, 3) of chunk (5, -9)'s
  // section.
  const v1::ChunkSection& section = chunk.sections(0);
  for (const auto& [i, at] : {std::pair{0, 16}, std::pair{1, 63}}) {
    std::map<uint32_t, float> cell;
    for (const v1::BiomeWeights& b : section.biomes()) {
      const float w = section.single_biome() ? 1.0f : b.weights(at);
      if (w != 0.0f) cell[b.biome_id()] = w;
    }
    ASSERT_EQ(response.samples(i).weights_size(), static_cast<int>(cell.size()));
    for (const v1::BiomeWeight& w : response.samples(i).weights()) {
      EXPECT_TRUE(SameBits(w.weight(), cell[w.biome_id()])) << i;
    }
  }
}

// Admission's two point estimates learn each from its own kind: a call of points with a y moves
// only worldgen_estimated_seconds_per_volume_point, one of 2D points only ..._per_point, and a
// call mixing both moves both. (A gauge printed twice from the same double reads back equal.)
TEST_F(WorldGenServerTest, PointsWithAndWithoutYTeachTheirOwnCostEstimates) {
  const auto estimates = [] {
    const std::vector<MetricSample> metrics = Scrape(*server_);
    return std::pair{MetricValue(metrics, "worldgen_estimated_seconds_per_point"),
                     MetricValue(metrics, "worldgen_estimated_seconds_per_volume_point")};
  };
  const auto call = [&](bool planar, bool volume) {
    v1::SampleWeightsRequest request;
    request.set_world("caves");
    for (int i = 0; i < 32; ++i) {
      const double x = 64.0 * i - 1000.0, z = 48.0 * i + 300.0;
      if (planar) {
        v1::Point* p = request.add_points();
        p->set_x(x);
        p->set_z(z);
      }
      if (volume) {
        v1::Point* p = request.add_points();
        p->set_x(x);
        p->set_y(-40.0 + i % 7);
        p->set_z(z);
      }
    }
    v1::SampleWeightsResponse response;
    grpc::Status status = Sample(*stub_, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.samples_size(), request.points_size());
  };
  const auto [point0, volume0] = estimates();
  ASSERT_GT(point0, 0.0);
  ASSERT_GT(volume0, 0.0);
  call(false, true);
  const auto [point1, volume1] = estimates();
  EXPECT_EQ(point1, point0);
  EXPECT_NE(volume1, volume0);
  call(true, false);
  const auto [point2, volume2] = estimates();
  EXPECT_NE(point2, point1);
  EXPECT_EQ(volume2, volume1);
  call(true, true);
  const auto [point3, volume3] = estimates();
  EXPECT_NE(point3, point2);
  EXPECT_NE(volume3, volume2);
}

// ListSamplingPoints answers the engine's sampling points of the box (biome ids from the world's
// table), and names what is wrong with a bad box.
TEST_F(WorldGenServerTest, ListSamplingPointsEqualsTheEngineAndRefusesBadBoxes) {
  const auto list = [&](const std::string& world, double min_x, double min_z, double max_x,
                        double max_z, v1::ListSamplingPointsResponse* response) {
    v1::ListSamplingPointsRequest request;
    request.set_world(world);
    request.set_min_x(min_x);
    request.set_min_z(min_z);
    request.set_max_x(max_x);
    request.set_max_z(max_z);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return stub_->ListSamplingPoints(&context, request, response);
  };
  v1::ListSamplingPointsResponse response;
  grpc::Status status = list("", -100.5, 40, 156, 300, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<SamplingPoint> expected;
  DefaultWorld()->blender().SamplingPoints({-100.5, 40, 156, 300}, nullptr, &expected);
  ASSERT_GT(expected.size(), 500u);
  ASSERT_EQ(response.points_size(), static_cast<int>(expected.size()));
  EXPECT_LE(static_cast<int64_t>(response.ByteSizeLong()),
            MaxEncodedSamplingPointsBytes(static_cast<int64_t>(expected.size())));
  const WorldSpec& spec = DefaultWorld()->spec();
  for (int n = 0; n < response.points_size(); ++n) {
    const SamplingPoint& want = expected[static_cast<size_t>(n)];
    EXPECT_EQ(response.points(n).x(), want.x);
    EXPECT_EQ(response.points(n).z(), want.z);
    EXPECT_EQ(response.points(n).biome_id(), spec.biomes[static_cast<size_t>(want.biome)].id);
  }

  struct BoxCase {
    std::string what, world;
    double min_x, min_z, max_x, max_z;
    grpc::StatusCode code;
    std::string needle;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<BoxCase> cases = {
      {"nan", "", nan, 0, 10, 10, grpc::StatusCode::INVALID_ARGUMENT, "min_x = nan"},
      {"past the bound", "", 0, 0, 10, 4e7, grpc::StatusCode::INVALID_ARGUMENT, "max_z"},
      {"empty", "", 10, 0, 10, 10, grpc::StatusCode::INVALID_ARGUMENT, "is empty"},
      // 4096 x 4096 blocks of an interval-8 lattice: ~300k points.
      {"too many points", "", 0, 0, 4096, 4096, grpc::StatusCode::INVALID_ARGUMENT,
       "max_sampling_points_per_request = 65536"},
      {"unknown world", "atlantis", 0, 0, 10, 10, grpc::StatusCode::NOT_FOUND, "atlantis"},
  };
  for (const BoxCase& c : cases) {
    status = list(c.world, c.min_x, c.min_z, c.max_x, c.max_z, &response);
    EXPECT_EQ(status.error_code(), c.code) << c.what << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(c.needle)) << c.what;
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
      {"vertical range off the sections", VolumeRequest({{0, 0}}, 16, -60, 0, 4),
       grpc::StatusCode::INVALID_ARGUMENT,
       "vertical.min_y = -60 is not a multiple of the section height 16"},
      {"vertical range empty", VolumeRequest({{0, 0}}, 16, 0, 0, 4),
       grpc::StatusCode::INVALID_ARGUMENT, "vertical.min_y = 0 is not below max_y = 0"},
      {"vertical range past the y bound", VolumeRequest({{0, 0}}, 16, 0, 1 << 20, 16),
       grpc::StatusCode::INVALID_ARGUMENT, "vertical.max_y = 1048576 is outside [-65536, 65536]"},
      {"cell size not a power of two", VolumeRequest({{0, 0}}, 16, 0, 16, 3),
       grpc::StatusCode::INVALID_ARGUMENT, "vertical.cell_size = 3"},
      {"cell size above the section", VolumeRequest({{0, 0}}, 16, 0, 16, 1u << 31),
       grpc::StatusCode::INVALID_ARGUMENT, "vertical.cell_size = 2147483648"},
      {"too many cells in a chunk", VolumeRequest({{0, 0}}, 64, 0, 1024, 1),
       grpc::StatusCode::INVALID_ARGUMENT, "the limit is 262144 per chunk"},
      {"too many sections",
       [] {
         v1::GenerateChunkRequest r = VolumeRequest({}, 16, -2048, 2048, 16);
         *r.mutable_region() = RegionRequest(0, 0, 24, 0, 16).region();
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT,
       "25 chunks x 256 sections = 6400 sections; the limit is "
       "max_sections_per_request = 6144"},
      {"heights with a vertical range",
       [] {
         v1::GenerateChunkRequest r = VolumeRequest({{0, 0}}, 16, 0, 16, 4);
         r.set_include_heights(true);
         return r;
       }(),
       grpc::StatusCode::INVALID_ARGUMENT, "include_heights is per column"},
  };
  for (const ChunkCase& c : chunk_cases) {
    StreamResult result = GenerateAll(*stub_, c.request);
    EXPECT_EQ(result.status.error_code(), c.code)
        << c.what << ": " << result.status.error_message();
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
      {"y not finite",
       {{0, 0}, {0, 0}},
       "",
       grpc::StatusCode::INVALID_ARGUMENT,
       "points[1].y = nan"},
      {"y past the bound",
       {{0, 0}},
       "",
       grpc::StatusCode::INVALID_ARGUMENT,
       "points[0].y = 70000 is not finite or outside the y bound of +-65536"},
  };
  for (const PointCase& c : point_cases) {
    v1::SampleWeightsRequest request;
    request.set_world(c.world);
    for (auto [x, z] : c.points) {
      v1::Point* p = request.add_points();
      p->set_x(x);
      p->set_z(z);
    }
    if (c.what == "y not finite") request.mutable_points(1)->set_y(nan);
    if (c.what == "y past the bound") request.mutable_points(0)->set_y(70000);
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

// world_fingerprint pins a world's version on GenerateChunk, SampleWeights and
// ListSamplingPoints: empty or the served world's own fingerprint is answered; another world's, or
// a made-up one, gets FAILED_PRECONDITION naming both values.
TEST_F(WorldGenServerTest, APinnedWorldFingerprintMustBeTheServedWorlds) {
  v1::WorldDescription tiny, default_world;
  ASSERT_TRUE(Describe(*stub_, "tiny", &tiny).ok());
  ASSERT_TRUE(Describe(*stub_, "", &default_world).ok());
  ASSERT_NE(tiny.fingerprint(), default_world.fingerprint());
  for (const std::string& pin :
       {std::string(), tiny.fingerprint(), default_world.fingerprint(), std::string("\x01'zz")}) {
    const bool right = pin.empty() || pin == tiny.fingerprint();
    const grpc::StatusCode expected =
        right ? grpc::StatusCode::OK : grpc::StatusCode::FAILED_PRECONDITION;
    std::vector<grpc::Status> statuses;
    v1::GenerateChunkRequest chunks = ListRequest({{0, 0}, {1, 1}}, 16);
    chunks.set_world("tiny");
    chunks.set_world_fingerprint(pin);
    statuses.push_back(GenerateAll(*stub_, chunks).status);
    v1::SampleWeightsRequest sample;
    sample.set_world("tiny");
    sample.set_world_fingerprint(pin);
    sample.add_points()->set_x(3.5);
    v1::SampleWeightsResponse samples;
    statuses.push_back(Sample(*stub_, sample, &samples));
    v1::ListSamplingPointsRequest box;
    box.set_world("tiny");
    box.set_world_fingerprint(pin);
    box.set_max_x(32);
    box.set_max_z(32);
    v1::ListSamplingPointsResponse points;
    grpc::ClientContext context;
    statuses.push_back(stub_->ListSamplingPoints(&context, box, &points));
    for (const grpc::Status& status : statuses) {
      EXPECT_EQ(status.error_code(), expected)
          << "pin \"" << pin << "\": " << status.error_message();
      if (right) continue;
      EXPECT_THAT(status.error_message(), HasSubstr("world_fingerprint = "));
      EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("\"", tiny.fingerprint(), "\"")));
      EXPECT_THAT(status.error_message(), HasSubstr("\"tiny\""));
    }
  }
}

TEST_F(WorldGenServerTest, DescribeWorldReportsConfigBlenderAndLimits) {
  v1::WorldDescription description;
  grpc::Status status = Describe(*stub_, "", &description);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const WorldSpec spec = DefaultWorldSpec();
  EXPECT_EQ(description.config().name(), "default");
  EXPECT_EQ(description.config().biomes_size(), static_cast<int>(spec.biomes.size()));
  EXPECT_EQ(description.config().scattered().blend_radius(),
            spec.blender.params.at("blend_radius"));
  EXPECT_EQ(description.config().chunk_size(), static_cast<uint32_t>(spec.chunk_size));
  EXPECT_EQ(description.blender(), "scattered");
  EXPECT_EQ(description.min_blend_radius(), ScatteredBlender::MinBlendRadius(8.0, 0.35));
  // The engine's own figures of the built blender, parameters first.
  ASSERT_GE(description.blender_figures_size(), 6);
  EXPECT_EQ(description.blender_figures(0).name(), "sampling_interval");
  EXPECT_EQ(description.blender_figures(0).value(), 8.0);
  EXPECT_EQ(description.blender_figures(3).name(), "lattice");
  EXPECT_EQ(description.blender_figures(4).name(), "interpolation");
  EXPECT_EQ(description.blender_figures(5).name(), "min_blend_radius");
  EXPECT_EQ(description.limits().min_chunk_size(), 4u);
  EXPECT_EQ(description.limits().max_chunk_size(), 256u);
  EXPECT_EQ(description.limits().max_chunks_per_request(), 1024u);
  EXPECT_EQ(description.limits().max_points_per_request(), 4096u);
  EXPECT_EQ(description.limits().max_sampling_points_per_request(), 65536u);
  EXPECT_EQ(description.limits().world_y_bound(), 65536);
  EXPECT_EQ(description.limits().max_cells_per_chunk(), 262144u);
  EXPECT_EQ(description.limits().max_sections_per_request(), 6144u);
  // An interval-8 triangular lattice: 8^2 sqrt(3) / 2 = 55.4 blocks per point, a little less from
  // the bound's margins.
  EXPECT_GT(description.blocks_per_sampling_point(), 54.0);
  EXPECT_LE(description.blocks_per_sampling_point(), 55.43);
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

TEST_F(WorldGenServerTest, ReflectionListsAndDescribesEveryService) {
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

  // Every listed service resolves to its file, as grpcurl's describe and calls need (gRPC's
  // built-in health service registers no descriptor: the server links health.proto's).
  for (const std::string& service : services) {
    grpc::reflection::v1alpha::ServerReflectionRequest symbol;
    symbol.set_file_containing_symbol(service);
    ASSERT_TRUE(stream->Write(symbol));
    ASSERT_TRUE(stream->Read(&response));
    EXPECT_FALSE(response.has_error_response())
        << service << ": " << response.error_response().error_message();
    EXPECT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0) << service;
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace worldgen
