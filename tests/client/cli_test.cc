// The `worldgen` CLI run as a subprocess against a real server: output formats, exit codes, files.

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/rgb_image.h"
#include "client/worldgen_client.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"
#include "tests/client/subprocess.h"
#include "tests/support/server_process.h"

namespace worldgen {
namespace {

using ::worldgen::testing::CommandResult;
using ::worldgen::testing::RunCommand;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::TempDir;

template <typename Message>
Message ParseJson(const std::string& json) {
  Message message;
  auto status = google::protobuf::util::JsonStringToMessage(json, &message);
  EXPECT_TRUE(status.ok()) << status.message() << " in " << json.substr(0, 200);
  return message;
}

// Bit-level equality of two messages (floats included).
template <typename Message>
void ExpectSameBytes(const Message& a, const Message& b) {
  std::string sa, sb;
  {
    google::protobuf::io::StringOutputStream out(&sa);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    a.SerializeToCodedStream(&coded);
  }
  {
    google::protobuf::io::StringOutputStream out(&sb);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    b.SerializeToCodedStream(&coded);
  }
  EXPECT_TRUE(sa == sb) << a.ShortDebugString().substr(0, 300) << "\nvs\n"
                        << b.ShortDebugString().substr(0, 300);
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    auto client = Client::Connect(server_->target());
    ASSERT_TRUE(client.ok());
    client_ = client->release();
  }
  static void TearDownTestSuite() {
    delete client_;
    delete server_;
  }

  // Runs `worldgen --target=<server> args...`.
  static CommandResult Cli(std::vector<std::string> args, bool with_target = true) {
    std::vector<std::string> argv = {WORLDGEN_CLI_BINARY};
    if (with_target) argv.push_back(absl::StrCat("--target=", server_->target()));
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(60));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : CommandResult{};
  }

  static ServerProcess* server_;
  static Client* client_;
};
ServerProcess* CliTest::server_ = nullptr;
Client* CliTest::client_ = nullptr;

TEST_F(CliTest, DescribePrintsTheWorld) {
  CommandResult text = Cli({"describe"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("world default"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("11 biomes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ocean"), std::string::npos) << text.out;

  CommandResult json = Cli({"describe", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  absl::StatusOr<v1::WorldDescription> direct = client_->DescribeWorld();
  ASSERT_TRUE(direct.ok());
  ExpectSameBytes(ParseJson<v1::WorldDescription>(json.out), *direct);
}

TEST_F(CliTest, ChunkJsonIsTheChunkDataBitForBit) {
  for (int size : {4, 16, 32}) {
    // Negative coordinates are arguments, not flags.
    CommandResult json = Cli({"chunk", "-7", "3", "--json", absl::StrCat("--size=", size)});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    absl::StatusOr<ChunkView> direct =
        client_->GenerateChunk(-7, 3, {.chunk_size = size, .heights = true, .dominant_biome = true});
    ASSERT_TRUE(direct.ok()) << direct.status();
    ExpectSameBytes(ParseJson<v1::ChunkData>(json.out), direct->proto());
  }
}

TEST_F(CliTest, ChunkTextShowsBiomesAndWeights) {
  CommandResult text = Cli({"chunk", "20", "-3", "--size=8"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("chunk (20, -3)  size 8"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("weights of "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("heights:"), std::string::npos) << text.out;
}

TEST_F(CliTest, SampleJsonIsTheResponseBitForBit) {
  CommandResult json = Cli({"sample", "100.5", "-7.25", "320", "640", "-5000", "0.125", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  v1::SampleWeightsRequest request;
  for (auto [x, z] : std::vector<std::pair<double, double>>{{100.5, -7.25}, {320, 640}, {-5000, 0.125}}) {
    v1::Point* p = request.add_points();
    p->set_x(x);
    p->set_z(z);
  }
  request.set_include_heights(true);
  absl::StatusOr<v1::SampleWeightsResponse> direct = client_->SampleWeights(request);
  ASSERT_TRUE(direct.ok()) << direct.status();
  ExpectSameBytes(ParseJson<v1::SampleWeightsResponse>(json.out), *direct);

  CommandResult text = Cli({"sample", "100.5", "-7.25"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(100.5, -7.25)  dominant "), std::string::npos) << text.out;
}

TEST_F(CliTest, RenderWritesAPngOfTheRegionsSize) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-render");
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->File("map.png");
  CommandResult run = Cli({"render", "--region=-40,-20,59,29", absl::StrCat("--out=", path)});
  ASSERT_EQ(run.exit_code, 0) << run.err;

  absl::StatusOr<RgbImage> image = ReadPng(path);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 100);
  EXPECT_EQ(image->height, 50);
  const std::vector<uint8_t>& pixels = image->pixels;
  // Not a blank image: the default world's biome colours are never black.
  size_t dark = 0;
  for (size_t i = 0; i < pixels.size(); i += 3) dark += pixels[i] + pixels[i + 1] + pixels[i + 2] == 0;
  EXPECT_EQ(dark, 0u);
}

TEST_F(CliTest, HealthIsZeroWhenServingAndNonZeroWhenDown) {
  CommandResult up = Cli({"health"});
  EXPECT_EQ(up.exit_code, 0) << up.err;
  EXPECT_EQ(up.out, "SERVING\n");

  auto other = ServerProcess::Start();
  ASSERT_TRUE(other.ok()) << other.status();
  const std::string target = absl::StrCat("--target=", (*other)->target());
  EXPECT_EQ(Cli({"health", target}, false).exit_code, 0);
  ASSERT_TRUE((*other)->Stop().ok());
  CommandResult down = Cli({"health", target, "--deadline_ms=2000", "--retries=0"}, false);
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("UNAVAILABLE"), std::string::npos) << down.err;
}

TEST_F(CliTest, RpcErrorsExitOneWithTheStatusOnStderr) {
  CommandResult bad = Cli({"chunk", "0", "0", "--size=3"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                  // No subcommand.
      {"teleport"},                        // Unknown subcommand.
      {"chunk", "1"},                      // Missing coordinate.
      {"chunk", "1", "x"},                 // Not a number.
      {"sample", "1", "2", "3"},           // Odd number of coordinates.
      {"describe", "--size=16"},           // A flag describe does not take.
      {"describe", "--no_such_flag"},      // Unknown flag.
      {"load", "--concurrency=many"},      // Bad flag value.
      {"load", "--pattern=zigzag"},        // Bad pattern.
      {"render"},                          // Missing --region.
      {"render", "--region=1,2,3"},        // Malformed region.
  };
  for (const auto& args : cases) {
    CommandResult run = Cli(args);
    EXPECT_EQ(run.exit_code, 2) << absl::StrJoin(args, " ") << "\n" << run.err;
    EXPECT_FALSE(run.err.empty()) << absl::StrJoin(args, " ");
  }
}

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const char* name : {"describe", "chunk", "sample", "render", "health", "load"}) {
    CommandResult help = Cli({name, "--help"}, false);
    EXPECT_EQ(help.exit_code, 0) << name;
    EXPECT_NE(help.out.find(absl::StrCat("usage: worldgen ", name)), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("--target"), std::string::npos) << help.out;
  }
  CommandResult help = Cli({"--help"}, false);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace worldgen
