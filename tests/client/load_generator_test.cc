#include "client/cli/load_generator.h"

#include <gtest/gtest.h>

#include <set>

namespace worldgen::cli {
namespace {

TEST(PercentileTest, NearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 0.5), 500);
  EXPECT_EQ(Percentile(v, 0.99), 990);
  EXPECT_EQ(Percentile(v, 0.999), 999);
  EXPECT_EQ(Percentile(v, 1.0), 1000);
  EXPECT_EQ(Percentile({7}, 0.5), 7);
  EXPECT_EQ(Percentile({}, 0.5), 0);
}

TEST(LoadPatternTest, ParsesNames) {
  for (const char* name : {"random", "spiral", "hot"}) {
    absl::StatusOr<LoadPattern> p = ParseLoadPattern(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ(LoadPatternName(*p), name);
  }
  EXPECT_FALSE(ParseLoadPattern("zigzag").ok());
}

TEST(ChunkPickerTest, IsDeterministicPerSeedAndWorker) {
  for (LoadPattern pattern : {LoadPattern::kRandom, LoadPattern::kSpiral, LoadPattern::kHot}) {
    LoadConfig config;
    config.pattern = pattern;
    auto a = MakeChunkPicker(config, 0)->Next(50);
    auto b = MakeChunkPicker(config, 0)->Next(50);
    auto other_worker = MakeChunkPicker(config, 1)->Next(50);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, other_worker);
    EXPECT_EQ(a.size(), 50u);
  }
}

TEST(ChunkPickerTest, RandomStaysInArea) {
  LoadConfig config;
  config.area = 3;
  for (const ChunkCoord& c : MakeChunkPicker(config, 2)->Next(500)) {
    EXPECT_GE(c.x, -3);
    EXPECT_LT(c.x, 3);
    EXPECT_GE(c.z, -3);
    EXPECT_LT(c.z, 3);
  }
}

TEST(ChunkPickerTest, SpiralLoadsRingsAroundThePlayer) {
  LoadConfig config;
  config.pattern = LoadPattern::kSpiral;
  config.view_radius = 2;
  // Centre, then the 8 chunks of ring 1, then the 16 of ring 2: 25 distinct chunks around the
  // player.
  std::vector<ChunkCoord> first = MakeChunkPicker(config, 0)->Next(25);
  const ChunkCoord centre = first[0];
  std::set<std::pair<int64_t, int64_t>> distinct;
  for (size_t i = 0; i < first.size(); ++i) {
    const int64_t ring = std::max(std::abs(first[i].x - centre.x), std::abs(first[i].z - centre.z));
    EXPECT_EQ(ring, i == 0 ? 0 : (i < 9 ? 1 : 2)) << i;
    distinct.insert({first[i].x, first[i].z});
  }
  EXPECT_EQ(distinct.size(), 25u);
}

TEST(ChunkPickerTest, HotDrawsFromOneSharedSet) {
  LoadConfig config;
  config.pattern = LoadPattern::kHot;
  config.hot_set = 10;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int worker = 0; worker < 4; ++worker) {
    auto picker = MakeChunkPicker(config, worker);
    for (int i = 0; i < 20; ++i) {
      for (const ChunkCoord& c : picker->Next(3)) seen.insert({c.x, c.z});
    }
  }
  EXPECT_LE(seen.size(), 10u);
}

TEST(LoadReportTest, JsonHasEveryField) {
  LoadConfig config;
  LoadReport report;
  report.requests = 3;
  report.server_queued_ms = 1.25;
  report.server_blend_ms = 0.5;
  report.errors["UNAVAILABLE"] = 2;
  report.first_error = "UNAVAILABLE: \"quoted\"\n";
  const std::string json = LoadReportJson(config, report);
  for (const char* key :
       {"\"requests\":3", "\"chunks_per_second\":", "\"mb_per_second\":", "\"p50\":", "\"p90\":",
        "\"p99\":", "\"p99.9\":", "\"max\":", "\"errors\":{\"UNAVAILABLE\":2}", "\"error_count\":2",
        "\"server_ms_per_request\":{\"queued\":1.25,\"blend\":0.5}", "\\\"quoted\\\"\\n"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
  EXPECT_NE(json.find("\"vertical\":null"), std::string::npos) << json;
  EXPECT_EQ(LoadReportText(config, report).find("3D"), std::string::npos);
  EXPECT_NE(LoadReportText(config, report)
                .find("server ms per request: waiting for a blend thread 1.250  blending 0.500"),
            std::string::npos);
}

// 3D requests (`load --y`) say so in both reports, with their range and cell size.
TEST(LoadReportTest, NamesTheVerticalRangeOf3DRequests) {
  LoadConfig config;
  config.chunk.vertical = ChunkRequestOptions::Vertical{.min_y = -64, .max_y = 320, .cell_size = 4};
  const LoadReport report;
  const std::string json = LoadReportJson(config, report);
  EXPECT_NE(json.find("\"vertical\":{\"min_y\":-64,\"max_y\":320,\"cell_size\":4}"),
            std::string::npos)
      << json;
  const std::string text = LoadReportText(config, report);
  EXPECT_NE(text.find("chunk size 0  3D y [-64, 320) cells of 4  closed loop"), std::string::npos)
      << text;
}

TEST(RunLoadTest, RejectsConfigsWithoutALimit) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect("127.0.0.1:1");
  ASSERT_TRUE(client.ok());
  LoadConfig config;
  config.duration = absl::ZeroDuration();
  config.requests = 0;
  EXPECT_EQ(RunLoad(**client, config).status().code(), absl::StatusCode::kInvalidArgument);
  config.requests = 1;
  config.concurrency = 0;
  EXPECT_EQ(RunLoad(**client, config).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace worldgen::cli
