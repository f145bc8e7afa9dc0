// `worldgen check`'s verdicts and output, without a server (tests/client/cli_test.cc runs it
// against one).
#include "client/cli/world_check.h"

#include <gtest/gtest.h>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace worldgen::cli {
namespace {

CheckedWorld World(std::string name, std::string fingerprint, std::string live) {
  CheckedWorld world;
  world.name = std::move(name);
  world.blender = fingerprint.empty() ? "" : "scattered";  // Only the files say the blender.
  world.fingerprint = std::move(fingerprint);
  world.live_fingerprint = std::move(live);
  return world;
}

// One world of each verdict, sorted by name as LoadWorldCheck and CompareWithLive leave them.
WorldCheck Compared() {
  WorldCheck check;
  check.worlds = {World("coast", "1111111111111111", "2222222222222222"),
                  World("default", "3333333333333333", "3333333333333333"),
                  World("islands", "4444444444444444", ""),
                  World("steppe", "", "5555555555555555")};
  check.compared = true;
  return check;
}

TEST(WorldCheckTest, EachWorldsVerdictComesFromItsTwoFingerprints) {
  const WorldCheck check = Compared();
  EXPECT_EQ(VerdictOf(check.worlds[0], true), WorldVerdict::kChanged);
  EXPECT_EQ(VerdictOf(check.worlds[1], true), WorldVerdict::kSame);
  EXPECT_EQ(VerdictOf(check.worlds[2], true), WorldVerdict::kNew);
  EXPECT_EQ(VerdictOf(check.worlds[3], true), WorldVerdict::kRemoved);
  for (const CheckedWorld& world : check.worlds) {
    EXPECT_EQ(VerdictOf(world, false), WorldVerdict::kNotCompared) << world.name;
  }
}

TEST(WorldCheckTest, ChangedAndRemovedWorldsFailTheCheckUnlessAllowed) {
  WorldCheck check = Compared();
  EXPECT_EQ(UnintendedChanges(check, {}), (std::vector<std::string>{"coast", "steppe"}));
  EXPECT_EQ(UnintendedChanges(check, {"coast"}), (std::vector<std::string>{"steppe"}));
  // Allowing a world that does not change allows nothing else.
  EXPECT_EQ(UnintendedChanges(check, {"default", "islands"}),
            (std::vector<std::string>{"coast", "steppe"}));
  EXPECT_TRUE(UnintendedChanges(check, {"coast", "steppe"}).empty());
  // Without a comparison nothing can fail.
  check.compared = false;
  EXPECT_TRUE(UnintendedChanges(check, {}).empty());
}

TEST(WorldCheckTest, TheTextNamesEachVerdictAndWhatWouldChange) {
  const std::string text = WorldCheckText(Compared(), {"steppe"});
  EXPECT_EQ(text,
            "world    blender    fingerprint       live              verdict\n"
            "coast    scattered  1111111111111111  2222222222222222  changed\n"
            "default  scattered  3333333333333333  3333333333333333  same\n"
            "islands  scattered  4444444444444444  -                 new\n"
            "steppe   -          -                 5555555555555555  removed (allowed)\n"
            "1 changed, 1 new, 1 removed, 1 same\n"
            "players' terrain would change in: coast (give a changed world a new name, or name it "
            "in --allow_changed)\n");
  WorldCheck offline = Compared();
  offline.worlds.pop_back();
  offline.compared = false;
  EXPECT_EQ(WorldCheckText(offline, {}),
            "world    blender    fingerprint\n"
            "coast    scattered  1111111111111111\n"
            "default  scattered  3333333333333333\n"
            "islands  scattered  4444444444444444\n"
            "3 worlds load as worldgen-server loads them\n");
}

TEST(WorldCheckTest, TheJsonHoldsEveryWorldAndTheOutcome) {
  const std::string json = WorldCheckJson(Compared(), {"coast"});
  google::protobuf::Struct parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  EXPECT_FALSE(parsed.fields().at("ok").bool_value());  // steppe is removed and not allowed.
  EXPECT_TRUE(parsed.fields().at("compared").bool_value());
  const auto& worlds = parsed.fields().at("worlds").list_value().values();
  ASSERT_EQ(worlds.size(), 4);
  const auto& coast = worlds[0].struct_value().fields();
  EXPECT_EQ(coast.at("name").string_value(), "coast");
  EXPECT_EQ(coast.at("fingerprint").string_value(), "1111111111111111");
  EXPECT_EQ(coast.at("live_fingerprint").string_value(), "2222222222222222");
  EXPECT_EQ(coast.at("verdict").string_value(), "changed");
  EXPECT_TRUE(coast.at("allowed").bool_value());
  const auto& steppe = worlds[3].struct_value().fields();
  EXPECT_EQ(steppe.at("verdict").string_value(), "removed");
  EXPECT_FALSE(steppe.at("allowed").bool_value());
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                  WorldCheckJson(Compared(), {"coast", "steppe"}), &parsed)
                  .ok());
  EXPECT_TRUE(parsed.fields().at("ok").bool_value());
}

// The embedded world is always checked, as the server always serves it, and a file may not
// redefine it: the server's own start-up error.
TEST(WorldCheckTest, LoadingChecksWhatTheServerWouldRefuse) {
  absl::StatusOr<WorldCheck> none = LoadWorldCheck({});
  ASSERT_TRUE(none.ok()) << none.status();
  ASSERT_EQ(none->worlds.size(), 1u);
  EXPECT_EQ(none->worlds[0].name, "default");
  EXPECT_EQ(none->worlds[0].blender, "scattered");
  EXPECT_EQ(none->worlds[0].fingerprint.size(), 16u);

  absl::StatusOr<WorldCheck> missing = LoadWorldCheck({"/nonexistent/worlds.json"});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/worlds.json"), std::string::npos)
      << missing.status();
}

}  // namespace
}  // namespace worldgen::cli
