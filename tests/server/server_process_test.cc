// The test harness itself: a server starts on free loopback ports, serves /metrics, stops cleanly.
#include "tests/support/server_process.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace worldgen::testing {
namespace {

using ::testing::HasSubstr;

TEST(ServerProcessTest, StartsOnFreePortsServesMetricsAndStopsWithExitZero) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_GT((*server)->grpc_port(), 0);
  EXPECT_GT((*server)->metrics_port(), 0);
  EXPECT_NE((*server)->grpc_port(), (*server)->metrics_port());
  EXPECT_EQ((*server)->target(), absl::StrCat("127.0.0.1:", (*server)->grpc_port()));
  absl::StatusOr<std::string> metrics = HttpGet("127.0.0.1", (*server)->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("worldgen_chunks_generated_total"));
  absl::StatusOr<int> code = (*server)->Stop();
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0);
  EXPECT_THAT((*server)->output(), HasSubstr("worlds=[default]"));
}

TEST(ServerProcessTest, TwoServersGetDistinctPorts) {
  auto a = ServerProcess::Start();
  auto b = ServerProcess::Start();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->grpc_port(), (*b)->grpc_port());
  EXPECT_NE((*a)->metrics_port(), (*b)->metrics_port());
}

TEST(ServerProcessTest, StartReportsAServerThatExitsEarly) {
  auto server = ServerProcess::Start({"--blend_threads=-1"});
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("exited with code 2"));
  EXPECT_THAT(server.status().message(), HasSubstr("blend_threads"));
}

TEST(ServerProcessTest, HttpGetFailsOnAClosedPort) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->metrics_port();
  (*server)->Kill();
  EXPECT_FALSE(HttpGet("127.0.0.1", port, "/metrics", absl::Seconds(2)).ok());
}

}  // namespace
}  // namespace worldgen::testing
