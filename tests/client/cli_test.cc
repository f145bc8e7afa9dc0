// The `worldgen` CLI run as a subprocess against a real server: output formats, exit codes, files.
#include <gtest/gtest.h>
#include <algorithm>
#include <array>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/cli/render.h"
#include "client/rgb_image.h"
#include "client/worldgen_client.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/client/subprocess.h"
#include "tests/support/server_process.h"
#include "tests/support/worldgen_calls.h"

namespace worldgen {
namespace {

using ::worldgen::testing::CommandResult;
using ::worldgen::testing::MetricSample;
using ::worldgen::testing::MetricValue;
using ::worldgen::testing::RunCommand;
using ::worldgen::testing::Scrape;
using ::worldgen::testing::ServerProcess;
using ::worldgen::testing::TempDir;
using ::worldgen::testing::WaitUntilIdle;

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
  absl::StatusOr<v1::WorldDescription> direct = client_->DescribeWorld();
  ASSERT_TRUE(direct.ok());
  EXPECT_NE(text.out.find(absl::StrCat("fingerprint ", direct->fingerprint(), "\n")),
            std::string::npos)
      << text.out;

  CommandResult json = Cli({"describe", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ExpectSameBytes(ParseJson<v1::WorldDescription>(json.out), *direct);
}

TEST_F(CliTest, ChunkJsonIsTheChunkDataBitForBit) {
  for (int size : {4, 16, 32}) {
    // Negative coordinates are arguments, not flags.
    CommandResult json = Cli({"chunk", "-7", "3", "--json", absl::StrCat("--size=", size)});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    absl::StatusOr<ChunkView> direct = client_->GenerateChunk(
        -7, 3, {.chunk_size = size, .heights = true, .dominant_biome = true});
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
  for (auto [x, z] :
       std::vector<std::pair<double, double>>{{100.5, -7.25}, {320, 640}, {-5000, 0.125}}) {
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
  // Every digit a coordinate needs: neighbours far from the origin stay apart.
  CommandResult far = Cli({"sample", "1234567", "0", "1234568", "0.1"});
  ASSERT_EQ(far.exit_code, 0) << far.err;
  EXPECT_NE(far.out.find("(1234567, 0)  dominant "), std::string::npos) << far.out;
  EXPECT_NE(far.out.find("(1234568, 0.1)  dominant "), std::string::npos) << far.out;
}

// 3D through the CLI (the default world has no caves: its weights are its columns' at every y).
TEST_F(CliTest, ChunkWithYAndSampleWithXyzAreThe3DMessagesBitForBit) {
  CommandResult json = Cli({"chunk", "-7", "3", "--json", "--size=16", "--y=-32:16", "--cell=2"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ChunkRequestOptions options{.chunk_size = 16, .dominant_biome = true};
  options.vertical = ChunkRequestOptions::Vertical{.min_y = -32, .max_y = 16, .cell_size = 2};
  absl::StatusOr<ChunkView> direct = client_->GenerateChunk(-7, 3, options);
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_EQ(direct->proto().sections_size(), 3);
  ExpectSameBytes(ParseJson<v1::ChunkData>(json.out), direct->proto());

  CommandResult text = Cli({"chunk", "-7", "3", "--size=16", "--y=-32:16"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("y [-32, 16)  cells of 4 blocks, 4 x 12 x 4"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("section y [0, 16)"), std::string::npos) << text.out;

  CommandResult bad = Cli({"chunk", "0", "0", "--y=-30:16"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("vertical.min_y = -30"), std::string::npos) << bad.err;
  EXPECT_EQ(Cli({"chunk", "0", "0", "--y=up"}).exit_code, 2);

  CommandResult points =
      Cli({"sample", "--xyz", "100.5", "-40", "-7.25", "3", "200", "4", "--json"});
  ASSERT_EQ(points.exit_code, 0) << points.err;
  v1::SampleWeightsRequest request;
  for (const auto& [x, y, z] :
       std::vector<std::array<double, 3>>{{100.5, -40, -7.25}, {3, 200, 4}}) {
    v1::Point* p = request.add_points();
    p->set_x(x);
    p->set_y(y);
    p->set_z(z);
  }
  request.set_include_heights(true);
  absl::StatusOr<v1::SampleWeightsResponse> sampled = client_->SampleWeights(request);
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  ExpectSameBytes(ParseJson<v1::SampleWeightsResponse>(points.out), *sampled);
  CommandResult line = Cli({"sample", "--xyz", "100.5", "-40", "-7.25"});
  EXPECT_NE(line.out.find("(100.5, -40, -7.25)  dominant "), std::string::npos) << line.out;
}

// Slices: a horizontal one of a world without caves is its blend map, a vertical one the same
// column colour from bottom to top.
TEST_F(CliTest, RenderSlicesAreThe3DWeightsOfTheirPlane) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-slice");
  ASSERT_TRUE(dir.ok());
  const std::string map = (*dir)->File("map.png"), flat = (*dir)->File("y.png"),
                    upright = (*dir)->File("x.png");
  ASSERT_EQ(Cli({"render", "--region=-40,-20,59,29", "--layer=blend", "--out=" + map}).exit_code,
            0);
  CommandResult y =
      Cli({"render", "--region=-40,-20,59,29", "--layer=blend", "--slice=y:-37", "--out=" + flat});
  ASSERT_EQ(y.exit_code, 0) << y.err;
  EXPECT_EQ(ReadPng(map)->pixels, ReadPng(flat)->pixels);
  // x = 10: image columns are z in [-20, 29], rows y from 40 down to -9.
  CommandResult x =
      Cli({"render", "--region=-20,-9,29,40", "--layer=blend", "--slice=x:10", "--out=" + upright});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  absl::StatusOr<RgbImage> slice = ReadPng(upright);
  ASSERT_TRUE(slice.ok());
  ASSERT_EQ(slice->width, 50);
  ASSERT_EQ(slice->height, 50);
  const RgbImage column = *ReadPng(map);
  for (int py = 0; py < 50; ++py) {
    for (int px = 0; px < 50; ++px) {
      // Column (10, z = -20 + px) of the map is its pixel (50, px).
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(slice->at(px, py)[k], column.pixels[(static_cast<size_t>(px) * 100 + 50) * 3 + k])
            << px << ", " << py;
      }
    }
  }
  EXPECT_EQ(Cli({"render", "--region=0,0,9,9", "--slice=w:3", "--out=" + flat}).exit_code, 2);
  EXPECT_EQ(Cli({"render", "--region=0,0,9,9", "--slice=y:3", "--layer=height", "--out=" + flat})
                .exit_code,
            2);
}

// Slices of a world with cave biomes, horizontal and vertical, across chunk borders: every pixel
// of the dominant, weight, source and blend layers is what SampleWeights says of its block (the CLI
// draws slices at one block per pixel from 3D chunks, whose cells are those samples bit for bit).
TEST_F(CliTest, CaveSlicesShowTheSampledWeightsOfEveryBlock) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> caves = ServerProcess::Start(
      {absl::StrCat("--world_config=", WORLDGEN_SOURCE_DIR, "/docker/worlds/caves.json")});
  ASSERT_TRUE(caves.ok()) << caves.status();
  ClientOptions options;
  options.world = "caves";
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect((*caves)->target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  ASSERT_TRUE(world.ok()) << world.status();
  std::map<uint32_t, v1::Color> colors;
  for (const v1::BiomeConfig& biome : world->config().biomes()) colors[biome.id()] = biome.color();
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-cave-slices");
  ASSERT_TRUE(dir.ok());

  struct Case {
    std::string slice, region;
    // The block that pixel (px, py) shows.
    std::function<Point3(int px, int py)> block;
  };
  const std::vector<Case> cases = {
      // x = 10: columns z in [-24, 25], rows y from -41 down to -90: the bottom of the caves' band
      // and below it, so that the lowest section lacks biomes that the ones above it have.
      {"x:10", "-24,-90,25,-41",
       [](int px, int py) {
         return Point3{10, -41.0 - py, -24.0 + px};
       }},
      // z = -7: columns x in [-30, 19], rows y from 0 down to -49.
      {"z:-7", "-30,-49,19,0",
       [](int px, int py) {
         return Point3{-30.0 + px, 0.0 - py, -7};
       }},
      // y = -40: columns x in [-37, 12], rows z in [5, 54].
      {"y:-40", "-37,5,12,54",
       [](int px, int py) {
         return Point3{-37.0 + px, -40, 5.0 + py};
       }},
  };
  int blended_pixels = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.slice);
    std::vector<Point3> blocks;
    for (int py = 0; py < 50; ++py) {
      for (int px = 0; px < 50; ++px) blocks.push_back(c.block(px, py));
    }
    absl::StatusOr<std::vector<PointSample>> samples =
        (*client)->SamplePoints3D(blocks, {.source_biome = true});
    ASSERT_TRUE(samples.ok()) << samples.status();
    // A biome blended somewhere in the plane: its weight layer has greys.
    uint32_t blended = samples->front().dominant_biome;
    for (const PointSample& s : *samples) {
      for (const PointSample::Weight& w : s.weights) {
        if (w.weight > 0.1f && w.weight < 0.9f) blended = w.biome_id;
      }
    }
    auto render = [&](const std::string& layer) -> RgbImage {
      const std::string out = (*dir)->File(absl::StrCat(c.slice, layer, ".png"));
      CommandResult r = RunCommand({WORLDGEN_CLI_BINARY, "--target=" + (*caves)->target(),
                                    "--world=caves", "render", "--slice=" + c.slice,
                                    "--region=" + c.region, "--layer=" + layer, "--out=" + out},
                                   absl::Seconds(60))
                            .value_or(CommandResult{});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      absl::StatusOr<RgbImage> image = ReadPng(out);
      return image.ok() ? *image : RgbImage(0, 0);
    };
    const RgbImage dominant = render("dominant"), source = render("source"),
                   weight = render(absl::StrCat("weight:", blended)), blend = render("blend");
    for (const RgbImage* image : {&dominant, &source, &weight, &blend}) {
      ASSERT_EQ(image->width, 50);
      ASSERT_EQ(image->height, 50);
    }
    int mismatches = 0;
    for (int py = 0; py < 50; ++py) {
      for (int px = 0; px < 50; ++px) {
        const PointSample& s = (*samples)[static_cast<size_t>(py) * 50 + px];
        const size_t p = (static_cast<size_t>(py) * 50 + px) * 3;
        float w = 0.0f;
        for (const PointSample::Weight& e : s.weights) w = e.biome_id == blended ? e.weight : w;
        const long grey = std::lround(255.0 * w);
        blended_pixels += grey > 0 && grey < 255;
        // The blend: colours mixed by weight, ascending id, summed in double.
        double mix[3] = {0, 0, 0};
        for (const PointSample::Weight& e : s.weights) {
          const v1::Color& c = colors[e.biome_id];
          mix[0] += double{e.weight} * c.r();
          mix[1] += double{e.weight} * c.g();
          mix[2] += double{e.weight} * c.b();
        }
        bool same_blend = true;
        for (int k = 0; k < 3; ++k) {
          same_blend =
              same_blend && blend.pixels[p + k] == std::lround(std::clamp(mix[k], 0.0, 255.0));
        }
        const v1::Color &d = colors[s.dominant_biome], &r = colors[s.source_biome];
        const bool same = dominant.pixels[p] == d.r() && dominant.pixels[p + 1] == d.g() &&
                          dominant.pixels[p + 2] == d.b() && source.pixels[p] == r.r() &&
                          source.pixels[p + 1] == r.g() && source.pixels[p + 2] == r.b() &&
                          weight.pixels[p] == grey && same_blend;
        if (!same && ++mismatches <= 5) {
          const Point3 b = c.block(px, py);
          ADD_FAILURE() << "pixel (" << px << ", " << py << "), block (" << b.x << ", " << b.y
                        << ", " << b.z << "): dominant " << s.dominant_biome << ", source "
                        << s.source_biome << ", weight of " << blended << " " << w << "; drawn "
                        << int{dominant.pixels[p]} << "," << int{dominant.pixels[p + 1]} << ","
                        << int{dominant.pixels[p + 2]} << " / " << int{source.pixels[p]} << ","
                        << int{source.pixels[p + 1]} << "," << int{source.pixels[p + 2]} << " / "
                        << int{weight.pixels[p]} << " / blend " << int{blend.pixels[p]} << ","
                        << int{blend.pixels[p + 1]} << "," << int{blend.pixels[p + 2]};
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
  EXPECT_GT(blended_pixels, 0) << "no cave border in the slices";
  // The CLI drew every slice from chunks: the only point queries were this test's own.
  WaitUntilIdle(**caves);
  const std::vector<MetricSample> metrics = Scrape(**caves);
  EXPECT_EQ(
      MetricValue(metrics, "worldgen_rpc_duration_seconds_count", {{"method", "SampleWeights"}}),
      static_cast<double>(cases.size()));
  EXPECT_GE(
      MetricValue(metrics, "worldgen_rpc_duration_seconds_count", {{"method", "GenerateChunk"}}),
      static_cast<double>(4 * cases.size()));
}

// At a scale, each pixel shows the column at the centre of its square, bit for bit SampleWeights
// there, whether the CLI blended it from chunks (up to MaxChunkRenderScale) or as a point.
TEST_F(CliTest, ScaledRendersShowTheSampledCentreColumns) {
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok()) << world.status();
  std::map<uint32_t, v1::Color> colors;
  for (const v1::BiomeConfig& biome : world->config().biomes()) colors[biome.id()] = biome.color();
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-scaled");
  ASSERT_TRUE(dir.ok());
  constexpr int kSide = 64;  // pixels
  const int chunk_scale = cli::MaxChunkRenderScale(*world);
  ASSERT_EQ(chunk_scale, 4) << "the default world is scattered";
  for (int scale : {2, chunk_scale, 2 * chunk_scale}) {
    SCOPED_TRACE(absl::StrCat("scale ", scale));
    const int64_t min_x = -301, min_z = -207;
    std::vector<std::pair<double, double>> centres;
    for (int pz = 0; pz < kSide; ++pz) {
      for (int px = 0; px < kSide; ++px) {
        centres.emplace_back(static_cast<double>(min_x + scale * px + scale / 2),
                             static_cast<double>(min_z + scale * pz + scale / 2));
      }
    }
    absl::StatusOr<std::vector<PointSample>> samples =
        client_->SamplePoints(centres, {.source_biome = true});
    ASSERT_TRUE(samples.ok()) << samples.status();
    uint32_t blended = samples->front().dominant_biome;
    for (const PointSample& s : *samples) {
      for (const PointSample::Weight& w : s.weights) {
        if (w.weight > 0.1f && w.weight < 0.9f) blended = w.biome_id;
      }
    }
    WaitUntilIdle(*server_);
    const std::vector<MetricSample> before = Scrape(*server_);
    auto render = [&](const std::string& layer) -> RgbImage {
      const std::string out = (*dir)->File(absl::StrCat(scale, layer, ".png"));
      CommandResult r =
          Cli({"render",
               absl::StrCat("--region=", min_x, ",", min_z, ",", min_x + kSide * scale - 1, ",",
                            min_z + kSide * scale - 1),
               absl::StrCat("--scale=", scale), "--layer=" + layer, "--out=" + out});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      absl::StatusOr<RgbImage> image = ReadPng(out);
      return image.ok() ? *image : RgbImage(0, 0);
    };
    const RgbImage source = render("source"), weight = render(absl::StrCat("weight:", blended)),
                   blend = render("blend");
    WaitUntilIdle(*server_);
    const std::vector<MetricSample> after = Scrape(*server_);
    for (const RgbImage* image : {&source, &weight, &blend}) {
      ASSERT_EQ(image->width, kSide);
      ASSERT_EQ(image->height, kSide);
    }
    int mismatches = 0, greys = 0;
    for (size_t k = 0; k < samples->size(); ++k) {
      const PointSample& s = (*samples)[k];
      const size_t p = k * 3;
      float w = 0.0f;
      double mix[3] = {0, 0, 0};
      for (const PointSample::Weight& e : s.weights) {
        w = e.biome_id == blended ? e.weight : w;
        const v1::Color& c = colors[e.biome_id];
        mix[0] += double{e.weight} * c.r();
        mix[1] += double{e.weight} * c.g();
        mix[2] += double{e.weight} * c.b();
      }
      const long grey = std::lround(255.0 * w);
      greys += grey > 0 && grey < 255;
      const v1::Color& r = colors[s.source_biome];
      bool same = weight.pixels[p] == grey && source.pixels[p] == r.r() &&
                  source.pixels[p + 1] == r.g() && source.pixels[p + 2] == r.b();
      for (int i = 0; i < 3; ++i) {
        same = same && blend.pixels[p + i] == std::lround(std::clamp(mix[i], 0.0, 255.0));
      }
      if (!same && ++mismatches <= 5) {
        ADD_FAILURE() << "pixel " << k % kSide << ", " << k / kSide << ": column ("
                      << centres[k].first << ", " << centres[k].second << ")";
      }
    }
    EXPECT_EQ(mismatches, 0);
    EXPECT_GT(greys, 0) << "no border in the region";
    // Which way it was drawn: chunks only, or points only.
    auto calls = [&](const std::vector<MetricSample>& m, const char* method) {
      return MetricValue(m, "worldgen_rpc_duration_seconds_count", {{"method", method}});
    };
    const bool from_chunks = scale <= chunk_scale;
    EXPECT_EQ(calls(after, "SampleWeights") - calls(before, "SampleWeights") > 0, !from_chunks);
    EXPECT_EQ(calls(after, "GenerateChunk") - calls(before, "GenerateChunk") > 0, from_chunks);
  }
}

TEST_F(CliTest, RenderWritesAPngOfTheRegionsSizeForEveryLayer) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-render");
  ASSERT_TRUE(dir.ok());
  for (const char* layer : {"", "dominant", "blend", "source", "height", "weight:2"}) {
    const std::string path = (*dir)->File(absl::StrCat("map-", layer, ".png"));
    std::vector<std::string> args = {"render", "--region=-40,-20,59,29",
                                     absl::StrCat("--out=", path)};
    if (*layer) args.push_back(absl::StrCat("--layer=", layer));
    CommandResult run = Cli(args);
    ASSERT_EQ(run.exit_code, 0) << layer << ": " << run.err;
    absl::StatusOr<RgbImage> image = ReadPng(path);
    ASSERT_TRUE(image.ok()) << image.status();
    EXPECT_EQ(image->width, 100) << layer;
    EXPECT_EQ(image->height, 50) << layer;
    if (absl::string_view(layer).empty() || absl::string_view(layer) == "dominant") {
      // Not a blank image: the default world's biome colours are never black.
      size_t dark = 0;
      const std::vector<uint8_t>& pixels = image->pixels;
      for (size_t i = 0; i < pixels.size(); i += 3)
        dark += pixels[i] + pixels[i + 1] + pixels[i + 2] == 0;
      EXPECT_EQ(dark, 0u);
    }
  }
}

// The weight and source layers are the service's data, pixel for pixel.
TEST_F(CliTest, RenderWeightAndSourceLayersDrawTheServersValues) {
  const int64_t min_x = -256, min_z = -128, max_x = 255, max_z = 127;
  std::map<std::pair<int64_t, int64_t>, ChunkView> chunks;
  absl::Status fetched = client_->GenerateRegion(
      {.min_x = min_x / 64, .min_z = min_z / 64, .max_x = max_x / 64, .max_z = max_z / 64},
      {.chunk_size = 64, .source_biome = true}, [&](ChunkView view) {
        chunks.emplace(std::pair{view.chunk_x(), view.chunk_z()}, view);
      });
  ASSERT_TRUE(fetched.ok()) << fetched;
  // A biome that is partly blended somewhere in the region.
  uint32_t blended = 0;
  bool found = false;
  for (const auto& [coord, view] : chunks) {
    for (uint32_t id : view.biome_ids()) {
      for (float w : view.Weights(id)) {
        if (!found && w > 0.1f && w < 0.9f) {
          blended = id;
          found = true;
        }
      }
    }
  }
  ASSERT_TRUE(found) << "no transition in the region";
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok());
  std::map<uint32_t, v1::Color> colors;
  for (const v1::BiomeConfig& biome : world->config().biomes()) colors[biome.id()] = biome.color();

  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-render-layers");
  ASSERT_TRUE(dir.ok());
  const std::string region = absl::StrCat("--region=", min_x, ",", min_z, ",", max_x, ",", max_z);
  const std::string weight_path = (*dir)->File("weight.png"),
                    source_path = (*dir)->File("source.png");
  CommandResult weight = Cli({"render", region, absl::StrCat("--layer=weight:", blended),
                              absl::StrCat("--out=", weight_path), "--size=32"});
  ASSERT_EQ(weight.exit_code, 0) << weight.err;
  CommandResult source =
      Cli({"render", region, "--layer=source", absl::StrCat("--out=", source_path)});
  ASSERT_EQ(source.exit_code, 0) << source.err;
  absl::StatusOr<RgbImage> weights = ReadPng(weight_path);
  absl::StatusOr<RgbImage> raw = ReadPng(source_path);
  ASSERT_TRUE(weights.ok()) << weights.status();
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_EQ(weights->width, 512);
  ASSERT_EQ(raw->width, 512);
  int mismatches = 0, greys = 0;
  for (int64_t z = min_z; z <= max_z; ++z) {
    for (int64_t x = min_x; x <= max_x; ++x) {
      const ChunkView& view = chunks.at({x >> 6, z >> 6});
      const int lx = static_cast<int>(x - view.origin_x()),
                lz = static_cast<int>(z - view.origin_z());
      const size_t p = static_cast<size_t>((z - min_z) * 512 + (x - min_x)) * 3;
      const long want = std::lround(255.0 * view.Weight(blended, lx, lz));
      greys += want > 0 && want < 255;
      if (weights->pixels[p] != want && ++mismatches < 5) {
        ADD_FAILURE() << "weight at " << x << ", " << z << ": " << int{weights->pixels[p]}
                      << " != " << want;
      }
      const v1::Color& c = colors[view.SourceBiome(lx, lz)];
      if ((raw->pixels[p] != c.r() || raw->pixels[p + 1] != c.g() || raw->pixels[p + 2] != c.b()) &&
          ++mismatches < 5) {
        ADD_FAILURE() << "source colour at " << x << ", " << z;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(greys, 0);
}

TEST_F(CliTest, RenderRejectsUnknownLayersAndBiomesAsUsageErrors) {
  CommandResult layer = Cli({"render", "--region=0,0,9,9", "--layer=shade"});
  EXPECT_EQ(layer.exit_code, 2);
  EXPECT_NE(layer.err.find("--layer=shade is not a layer; use dominant, blend, source, height, "
                           "weight:ID or splat:T"),
            std::string::npos)
      << layer.err;
  CommandResult id = Cli({"render", "--region=0,0,9,9", "--layer=weight:12345"});
  EXPECT_EQ(id.exit_code, 2);
  EXPECT_NE(id.err.find("has no biome 12345"), std::string::npos) << id.err;
  CommandResult bad_id = Cli({"render", "--region=0,0,9,9", "--layer=weight:ocean"});
  EXPECT_EQ(bad_id.exit_code, 2);
  EXPECT_NE(bad_id.err.find("not a biome id"), std::string::npos) << bad_id.err;
}

TEST_F(CliTest, ChunkAndSampleShowTheRawMap) {
  CommandResult json = Cli({"chunk", "-7", "3", "--json", "--source_biome"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  absl::StatusOr<ChunkView> direct = client_->GenerateChunk(
      -7, 3, {.heights = true, .dominant_biome = true, .source_biome = true});
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_TRUE(direct->has_source_biome());
  ExpectSameBytes(ParseJson<v1::ChunkData>(json.out), direct->proto());

  CommandResult text = Cli({"chunk", "-7", "3", "--source_biome", "--size=4"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("source biome ids (the unblended raw map):"), std::string::npos)
      << text.out;
  CommandResult plain = Cli({"chunk", "-7", "3", "--size=4"});
  EXPECT_EQ(plain.out.find("source biome ids"), std::string::npos) << plain.out;

  CommandResult sample = Cli({"sample", "100.5", "-7.25", "--source_biome"});
  ASSERT_EQ(sample.exit_code, 0) << sample.err;
  absl::StatusOr<std::vector<PointSample>> point =
      client_->SamplePoints({{100.5, -7.25}}, {.source_biome = true});
  ASSERT_TRUE(point.ok());
  EXPECT_NE(sample.out.find(absl::StrCat("(", (*point)[0].source_biome, ")")), std::string::npos)
      << sample.out;
  EXPECT_NE(sample.out.find("  source "), std::string::npos) << sample.out;
}

TEST_F(CliTest, ChunkSplatPngWritesEveryTextureBitForBit) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-splat");
  ASSERT_TRUE(dir.ok());
  const std::string prefix = (*dir)->File("splat-");
  CommandResult run = Cli({"chunk", "3", "-2", "--size=32", absl::StrCat("--splat-png=", prefix)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("R=desert(4)"), std::string::npos) << run.err;  // Texture 1, channel 0.
  absl::StatusOr<ChunkView> direct =
      client_->GenerateChunk(3, -2, {.chunk_size = 32, .splat = true});
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_EQ(direct->splat_texture_count(), 3);  // The default world's 11 biomes.
  for (int t = 0; t < 3; ++t) {
    int width = 0, height = 0;
    absl::StatusOr<std::vector<uint8_t>> png =
        ReadRgbaPng(absl::StrCat(prefix, t, ".png"), &width, &height);
    ASSERT_TRUE(png.ok()) << png.status();
    EXPECT_EQ(width, 32);
    EXPECT_EQ(height, 32);
    const std::string& bytes = direct->splat_texture(t);
    EXPECT_EQ(*png, std::vector<uint8_t>(bytes.begin(), bytes.end())) << "texture " << t;
  }
  EXPECT_FALSE(std::filesystem::exists(absl::StrCat(prefix, 3, ".png")));
  // Every texel's channels sum to 255 over the three files.
  for (int texel = 0; texel < 32 * 32; ++texel) {
    int sum = 0;
    for (int t = 0; t < 3; ++t) {
      for (int k = 0; k < 4; ++k)
        sum += static_cast<uint8_t>(direct->splat_texture(t)[texel * 4 + k]);
    }
    ASSERT_EQ(sum, 255) << texel;
  }
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
  CommandResult bad = Cli({"chunk", "0", "0", "--size=512"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;

  // --world_fingerprint pins the world: the server's own passes, another is refused.
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok());
  EXPECT_EQ(Cli({"sample", "1", "2", absl::StrCat("--world_fingerprint=", world->fingerprint())})
                .exit_code,
            0);
  CommandResult stale = Cli({"sample", "1", "2", "--world_fingerprint=0123456789abcdef"});
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.err.find("FAILED_PRECONDITION"), std::string::npos) << stale.err;
}

// A world file of two biomes; another seed is another world.
void WriteWorld(const std::string& path, const std::string& name, int seed) {
  std::ofstream(path) << absl::StrCat(R"({"name": ")", name, R"(", "seed": ")", seed,
                                      R"(", "biomes": [{"id": 0, "name": "low"},)",
                                      R"( {"id": 1, "name": "high", "temperature": 0.5}]})");
}

// `check` against a server that loaded the files: the fingerprints it computes are the server's
// own, then each kind of rollout change is named and fails the check until allowed.
TEST_F(CliTest, CheckComparesWorldFilesWithTheLiveService) {
  absl::StatusOr<std::unique_ptr<TempDir>> live_dir = TempDir::Create("worldgen-check-live");
  absl::StatusOr<std::unique_ptr<TempDir>> next_dir = TempDir::Create("worldgen-check-next");
  ASSERT_TRUE(live_dir.ok() && next_dir.ok());
  WriteWorld((*live_dir)->File("a.json"), "a", 1);
  WriteWorld((*live_dir)->File("b.json"), "b", 2);
  auto live = ServerProcess::Start({absl::StrCat("--world_config=", (*live_dir)->path())});
  ASSERT_TRUE(live.ok()) << live.status();
  const std::string target = absl::StrCat("--target=", (*live)->target());

  CommandResult same = Cli({"check", (*live_dir)->path(), "--live", target, "--json"}, false);
  ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
  google::protobuf::Struct report = ParseJson<google::protobuf::Struct>(same.out);
  EXPECT_TRUE(report.fields().at("ok").bool_value());
  auto client = Client::Connect((*live)->target());
  ASSERT_TRUE(client.ok());
  std::vector<std::string> names;
  for (const auto& row : report.fields().at("worlds").list_value().values()) {
    const auto& world = row.struct_value().fields();
    names.push_back(world.at("name").string_value());
    absl::StatusOr<v1::WorldDescription> served = (*client)->DescribeWorld(names.back());
    ASSERT_TRUE(served.ok()) << served.status();
    EXPECT_EQ(world.at("fingerprint").string_value(), served->fingerprint()) << names.back();
    EXPECT_EQ(world.at("live_fingerprint").string_value(), served->fingerprint()) << names.back();
    EXPECT_EQ(world.at("blender").string_value(), served->blender()) << names.back();
    EXPECT_EQ(world.at("verdict").string_value(), "same") << names.back();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "default"}));

  // The next rollout: a reseeded, b dropped, c added.
  WriteWorld((*next_dir)->File("a.json"), "a", 3);
  WriteWorld((*next_dir)->File("c.json"), "c", 4);
  CommandResult changed = Cli({"check", (*next_dir)->path(), "--live", target}, false);
  EXPECT_EQ(changed.exit_code, 1) << changed.out << changed.err;
  for (const char* row : {"\na ", "\nb ", "\nc ", "\ndefault "}) {
    EXPECT_NE(changed.out.find(row), std::string::npos) << row << "\n" << changed.out;
  }
  EXPECT_NE(changed.out.find("1 changed, 1 new, 1 removed, 1 same\n"), std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("players' terrain would change in: a, b "), std::string::npos)
      << changed.out;
  EXPECT_EQ(
      Cli({"check", (*next_dir)->path(), "--live", target, "--allow_changed=a"}, false).exit_code,
      1);
  CommandResult allowed =
      Cli({"check", (*next_dir)->path(), "--live", target, "--allow_changed=a,b"}, false);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_NE(allowed.out.find("removed (allowed)\n"), std::string::npos) << allowed.out;

  // Without --live the files are only loaded: a file that would stop the server fails the check
  // with the server's own reason.
  EXPECT_EQ(Cli({"check", (*next_dir)->path()}, false).exit_code, 0);
  std::ofstream((*next_dir)->File("d.json")) << R"({"name": "d", "biomes": []})";
  CommandResult bad = Cli({"check", (*next_dir)->path()}, false);
  EXPECT_EQ(bad.exit_code, 1);
  auto refused = ServerProcess::Start({absl::StrCat("--world_config=", (*next_dir)->path())});
  ASSERT_FALSE(refused.ok());
  const std::string reason = absl::StrCat((*next_dir)->File("d.json"), ": biomes has 0 entries");
  EXPECT_NE(bad.err.find(reason), std::string::npos) << bad.err;
  EXPECT_NE(refused.status().message().find(reason), std::string::npos) << refused.status();
}

// A file that pins its world's fingerprint (expected_fingerprint, copied from check's output)
// passes while the world is the same, and fails the check offline, as it would stop the server,
// once the world changes under it.
TEST_F(CliTest, CheckFailsAWorldThatIsNotTheFingerprintItsFileExpects) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-check-pin");
  ASSERT_TRUE(dir.ok());
  const std::string file = (*dir)->File("a.json");
  WriteWorld(file, "a", 1);
  CommandResult json = Cli({"check", file, "--json"}, false);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::string fingerprint;
  const auto report = ParseJson<google::protobuf::Struct>(json.out);
  for (const auto& row : report.fields().at("worlds").list_value().values()) {
    if (row.struct_value().fields().at("name").string_value() == "a") {
      fingerprint = row.struct_value().fields().at("fingerprint").string_value();
    }
  }
  ASSERT_EQ(fingerprint.size(), 16u) << json.out;
  const auto pin = [&](int seed) {
    std::ofstream(file) << absl::StrCat(R"({"name": "a", "seed": ")", seed,
                                        R"(", "biomes": [{"id": 0, "name": "low"},)",
                                        R"( {"id": 1, "name": "high", "temperature": 0.5}],)",
                                        R"( "expectedFingerprint": ")", fingerprint, R"("})");
  };
  pin(1);
  CommandResult same = Cli({"check", file}, false);
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find(fingerprint), std::string::npos) << same.out;
  pin(2);
  CommandResult changed = Cli({"check", file}, false);
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_NE(changed.err.find(absl::StrCat("not its expected_fingerprint ", fingerprint)),
            std::string::npos)
      << changed.err;
}

// check reads its paths as the server reads --world_config: comma-separated lists included.
TEST_F(CliTest, CheckTakesCommaSeparatedPathsAsTheServerDoes) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-check-commas");
  ASSERT_TRUE(dir.ok());
  WriteWorld((*dir)->File("a.json"), "a", 1);
  WriteWorld((*dir)->File("b.json"), "b", 2);
  CommandResult both =
      Cli({"check", absl::StrCat((*dir)->File("a.json"), ",", (*dir)->File("b.json"))}, false);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("\na "), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("\nb "), std::string::npos) << both.out;
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                   // No subcommand.
      {"teleport"},                         // Unknown subcommand.
      {"chunk", "1"},                       // Missing coordinate.
      {"chunk", "1", "x"},                  // Not a number.
      {"sample", "1", "2", "3"},            // Odd number of coordinates.
      {"describe", "--size=16"},            // A flag describe does not take.
      {"describe", "--no_such_flag"},       // Unknown flag.
      {"load", "--concurrency=many"},       // Bad flag value.
      {"load", "--pattern=zigzag"},         // Bad pattern.
      {"render"},                           // Missing --region.
      {"render", "--region=1,2,3"},         // Malformed region.
      {"check"},                            // No world files.
      {"check", ".", "--allow_changed=a"},  // --allow_changed without --live.
      // Sizes that would reach the wire wrapped around, or that the CLI would ignore.
      {"chunk", "0", "0", "--size=-16"},
      {"chunk", "0", "0", "--size=12"},
      {"chunk", "0", "0", "--y=-64:64", "--cell=0"},
      {"chunk", "0", "0", "--cell=8"},  // --cell without --y.
      {"load", "--cell=8", "--requests=1"},
      {"render", "--region=0,0,15,15", "--size=-16"},
      {"render", "--region=0,0,8191,8191", "--size=1"},  // Not served: before 4M chunks are listed.
      {"render", "--region=0,0,15,15", "--slice=y:0", "--size=8"},
      {"render", "--region=0,0,15,15", "--layer=splat:0", "--scale=2"},
      // Request lists that would be built whole before anything checked them.
      {"load", "--chunks_per_request=2147483647", "--requests=1"},
      {"load", "--pattern=hot", "--hot_set=2147483647", "--requests=1"},
      {"load", "--pattern=hot", "--hot_set=2", "--chunks_per_request=16", "--requests=1"},
  };
  for (const auto& args : cases) {
    CommandResult run = Cli(args);
    EXPECT_EQ(run.exit_code, 2) << absl::StrJoin(args, " ") << "\n" << run.err;
    EXPECT_FALSE(run.err.empty()) << absl::StrJoin(args, " ");
  }
}

// Output that cannot be written (stdout closed, a full disk) is exit 1, as main.cc promises.
TEST_F(CliTest, OutputThatCannotBeWrittenExitsOne) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"describe"}, {"chunk", "0", "0", "--json"}}) {
    std::vector<std::string> argv = {
        "/bin/sh",           "-c",
        "exec \"$@\" >&-",   "sh",
        WORLDGEN_CLI_BINARY, absl::StrCat("--target=", server_->target())};
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<CommandResult> run = RunCommand(argv, absl::Seconds(60));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->exit_code, 1) << absl::StrJoin(args, " ") << "\n" << run->err;
    EXPECT_NE(run->err.find("could not write to stdout"), std::string::npos) << run->err;
  }
}

// A region may end anywhere inside the world: at its positive edge a last pixel that covers fewer
// blocks than the scale shows a column inside the region (past it lies past the world's bound),
// drawn from chunks and from points alike.
TEST_F(CliTest, RegionsEndingInAPartialPixelAtTheWorldsEdgeAreDrawn) {
  absl::StatusOr<v1::WorldDescription> world = client_->DescribeWorld();
  ASSERT_TRUE(world.ok()) << world.status();
  const int64_t last = static_cast<int64_t>(world->limits().world_coordinate_bound()) - 1;
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-edge");
  ASSERT_TRUE(dir.ok());
  // (scale, width in blocks): the last pixel covers width % scale blocks, and shows the block at
  // min(scale / 2, width % scale - 1) from its start, which is the region's last block here.
  for (const auto& [scale, width] : {std::pair<int, int>{2, 1}, {4, 5}, {64, 4417}}) {
    SCOPED_TRACE(absl::StrCat("scale ", scale, ", width ", width));
    const int64_t min = last - width + 1;
    const std::string out = (*dir)->File(absl::StrCat(scale, ".png"));
    CommandResult r = Cli({"render", absl::StrCat("--region=", min, ",", min, ",", last, ",", last),
                           absl::StrCat("--scale=", scale), "--layer=source", "--out=" + out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    absl::StatusOr<RgbImage> image = ReadPng(out);
    ASSERT_TRUE(image.ok()) << image.status();
    const int side = (width + scale - 1) / scale;
    ASSERT_EQ(image->width, side);
    const std::vector<std::pair<double, double>> corner = {
        {static_cast<double>(last), static_cast<double>(last)}};
    absl::StatusOr<std::vector<PointSample>> sample =
        client_->SamplePoints(corner, {.source_biome = true});
    ASSERT_TRUE(sample.ok()) << sample.status();
    for (const v1::BiomeConfig& biome : world->config().biomes()) {
      if (biome.id() != sample->front().source_biome) continue;
      const size_t p = (static_cast<size_t>(side) * side - 1) * 3;
      EXPECT_EQ(image->pixels[p], biome.color().r());
      EXPECT_EQ(image->pixels[p + 1], biome.color().g());
      EXPECT_EQ(image->pixels[p + 2], biome.color().b());
    }
  }
}

TEST_F(CliTest, EverySubcommandHasHelp) {
  for (const char* name : {"describe", "chunk", "sample", "render", "health", "load", "check"}) {
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
