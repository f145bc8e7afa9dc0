#include "client/cli/render.h"

#include <gtest/gtest.h>

namespace worldgen::cli {
namespace {

TEST(ParseBlockRegionTest, ParsesInclusiveRectangles) {
  absl::StatusOr<BlockRegion> region = ParseBlockRegion("-64,-32,63,31");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(region->min_x, -64);
  EXPECT_EQ(region->min_z, -32);
  EXPECT_EQ(region->width(), 128);
  EXPECT_EQ(region->height(), 64);
}

TEST(ParseBlockRegionTest, RejectsMalformedOrHugeRegions) {
  for (const char* bad : {"", "1,2,3", "1,2,3,4,5", "a,0,1,1", "5,0,4,1", "0,0,100000,100000"}) {
    EXPECT_EQ(ParseBlockRegion(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace worldgen::cli
