// End-to-end tests of how calls flow through a server of their own: identical bytes across
// processes and cache settings, cancellation, slow readers, a full queue, SIGTERM draining and the
// metrics.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "proto/world_config.h"
#include "proto/world_registry.h"
#include "reflection_probe.grpc.pb.h"
#include "server/service/wire_encoding.h"
#include "tests/support/call_log_lines.h"
#include "tests/support/scratch_dir_test.h"
#include "tests/support/server_process.h"
#include "tests/support/worldgen_calls.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::worldgen::testing;  // NOLINT: the shared test helpers (tests/support).

// --- Tests that need a server of their own
// ----------------------------------------------------------

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

// The encoded-chunk cache (--chunk_cache_bytes) serves repeats without blending, with the very
// bytes a fresh blend gives; every request option is part of the key; concurrent calls for the same
// chunks blend each chunk once between them (joined or cached), and only then does the cache hold
// it.
TEST(WorldGenServerProcessTest, ChunkRepliesAreSharedAndCachedByEveryOption) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=2", "--chunk_cache_bytes=33554432"});
  std::unique_ptr<ServerProcess> plain = StartServer({"--blend_threads=2"});
  ASSERT_TRUE(server && plain);
  auto stub = Connect(server->target());
  auto plain_stub = Connect(plain->target());
  v1::GenerateChunkRequest request = RegionRequest(-6, -4, 5, 3, 16);  // 96 chunks
  request.set_include_heights(true);
  const StreamResult first = GenerateAll(*stub, request);
  const StreamResult again = GenerateAll(*stub, request);
  const StreamResult fresh = GenerateAll(*plain_stub, request);
  ASSERT_TRUE(first.status.ok() && again.status.ok() && fresh.status.ok());
  ASSERT_EQ(first.chunks.size(), 96u);
  EXPECT_TRUE(ByCoord(again.chunks) == ByCoord(first.chunks));
  EXPECT_TRUE(ByCoord(fresh.chunks) == ByCoord(first.chunks)) << "cached bytes are a fresh blend's";
  WaitUntilIdle(*server);
  std::vector<MetricSample> metrics = Scrape(*server);
  EXPECT_EQ(MetricValue(metrics, "worldgen_chunk_replies_total", {{"source", "cached"}}), 96);
  EXPECT_EQ(MetricValue(metrics, "worldgen_chunk_replies_total", {{"source", "computed"}}), 96);
  EXPECT_EQ(MetricValue(metrics, "worldgen_chunks_generated_total"), 96) << "repeats blend nothing";
  EXPECT_GT(MetricValue(metrics, "worldgen_chunk_cache_bytes"), 96 * 100);

  // Each option is its own entry: another combination blends again and answers differently.
  for (int variant = 0; variant < 3; ++variant) {
    v1::GenerateChunkRequest other = request;
    if (variant == 0) other.set_include_heights(false);
    if (variant == 1) other.set_include_dominant_biome(true);
    if (variant == 2) other.set_include_source_biome(true);
    const StreamResult result = GenerateAll(*stub, other);
    ASSERT_TRUE(result.status.ok()) << variant;
    EXPECT_FALSE(ByCoord(result.chunks) == ByCoord(first.chunks)) << variant;
    EXPECT_TRUE(ByCoord(result.chunks) == ByCoord(GenerateAll(*plain_stub, other).chunks))
        << variant;
  }
  WaitUntilIdle(*server);
  EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_chunks_generated_total"), 4 * 96);

  // Without the cache (the default), concurrent identical calls still blend each chunk at most once
  // between calls that overlap in time, and every call gets every chunk, bit-identical.
  v1::GenerateChunkRequest hot = RegionRequest(20, 20, 27, 27, 16);  // 64 chunks
  hot.set_include_heights(true);
  const auto expected = ByCoord(GenerateAll(*plain_stub, hot).chunks);
  WaitUntilIdle(*plain);
  const double before = MetricValue(Scrape(*plain), "worldgen_chunks_generated_total");
  std::vector<StreamResult> results(6);
  std::vector<std::thread> callers;
  for (size_t t = 0; t < results.size(); ++t) {
    callers.emplace_back([&, t] { results[t] = GenerateAll(*Connect(plain->target()), hot); });
  }
  for (std::thread& caller : callers) caller.join();
  for (const StreamResult& result : results) {
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_TRUE(ByCoord(result.chunks) == expected);
  }
  WaitUntilIdle(*plain);
  metrics = Scrape(*plain);
  const double computed =
      MetricValue(metrics, "worldgen_chunk_replies_total", {{"source", "computed"}});
  const double joined =
      MetricValue(metrics, "worldgen_chunk_replies_total", {{"source", "joined"}});
  EXPECT_EQ(MetricValue(metrics, "worldgen_chunk_replies_total", {{"source", "cached"}}), 0);
  // Before: 4 x 96 chunks (one heights request and three variants) and the 64 of `expected`.
  EXPECT_EQ(computed + joined, 96 * 4 + 64 * 7) << "every reply is counted once";
  EXPECT_EQ(MetricValue(metrics, "worldgen_chunks_generated_total"), computed)
      << "a joined reply blends nothing";
  EXPECT_LE(computed - before, 6 * 64);
  std::fprintf(stderr,
               "figure single-flight: 6 concurrent calls of 64 chunks: %.0f blended, %.0f joined\n",
               computed - before, joined);
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
  // chunks of 256 x 256, far more than HTTP/2 flow control lets through unread, yet few enough to
  // be admitted within the deadline; 1024 of them would be refused at once.)
  {
    grpc::ClientContext context;
    context.set_deadline(Deadline(absl::Milliseconds(1500)));
    v1::GenerateChunkRequest small = RegionRequest(0, 0, 1, 1, 256);
    small.set_include_heights(true);
    auto reader = stub->GenerateChunk(&context, small);
    absl::SleepFor(absl::Milliseconds(2000));
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

// The chunks blended so far, once that count has stopped moving (five scrapes 100 ms apart alike;
// at most a minute).
double WaitUntilBlendingStops(ServerProcess& server) {
  double last = -1;
  int unchanged = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (unchanged < 5 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(100));
    double now = MetricValue(Scrape(server), "worldgen_chunks_generated_total");
    unchanged = now == last ? unchanged + 1 : 0;
    last = now;
  }
  return last;
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
  // Stop reading. The server may fill its stream buffer and the transport's flow-control window,
  // then must stop blending.
  const double last = WaitUntilBlendingStops(*server);
  EXPECT_LT(last, 64) << "the server kept blending for a client that does not read";
  RecordProperty("chunks_blended_for_a_stalled_reader", static_cast<int>(last));
  context.TryCancel();
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

// With the default flags (--stream_buffer_chunks 16, --stream_buffer_bytes 8 MiB), a stalled stream
// of 256 x 256 chunks (3.1 MB each at worst with heights) keeps two outstanding, not sixteen: the
// bytes it reserves stay within 8 MiB.
TEST(WorldGenServerProcessTest, BigChunksGetAShallowerStreamBuffer) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=2"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  v1::GenerateChunkRequest request = RegionRequest(0, 0, 31, 31, 256);
  request.set_include_heights(true);
  auto reader = stub->GenerateChunk(&context, request);
  v1::ChunkData chunk;
  ASSERT_TRUE(reader->Read(&chunk));
  const double blended = WaitUntilBlendingStops(*server);
  const double reserved = MetricValue(Scrape(*server), "worldgen_reply_bytes_reserved");
  EXPECT_GT(reserved, 0);
  EXPECT_LE(reserved, 8 << 20)
      << "a stalled stream of big chunks holds more than --stream_buffer_bytes";
  EXPECT_LT(blended, 32);
  std::fprintf(stderr,
               "figure stalled 256x256 stream: %.0f chunks blended, %.0f reply bytes reserved\n",
               blended, reserved);
  context.TryCancel();
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

// A call whose own work is past --max_queue_seconds is refused at once with the reason, the
// figures, and gRPC's "do not retry" pushback (-1): waiting cannot make it fit, splitting can.
// Smaller calls and calls that need no blending go on meanwhile. (A refusal for queued work, with
// the time to come back, is tested through another client's retries: PythonClientTest.
// ShippedServiceConfigRetriesRefusalsAfterTheServersPushback.)
TEST(WorldGenServerProcessTest, ACallPastTheQueueBoundAloneIsToldToSplitWhileOtherCallsSucceed) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--max_queue_seconds=0.2"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  // 64 chunks of 256^2 columns: 0.84 s at the estimate a fresh server starts from (2e-7 s/column).
  grpc::ClientContext context;
  context.set_deadline(Deadline(kCallTimeout));
  auto reader = stub->GenerateChunk(&context, RegionRequest(0, 0, 7, 7, 256));
  v1::ChunkData chunk;
  EXPECT_FALSE(reader->Read(&chunk));
  grpc::Status status = reader->Finish();
  ASSERT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("this call alone is 838.9 ms of blending"));
  EXPECT_THAT(status.error_message(), HasSubstr("max_queue_seconds = 0.2"));
  EXPECT_THAT(status.error_message(), Not(HasSubstr("retry in")));
  const auto& trailers = context.GetServerTrailingMetadata();
  auto pushback = trailers.find("grpc-retry-pushback-ms");
  ASSERT_NE(pushback, trailers.end()) << "no pushback trailer";
  EXPECT_EQ(absl::string_view(pushback->second.data(), pushback->second.size()), "-1");

  // A call within the bound, a point query and a call that blends nothing all succeed.
  EXPECT_TRUE(GenerateAll(*stub, RegionRequest(0, 0, 3, 3, 16)).status.ok());
  v1::SampleWeightsRequest probe;
  v1::Point* point = probe.add_points();
  point->set_x(1);
  point->set_z(2);
  v1::SampleWeightsResponse response;
  EXPECT_TRUE(Sample(*stub, probe, &response).ok());
  v1::WorldDescription description;
  EXPECT_TRUE(Describe(*stub, "", &description).ok());
  std::vector<MetricSample> metrics = Scrape(*server);
  EXPECT_EQ(MetricValue(metrics, "worldgen_rejected_calls_total", {{"reason", "queue_full"}}), 1);
  EXPECT_EQ(MetricValue(metrics, "worldgen_queued_work_limit_seconds"), 0.2);
  // The call log (--call_log=errors) names the refused call, its size and reason; not the others.
  const std::vector<v1::CallLogLine> lines = CallLogLines(server->output());
  ASSERT_EQ(lines.size(), 1u) << server->output();
  EXPECT_EQ(lines[0].code(), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(lines[0].reason(), "queue_full");
  EXPECT_EQ(lines[0].items(), 64);
  EXPECT_EQ(lines[0].message(), status.error_message());
}

// SIGTERM with a stream in flight: health turns NOT_SERVING, the stream delivers every chunk and
// its status, and the server exits 0.
void ExpectSigtermDrains(std::vector<std::string> flags) {
  flags.push_back("--blend_threads=2");
  std::unique_ptr<ServerProcess> server = StartServer(flags);
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

// The stream's last chunks reach the client through the listener's lingering close (gRPC's own
// close used to reset the connection while the client was still reading: 1 run in 50-80 lost up
// to 20 of the 64 chunks).
TEST(WorldGenServerProcessTest, SigtermTurnsHealthNotServingDrainsStreamsAndExitsZero) {
  ExpectSigtermDrains({});
}

// The same through the HTTP/2 frame guard's relay, which drains its connections itself.
TEST(WorldGenServerProcessTest, SigtermDrainsStreamsThroughTheHttp2Guard) {
  ExpectSigtermDrains({"--http2_guard=true"});
}

// Every example world has one fingerprint whatever SIMD variant a replica runs
// (WORLDGEN_SIMD_VARIANT; a variant this CPU or build cannot run, or a build without dispatch does
// not hold, is skipped, as the server refuses it), the same as a registry of the same files built
// in this process, and each replica exports it as worldgen_world_info. Replicas on different CPUs
// behind one balancer agree this way.
TEST(WorldGenServerProcessTest, EveryWorldHasOneFingerprintUnderEverySimdVariant) {
  const std::string worlds = std::string(WORLDGEN_SOURCE_DIR) + "/docker/worlds";
  absl::StatusOr<std::vector<WorldSpec>> specs = LoadWorldSpecs({worlds});
  ASSERT_TRUE(specs.ok()) << specs.status();
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> registry =
      WorldRegistry::Create(*std::move(specs));
  ASSERT_TRUE(registry.ok()) << registry.status();
  const std::vector<std::string> names = (*registry)->names();
  ASSERT_GE(names.size(), 5u);
  std::set<std::string> distinct;
  for (const std::string& name : names) distinct.insert((*registry)->fingerprint(name));
  EXPECT_EQ(distinct.size(), names.size()) << "two worlds share a fingerprint";

  int variants_run = 0;
  for (const char* variant : {"avx512", "avx2", "baseline"}) {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start({"--blend_threads=1", absl::StrCat("--world_config=", worlds)},
                             absl::Seconds(60), {absl::StrCat("WORLDGEN_SIMD_VARIANT=", variant)});
    if (!server.ok() && (absl::StrContains(server.status().message(), "cannot run it") ||
                         absl::StrContains(server.status().message(), "not a variant of this"))) {
      continue;
    }
    ASSERT_TRUE(server.ok()) << variant << ": " << server.status();
    ++variants_run;
    auto stub = Connect((*server)->target());
    const std::vector<MetricSample> metrics = Scrape(**server);
    for (const std::string& name : names) {
      v1::WorldDescription description;
      ASSERT_TRUE(Describe(*stub, name, &description).ok()) << name;
      EXPECT_EQ(description.fingerprint(), (*registry)->fingerprint(name))
          << variant << ", world " << name;
      EXPECT_EQ(MetricValue(metrics, "worldgen_world_info",
                            {{"world", name}, {"fingerprint", description.fingerprint()}}),
                1)
          << variant << ", world " << name;
    }
  }
  EXPECT_GE(variants_run, 1) << "not even the baseline variant started";
}

TEST(WorldGenServerProcessTest, TheCallLogNamesEachFailedCallsOutcomeWorldAndClient) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--max_points_per_request=2"});  // --call_log=errors
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  ASSERT_TRUE(GenerateAll(*stub, ListRequest({{0, 0}}, 16)).status.ok());
  v1::GenerateChunkRequest unknown = ListRequest({{3, 4}, {5, 6}}, 16);
  unknown.set_world("nope");
  EXPECT_EQ(GenerateAll(*stub, unknown, kCallTimeout,
                        {{"x-forwarded-for", "192.0.2.44"},
                         {"x-request-id", "5f0e6d2ab1c94b1d8c1f4f6e1e7a9b20"}})
                .status.error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::SampleWeightsRequest too_many;
  for (int i = 0; i < 3; ++i) too_many.add_points()->set_x(i);
  v1::SampleWeightsResponse response;
  EXPECT_EQ(Sample(*stub, too_many, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(*server, 2);
  absl::SleepFor(absl::Milliseconds(200));  // The OK call's line, were it written, is there too.
  lines = CallLogLines(server->output());
  ASSERT_EQ(lines.size(), 2u) << server->output();
  EXPECT_EQ(lines[0].method(), "GenerateChunk");
  EXPECT_EQ(lines[0].code(), "NOT_FOUND");
  EXPECT_EQ(lines[0].reason(), "not_found");
  EXPECT_EQ(lines[0].world(), "nope");
  EXPECT_THAT(lines[0].message(), HasSubstr("world = \"nope\" is not served"));
  EXPECT_EQ(lines[0].forwarded_for(), "192.0.2.44");
  EXPECT_EQ(lines[0].request_id(), "5f0e6d2ab1c94b1d8c1f4f6e1e7a9b20");
  EXPECT_THAT(lines[0].user_agent(), HasSubstr("grpc-c++/"));
  // The client's address, which gRPC itself names by the listener's descriptor.
  EXPECT_THAT(lines[0].peer(), ::testing::StartsWith("ipv4:127.0.0.1:"));
  // --fair_share=peer (the default): the client is the peer's address, not the header's.
  EXPECT_EQ(lines[0].client(), "127.0.0.1");
  EXPECT_EQ(lines[0].items(), 0) << "refused before its chunks were counted";
  EXPECT_EQ(lines[1].method(), "SampleWeights");
  EXPECT_EQ(lines[1].code(), "INVALID_ARGUMENT");
  EXPECT_EQ(lines[1].reason(), "invalid_argument");
  EXPECT_THAT(lines[1].message(), HasSubstr("points"));
  EXPECT_EQ(lines[1].peer(), lines[0].peer()) << "one channel, one connection";
  EXPECT_TRUE(lines[1].forwarded_for().empty());
  EXPECT_GT(lines[1].duration_ms(), 0);
  EXPECT_LT(lines[1].duration_ms(), 10000);
}

TEST(WorldGenServerProcessTest, TheCallLogDropsLinesOverItsRateAndCountsThem) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--call_log_lines_per_second=1"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  v1::WorldDescription description;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Describe(*stub, "nope", &description).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  std::vector<MetricSample> m = Scrape(*server);
  EXPECT_EQ(MetricValue(m, "worldgen_call_log_lines_total", {{"outcome", "written"}}), 1);
  EXPECT_EQ(MetricValue(m, "worldgen_call_log_lines_total", {{"outcome", "dropped"}}), 2);
  absl::SleepFor(absl::Milliseconds(1100));  // The bucket holds a line again.
  EXPECT_EQ(Describe(*stub, "nope", &description).error_code(), grpc::StatusCode::NOT_FOUND);
  const std::vector<v1::CallLogLine> lines = AwaitCallLogLines(*server, 2);
  ASSERT_EQ(lines.size(), 2u) << server->output();
  EXPECT_EQ(lines[0].suppressed(), 0);
  EXPECT_EQ(lines[1].suppressed(), 2) << "the two dropped lines, counted in the next";
  m = Scrape(*server);
  EXPECT_EQ(MetricValue(m, "worldgen_call_log_lines_total", {{"outcome", "written"}}), 2);
}

TEST(WorldGenServerProcessTest, TheCallLogAtLevelAllNamesEveryCall) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--call_log=all", "--http2_guard"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  ASSERT_TRUE(GenerateAll(*stub, ListRequest({{0, 0}, {7, -2}}, 16)).status.ok());
  v1::WorldDescription description;
  ASSERT_TRUE(Describe(*stub, "", &description).ok());
  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(*server, 2);
  ASSERT_EQ(lines.size(), 2u) << server->output();
  // In either order: the stream's line is written when the server is done with the call, which
  // may be after the client has its status and made the next call.
  if (lines[0].method() != "GenerateChunk") std::swap(lines[0], lines[1]);
  EXPECT_EQ(lines[0].method(), "GenerateChunk");
  EXPECT_EQ(lines[0].code(), "OK");
  EXPECT_EQ(lines[0].items(), 2);
  EXPECT_TRUE(lines[0].message().empty());
  EXPECT_TRUE(lines[0].reason().empty());
  EXPECT_GT(lines[0].duration_ms(), 0);
  // Through the HTTP/2 guard gRPC is handed one end of a socket pair: still the client's address.
  EXPECT_THAT(lines[0].peer(), ::testing::StartsWith("ipv4:127.0.0.1:"));
  EXPECT_EQ(lines[1].method(), "DescribeWorld");
  EXPECT_EQ(lines[1].code(), "OK");
  EXPECT_EQ(lines[1].peer(), lines[0].peer()) << "one connection";
}

// One blend thread, a bulk stream keeping it busy, and small calls beside it: each call's line
// says how long its tasks waited for the thread and blended, and the metrics count every task's
// wait by its call's class.
TEST(WorldGenServerProcessTest, TheCallLogAndMetricsSayHowLongCallsWaitedForABlendThread) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--call_log=all", "--stream_buffer_chunks=4"});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  // 64 chunks of 256 x 256 with heights: a background stream of many milliseconds per chunk.
  v1::GenerateChunkRequest bulk = RegionRequest(0, 0, 7, 7, 256);
  bulk.set_include_heights(true);
  grpc::Status bulk_status;
  std::thread bulk_reader([&] { bulk_status = GenerateAll(*stub, bulk).status; });
  while (MetricValue(Scrape(*server), "worldgen_chunks_generated_total") < 2) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  constexpr int kCalls = 5;
  for (int i = 0; i < kCalls; ++i) {
    v1::GenerateChunkRequest one = ListRequest({{100 + i, -40}}, 64);  // interactive
    one.set_include_heights(true);
    ASSERT_TRUE(GenerateAll(*stub, one).status.ok());
  }
  v1::SampleWeightsRequest points;
  for (int p = 0; p < 5; ++p) {
    v1::Point* point = points.add_points();
    point->set_x(p * 301.5);
    point->set_z(-977.25);
  }
  v1::SampleWeightsResponse sampled;
  ASSERT_TRUE(Sample(*stub, points, &sampled).ok());
  bulk_reader.join();
  ASSERT_TRUE(bulk_status.ok()) << bulk_status.error_message();

  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(*server, kCalls + 2);
  ASSERT_EQ(lines.size(), size_t{kCalls + 2}) << server->output();
  double most_queued = 0, most_took = 0, bulk_blend_ms = 0;
  for (const v1::CallLogLine& line : lines) {
    EXPECT_GT(line.blend_ms(), 0) << "every chunk and point here was blended, none cached";
    if (line.method() == "SampleWeights") continue;
    if (line.items() == 64) {
      // 64 tasks queued one behind another on one thread.
      EXPECT_GT(line.queued_ms(), 0);
      bulk_blend_ms = line.blend_ms();
    } else {
      most_queued = std::max(most_queued, line.queued_ms());
      most_took = std::max(most_took, line.duration_ms());
    }
  }
  std::fprintf(stderr,
               "figure one-chunk calls beside a bulk stream: at most %.2f ms waiting for the "
               "thread, %.2f ms in all; the bulk stream's chunks %.2f ms each\n",
               most_queued, most_took, bulk_blend_ms / 64);
  // A one-chunk call arriving while a bulk chunk blends waits for it (one that found the thread
  // idle, between two bulk chunks, waited for nothing).
  EXPECT_GT(most_queued, 0);

  WaitUntilIdle(*server);
  const std::vector<MetricSample> m = Scrape(*server);
  for (const auto& [label, tasks] :
       {std::pair{"interactive", kCalls + 1}, std::pair{"background", 64}}) {
    const double count = MetricValue(m, "worldgen_queue_wait_seconds_count", {{"class", label}});
    EXPECT_EQ(count, tasks) << label;
    EXPECT_EQ(
        MetricValue(m, "worldgen_queue_wait_seconds_bucket", {{"class", label}, {"le", "+Inf"}}),
        count)
        << label;
    EXPECT_GT(MetricValue(m, "worldgen_queue_wait_seconds_sum", {{"class", label}}), 0) << label;
  }
}

// On one blend thread, a one-chunk call that arrives while a bulk chunk blends is answered before
// that chunk is done: the bulk task runs it between its pieces (World::BlendChunkInPieces and
// BlendVolumeInPieces, CallScheduler::RunWaitingInteractive) instead of making it wait for the
// whole chunk. The bulk chunk's bytes are those of the same chunk on a server that lends nothing
// (where the chunk is interactive). Each bulk chunk is an example world made slow (about 0.1 s
// here), so it outlasts detecting its start, the one-chunk call and a scrape many times over.
class ChunkPiecesProcessTest : public ScratchDirTest {
 protected:
  // docker/worlds/`world`.json with `from` replaced by `to`, unpinned (its output changes).
  std::string SlowWorld(const std::string& world, const std::string& from, const std::string& to) {
    std::ifstream in(absl::StrCat(WORLDGEN_SOURCE_DIR, "/docker/worlds/", world, ".json"));
    std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(absl::StrContains(config, from)) << from;
    absl::StrReplaceAll({{from, to}}, &config);
    config =
        std::regex_replace(config, std::regex(R"(\n *"expectedFingerprint": "[0-9a-f]+",)"), "");
    return absl::StrCat("--world_config=", Write("slow.json", config));
  }

  // Streams `bulk` (a background call) and, once its task started, `one` (interactive).
  void ExpectOneRunsBetweenThePiecesOfBulk(const std::string& worlds,
                                           const v1::GenerateChunkRequest& bulk,
                                           const v1::GenerateChunkRequest& one) {
    const std::string interactive = "--interactive_max_columns=256";
    std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1", interactive, worlds});
    // Where the same chunk is interactive, so its task lends nothing.
    std::unique_ptr<ServerProcess> whole =
        StartServer({"--blend_threads=1", "--interactive_max_columns=1000000000", worlds});
    ASSERT_TRUE(server && whole);
    auto stub = Connect(server->target());
    StreamResult bulk_result;
    std::thread bulk_reader([&] { bulk_result = GenerateAll(*stub, bulk); });
    auto chunks_blended = [&] {
      return MetricValue(Scrape(*server), "worldgen_chunks_generated_total");
    };
    while (MetricValue(Scrape(*server), "worldgen_queue_wait_seconds_count",
                       {{"class", "background"}}) < 1) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    EXPECT_EQ(chunks_blended(), 0);
    const absl::Time start = absl::Now();
    EXPECT_TRUE(GenerateAll(*stub, one).status.ok());
    const absl::Duration one_took = absl::Now() - start;
    EXPECT_EQ(chunks_blended(), 1) << "the one-chunk call waited for the whole bulk chunk";
    bulk_reader.join();
    ASSERT_TRUE(bulk_result.status.ok()) << bulk_result.status.error_message();
    std::printf("figure: one-chunk call beside the bulk chunk: %.2f ms\n",
                absl::ToDoubleMilliseconds(one_took));
    auto whole_stub = Connect(whole->target());
    const StreamResult reference = GenerateAll(*whole_stub, bulk);
    ASSERT_TRUE(reference.status.ok());
    ASSERT_EQ(bulk_result.chunks.size(), 1u);
    ASSERT_EQ(reference.chunks.size(), 1u);
    EXPECT_TRUE(bulk_result.chunks[0].SerializeAsString() ==
                reference.chunks[0].SerializeAsString())
        << "the chunk blended in pieces differs from the chunk blended whole";
    WaitUntilIdle(*server);
    EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_queue_wait_seconds_count",
                          {{"class", "interactive"}}),
              1);
  }
};

// 256 x 256 of the full-resolution blur at radius 48 with heights.
TEST_F(ChunkPiecesProcessTest, AOneChunkCallRunsBetweenThePiecesOfABulkChunk) {
  const std::string worlds = SlowWorld("highlands", R"("fullResolution": { "blendRadius": 12 })",
                                       R"("fullResolution": { "blendRadius": 48 })");
  v1::GenerateChunkRequest bulk = ListRequest({{3, -2}}, 256);
  bulk.set_world("highlands");
  bulk.set_include_heights(true);
  v1::GenerateChunkRequest one = ListRequest({{40, 7}}, 16);
  one.set_world("highlands");
  one.set_include_heights(true);
  ExpectOneRunsBetweenThePiecesOfBulk(worlds, bulk, one);
}

// A 3D chunk of 32 x 256 x 32 cells of one block, 16 sections, of the cave world with caves
// sampled twice as densely (8 times the kernel terms), crossing every cave band.
TEST_F(ChunkPiecesProcessTest, AOneChunkCallRunsBetweenThePiecesOfABulkVolume) {
  const std::string worlds =
      SlowWorld("caves", R"("samplingInterval": 8,)", R"("samplingInterval": 4,)");
  v1::GenerateChunkRequest bulk = ListRequest({{5, -9}}, 32);
  bulk.set_world("caves");
  bulk.mutable_vertical()->set_min_y(-64);
  bulk.mutable_vertical()->set_max_y(192);
  bulk.mutable_vertical()->set_cell_size(1);
  v1::GenerateChunkRequest one = ListRequest({{40, 7}}, 16);
  one.set_world("caves");
  ExpectOneRunsBetweenThePiecesOfBulk(worlds, bulk, one);
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
        "worldgen_cache_evictions_total", "worldgen_cache_bytes", "worldgen_rejected_calls_total",
        "worldgen_queued_work_seconds", "worldgen_queued_work_limit_seconds",
        "worldgen_shed_calls_total"}) {
    EXPECT_THAT(*text, HasSubstr(absl::StrCat("# TYPE ", name, " "))) << name;
  }
  std::vector<MetricSample> m = ParseMetrics(*text);
  auto rpcs = [&](const char* method, const char* code) {
    return MetricValue(m, "worldgen_rpc_duration_seconds_count",
                       {{"method", method}, {"code", code}});
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
  // --call_log=errors: a line for each of the two refusals.
  EXPECT_EQ(MetricValue(m, "worldgen_call_log_lines_total", {{"outcome", "written"}}), 2);
  EXPECT_EQ(MetricValue(m, "worldgen_call_log_lines_total", {{"outcome", "dropped"}}), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_inflight_calls"), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_queue_depth"), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_queued_work_seconds"), 0);
  EXPECT_EQ(MetricValue(m, "worldgen_queued_work_limit_seconds"), 30);
  EXPECT_EQ(MetricValue(m, "worldgen_shed_calls_total"), 0);
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

}  // namespace
}  // namespace worldgen
