// Reliability against hostile or careless clients and operators (ctest label "reliability"): bytes
// that are no request, oversized and compressed requests, unbounded names, duplicate chunks, idle
// and slow clients of the metrics port, and the SIGTERM drain a load balancer expects. Loopback
// only, bounded in count and time; each test states the server's peak RSS it allows.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/support/worldgen_calls.h"

namespace worldgen {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::worldgen::testing::Connect;
using ::worldgen::testing::Deadline;
using ::worldgen::testing::ExpectPeakRssBelow;
using ::worldgen::testing::GenerateAll;
using ::worldgen::testing::HttpGet;
using ::worldgen::testing::ListRequest;
using ::worldgen::testing::MetricValue;
using ::worldgen::testing::RegionRequest;
using ::worldgen::testing::Scrape;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::StartServer;

// Sends `bytes` as the request of `method` (a full gRPC method path) and returns the status.
grpc::Status CallRaw(const std::string& target, const std::string& method, const std::string& bytes,
                     grpc::ChannelArguments args = {}) {
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(Deadline(absl::Seconds(30)));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::CompletionQueue queue;
  auto call = stub.PrepareUnaryCall(&context, method, request, &queue);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(queue.Next(&tag, &ok));
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  return status;
}

TEST(HostileClientTest, BytesThatAreNoRequestGetInvalidArgumentAndAreCounted) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1"});
  ASSERT_TRUE(server);
  // A field tag with wire type 7 (invalid), then a truncated length-delimited field.
  const std::string garbage[] = {std::string("\x0f\x01\x02", 3),
                                 std::string("\x1a\xff\xff\x0f", 4)};
  int sent = 0;
  for (const char* method :
       {"GenerateChunk", "SampleWeights", "DescribeWorld", "ListSamplingPoints"}) {
    for (const std::string& bytes : garbage) {
      grpc::Status status =
          CallRaw(server->target(), absl::StrCat("/worldgen.v1.WorldGen/", method), bytes);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
      EXPECT_THAT(status.error_message(), HasSubstr("request is not a valid worldgen.v1."))
          << method;
      ++sent;
    }
  }
  EXPECT_EQ(
      MetricValue(Scrape(*server), "worldgen_rejected_calls_total", {{"reason", "unparseable"}}),
      sent);
  // The server is fine afterwards.
  auto stub = Connect(server->target());
  EXPECT_TRUE(GenerateAll(*stub, RegionRequest(0, 0, 0, 0, 16)).status.ok());
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "unparseable requests");
}

// A world name that is not UTF-8 cannot be a proto string: the refusal names the field, and the
// server's stderr holds the call log's lines only (protobuf's own line per request is not there).
TEST(HostileClientTest, AStringThatIsNotUtf8IsRefusedByNameWithoutALogLineOfItsOwn) {
  std::unique_ptr<ServerProcess> server = StartServer({"--blend_threads=1"});
  ASSERT_TRUE(server);
  const std::string world_ff_fe("\x0a\x02\xff\xfe", 4);  // field 1 (world) = "\xff\xfe"
  for (const char* method :
       {"GenerateChunk", "SampleWeights", "DescribeWorld", "ListSamplingPoints"}) {
    grpc::Status status =
        CallRaw(server->target(), absl::StrCat("/worldgen.v1.WorldGen/", method), world_ff_fe);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(status.error_message(),
                HasSubstr(absl::StrCat("worldgen.v1.", method, "Request.world is not valid UTF-8")))
        << method;
  }
  EXPECT_EQ(
      MetricValue(Scrape(*server), "worldgen_rejected_calls_total", {{"reason", "unparseable"}}),
      4);
  EXPECT_THAT(server->output(), Not(HasSubstr("libprotobuf")));
}

// Plain requests past --max_request_bytes get RESOURCE_EXHAUSTED; compressed ones are refused
// before they are read, whatever their size, with UNIMPLEMENTED naming the encoding (gRPC 1.51
// checks the size only after inflating: Http2AbuseTest has the gibibyte bomb).
TEST(HostileClientTest, RequestSizeLimitHoldsWhateverTheEncoding) {
  std::unique_ptr<ServerProcess> server = StartServer({"--max_request_bytes=65536"});
  ASSERT_TRUE(server);
  v1::DescribeWorldRequest request;
  request.set_world(std::string(4 << 20, 'a'));  // 4 MiB of one byte: gzip makes it ~4 KiB.
  grpc::Status plain =
      CallRaw(server->target(), "/worldgen.v1.WorldGen/DescribeWorld", request.SerializeAsString());
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << plain.error_message();
  v1::DescribeWorldRequest small;  // Fits the limit: refused for its encoding alone.
  small.set_world("default");
  for (const auto& [algorithm, name] :
       {std::pair{GRPC_COMPRESS_GZIP, "gzip"}, std::pair{GRPC_COMPRESS_DEFLATE, "deflate"}}) {
    grpc::ChannelArguments args;
    args.SetCompressionAlgorithm(algorithm);
    for (const v1::DescribeWorldRequest* message : {&request, &small}) {
      grpc::Status status = CallRaw(server->target(), "/worldgen.v1.WorldGen/DescribeWorld",
                                    message->SerializeAsString(), args);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED)
          << name << ": " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("'", name, "' is disabled")));
    }
  }
  auto stub = Connect(server->target());
  EXPECT_TRUE(GenerateAll(*stub, RegionRequest(0, 0, 0, 0, 16)).status.ok());
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "oversized requests");
}

TEST(HostileClientTest, ErrorsEchoAtMostABoundedEscapedPieceOfTheInput) {
  std::unique_ptr<ServerProcess> server = StartServer({});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  std::string name(200000, 'x');
  name[3] = '\n';
  name[4] = '"';
  v1::WorldDescription description;
  grpc::Status status = testing::Describe(*stub, name, &description);
  ASSERT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_LT(status.error_message().size(), 400u);
  EXPECT_THAT(status.error_message(), HasSubstr("world = \"xxx\\n\\\"xxx"));
  EXPECT_THAT(status.error_message(), HasSubstr("... (200000 bytes) is not served"));
  EXPECT_EQ(status.error_message().find('\n'), std::string::npos);
}

TEST(HostileClientTest, DuplicateChunksAreRejectedNotBlendedTwice) {
  std::unique_ptr<ServerProcess> server = StartServer({});
  ASSERT_TRUE(server);
  auto stub = Connect(server->target());
  std::vector<std::pair<int64_t, int64_t>> coords(1024, {3, 4});
  testing::StreamResult result = GenerateAll(*stub, ListRequest(coords, 64));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(result.status.error_message(),
            "chunks.coords[1] = (3, 4) repeats chunks.coords[0]: list each chunk once");
  EXPECT_TRUE(result.chunks.empty());
  EXPECT_EQ(MetricValue(Scrape(*server), "worldgen_chunks_generated_total"), 0);
}

// 64 connections that send nothing and 16 that send half a request, all held open: a scrape still
// succeeds, within (80 / --metrics_threads) x --metrics_request_timeout_ms plus slack.
TEST(HostileClientTest, MetricsScrapeSucceedsWhileOtherClientsHoldThePortIdle) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--metrics_threads=8", "--metrics_request_timeout_ms=500"});
  ASSERT_TRUE(server);
  std::vector<int> fds;
  for (int i = 0; i < 80; ++i) {
    const int fd = testing::ConnectLoopback(server->metrics_port());
    ASSERT_GE(fd, 0);
    if (i >= 64) {
      ASSERT_GT(write(fd, "GET /metr", 9), 0);
    }
    fds.push_back(fd);
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> scrape =
      HttpGet("127.0.0.1", server->metrics_port(), "/metrics", absl::Seconds(20));
  const absl::Duration took = absl::Now() - start;
  std::fprintf(stderr, "figure metrics: scrape with 80 idle/slow clients took %.0f ms\n",
               absl::ToDoubleMilliseconds(took));
  EXPECT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_LT(took, absl::Seconds(10));
  for (int fd : fds) close(fd);
  ExpectPeakRssBelow(*server, int64_t{200} << 20, "metrics idle clients");
}

// SIGTERM: health turns NOT_SERVING at once while calls are still served for the drain delay, then
// the server stops accepting and exits 0 once the call in flight is done.
TEST(HostileClientTest, SigtermDrainsAsLoadBalancersExpect) {
  std::unique_ptr<ServerProcess> server =
      StartServer({"--blend_threads=1", "--shutdown_drain_delay_seconds=2"});
  ASSERT_TRUE(server);
  auto channel = grpc::CreateChannel(server->target(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  auto stub = v1::WorldGen::NewStub(channel);
  grpc::ClientContext stream_context;
  stream_context.set_deadline(Deadline(absl::Seconds(60)));
  auto reader = stub->GenerateChunk(&stream_context, RegionRequest(0, 0, 15, 15, 64));
  v1::ChunkData chunk;
  ASSERT_TRUE(reader->Read(&chunk));

  const absl::Time signalled = absl::Now();
  ASSERT_EQ(kill(server->pid(), SIGTERM), 0);
  grpc::health::v1::HealthCheckResponse::ServingStatus seen =
      grpc::health::v1::HealthCheckResponse::SERVING;
  while (seen == grpc::health::v1::HealthCheckResponse::SERVING &&
         absl::Now() - signalled < absl::Seconds(1)) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(absl::Seconds(5)));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    if (health->Check(&context, request, &response).ok()) seen = response.status();
  }
  EXPECT_EQ(seen, grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  // Still accepting new calls during the drain delay, on a new connection too.
  auto fresh = Connect(server->target());
  EXPECT_TRUE(GenerateAll(*fresh, RegionRequest(0, 0, 0, 0, 16)).status.ok());
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(2));

  int chunks = 1;
  while (reader->Read(&chunk)) ++chunks;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(chunks, 256);
  absl::StatusOr<int> code = server->Wait();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_GE(absl::Now() - signalled, absl::Seconds(2));
}

TEST(HostileClientTest, ASecondSigtermExitsAtOnce) {
  std::unique_ptr<ServerProcess> server = StartServer({"--shutdown_drain_delay_seconds=60"});
  ASSERT_TRUE(server);
  ASSERT_EQ(kill(server->pid(), SIGTERM), 0);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (server->output().find("draining") == std::string::npos && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const absl::Time second = absl::Now();
  ASSERT_EQ(kill(server->pid(), SIGTERM), 0);
  absl::StatusOr<int> code = server->Wait(absl::Seconds(5));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 128 + SIGTERM);
  EXPECT_LT(absl::Now() - second, absl::Seconds(5));
  EXPECT_THAT(server->output(), HasSubstr("again: exiting now"));
}

}  // namespace
}  // namespace worldgen
