#include "server/service/request_validation.h"

#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/service_calls.h"

namespace worldgen {
namespace {

using ::testing::HasSubstr;
using ::worldgen::testing::ListRequest;
using ::worldgen::testing::RegionRequest;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

void ExpectInvalid(const v1::GenerateChunkRequest& request, const std::string& needle,
                   RequestLimits limits = {}) {
  absl::StatusOr<ChunkSelection> selection = ValidateChunkRequest(request, 16, limits);
  ASSERT_FALSE(selection.ok()) << request.DebugString();
  EXPECT_EQ(selection.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(selection.status().message(), HasSubstr(needle));
}

TEST(RequestValidationTest, ZeroChunkSizeMeansTheWorldsSize) {
  absl::StatusOr<ChunkSelection> selection = ValidateChunkRequest(ListRequest({{0, 0}}, 0), 32, {});
  ASSERT_TRUE(selection.ok()) << selection.status();
  EXPECT_EQ(selection->size(), 32);
}

TEST(RequestValidationTest, ChunkSizeMustBeAPowerOfTwoFrom4To256) {
  for (uint32_t size : {4u, 8u, 16u, 64u, 256u}) {
    EXPECT_TRUE(ValidateChunkRequest(ListRequest({{0, 0}}, size), 16, {}).ok()) << size;
  }
  for (uint32_t size : {1u, 2u, 3u, 12u, 100u, 512u, 4294967295u}) {
    ExpectInvalid(ListRequest({{0, 0}}, size), "chunk_size = " + std::to_string(size));
  }
}

TEST(RequestValidationTest, SelectionMustBeSetAndNonEmpty) {
  v1::GenerateChunkRequest none;
  ExpectInvalid(none, "selection");
  ExpectInvalid(ListRequest({}), "chunks.coords is empty");
}

TEST(RequestValidationTest, ListLongerThanTheLimitIsRejected) {
  RequestLimits limits;
  limits.max_chunks_per_request = 3;
  EXPECT_TRUE(ValidateChunkRequest(ListRequest({{0, 0}, {1, 0}, {2, 0}}), 16, limits).ok());
  ExpectInvalid(ListRequest({{0, 0}, {1, 0}, {2, 0}, {3, 0}}), "max_chunks_per_request = 3",
                limits);
}

TEST(RequestValidationTest, RegionLargerThanTheLimitIsRejectedWithoutOverflow) {
  RequestLimits limits;
  limits.max_chunks_per_request = 100;
  EXPECT_TRUE(ValidateChunkRequest(RegionRequest(0, 0, 9, 9), 16, limits).ok());
  ExpectInvalid(RegionRequest(0, 0, 10, 9), "max_chunks_per_request = 100", limits);
  // The whole world at size 16: 2^22 x 2^22 chunks, 2^44 in all.
  const int64_t edge = int64_t{1} << 21;
  ExpectInvalid(RegionRequest(-edge, -edge, edge - 1, edge - 1), "max_chunks_per_request = 100",
                limits);
  ExpectInvalid(RegionRequest(0, -edge, 0, edge - 1), "max_chunks_per_request", limits);
  // Extreme corners are reported as outside the world, never overflow.
  ExpectInvalid(RegionRequest(kInt64Min, kInt64Min, kInt64Max, kInt64Max), "region.min_x", limits);
  ExpectInvalid(RegionRequest(0, kInt64Min, 0, kInt64Max), "region.min_z", limits);
  ExpectInvalid(RegionRequest(0, 0, (int64_t{1} << 32) - 1, 0), "region.max_x", limits);
}

TEST(RequestValidationTest, RegionMinAboveMaxNamesTheField) {
  ExpectInvalid(RegionRequest(5, 0, 4, 0), "region.min_x = 5");
  ExpectInvalid(RegionRequest(0, 5, 0, 4), "region.min_z = 5");
}

TEST(RequestValidationTest, ChunksOutsideTheWorldBoundNameTheField) {
  // With size 16 the last chunk inside +-2^25 is 2^21 - 1; the first is -2^21.
  const int64_t last = (int64_t{1} << 21) - 1;
  EXPECT_TRUE(ValidateChunkRequest(ListRequest({{last, -last - 1}}), 16, {}).ok());
  ExpectInvalid(ListRequest({{0, 0}, {last + 1, 0}}), "chunks.coords[1].x");
  ExpectInvalid(ListRequest({{0, -last - 2}}), "chunks.coords[0].z");
  ExpectInvalid(ListRequest({{kInt64Max, 0}}), "chunks.coords[0].x");
  ExpectInvalid(ListRequest({{kInt64Min, 0}}), "chunks.coords[0].x");
  ExpectInvalid(RegionRequest(last, 0, last + 1, 0), "region.max_x");
  ExpectInvalid(RegionRequest(0, -last - 2, 0, 0), "region.min_z");
  // The same coordinate is inside for a smaller chunk size.
  EXPECT_TRUE(ValidateChunkRequest(ListRequest({{last + 1, 0}}, 8), 16, {}).ok());
}

TEST(RequestValidationTest, RegionEnumeratesEveryChunkOnceRowMajor) {
  absl::StatusOr<ChunkSelection> selection =
      ValidateChunkRequest(RegionRequest(-2, 5, 1, 7), 16, {});
  ASSERT_TRUE(selection.ok()) << selection.status();
  ASSERT_EQ(selection->count(), 12);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < selection->count(); ++i) {
    ChunkSelection::Coord c = selection->at(i);
    EXPECT_GE(c.x, -2);
    EXPECT_LE(c.x, 1);
    EXPECT_GE(c.z, 5);
    EXPECT_LE(c.z, 7);
    seen.insert({c.x, c.z});
  }
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(selection->at(1).x, -1);
  EXPECT_EQ(selection->at(4).z, 6);
}

TEST(RequestValidationTest, ListKeepsRequestOrder) {
  absl::StatusOr<ChunkSelection> selection =
      ValidateChunkRequest(ListRequest({{3, 4}, {-1, 2}}), 16, {});
  ASSERT_TRUE(selection.ok());
  ASSERT_EQ(selection->count(), 2);
  EXPECT_EQ(selection->at(1).x, -1);
  EXPECT_EQ(selection->at(1).z, 2);
}

v1::SampleWeightsRequest Points(std::vector<std::pair<double, double>> points) {
  v1::SampleWeightsRequest request;
  for (auto [x, z] : points) {
    v1::Point* p = request.add_points();
    p->set_x(x);
    p->set_z(z);
  }
  return request;
}

TEST(RequestValidationTest, PointsMustBeFiniteAndInsideTheWorld) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(ValidateSampleRequest(Points({{33554432.0, -33554432.0}, {0.5, -7.25}}), {}).ok());
  EXPECT_TRUE(ValidateSampleRequest(Points({}), {}).ok());
  struct Case {
    std::vector<std::pair<double, double>> points;
    std::string needle;
  } cases[] = {
      {{{0, 0}, {nan, 0}}, "points[1].x = nan is not finite"},
      {{{0, inf}}, "points[0].z = inf is not finite"},
      {{{0, -inf}}, "points[0].z"},
      {{{33554432.5, 0}}, "points[0].x = 33554432.5 is outside"},
      {{{0, -1e300}}, "points[0].z"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateSampleRequest(Points(c.points), {});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.needle;
    EXPECT_THAT(status.message(), HasSubstr(c.needle));
  }
}

TEST(RequestValidationTest, TooManyPointsNamesTheLimit) {
  RequestLimits limits;
  limits.max_points_per_request = 2;
  EXPECT_TRUE(ValidateSampleRequest(Points({{0, 0}, {1, 1}}), limits).ok());
  absl::Status status = ValidateSampleRequest(Points({{0, 0}, {1, 1}, {2, 2}}), limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("max_points_per_request = 2"));
}

}  // namespace
}  // namespace worldgen
