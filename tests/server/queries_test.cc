// SampleWeights' work (server/service/queries.h): the points a call blends lend their thread to
// other work every kPointsPerLend points, and that time stays out of the call's own figures.
#include "server/service/queries.h"

#include <memory>

#include "absl/time/time.h"
#include "engine/world.h"
#include "engine/world_spec.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

// Each lending claims an hour, far more than the points take, so the figures show exactly where
// it was subtracted: once from the planar run (lent at point 8) and once from the run of points
// with a y (lent at point 16), and not at the start or after the last point.
TEST(SamplePointsTest, LendsItsThreadEveryFewPointsAndLeavesThatTimeOut) {
  const std::shared_ptr<const World> world = *World::Create(DefaultWorldSpec());
  v1::SampleWeightsRequest request;
  for (int i = 0; i < 20; ++i) {
    v1::Point* point = request.add_points();
    point->set_x(i * 37.5);
    point->set_z(-i * 11.25);
    if (i >= 12) point->set_y(-20);
  }
  ASSERT_EQ(kPointsPerLend, 8);
  int lends = 0;
  PointTimes times;
  absl::StatusOr<v1::SampleWeightsResponse> response = SamplePoints(
      *world, request, nullptr, [] { return false; },
      [&] {
        ++lends;
        return absl::Hours(1);
      },
      &times);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->samples_size(), 20);
  EXPECT_EQ(lends, 2);
  EXPECT_EQ(times.planar, 12);
  EXPECT_EQ(times.volume, 8);
  for (const absl::Duration d : {times.planar_time, times.volume_time}) {
    EXPECT_LT(d, -absl::Minutes(59));
    EXPECT_GT(d, -absl::Hours(1));
  }
}

}  // namespace
}  // namespace worldgen
