// worldgen-server start-up: bad flags and world configs exit 2 with a message, taken ports exit 1,
// --help lists the flags.
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
#include "tests/server/service_calls.h"
#include "tests/support/scratch_dir_test.h"
#include "tests/support/server_process.h"
#include "tests/support/worldgen_calls.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using namespace ::worldgen::testing;  // NOLINT: the shared test helpers (tests/support).

// --- Startup failures
// -------------------------------------------------------------------------------

class WorldGenServerStartupTest : public ScratchDirTest {
 protected:
  static ServerExit Run(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--listen_address=127.0.0.1", "--port=0", "--metrics_port=0"});
    absl::StatusOr<ServerExit> exit = RunServerToExit(flags);
    EXPECT_TRUE(exit.ok()) << exit.status();
    return exit.ok() ? *exit : ServerExit{-1, ""};
  }
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
      {"clash.json", R"({"name": "default", "biomes": [{"id": 1, "name": "a"}]})",
       "the embedded world's name"},
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
  for (const std::string& path :
       {(dir_ / "fifo.json").string(), std::string("/dev/zero"), (dir_ / "loop").string()}) {
    ServerExit exit = Run({"--world_config=" + path});
    EXPECT_EQ(exit.exit_code, 2) << path << ": " << exit.output;
    EXPECT_THAT(exit.output, HasSubstr("--world_config: " + path)) << path;
  }
}

// A world whose file expects another fingerprint than the server computes stops start-up: a replica
// of a release (or with a config) that would change the world for players never serves it.
TEST_F(WorldGenServerStartupTest, AWorldWithAnotherFingerprintThanItsFileExpectsExitsWithCodeTwo) {
  const std::string world = R"({"name": "alpha", "biomes": [{"id": 1, "name": "x"},)"
                            R"( {"id": 2, "name": "y", "temperature": 0.5}])";
  const std::string path = Write("alpha.json", world + "}");
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> registry = WorldRegistry::Load({path});
  ASSERT_TRUE(registry.ok()) << registry.status();
  const std::string fingerprint = (*registry)->fingerprint("alpha");

  Write("alpha.json", world + R"(, "expectedFingerprint": "0123456789abcdef"})");
  ServerExit refused = Run({"--world_config=" + path});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr("--world_config: " + path +
                        ": world \"alpha\" has "
                        "fingerprint " +
                        fingerprint + ", not its expected_fingerprint 0123456789abcdef"));

  Write("alpha.json", world + R"(, "expectedFingerprint": ")" + fingerprint + R"("})");
  auto server = ServerProcess::Start({"--world_config=" + path});
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = Connect((*server)->target());
  v1::WorldDescription described;
  ASSERT_TRUE(Describe(*stub, "alpha", &described).ok());
  EXPECT_EQ(described.fingerprint(), fingerprint);
  EXPECT_EQ(described.config().expected_fingerprint(), "")
      << "the pin is the file's, not the world's";
}

TEST_F(WorldGenServerStartupTest, RepeatedAndCommaSeparatedWorldConfigsAllLoad) {
  const std::string a = Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string b = Write("b.json", R"({"name": "bravo", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string c =
      Write("c.json", R"({"name": "charlie", "biomes": [{"id": 1, "name": "x"}]})");
  auto server = ServerProcess::Start({"--world_config=" + a + "," + b, "--world_config=" + c});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->output(), HasSubstr("worlds=[alpha,bravo,charlie,default]"));
}

// A deployment that keeps its flags in a file (or the environment) gets its worlds too.
TEST_F(WorldGenServerStartupTest, WorldConfigsFromAFlagfileLoad) {
  const std::string a = Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string b = Write("b.json", R"({"name": "bravo", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string flags = Write("flags.txt", "--world_config=" + b + "\n");
  auto server = ServerProcess::Start({"--world_config=" + a, "--flagfile=" + flags});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->output(), HasSubstr("worlds=[alpha,bravo,default]"));
}

// A name two files define is refused naming both files (or the embedded world's name).
TEST_F(WorldGenServerStartupTest, AWorldNameDefinedTwiceNamesItsFiles) {
  const std::string a = Write("a.json", R"({"name": "alpha", "biomes": [{"id": 1, "name": "x"}]})");
  const std::string again =
      Write("again.json", R"({"name": "alpha", "biomes": [{"id": 2, "name": "y"}]})");
  ServerExit twice = Run({"--world_config=" + a + "," + again});
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_THAT(twice.output,
              HasSubstr("world \"alpha\" is defined twice: in " + a + " and in " + again));
  const std::string named_default =
      Write("d.json", R"({"name": "default", "biomes": [{"id": 1, "name": "x"}]})");
  ServerExit embedded = Run({"--world_config=" + named_default});
  EXPECT_EQ(embedded.exit_code, 2) << embedded.output;
  EXPECT_THAT(embedded.output,
              HasSubstr(named_default + ": world \"default\" is the embedded world's name"));
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

TEST_F(WorldGenServerStartupTest, BadCallLogAndFairShareFlagsExitWithCodeTwoAndAMessage) {
  const std::pair<const char*, const char*> cases[] = {
      {"--call_log=verbose", "--call_log: \"verbose\" is not a call log level: off, errors or all"},
      {"--call_log_slow_ms=-1", "--call_log_slow_ms = -1 must be >= 0"},
      {"--fair_share=ip",
       "--fair_share: \"ip\" is not one of off, peer, forwarded_for, client_header"},
      {"--call_log_lines_per_second=0", "--call_log_lines_per_second = 0 must be at least 1"}};
  for (const auto& [flag, message] : cases) {
    ServerExit exit = Run({flag});
    EXPECT_EQ(exit.exit_code, 2) << flag << ": " << exit.output;
    EXPECT_THAT(exit.output, HasSubstr(message)) << flag;
  }
}

TEST_F(WorldGenServerStartupTest, HelpListsTheFlags) {
  absl::StatusOr<ServerExit> exit = RunServerToExit({"--help"});
  ASSERT_TRUE(exit.ok()) << exit.status();
  for (const char* flag :
       {"--port", "--listen_address", "--metrics_port", "--blend_threads", "--cache_bytes",
        "--world_config", "--max_chunks_per_request", "--max_points_per_request",
        "--max_queue_seconds", "--stream_buffer_chunks", "--stream_buffer_bytes",
        "--shutdown_grace_seconds"}) {
    EXPECT_THAT(exit->output, HasSubstr(flag)) << flag;
  }
}

}  // namespace
}  // namespace worldgen
