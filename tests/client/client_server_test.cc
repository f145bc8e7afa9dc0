// worldgen::Client against real worldgen-server processes: results equal the engine's bit-for-bit,
// streams deliver every chunk once, UNAVAILABLE is retried (server not up yet, killed and
// restarted).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <functional>
#include <limits>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/worldgen_client.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "proto/world_config.h"
#include "tests/client/subprocess.h"
#include "tests/support/call_log_lines.h"
#include "tests/support/server_process.h"

namespace worldgen {
namespace {

using ::worldgen::testing::PickFreePort;
using ::worldgen::testing::ServerProcess;

std::shared_ptr<const World> DefaultWorld() {
  static auto* world = new std::shared_ptr<const World>(*World::Create(DefaultWorldSpec()));
  return *world;
}

// Every biome weight, height and dominant id of `view` equals the engine's chunk bit-for-bit.
void ExpectSameAsEngine(const ChunkView& view) {
  absl::StatusOr<ChunkBlend> blend = DefaultWorld()->BlendChunk(
      view.chunk_x(), view.chunk_z(), view.size(), {.heights = true, .dominant_biome = true});
  ASSERT_TRUE(blend.ok()) << blend.status();
  SCOPED_TRACE(::testing::Message() << "chunk (" << view.chunk_x() << ", " << view.chunk_z()
                                    << ") size " << view.size());
  std::vector<uint32_t> ids;
  for (const BiomeLayer& layer : blend->layers) ids.push_back(layer.biome_id);
  ASSERT_EQ(view.biome_ids(), ids);
  // The wire may mark any chunk whose only biome has weight 1.0 everywhere as single_biome, even
  // when the engine computed its columns; the weight checks below hold either way.
  if (blend->single_biome) {
    EXPECT_TRUE(view.single_biome());
  }
  if (view.single_biome()) {
    EXPECT_EQ(ids.size(), 1u);
  }
  const int n = view.size();
  int mismatches = 0;
  for (const BiomeLayer& layer : blend->layers) {
    for (int lz = 0; lz < n; ++lz) {
      for (int lx = 0; lx < n; ++lx) {
        const float want = layer.weights[lz * n + lx];
        const float got = view.Weight(layer.biome_id, lx, lz);
        if (std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(got) && ++mismatches < 5) {
          ADD_FAILURE() << "biome " << layer.biome_id << " at (" << lx << ", " << lz << "): " << got
                        << " != engine " << want;
        }
      }
    }
  }
  ASSERT_TRUE(view.has_heights());
  for (int lz = 0; lz < n; ++lz) {
    for (int lx = 0; lx < n; ++lx) {
      const int i = lz * n + lx;
      if (std::bit_cast<uint32_t>(view.Height(lx, lz)) !=
              std::bit_cast<uint32_t>(blend->heights[i]) &&
          ++mismatches < 5) {
        ADD_FAILURE() << "height at (" << lx << ", " << lz << ")";
      }
      if (view.DominantBiome(lx, lz) != blend->dominant_biome[i] && ++mismatches < 5) {
        ADD_FAILURE() << "dominant biome at (" << lx << ", " << lz << ")";
      }
      const uint32_t source = DefaultWorld()->SourceBiomeAt(
          static_cast<double>(view.origin_x() + lx), static_cast<double>(view.origin_z() + lz));
      if (view.has_source_biome() && view.SourceBiome(lx, lz) != source && ++mismatches < 5) {
        ADD_FAILURE() << "source biome at (" << lx << ", " << lz << ")";
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

class ClientServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto client = Client::Connect(server_->target());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Client> client_;
};

// A game server names itself (ClientOptions::user_agent) and the server's call log shows it.
TEST(ClientCallLogTest, TheUserAgentNamesTheGameServerInTheServersCallLog) {
  auto server = ServerProcess::Start({"--call_log=all"});
  ASSERT_TRUE(server.ok()) << server.status();
  ClientOptions options;
  options.user_agent = "survival-eu-3/1.4";
  auto client = Client::Connect((*server)->target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->GenerateChunk(2, 3).ok());
  const std::vector<v1::CallLogLine> lines = AwaitCallLogLines(**server, 1);
  ASSERT_EQ(lines.size(), 1u) << (*server)->output();
  EXPECT_THAT(lines[0].user_agent(),
              ::testing::StartsWith("survival-eu-3/1.4 worldgen-client grpc-c++/"));
  EXPECT_EQ(lines[0].method(), "GenerateChunk");
  EXPECT_EQ(lines[0].items(), 1);
}

// The server tells the client where each admitted call's time went (its server-timing trailer), and
// ClientStats sums it: the same figures as the replica's call log has for the call.
TEST(ClientCallLogTest, TheServersTimingOfACallReachesTheClientAsTheCallLogHasIt) {
  auto server = ServerProcess::Start({"--call_log=all"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = Client::Connect((*server)->target());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->DescribeWorld().ok());  // Admits no work: no timing.
  EXPECT_EQ((*client)->stats().server_queued, absl::ZeroDuration());
  EXPECT_EQ((*client)->stats().server_blend, absl::ZeroDuration());

  // Sixteen chunks through the blend pool.
  const ChunkRegion region{.min_x = 0, .min_z = 0, .max_x = 3, .max_z = 3};
  ASSERT_TRUE((*client)
                  ->GenerateRegion(region, {.chunk_size = 64, .heights = true}, [](ChunkView) {})
                  .ok());
  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(**server, 2);
  ASSERT_EQ(lines.size(), 2u) << (*server)->output();
  if (lines[0].method() != "GenerateChunk") std::swap(lines[0], lines[1]);
  ASSERT_EQ(lines[0].items(), 16);
  const ClientStats stats = (*client)->stats();
  EXPECT_GT(stats.server_queued, absl::ZeroDuration());
  EXPECT_GT(stats.server_blend, absl::ZeroDuration());
  EXPECT_NEAR(absl::ToDoubleMicroseconds(stats.server_queued), lines[0].queued_ms() * 1000, 1);
  EXPECT_NEAR(absl::ToDoubleMicroseconds(stats.server_blend), lines[0].blend_ms() * 1000, 1);

  // A refused call was not timed; a point call adds its own.
  EXPECT_FALSE((*client)->GenerateChunk(0, 0, {.chunk_size = 3}).ok());
  EXPECT_EQ((*client)->stats().server_blend, stats.server_blend);
  const std::vector<std::pair<double, double>> points = {{12.5, -80.25}};
  ASSERT_TRUE((*client)->SamplePoints(points).ok());
  EXPECT_GT((*client)->stats().server_blend, stats.server_blend);
}

// ClientOptions::traceparent: the game server's current span goes with every attempt, and the
// replica's call log names it; a malformed one fails the call before anything is sent.
TEST(ClientCallLogTest, TheGameServersTraceparentNamesTheCallInTheCallLog) {
  auto server = ServerProcess::Start({"--call_log=all"});
  ASSERT_TRUE(server.ok()) << server.status();
  std::string current = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  ClientOptions options;
  options.traceparent = [&] { return current; };
  auto client = Client::Connect((*server)->target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->GenerateChunk(4, 5).ok());
  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(**server, 1);
  ASSERT_EQ(lines.size(), 1u) << (*server)->output();
  EXPECT_EQ(lines[0].trace_id(), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(lines[0].span_id(), "b7ad6b7169203331");

  current = "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01";  // uppercase: not one
  const int64_t attempts = (*client)->stats().attempts;
  const absl::Status refused = (*client)->DescribeWorld().status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("not a W3C traceparent"));
  EXPECT_EQ((*client)->stats().attempts, attempts + 1);
  current.clear();  // No span: nothing is sent.
  ASSERT_TRUE((*client)->DescribeWorld().ok());
  lines = AwaitCallLogLines(**server, 2);
  ASSERT_EQ(lines.size(), 2u) << (*server)->output();
  EXPECT_EQ(lines[1].method(), "DescribeWorld");
  EXPECT_TRUE(lines[1].trace_id().empty());
}

TEST_F(ClientServerTest, DescribeWorldIsTheDefaultWorld) {
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok()) << world.status();
  const WorldSpec spec = DefaultWorldSpec();
  EXPECT_EQ(world->config().name(), "default");
  EXPECT_EQ(world->config().seed(), spec.seed);
  EXPECT_EQ(world->config().biomes_size(), static_cast<int>(spec.biomes.size()));
  EXPECT_GT(world->limits().max_chunks_per_request(), 0u);
}

TEST_F(ClientServerTest, RegionMatchesTheEngineBitForBit) {
  for (int size : {4, 16, 64}) {
    std::set<std::pair<int64_t, int64_t>> seen;
    const ChunkRegion region{.min_x = -3, .min_z = -2, .max_x = 2, .max_z = 1};
    absl::Status status = client_->GenerateRegion(
        region, {.chunk_size = size, .heights = true, .dominant_biome = true}, [&](ChunkView view) {
          EXPECT_TRUE(seen.insert({view.chunk_x(), view.chunk_z()}).second) << "sent twice";
          EXPECT_EQ(view.size(), size);
          ExpectSameAsEngine(view);
        });
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(seen.size(), 24u);
  }
}

TEST_F(ClientServerTest, ChunkListAndSingleChunkMatchTheEngine) {
  // Far-apart chunks, including negative coordinates and the world's edge region.
  const std::vector<ChunkCoord> coords = {{0, 0}, {-1, -1}, {1000, -2000}, {-123456, 654321},
                                          {7, 7}, {7, 7}};
  int delivered = 0;
  absl::Status status = client_->GenerateChunks(
      coords, {.chunk_size = 16, .heights = true, .dominant_biome = true}, [&](ChunkView view) {
        ++delivered;
        ExpectSameAsEngine(view);
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(delivered, 5);  // The duplicate is requested once.

  absl::StatusOr<ChunkView> one =
      client_->GenerateChunk(40, -17, {.heights = true, .source_biome = true});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->has_source_biome());
  EXPECT_EQ(one->size(), 16);  // The world's chunk size.
  ExpectSameAsEngine(*one);
}

TEST_F(ClientServerTest, SamplePointsMatchTheEngine) {
  std::vector<std::pair<double, double>> points = {
      {0, 0}, {100.5, -7.25}, {320, 640}, {-9999.75, 12345.5}};
  for (int i = 0; i < 100; ++i) points.push_back({i * 37.25 - 1800, i * -53.5 + 900});
  absl::StatusOr<std::vector<PointSample>> samples =
      client_->SamplePoints(points, {.heights = true, .source_biome = true});
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    absl::StatusOr<PointBlend> want =
        DefaultWorld()->BlendPoint(points[i].first, points[i].second, {.heights = true});
    ASSERT_TRUE(want.ok());
    const PointSample& got = (*samples)[i];
    ASSERT_EQ(got.weights.size(), want->weights.size()) << i;
    for (size_t k = 0; k < got.weights.size(); ++k) {
      EXPECT_EQ(got.weights[k].biome_id, want->weights[k].biome_id);
      EXPECT_EQ(std::bit_cast<uint32_t>(got.weights[k].weight),
                std::bit_cast<uint32_t>(want->weights[k].weight));
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(got.height), std::bit_cast<uint32_t>(want->height)) << i;
    EXPECT_EQ(got.dominant_biome, want->dominant_biome) << i;
    EXPECT_EQ(got.source_biome, DefaultWorld()->SourceBiomeAt(points[i].first, points[i].second))
        << i;
  }
}

// 3D through the client: a cave world's chunk sections and points with y equal the engine.
TEST(ClientVolumeTest, VolumesAndPointsWithYMatchTheEngine) {
  const std::string caves = std::string(WORLDGEN_SOURCE_DIR) + "/docker/worlds/caves.json";
  auto server = ServerProcess::Start({"--world_config=" + caves});
  ASSERT_TRUE(server.ok()) << server.status();
  ClientOptions caves_world;
  caves_world.world = "caves";
  auto client = Client::Connect((*server)->target(), caves_world);
  ASSERT_TRUE(client.ok()) << client.status();
  const std::shared_ptr<const World> world = [&] {
    absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({caves});
    return *World::Create(specs->front());
  }();
  ChunkRequestOptions options{.chunk_size = 16, .dominant_biome = true};
  options.vertical = ChunkRequestOptions::Vertical{.min_y = -64, .max_y = 16, .cell_size = 4};
  int chunks = 0, cave_cells = 0;
  absl::Status status = (*client)->GenerateRegion(
      {.min_x = 8, .min_z = -20, .max_x = 9, .max_z = -19}, options, [&](ChunkView view) {
        ++chunks;
        ASSERT_TRUE(view.is_volume());
        const VolumeBlend blend = *world->BlendVolume(view.chunk_x(), view.chunk_z(), 16, -64, 16,
                                                      4, {.dominant_biome = true});
        for (int ly = 0; ly < view.cell_rows(); ++ly) {
          const SectionBlend& section = blend.sections[static_cast<size_t>(ly / 4)];
          for (int lz = 0; lz < 4; ++lz) {
            for (int lx = 0; lx < 4; ++lx) {
              const size_t at = (static_cast<size_t>(ly % 4) * 4 + lz) * 4 + lx;
              for (const BiomeLayer& layer : section.layers) {
                ASSERT_EQ(std::bit_cast<uint32_t>(view.CellWeight(layer.biome_id, lx, ly, lz)),
                          std::bit_cast<uint32_t>(layer.weights[at]));
              }
              ASSERT_EQ(view.CellDominantBiome(lx, ly, lz), section.dominant_biome[at]);
              cave_cells += section.dominant_biome[at] >= 100;
            }
          }
        }
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(chunks, 4);
  const std::vector<Point3> points = {{130.0, -50.0, -310.0}, {140.5, -20.25, -300.0}};
  absl::StatusOr<std::vector<PointSample>> samples = (*client)->SamplePoints3D(points);
  ASSERT_TRUE(samples.ok()) << samples.status();
  for (size_t k = 0; k < points.size(); ++k) {
    const PointBlend want = *world->BlendPoint(points[k].x, points[k].y, points[k].z, {});
    ASSERT_EQ((*samples)[k].weights.size(), want.weights.size());
    for (size_t b = 0; b < want.weights.size(); ++b) {
      EXPECT_EQ((*samples)[k].weights[b].biome_id, want.weights[b].biome_id);
      EXPECT_EQ(std::bit_cast<uint32_t>((*samples)[k].weights[b].weight),
                std::bit_cast<uint32_t>(want.weights[b].weight));
    }
  }
  EXPECT_GT(cave_cells, 0);
}

TEST_F(ClientServerTest, ErrorsOtherThanUnavailableAreNotRetried) {
  const int64_t attempts = client_->stats().attempts;
  absl::StatusOr<ChunkView> bad_size = client_->GenerateChunk(0, 0, {.chunk_size = 3});
  EXPECT_EQ(bad_size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->stats().attempts, attempts + 1);

  ClientOptions options;
  options.world = "no-such-world";
  auto other = Client::Connect(server_->target(), options);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->DescribeWorld().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*other)->stats().retries, 0);
}

// A world name is whatever the game server passes: one the server does not serve is NOT_FOUND on
// every kind of call (its route key is escaped into a valid header), and one that is not UTF-8,
// which a proto string cannot carry, INVALID_ARGUMENT before anything is sent.
TEST_F(ClientServerTest, AnyWorldNameGetsAnAnswerAndNoneCrashesTheClient) {
  ClientOptions options;
  options.world = "w\xc3\xb6rld";  // UTF-8, but not a name the server accepts
  auto other = Client::Connect(server_->target(), options);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ((*other)->GenerateChunk(0, 0).status().code(), absl::StatusCode::kNotFound);
  const std::vector<std::pair<double, double>> origin = {{0, 0}};
  EXPECT_EQ((*other)->SamplePoints(origin).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*other)->DescribeWorld().status().code(), absl::StatusCode::kNotFound);

  const std::string not_utf8 = "\xff\xfe";
  options.world = not_utf8;
  EXPECT_EQ(Client::Connect(server_->target(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.world = "";
  options.world_fingerprint = not_utf8;
  EXPECT_EQ(Client::Connect(server_->target(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  const int64_t attempts = client_->stats().attempts;
  EXPECT_EQ(client_->DescribeWorld(not_utf8).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SampleWeightsRequest sample;
  sample.set_world(not_utf8);
  sample.add_points();
  EXPECT_EQ(client_->SampleWeights(sample).status().code(), absl::StatusCode::kInvalidArgument);
  v1::ListSamplingPointsRequest box;
  box.set_world_fingerprint(not_utf8);
  box.set_max_x(1);
  box.set_max_z(1);
  absl::StatusOr<v1::ListSamplingPointsResponse> points = client_->ListSamplingPoints(box);
  EXPECT_EQ(points.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(points.status().message(), ::testing::HasSubstr("world_fingerprint"));
  EXPECT_EQ(client_->stats().attempts, attempts) << "a call that cannot be sent was sent";
}

// ClientOptions::world_fingerprint pins the world on every kind of call: the server's own value
// passes, another is refused with FAILED_PRECONDITION at once, without a retry.
TEST_F(ClientServerTest, APinnedFingerprintPassesOnlyWhenItIsTheServers) {
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok()) << world.status();
  for (const std::string& pin : {world->fingerprint(), std::string("0123456789abcdef")}) {
    const bool right = pin == world->fingerprint();
    ClientOptions options;
    options.world_fingerprint = pin;
    auto pinned = Client::Connect(server_->target(), options);
    ASSERT_TRUE(pinned.ok());
    const absl::StatusCode expected =
        right ? absl::StatusCode::kOk : absl::StatusCode::kFailedPrecondition;
    absl::StatusOr<ChunkView> chunk = (*pinned)->GenerateChunk(3, -2, {});
    EXPECT_EQ(chunk.status().code(), expected) << pin << ": " << chunk.status();
    if (!right) {
      EXPECT_THAT(chunk.status().message(), ::testing::HasSubstr(world->fingerprint()));
    }
    std::vector<ChunkCoord> got;
    absl::Status region = (*pinned)->GenerateRegion(
        {.min_x = 0, .min_z = 0, .max_x = 1, .max_z = 1}, {}, [&](ChunkView c) {
          got.push_back({c.chunk_x(), c.chunk_z()});
        });
    EXPECT_EQ(region.code(), expected) << pin << ": " << region;
    EXPECT_EQ(got.size(), right ? 4u : 0u);
    v1::SampleWeightsRequest sample;
    sample.add_points()->set_x(10.5);
    EXPECT_EQ((*pinned)->SampleWeights(sample).status().code(), expected) << pin;
    v1::ListSamplingPointsRequest box;
    box.set_max_x(64);
    box.set_max_z(64);
    EXPECT_EQ((*pinned)->ListSamplingPoints(box).status().code(), expected) << pin;
    EXPECT_EQ((*pinned)->stats().retries, 0);
  }
}

TEST_F(ClientServerTest, HealthIsServing) {
  absl::StatusOr<std::string> health = client_->CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, "SERVING");
}

TEST_F(ClientServerTest, ConcurrentCallsShareOneClient) {
  std::vector<std::thread> threads;
  std::atomic<int> chunks{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        absl::Status status = client_->GenerateRegion(
            {.min_x = t * 10, .min_z = i, .max_x = t * 10 + 3, .max_z = i + 1}, {},
            [&](ChunkView) { chunks.fetch_add(1); });
        EXPECT_TRUE(status.ok()) << status;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(chunks.load(), 4 * 5 * 8);
}

// Waits (bounded) until the client has made at least `attempts` attempts.
bool AwaitAttempts(const Client& client, int64_t attempts) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (client.stats().attempts < attempts) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

ClientOptions PatientOptions() {
  ClientOptions options;
  options.deadline = absl::Seconds(60);
  options.max_retries = 100;
  options.initial_backoff = absl::Milliseconds(20);
  options.max_backoff = absl::Milliseconds(200);
  options.max_reconnect_backoff = absl::Milliseconds(200);
  return options;
}

TEST(ClientRetryTest, RetriesUntilTheServerStarts) {
  absl::StatusOr<int> port = PickFreePort();
  ASSERT_TRUE(port.ok());
  auto client = Client::Connect(absl::StrCat("127.0.0.1:", *port), PatientOptions());
  ASSERT_TRUE(client.ok());
  absl::StatusOr<v1::WorldDescription> world;
  std::thread caller([&] { world = (*client)->DescribeWorld(); });
  // The call has failed at least once (nothing listens) before the server exists.
  ASSERT_TRUE(AwaitAttempts(**client, 2));
  auto server = ServerProcess::Start({absl::StrCat("--port=", *port)});
  ASSERT_TRUE(server.ok()) << server.status();
  caller.join();
  ASSERT_TRUE(world.ok()) << world.status();
  EXPECT_GE((*client)->stats().retries, 1);
}

TEST(ClientRetryTest, StreamSurvivesAServerKilledAndRestarted) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  const int port = (*first)->grpc_port();
  auto client = Client::Connect((*first)->target(), PatientOptions());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->DescribeWorld().ok());
  (*first)->Kill();

  const int64_t attempts = (*client)->stats().attempts;
  std::set<std::pair<int64_t, int64_t>> seen;
  absl::Status status;
  std::thread caller([&] {
    status = (*client)->GenerateRegion(
        {.min_x = 0, .min_z = 0, .max_x = 9, .max_z = 9}, {.heights = true, .dominant_biome = true},
        [&](ChunkView view) {
          EXPECT_TRUE(seen.insert({view.chunk_x(), view.chunk_z()}).second);
          ExpectSameAsEngine(view);
        });
  });
  ASSERT_TRUE(AwaitAttempts(**client, attempts + 2));
  auto second = ServerProcess::Start({absl::StrCat("--port=", port)});
  ASSERT_TRUE(second.ok()) << second.status();
  caller.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_GE((*client)->stats().retries, 1);
}

TEST(ClientRetryTest, StreamBrokenMidwayIsResumedForTheMissingChunksOnly) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  const int port = (*first)->grpc_port();
  auto client = Client::Connect((*first)->target(), PatientOptions());
  ASSERT_TRUE(client.ok());
  std::unique_ptr<ServerProcess> second;
  std::set<std::pair<int64_t, int64_t>> seen;
  // 400 chunks of 64^2 columns: the first server is still blending when it dies at the first chunk.
  const ChunkRegion region{.min_x = -10, .min_z = -10, .max_x = 9, .max_z = 9};
  absl::Status status =
      (*client)->GenerateRegion(region, {.chunk_size = 64, .heights = true}, [&](ChunkView view) {
        EXPECT_TRUE(seen.insert({view.chunk_x(), view.chunk_z()}).second) << "delivered twice";
        if (seen.size() == 1) {
          (*first)->Kill();
          auto restarted = ServerProcess::Start({absl::StrCat("--port=", port)});
          ASSERT_TRUE(restarted.ok()) << restarted.status();
          second = *std::move(restarted);
        }
        if (seen.size() % 50 == 0) ExpectSameAsEngine(view);
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(seen.size(), 400u);
  EXPECT_GE((*client)->stats().retries, 1);
}

TEST(ClientRetryTest, GivesUpAfterMaxRetries) {
  absl::StatusOr<int> port = PickFreePort();
  ASSERT_TRUE(port.ok());
  ClientOptions options;
  options.max_retries = 2;
  options.initial_backoff = absl::Milliseconds(1);
  auto client = Client::Connect(absl::StrCat("127.0.0.1:", *port), options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->DescribeWorld().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*client)->stats().attempts, 3);
  EXPECT_EQ((*client)->stats().retries, 2);
}

// An in-process server whose DescribeWorld refuses the first `refusals` attempts with
// RESOURCE_EXHAUSTED and, when `pushback` is set, the grpc-retry-pushback-ms trailer, as an
// overloaded worldgen-server does; it records when each attempt arrived.
class RefusingService final : public v1::WorldGen::Service {
 public:
  RefusingService(int refusals, std::optional<std::string> pushback)
      : refusals_(refusals), pushback_(std::move(pushback)) {}
  grpc::Status DescribeWorld(grpc::ServerContext* context, const v1::DescribeWorldRequest*,
                             v1::WorldDescription* response) override {
    absl::MutexLock lock(&mu_);
    arrivals_.push_back(absl::Now());
    if (static_cast<int>(arrivals_.size()) > refusals_) {
      response->set_blender("fake");
      return grpc::Status::OK;
    }
    if (pushback_.has_value()) context->AddTrailingMetadata("grpc-retry-pushback-ms", *pushback_);
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy");
  }
  std::vector<absl::Time> arrivals() {
    absl::MutexLock lock(&mu_);
    return arrivals_;
  }

 private:
  const int refusals_;
  const std::optional<std::string> pushback_;
  absl::Mutex mu_;
  std::vector<absl::Time> arrivals_;
};

// An in-process gRPC server of `Service` (built from `args`) on a free loopback port.
template <typename Service>
struct InProcessServer {
  template <typename... Args>
  explicit InProcessServer(Args&&... args) : service(std::forward<Args>(args)...) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~InProcessServer() { server->Shutdown(std::chrono::system_clock::now()); }
  std::string target() const { return absl::StrCat("127.0.0.1:", port); }
  Service service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};
using RefusingServer = InProcessServer<RefusingService>;

TEST(ClientRetryTest, ResourceExhaustedWithPushbackIsRetriedAfterExactlyThatWait) {
  RefusingServer server(2, "150");
  ASSERT_NE(server.server, nullptr);
  ClientOptions options;
  options.initial_backoff = absl::Milliseconds(1);  // Pushback, not backoff, sets the wait.
  auto client = Client::Connect(server.target(), options);
  ASSERT_TRUE(client.ok());
  absl::StatusOr<v1::WorldDescription> description = (*client)->DescribeWorld();
  ASSERT_TRUE(description.ok()) << description.status();
  EXPECT_EQ(description->blender(), "fake");
  std::vector<absl::Time> arrivals = server.service.arrivals();
  ASSERT_EQ(arrivals.size(), 3u);
  EXPECT_GE(arrivals[1] - arrivals[0], absl::Milliseconds(150));
  EXPECT_GE(arrivals[2] - arrivals[1], absl::Milliseconds(150));
  EXPECT_EQ((*client)->stats().retries, 2);
}

TEST(ClientRetryTest, PushbackPastTheDeadlineOrNoneIsReturnedAtOnce) {
  {
    RefusingServer server(1, "60000");
    ClientOptions options;
    options.deadline = absl::Seconds(5);
    auto client = Client::Connect(server.target(), options);
    ASSERT_TRUE(client.ok());
    const absl::Time start = absl::Now();
    absl::Status status = (*client)->DescribeWorld().status();
    EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << "waited for a pushback past the deadline";
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_NE(status.message().find("after the call's deadline"), std::string::npos) << status;
    EXPECT_EQ(server.service.arrivals().size(), 1u);
  }
  for (std::optional<std::string> pushback :
       {std::optional<std::string>(), std::optional<std::string>("-1")}) {
    RefusingServer server(1, std::move(pushback));  // No trailer, or gRPC's "do not retry".
    auto client = Client::Connect(server.target());
    ASSERT_TRUE(client.ok());
    EXPECT_EQ((*client)->DescribeWorld().status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(server.service.arrivals().size(), 1u);
  }
}

// An in-process server that answers every chunk and point call NOT_FOUND and records which client
// connection (peer address and port) each came over.
class PeerRecordingService final : public v1::WorldGen::Service {
 public:
  grpc::Status GenerateChunk(grpc::ServerContext* context, const v1::GenerateChunkRequest*,
                             grpc::ServerWriter<v1::ChunkData>*) override {
    return Record(context);
  }
  grpc::Status SampleWeights(grpc::ServerContext* context, const v1::SampleWeightsRequest*,
                             v1::SampleWeightsResponse*) override {
    return Record(context);
  }
  std::vector<std::string> peers() {
    absl::MutexLock lock(&mu_);
    return peers_;
  }
  // Each call's worldgen-route metadata ("(none)" if absent).
  std::vector<std::string> routes() {
    absl::MutexLock lock(&mu_);
    return routes_;
  }

 private:
  grpc::Status Record(grpc::ServerContext* context) {
    absl::MutexLock lock(&mu_);
    peers_.push_back(context->peer());
    auto route = context->client_metadata().find(kRouteKeyHeader);
    routes_.push_back(route == context->client_metadata().end()
                          ? "(none)"
                          : std::string(route->second.data(), route->second.size()));
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "recorded");
  }
  absl::Mutex mu_;
  std::vector<std::string> peers_;
  std::vector<std::string> routes_;
};

using RecordingServer = InProcessServer<PeerRecordingService>;

// Calls past ClientOptions::bulk_columns go over a connection of their own, all others share one;
// chunk_size 0 counts as 16 before the world's size is known. (Why: client/worldgen_client.h,
// "Connections"; the latency it buys: OverloadTest.AClientsOneChunkCallsDoNotQueueBehindItsOwn...)
TEST(ClientConnectionTest, BulkCallsGoOverAConnectionOfTheirOwn) {
  RecordingServer server;
  ASSERT_NE(server.server, nullptr);
  ClientOptions options;
  options.max_retries = 0;
  auto client = Client::Connect(server.target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto ignore = [](ChunkView) {};
  std::vector<std::pair<double, double>> few(10), many(options.bulk_columns + 1);
  // Interactive: 16^2 columns; 64 chunks of 16^2 = 16384 (the bound itself); 10 points.
  (void)(*client)->GenerateChunk(0, 0, {.chunk_size = 16});
  (void)(*client)->GenerateRegion({.min_x = 0, .min_z = 0, .max_x = 7, .max_z = 7}, {}, ignore);
  (void)(*client)->SamplePoints(few);
  // Bulk: 65 chunks of 16^2; 4 chunks of 128^2; bulk_columns + 1 points.
  (void)(*client)->GenerateRegion({.min_x = 0, .min_z = 0, .max_x = 64, .max_z = 0}, {}, ignore);
  (void)(*client)->GenerateRegion({.min_x = 0, .min_z = 0, .max_x = 1, .max_z = 1},
                                  {.chunk_size = 128}, ignore);
  (void)(*client)->SamplePoints(many);
  const std::vector<std::string> peers = server.service.peers();
  ASSERT_EQ(peers.size(), 6u);
  EXPECT_EQ(peers[0], peers[1]);
  EXPECT_EQ(peers[0], peers[2]);
  EXPECT_EQ(peers[3], peers[4]);
  EXPECT_EQ(peers[3], peers[5]);
  EXPECT_NE(peers[0], peers[3]) << "bulk and interactive calls shared a connection";
}

TEST(ClientRouteKeyTest, RegionsOf128BlocksFloorTowardsMinusInfinity) {
  EXPECT_EQ(RouteKey("w", 0, 127.9), "w/0/0");
  EXPECT_EQ(RouteKey("w", 128, 255), "w/1/1");
  EXPECT_EQ(RouteKey("", -0.5, -128), "/-1/-1");
  EXPECT_EQ(RouteKey("", -128.5, 33554432), "/-2/262144");
  // A header value is printable ASCII: other bytes of a world name are escaped.
  EXPECT_EQ(RouteKey("w\xc3\xb6rld", 0, 0), "w\\xc3\\xb6rld/0/0");
}

// Every call carries its first chunk's or point's key; retries keep it; the option turns it off.
TEST(ClientRouteKeyTest, EveryCallSendsTheKeyOfItsFirstChunkOrPoint) {
  RecordingServer server;
  ASSERT_NE(server.server, nullptr);
  ClientOptions options;
  options.world = "steppe";
  options.max_retries = 0;
  auto client = Client::Connect(server.target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto ignore = [](ChunkView) {};
  (void)(*client)->GenerateChunk(-9, 8, {.chunk_size = 16});  // Columns (-144, 128).
  (void)(*client)->GenerateRegion({.min_x = 2, .min_z = -1, .max_x = 3, .max_z = 0},
                                  {.chunk_size = 64}, ignore);  // (128, -64).
  const std::vector<ChunkCoord> list = {{5, 5}, {0, 0}};
  (void)(*client)->GenerateChunks(list, {}, ignore);  // (80, 80): the world's size, 16 so far.
  (void)(*client)->SamplePoints({{300.5, -0.5}, {0, 0}});
  options.send_route_key = false;
  auto quiet = Client::Connect(server.target(), options);
  ASSERT_TRUE(quiet.ok());
  (void)(*quiet)->GenerateChunk(0, 0);
  EXPECT_THAT(
      server.service.routes(),
      ::testing::ElementsAre("steppe/-2/1", "steppe/1/-1", "steppe/0/0", "steppe/2/-1", "(none)"));
}

// An in-process server whose GenerateChunk writes `reply(x, z, request)` for every chunk the call
// selects, then ends the stream with `ending`; it counts its calls.
class ScriptedChunkService final : public v1::WorldGen::Service {
 public:
  using Reply = std::function<v1::ChunkData(int64_t x, int64_t z, const v1::GenerateChunkRequest&)>;
  ScriptedChunkService(grpc::Status ending, Reply reply)
      : ending_(std::move(ending)), reply_(std::move(reply)) {}
  grpc::Status GenerateChunk(grpc::ServerContext*, const v1::GenerateChunkRequest* request,
                             grpc::ServerWriter<v1::ChunkData>* writer) override {
    calls_.fetch_add(1);
    if (request->has_region()) {
      // By offsets, as the selection may end at INT64_MAX.
      const v1::ChunkRegion& r = request->region();
      for (uint64_t dz = 0; dz <= static_cast<uint64_t>(r.max_z()) - r.min_z(); ++dz) {
        for (uint64_t dx = 0; dx <= static_cast<uint64_t>(r.max_x()) - r.min_x(); ++dx) {
          writer->Write(reply_(static_cast<int64_t>(r.min_x() + dx),
                               static_cast<int64_t>(r.min_z() + dz), *request));
        }
      }
    } else {
      for (const v1::ChunkCoord& c : request->chunks().coords()) {
        writer->Write(reply_(c.x(), c.z(), *request));
      }
    }
    return ending_;
  }
  int calls() const { return calls_.load(); }

 private:
  const grpc::Status ending_;
  const Reply reply_;
  std::atomic<int> calls_{0};
};
using ScriptedChunkServer = InProcessServer<ScriptedChunkService>;

// A 2D chunk of one biome and nothing else, of the size asked for (16 for the world's).
v1::ChunkData PlainChunk(int64_t x, int64_t z, const v1::GenerateChunkRequest& request) {
  v1::ChunkData data;
  data.mutable_coord()->set_x(x);
  data.mutable_coord()->set_z(z);
  data.set_chunk_size(request.chunk_size() == 0 ? 16 : request.chunk_size());
  data.set_single_biome(true);
  data.add_biomes()->set_biome_id(1);
  return data;
}

// A replica (or the proxy before it) that dies right after its last write ends the stream with an
// error: every chunk arrived, so the call succeeded and must not be asked for again.
TEST(ClientRetryTest, AStreamEndingInAnErrorAfterItsLastChunkHasSucceeded) {
  ScriptedChunkServer server(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone after the last"),
                             PlainChunk);
  ASSERT_NE(server.server, nullptr);
  ClientOptions options;
  options.max_retries = 0;
  auto client = Client::Connect(server.target(), options);
  ASSERT_TRUE(client.ok());
  int delivered = 0;
  absl::Status status = (*client)->GenerateRegion({.min_x = 0, .min_z = 0, .max_x = 1, .max_z = 1},
                                                  {}, [&](ChunkView) { ++delivered; });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(delivered, 4);
  EXPECT_TRUE((*client)->GenerateChunk(5, 5).ok());
  // With retries, no backoff is waited and no call repeated.
  options.max_retries = 5;
  options.initial_backoff = absl::Seconds(30);
  auto patient = Client::Connect(server.target(), options);
  ASSERT_TRUE(patient.ok());
  const absl::Time start = absl::Now();
  EXPECT_TRUE((*patient)->GenerateChunk(6, 6).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ((*patient)->stats().retries, 0);
  EXPECT_EQ(server.service.calls(), 3);
}

TEST(ClientRegionTest, RegionsAtTheEndsOfInt64AreAskedForOnceEach) {
  ScriptedChunkServer server(grpc::Status::OK, PlainChunk);
  ASSERT_NE(server.server, nullptr);
  auto client = Client::Connect(server.target());
  ASSERT_TRUE(client.ok());
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::set<std::pair<int64_t, int64_t>> seen;
  absl::Status status = (*client)->GenerateRegion(
      {.min_x = kMax - 1, .min_z = kMin, .max_x = kMax, .max_z = kMin + 1}, {},
      [&](ChunkView view) {
        seen.insert({view.chunk_x(), view.chunk_z()});
      });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(seen, ::testing::ElementsAre(std::pair(kMax - 1, kMin), std::pair(kMax - 1, kMin + 1),
                                           std::pair(kMax, kMin), std::pair(kMax, kMin + 1)));
  // The whole int64 range is refused before anything is sent.
  status = (*client)->GenerateRegion({.min_x = kMin, .min_z = 0, .max_x = kMax, .max_z = 0}, {},
                                     [](ChunkView) {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(server.service.calls(), 1);
}

// A chunk without what the call asked for would leave the accessors the caller uses because it
// asked reading nothing: the call fails DATA_LOSS before delivering it.
TEST(ClientStreamTest, AChunkLackingWhatTheCallAskedForIsDataLoss) {
  auto volume = [](int64_t x, int64_t z, const v1::GenerateChunkRequest&) {
    v1::ChunkData data;
    data.mutable_coord()->set_x(x);
    data.mutable_coord()->set_z(z);
    data.set_chunk_size(16);
    data.set_cell_size(4);
    v1::ChunkSection* section = data.add_sections();
    section->set_min_y(0);
    section->set_single_biome(true);
    section->add_biomes()->set_biome_id(1);
    return data;
  };
  struct Case {
    const char* what;
    ChunkRequestOptions request;
    ScriptedChunkService::Reply reply;
    const char* message;  // Empty: the chunk answers the call.
  };
  const std::vector<Case> cases = {
      {"plain", {}, PlainChunk, ""},
      {"heights", {.heights = true}, PlainChunk, "no heights"},
      {"source biomes", {.source_biome = true}, PlainChunk, "no source biomes"},
      {"splat", {.splat = true}, PlainChunk, "no splat textures"},
      {"another size",
       {.chunk_size = 32},
       [](int64_t x, int64_t z, const v1::GenerateChunkRequest&) {
         return PlainChunk(x, z, v1::GenerateChunkRequest());
       },
       "chunk_size 16, not the 32"},
      {"columns for cells",
       {.vertical = ChunkRequestOptions::Vertical{0, 16, 4}},
       PlainChunk,
       "columns, where cells"},
      {"cells for columns", {}, volume, "sections, where columns"},
      {"one section", {.vertical = ChunkRequestOptions::Vertical{0, 16, 4}}, volume, ""},
      {"another range",
       {.vertical = ChunkRequestOptions::Vertical{0, 32, 4}},
       volume,
       "y [0, 16), not the [0, 32)"},
      {"another cell",
       {.vertical = ChunkRequestOptions::Vertical{0, 16, 2}},
       volume,
       "cells of 4 blocks, not the 2"},
      {"cell source biomes",
       {.source_biome = true, .vertical = ChunkRequestOptions::Vertical{0, 16, 4}},
       volume,
       "no source biomes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ScriptedChunkServer server(grpc::Status::OK, c.reply);
    ASSERT_NE(server.server, nullptr);
    auto client = Client::Connect(server.target());
    ASSERT_TRUE(client.ok());
    int delivered = 0;
    absl::Status status = (*client)->GenerateChunks(std::vector<ChunkCoord>{{1, 2}}, c.request,
                                                    [&](ChunkView) { ++delivered; });
    if (std::string(c.message).empty()) {
      EXPECT_TRUE(status.ok()) << status;
      EXPECT_EQ(delivered, 1);
      continue;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(c.message));
    EXPECT_EQ(delivered, 0);
    EXPECT_EQ(server.service.calls(), 1);  // Not retried.
  }
}

// honor_pushback = false: a RESOURCE_EXHAUSTED the caller lists in retry_codes is retried on the
// backoff schedule, not after the server's pushback.
TEST(ClientRetryTest, WithoutHonorPushbackRefusalsFollowTheBackoff) {
  RefusingServer server(2, "30000");
  ASSERT_NE(server.server, nullptr);
  ClientOptions options;
  options.honor_pushback = false;
  options.retry_codes = {absl::StatusCode::kUnavailable, absl::StatusCode::kResourceExhausted};
  options.initial_backoff = absl::Milliseconds(10);
  options.deadline = absl::Seconds(20);
  auto client = Client::Connect(server.target(), options);
  ASSERT_TRUE(client.ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::WorldDescription> description = (*client)->DescribeWorld();
  ASSERT_TRUE(description.ok()) << description.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(server.service.arrivals().size(), 3u);
}

TEST(ClientOptionsTest, ChannelDurationsBeyondGrpcsIntMillisecondsAreRefused) {
  for (auto set : std::vector<std::function<void(ClientOptions&)>>{
           [](ClientOptions& o) { o.keepalive_time = absl::Hours(24 * 30); },
           [](ClientOptions& o) { o.keepalive_timeout = -absl::Seconds(1); },
           [](ClientOptions& o) { o.max_reconnect_backoff = absl::InfiniteDuration(); }}) {
    ClientOptions options;
    set(options);
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect("127.0.0.1:1", options);
    EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument) << client.status();
  }
  ClientOptions longest;
  longest.keepalive_time = absl::Milliseconds(std::numeric_limits<int>::max());
  EXPECT_TRUE(Client::Connect("127.0.0.1:1", longest).ok());
}

}  // namespace
}  // namespace worldgen
