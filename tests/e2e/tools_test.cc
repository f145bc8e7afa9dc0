// Third-party tools against our outputs: promtool on /metrics and docker/prometheus.yml, an
// independent Python client, and the load generator's JSON report.
#include <gtest/gtest.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "client/worldgen_client.h"
#include "tests/client/subprocess.h"
#include "tests/e2e/e2e_paths.h"
#include "tests/support/server_process.h"

namespace worldgen::testing {
namespace {

TEST(PromtoolTest, AcceptsEveryReplicasMetrics) {
  for (int replica = 0; replica < 2; ++replica) {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    // Some traffic first, so the request and latency series exist.
    auto client = Client::Connect((*server)->target());
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->GenerateRegion({.max_x = 3, .max_z = 3}, {}, [](ChunkView) {}).ok());
    ASSERT_TRUE((*client)->SamplePoints({{1.5, 2.5}}).ok());
    EXPECT_EQ((*client)->GenerateChunk(0, 0, {.chunk_size = 3}).status().code(),
              absl::StatusCode::kInvalidArgument);
    absl::StatusOr<std::string> metrics =
        HttpGet("127.0.0.1", (*server)->metrics_port(), "/metrics");
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    EXPECT_NE(metrics->find("worldgen_chunks_generated_total"), std::string::npos);
    absl::StatusOr<CommandResult> check =
        RunCommand({kPromtool, "check", "metrics"}, absl::Seconds(60), *metrics);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_EQ(check->exit_code, 0) << check->out << check->err;
  }
}

TEST(PromtoolTest, AcceptsTheComposePrometheusConfig) {
  absl::StatusOr<CommandResult> check = RunCommand(
      {kPromtool, "check", "config", absl::StrCat(kSourceDir, "/docker/prometheus.yml")});
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->exit_code, 0) << check->out << check->err;
}

TEST(PythonClientTest, AgreesWithTheCppClientBitForBit) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> run =
      RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/python_client.py"),
                  absl::StrCat("--target=", (*server)->target()), absl::StrCat("--cli=", kCli),
                  absl::StrCat("--proto_dir=", kSourceDir, "/proto")},
                 absl::Seconds(120));
  ASSERT_TRUE(run.ok()) << run.status();
  std::cerr << run->out;
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_NE(run->out.find("python-client: OK"), std::string::npos) << run->out << run->err;
}

// The service config README tells other languages to use, in grpcio's own retry code: a refusal
// is retried after the server's grpc-retry-pushback-ms, up to maxAttempts.
TEST(PythonClientTest, ShippedServiceConfigRetriesRefusalsAfterTheServersPushback) {
  auto server = ServerProcess::Start({"--blend_threads=1", "--max_chunks_per_request=32768"});
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> run =
      RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/retry_policy_client.py"),
                  absl::StrCat("--target=", (*server)->target()),
                  absl::StrCat("--metrics=127.0.0.1:", (*server)->metrics_port()),
                  absl::StrCat("--proto_dir=", kSourceDir, "/proto"),
                  absl::StrCat("--service_config=", kSourceDir, "/docs/service_config.json")},
                 absl::Seconds(120));
  ASSERT_TRUE(run.ok()) << run.status();
  std::cerr << run->out;
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_NE(run->out.find("retry-policy: OK"), std::string::npos) << run->out << run->err;
}

// grpcurl's way, from Python with nothing compiled: every service reflection lists resolves, and
// grpc.health.v1.Health/Check is called through the descriptors reflection sent.
TEST(PythonClientTest, ResolvesEveryServiceThroughReflectionAndChecksHealth) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> run =
      RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/reflection_client.py"),
                  absl::StrCat("--target=", (*server)->target())},
                 absl::Seconds(60));
  ASSERT_TRUE(run.ok()) << run.status();
  std::cerr << run->out;
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_NE(run->out.find("reflection-client: OK"), std::string::npos) << run->out << run->err;
}

TEST(LoadCommandTest, JsonReportIsSaneForEveryPattern) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  for (const char* pattern : {"random", "spiral", "hot"}) {
    absl::StatusOr<CommandResult> load =
        RunCommand({kCli, absl::StrCat("--target=", (*server)->target()), "load", "--json",
                    "--requests=150", "--concurrency=3", "--chunks_per_request=4", "--size=32",
                    absl::StrCat("--pattern=", pattern)},
                   absl::Seconds(120));
    ASSERT_TRUE(load.ok()) << load.status();
    ASSERT_EQ(load->exit_code, 0) << load->err;
    absl::StatusOr<CommandResult> check =
        RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/check_load_report.py"), "150"},
                   absl::Seconds(60), load->out);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_EQ(check->exit_code, 0) << pattern << ": " << check->out << check->err;
    std::cerr << pattern << ": " << check->out;
  }
}

// `load --y`: 3D chunks of the example cave world, every request answered; a range the server
// refuses (not whole sections) fails every request with INVALID_ARGUMENT, so the range does reach
// it.
TEST(LoadCommandTest, VerticalRequestsLoadA3DWorld) {
  auto server = ServerProcess::Start(
      {absl::StrCat("--world_config=", kSourceDir, "/docker/worlds/caves.json")});
  ASSERT_TRUE(server.ok()) << server.status();
  const auto load = [&](const char* y, const char* requests) {
    return RunCommand(
        {kCli, absl::StrCat("--target=", (*server)->target()), "--world=caves", "load", "--json",
         "--progress=false", "--duration=0", absl::StrCat("--requests=", requests),
         "--concurrency=2", "--chunks_per_request=2", "--size=16", "--pattern=spiral",
         absl::StrCat("--y=", y), "--cell=4"},
        absl::Seconds(120));
  };
  absl::StatusOr<CommandResult> ok = load("-64:64", "24");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->exit_code, 0) << ok->err;
  EXPECT_NE(ok->out.find("\"vertical\":{\"min_y\":-64,\"max_y\":64,\"cell_size\":4}"),
            std::string::npos)
      << ok->out;
  absl::StatusOr<CommandResult> check =
      RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/check_load_report.py"), "24"},
                 absl::Seconds(60), ok->out);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->exit_code, 0) << check->out << check->err;
  std::cerr << "3D: " << check->out;

  absl::StatusOr<CommandResult> refused = load("-60:64", "4");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->exit_code, 1) << refused->out << refused->err;
  EXPECT_NE(refused->out.find("\"errors\":{\"INVALID_ARGUMENT\":4}"), std::string::npos)
      << refused->out;
  EXPECT_NE(refused->out.find("vertical.min_y = -60"), std::string::npos) << refused->out;
}

TEST(LoadCommandTest, DurationBoundedRunPrintsProgressOnStderr) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> load =
      RunCommand({kCli, absl::StrCat("--target=", (*server)->target()), "load", "--duration=2500ms",
                  "--concurrency=2", "--chunks_per_request=2"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->exit_code, 0) << load->err;
  EXPECT_NE(load->err.find("[load "), std::string::npos) << load->err;
  EXPECT_NE(load->out.find("latency ms: p50"), std::string::npos) << load->out;
  EXPECT_NE(load->out.find("errors: none"), std::string::npos) << load->out;
}

// Open loop: requests leave on the schedule, never faster. 40 requests/s for 2 s can send at most
// 80 (+1 per worker for the one due at the very end); a server on loopback answers them all.
TEST(LoadCommandTest, OpenLoopRateIsAnUpperBoundOnRequestsSent) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<CommandResult> load =
      RunCommand({kCli, absl::StrCat("--target=", (*server)->target()), "load", "--json",
                  "--duration=2s", "--rate=40", "--concurrency=2", "--chunks_per_request=1",
                  "--pattern=hot", "--progress=false"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  ASSERT_EQ(load->exit_code, 0) << load->err;
  EXPECT_NE(load->out.find("\"rate\":40"), std::string::npos) << load->out;
  const size_t at = load->out.find("\"requests\":");
  ASSERT_NE(at, std::string::npos) << load->out;
  const int requests = std::atoi(load->out.c_str() + at + 11);
  EXPECT_LE(requests, 82) << load->out;
  EXPECT_GE(requests, 20) << "a loopback server keeps up with 40 requests/s: " << load->out;
  EXPECT_NE(load->out.find("\"error_count\":0"), std::string::npos) << load->out;
}

}  // namespace
}  // namespace worldgen::testing
