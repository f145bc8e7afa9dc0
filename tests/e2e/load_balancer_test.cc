// Two worldgen-server replicas behind a real nginx configured from docker/nginx/ (ports templated
// to free loopback ports), and the C++ client talking to nginx.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/cli/load_generator.h"
#include "client/worldgen_client.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "tests/client/subprocess.h"
#include "tests/e2e/e2e_paths.h"
#include "tests/server/service_calls.h"
#include "tests/support/call_log_lines.h"
#include "tests/support/nginx_process.h"
#include "tests/support/server_process.h"

namespace worldgen::testing {
namespace {

// Sum of every sample of `metric` (all label sets) in a Prometheus text exposition.
double MetricSum(const std::string& exposition, const std::string& metric) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    if (!absl::StartsWith(line, metric)) continue;
    const absl::string_view rest = line.substr(metric.size());
    if (!rest.empty() && rest[0] != ' ' && rest[0] != '{') continue;  // A longer metric name.
    double value = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) sum += value;
  }
  return sum;
}

ClientOptions ThroughNginxOptions() {
  ClientOptions options;
  options.deadline = absl::Seconds(60);
  options.max_retries = 8;
  options.max_backoff = absl::Milliseconds(500);
  options.max_reconnect_backoff = absl::Milliseconds(200);
  return options;
}

class LoadBalancerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      // As the deployment runs them (docker/compose.yaml, docker/kubernetes/base).
      auto server = ServerProcess::Start({"--fair_share=client_header"});
      ASSERT_TRUE(server.ok()) << server.status();
      replicas_.push_back(*std::move(server));
    }
    auto nginx = NginxProcess::Start({replicas_[0]->target(), replicas_[1]->target()});
    ASSERT_TRUE(nginx.ok()) << nginx.status();
    nginx_ = *std::move(nginx);
    auto client = Client::Connect(nginx_->target(), ThroughNginxOptions());
    ASSERT_TRUE(client.ok());
    lb_client_ = *std::move(client);
    // nginx is up once a call goes through (the client retries while it starts listening).
    absl::StatusOr<v1::WorldDescription> world = lb_client_->DescribeWorld();
    ASSERT_TRUE(world.ok()) << world.status() << "\nnginx error log:\n" << nginx_->error_log();
  }
  void TearDown() override {
    if (HasFailure() && nginx_) std::cerr << "nginx error log:\n" << nginx_->error_log();
  }

  std::vector<const ServerProcess*> Replicas() const {
    return {replicas_[0].get(), replicas_[1].get()};
  }

  double ChunksGenerated(ServerProcess& replica) {
    absl::StatusOr<std::string> metrics = HttpGet("127.0.0.1", replica.metrics_port(), "/metrics");
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    return metrics.ok() ? MetricSum(*metrics, "worldgen_chunks_generated_total") : 0;
  }

  std::vector<std::unique_ptr<ServerProcess>> replicas_;
  std::unique_ptr<NginxProcess> nginx_;
  std::unique_ptr<Client> lb_client_;
};

TEST_F(LoadBalancerTest, EveryCallSucceedsOnBothReplicasWithIdenticalResults) {
  auto direct = Client::Connect(replicas_[0]->target());
  ASSERT_TRUE(direct.ok());
  const ChunkRequestOptions options{.chunk_size = 16, .heights = true, .dominant_biome = true};
  // Concurrent callers, so nginx spreads requests over both replicas whatever its tie-breaking.
  std::vector<std::thread> callers;
  std::atomic<int> ok_calls{0}, chunks{0}, mismatches{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const ChunkRegion region{
            .min_x = t * 8, .min_z = i * 2, .max_x = t * 8 + 3, .max_z = i * 2 + 1};
        absl::Status status =
            lb_client_->GenerateRegion(region, options, [&](ChunkView through_lb) {
              chunks.fetch_add(1);
              absl::StatusOr<ChunkView> want =
                  (*direct)->GenerateChunk(through_lb.chunk_x(), through_lb.chunk_z(), options);
              if (!want.ok() ||
                  want->proto().SerializeAsString() != through_lb.proto().SerializeAsString()) {
                mismatches.fetch_add(1);
              }
            });
        EXPECT_TRUE(status.ok()) << status;
        if (status.ok()) ok_calls.fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(ok_calls.load(), 40);
  EXPECT_EQ(chunks.load(), 40 * 8);
  EXPECT_EQ(mismatches.load(), 0);

  std::vector<std::pair<double, double>> points;
  for (int i = 0; i < 64; ++i) points.push_back({i * 13.5 - 400, i * -7.75 + 250});
  absl::StatusOr<std::vector<PointSample>> via_lb =
      lb_client_->SamplePoints(points, {.heights = true});
  absl::StatusOr<std::vector<PointSample>> via_direct =
      (*direct)->SamplePoints(points, {.heights = true});
  ASSERT_TRUE(via_lb.ok()) << via_lb.status();
  ASSERT_TRUE(via_direct.ok()) << via_direct.status();
  for (size_t i = 0; i < points.size(); ++i) {
    ASSERT_EQ((*via_lb)[i].weights.size(), (*via_direct)[i].weights.size());
    for (size_t k = 0; k < (*via_lb)[i].weights.size(); ++k) {
      EXPECT_EQ((*via_lb)[i].weights[k].biome_id, (*via_direct)[i].weights[k].biome_id);
      EXPECT_EQ(std::bit_cast<uint32_t>((*via_lb)[i].weights[k].weight),
                std::bit_cast<uint32_t>((*via_direct)[i].weights[k].weight));
    }
    EXPECT_EQ(std::bit_cast<uint32_t>((*via_lb)[i].height),
              std::bit_cast<uint32_t>((*via_direct)[i].height));
  }
  absl::StatusOr<v1::WorldDescription> a = lb_client_->DescribeWorld();
  absl::StatusOr<v1::WorldDescription> b = (*direct)->DescribeWorld();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->SerializeAsString(), b->SerializeAsString());
  EXPECT_EQ(lb_client_->CheckHealth().value_or("error"), "SERVING");

  // Both replicas took traffic. The direct client asked replica 0 for every chunk as well, so
  // replica 1's count is the one that proves balancing.
  EXPECT_GT(ChunksGenerated(*replicas_[0]), 0);
  EXPECT_GT(ChunksGenerated(*replicas_[1]), 0);
}

// The replica's call log names the game server behind nginx (x-forwarded-for) and the request id
// nginx knows the call by, which the rendered template sets; nginx's own JSON line for the call has
// the same id, the gRPC status and the replica that answered.
constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST_F(LoadBalancerTest, TheReplicasCallLogNamesTheClientBehindTheBalancer) {
  ClientOptions options = ThroughNginxOptions();
  options.world = "nope";
  options.user_agent = "survival-eu-3";
  options.traceparent = [] { return std::string(kTraceparent); };
  auto client = Client::Connect(nginx_->target(), options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->GenerateChunk(1, 1).status().code(), absl::StatusCode::kNotFound);
  const std::vector<v1::CallLogLine> lines = AwaitCallLogLinesOfWorld(Replicas(), "nope", 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].code(), "NOT_FOUND");
  EXPECT_EQ(lines[0].forwarded_for(), "127.0.0.1");
  EXPECT_EQ(lines[0].client(), "127.0.0.1");  // Without mutual TLS, the address alone.
  EXPECT_EQ(lines[0].request_id().size(), 32u) << lines[0].request_id();
  EXPECT_TRUE(absl::c_all_of(lines[0].request_id(), absl::ascii_isxdigit)) << lines[0].request_id();
  EXPECT_TRUE(absl::StartsWith(lines[0].user_agent(), "survival-eu-3 worldgen-client"))
      << lines[0].user_agent();
  EXPECT_TRUE(absl::StartsWith(lines[0].peer(), "ipv4:127.0.0.1:")) << lines[0].peer();
  EXPECT_EQ(lines[0].trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");  // nginx passed it on

  const std::string replica = absl::StrContains(replicas_[0]->output(), lines[0].request_id())
                                  ? replicas_[0]->target()
                                  : replicas_[1]->target();
  std::string nginx_line;
  for (int i = 0; i < 500 && nginx_line.empty(); ++i) {
    for (absl::string_view line : absl::StrSplit(nginx_->access_log(), '\n')) {
      if (absl::StrContains(line, lines[0].request_id())) nginx_line = std::string(line);
    }
    if (nginx_line.empty()) absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_FALSE(nginx_line.empty()) << nginx_->access_log();
  for (const std::string& field :
       {std::string(R"("client":"127.0.0.1")"),
        std::string(R"("path":"/worldgen.v1.WorldGen/GenerateChunk")"),
        std::string(R"("http_status":200)"), std::string(R"("grpc_status":"5")"),
        absl::StrCat(R"("upstream":")", replica, R"(")"),
        absl::StrCat(R"("traceparent":")", kTraceparent, R"(")")}) {
    EXPECT_TRUE(absl::StrContains(nginx_line, field)) << field << " in " << nginx_line;
  }
}

// nginx passes the replica's server-timing trailer on: the game server learns what the replica
// spent on its call.
TEST_F(LoadBalancerTest, TheReplicasTimingOfACallReachesTheGameServer) {
  auto client = Client::Connect(nginx_->target(), ThroughNginxOptions());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->GenerateChunk(7777, -4321, {.chunk_size = 64, .heights = true}).ok());
  EXPECT_GT((*client)->stats().server_blend, absl::ZeroDuration());
}

// API keys at the balancer (WORLDGEN_API_KEYS): a game server with a key in the file is served and
// named by it to the replicas' fair share; one without a key, or with another, is refused before
// any replica sees the call; health checks need no key.
TEST(ApiKeyTest, OnlyGameServersWithAKnownKeyAreServedEachAsAClientOfItsOwn) {
  auto replica = ServerProcess::Start({"--fair_share=client_header", "--call_log=all"});
  ASSERT_TRUE(replica.ok()) << replica.status();
  auto dir = TempDir::Create("worldgen-api-keys");
  ASSERT_TRUE(dir.ok());
  const std::string keys = (*dir)->File("api-keys.map");
  ASSERT_TRUE(WriteFile(keys,
                        "\"Bearer 3f9a1c7e0b\" survival-eu-3;\n"
                        "\"Bearer 77d0e2a41f\" survival-eu-4;\n")
                  .ok());
  auto nginx = NginxProcess::Start({(*replica)->target()}, std::nullopt, keys);
  ASSERT_TRUE(nginx.ok()) << nginx.status();
  auto client_with = [&](const std::string& key) {
    ClientOptions options = ThroughNginxOptions();
    options.api_key = key;
    auto client = Client::Connect((*nginx)->target(), options);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  };
  std::unique_ptr<Client> eu3 = client_with("3f9a1c7e0b");
  std::unique_ptr<Client> eu4 = client_with("77d0e2a41f");
  // The first call also waits for nginx to listen (UNAVAILABLE is retried).
  ASSERT_TRUE(eu3->GenerateChunk(1, 1).ok()) << (*nginx)->error_log();
  ASSERT_TRUE(eu4->GenerateChunk(2, 1).ok());

  for (const std::string& key : {std::string(), std::string("3f9a1c7e0c")}) {
    std::unique_ptr<Client> stranger = client_with(key);
    const absl::Status refused = stranger->GenerateChunk(1, 1).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated) << key;
    EXPECT_EQ(refused.message(), "no API key, or one the balancer does not know") << key;
    EXPECT_EQ(stranger->stats().retries, 0) << key;
    absl::StatusOr<std::string> health = stranger->CheckHealth();
    ASSERT_TRUE(health.ok()) << health.status();
    EXPECT_EQ(*health, "SERVING");
  }

  // The CLI reads its key from a file (--api_key_file), as the viewer does.
  const std::string key_file = (*dir)->File("eu-5.key");
  ASSERT_TRUE(WriteFile(key_file, "77d0e2a41f\n").ok());
  for (const bool with_key : {true, false}) {
    std::vector<std::string> argv = {kCli, "--target=" + (*nginx)->target(), "--retries=0"};
    if (with_key) argv.push_back("--api_key_file=" + key_file);
    argv.push_back("describe");
    absl::StatusOr<CommandResult> described = RunCommand(argv);
    ASSERT_TRUE(described.ok()) << described.status();
    EXPECT_EQ(described->exit_code == 0, with_key) << described->err;
  }

  std::vector<v1::CallLogLine> lines = AwaitCallLogLines(**replica, 3);
  ASSERT_EQ(lines.size(), 3u) << (*replica)->output();
  std::set<std::string> clients;
  for (const v1::CallLogLine& line : lines) clients.insert(line.client());
  EXPECT_EQ(clients,
            (std::set<std::string>{"127.0.0.1 key=survival-eu-3", "127.0.0.1 key=survival-eu-4"}));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(CallLogLines((*replica)->output()).size(), 3u) << "a refused call reached the replica";
}

// A stand-in for a replica that keeps the headers of every call it gets and refuses the call.
class HeaderRecorder : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [key, value] : ctx->client_metadata()) {
        headers_.emplace(std::string(key.data(), key.size()),
                         std::string(value.data(), value.size()));
      }
    }
    return grpc::CallbackGenericService::CreateReactor(ctx);  // UNIMPLEMENTED
  }
  std::multimap<std::string, std::string> headers() {
    std::lock_guard<std::mutex> lock(mu_);
    return headers_;
  }

 private:
  std::mutex mu_;
  std::multimap<std::string, std::string> headers_;
};

// The key stays at the balancer: what reaches a replica is the key's name, not the key.
TEST(ApiKeyTest, TheKeyStaysAtTheBalancer) {
  HeaderRecorder recorder;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&recorder);
  std::unique_ptr<grpc::Server> replica = builder.BuildAndStart();
  ASSERT_NE(replica, nullptr);
  auto dir = TempDir::Create("worldgen-api-keys");
  ASSERT_TRUE(dir.ok());
  const std::string keys = (*dir)->File("api-keys.map");
  ASSERT_TRUE(WriteFile(keys, "\"Bearer 3f9a1c7e0b\" survival-eu-3;\n").ok());
  auto nginx = NginxProcess::Start({absl::StrCat("127.0.0.1:", port)}, std::nullopt, keys);
  ASSERT_TRUE(nginx.ok()) << nginx.status();
  ClientOptions options = ThroughNginxOptions();
  options.api_key = "3f9a1c7e0b";
  auto client = Client::Connect((*nginx)->target(), options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->DescribeWorld().status().code(), absl::StatusCode::kUnimplemented)
      << (*nginx)->error_log();
  const std::multimap<std::string, std::string> headers = recorder.headers();
  EXPECT_EQ(headers.count("authorization"), 0u);
  ASSERT_EQ(headers.count("x-worldgen-client"), 1u);
  EXPECT_EQ(headers.find("x-worldgen-client")->second, "127.0.0.1 key=survival-eu-3");
  replica->Shutdown();
}

// The replicas' fair share trusts x-worldgen-client because nginx sets it: a game server that
// sends its own (to get more than its share under other names) is named as nginx saw it.
TEST_F(LoadBalancerTest, AGameServerCannotNameItselfToTheFairShare) {
  std::unique_ptr<v1::WorldGen::Stub> stub = Connect(nginx_->target());
  v1::GenerateChunkRequest request = ListRequest({{0, 0}});
  request.set_world("spoofed");
  EXPECT_EQ(GenerateAll(*stub, request, kCallTimeout,
                        {{"x-worldgen-client", "203.0.113.99 CN=someone-else"}})
                .status.error_code(),
            grpc::StatusCode::NOT_FOUND);
  const std::vector<v1::CallLogLine> lines = AwaitCallLogLinesOfWorld(Replicas(), "spoofed", 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].client(), "127.0.0.1");
}

// nginx hashes the client's routing key: every call of one region reaches one replica; different
// regions, and calls without a key, reach both.
TEST_F(LoadBalancerTest, ARegionsCallsAllReachTheSameReplica) {
  auto delta = [&](const std::function<void()>& calls) {
    const double before0 = ChunksGenerated(*replicas_[0]);
    const double before1 = ChunksGenerated(*replicas_[1]);
    calls();
    return std::pair<double, double>(ChunksGenerated(*replicas_[0]) - before0,
                                     ChunksGenerated(*replicas_[1]) - before1);
  };
  // 32 one-chunk calls inside region (0, 0): chunks 0..7 x 0..3 of 16 columns.
  const auto one_region = delta([&] {
    for (int i = 0; i < 32; ++i) {
      EXPECT_TRUE(lb_client_->GenerateChunk(i % 8, i / 8, {.chunk_size = 16}).ok());
    }
  });
  EXPECT_EQ(one_region.first + one_region.second, 32);
  EXPECT_TRUE(one_region.first == 0 || one_region.second == 0)
      << "one region's calls went to both replicas: " << one_region.first << " and "
      << one_region.second;
  // One call in each of 32 regions: both replicas take some (each region picks one of two).
  const auto many_regions = delta([&] {
    for (int i = 0; i < 32; ++i) {
      EXPECT_TRUE(lb_client_->GenerateChunk(i * 8, 0, {.chunk_size = 16}).ok());
    }
  });
  EXPECT_GT(many_regions.first, 0);
  EXPECT_GT(many_regions.second, 0);
  // Without the key the same chunk goes anywhere.
  ClientOptions options = ThroughNginxOptions();
  options.send_route_key = false;
  auto keyless = Client::Connect(nginx_->target(), options);
  ASSERT_TRUE(keyless.ok());
  const auto no_key = delta([&] {
    for (int i = 0; i < 32; ++i) EXPECT_TRUE((*keyless)->GenerateChunk(0, 0).ok());
  });
  EXPECT_GT(no_key.first, 0);
  EXPECT_GT(no_key.second, 0);
}

TEST_F(LoadBalancerTest, KillingAReplicaMidRunLosesNoRequest) {
  cli::LoadConfig config;
  config.concurrency = 4;
  config.duration = absl::ZeroDuration();
  config.requests = 600;
  config.chunks_per_request = 8;
  config.chunk.heights = true;
  std::atomic<int64_t> done{0};
  absl::StatusOr<cli::LoadReport> report;
  std::thread load([&] {
    report = cli::RunLoad(
        *lb_client_, config,
        [&](absl::Duration, const cli::LoadReport& so_far) { done.store(so_far.requests); },
        absl::Milliseconds(5));
  });
  // Kill replica 0 (SIGKILL: no drain, its in-flight streams break) once the run is well under way.
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (done.load() < 100 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(2));
  const double before_kill = ChunksGenerated(*replicas_[0]);
  replicas_[0]->Kill();
  load.join();

  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->requests, 600);
  EXPECT_EQ(report->ok_requests, 600) << report->first_error;
  EXPECT_EQ(report->error_count(), 0) << report->first_error;
  EXPECT_EQ(report->chunks, 600 * 8);
  EXPECT_GT(before_kill, 0);
  EXPECT_GT(ChunksGenerated(*replicas_[1]), 0);
  EXPECT_GT(report->server_blend_ms, 0) << "the replicas' timing, through nginx";
  std::cerr << "after the kill: " << report->retries << " client retries; "
            << cli::LoadReportText(config, *report);
}

TEST_F(LoadBalancerTest, StoppingAReplicaGracefullyLosesNoRequest) {
  cli::LoadConfig config;
  config.concurrency = 4;
  config.duration = absl::ZeroDuration();
  config.requests = 400;
  config.chunks_per_request = 8;
  config.pattern = cli::LoadPattern::kSpiral;
  std::atomic<int64_t> done{0};
  absl::StatusOr<cli::LoadReport> report;
  std::thread load([&] {
    report = cli::RunLoad(
        *lb_client_, config,
        [&](absl::Duration, const cli::LoadReport& so_far) { done.store(so_far.requests); },
        absl::Milliseconds(5));
  });
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (done.load() < 100 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(2));
  absl::StatusOr<int> exit_code = replicas_[1]->Stop(absl::Seconds(20));  // SIGTERM: drain.
  load.join();
  ASSERT_TRUE(exit_code.ok());
  EXPECT_EQ(*exit_code, 0);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->ok_requests, 400) << report->first_error;
  EXPECT_EQ(report->error_count(), 0) << report->first_error;
  std::cerr << "after the SIGTERM: " << report->retries << " client retries; "
            << cli::LoadReportText(config, *report);
}

}  // namespace
}  // namespace worldgen::testing
