// OutputFingerprint (engine/fingerprint.h): pinned for three worlds, equal for equal outputs, and
// moved by a change to any kind of answer it probes (weights, heights, 3D cells).
#include "engine/fingerprint.h"

#include <cstdint>
#include <memory>

#include "engine/world.h"
#include "gtest/gtest.h"
#include "tests/engine/blend_test_util.h"

namespace worldgen {
namespace {

using testing::CaveWorldSpec;
using testing::CoastalWorldSpec;

uint64_t FingerprintOf(WorldSpec spec) {
  absl::StatusOr<std::shared_ptr<const World>> world = World::Create(std::move(spec));
  EXPECT_TRUE(world.ok()) << world.status();
  return world.ok() ? OutputFingerprint(**world) : 0;
}

// Like the contract suite's golden hashes: a change of these values is a change of what the
// worlds answer, and must be deliberate (update them in the same commit, and say why). Replicas
// running builds with different values here answer differently.
TEST(OutputFingerprintTest, PinnedForTheDefaultCoastalAndCaveWorlds) {
  const struct {
    WorldSpec spec;
    uint64_t expected;
  } pinned[] = {{DefaultWorldSpec(), 0x3909a7a6bf89fb8fULL},
                {CoastalWorldSpec(), 0x5729a292151ab766ULL},
                {CaveWorldSpec(), 0x97053214eed98d06ULL}};
  for (const auto& [spec, expected] : pinned) {
    const uint64_t f = FingerprintOf(spec);
    EXPECT_EQ(f, expected) << spec.name << ": 0x" << std::hex << f;
  }
}

TEST(OutputFingerprintTest, EqualForEqualAnswers) {
  EXPECT_EQ(FingerprintOf(DefaultWorldSpec()), FingerprintOf(DefaultWorldSpec()));
  // The name labels the world; it seeds nothing, so the answers and their fingerprint stay.
  WorldSpec renamed = DefaultWorldSpec();
  renamed.name = "another_name";
  EXPECT_EQ(FingerprintOf(renamed), FingerprintOf(DefaultWorldSpec()));
}

// Each change alters only some kinds of answers; the fingerprint must see every one of them.
TEST(OutputFingerprintTest, MovesWithEveryKindOfAnswer) {
  const uint64_t base = FingerprintOf(DefaultWorldSpec());

  WorldSpec seed = DefaultWorldSpec();
  seed.seed += 1;
  EXPECT_NE(FingerprintOf(seed), base) << "the seed";

  // Heights only: the same weights everywhere.
  WorldSpec heights = DefaultWorldSpec();
  heights.biomes.back().height_base += 0.5;
  EXPECT_NE(FingerprintOf(heights), base) << "one biome's height";

  // Cells only: the cave band moves by one block, the 2D answers are the default world's.
  const uint64_t caves = FingerprintOf(CaveWorldSpec());
  EXPECT_NE(caves, base) << "cave biomes";
  WorldSpec band = CaveWorldSpec();
  for (BiomeSpec& biome : band.biomes) {
    if (biome.cave.has_value() && biome.cave->y_min == -64.0) biome.cave->y_min = -63.0;
  }
  EXPECT_NE(FingerprintOf(band), caves) << "a cave band's floor";
}

}  // namespace
}  // namespace worldgen
