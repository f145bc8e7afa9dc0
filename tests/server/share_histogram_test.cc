#include "server/scheduling/share_histogram.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace worldgen {
namespace {

int64_t ExactSumOfMin(const std::vector<int64_t>& amounts, int64_t m) {
  int64_t sum = 0;
  for (int64_t a : amounts) sum += std::min(a, m);
  return sum;
}

TEST(ShareHistogramTest, BucketsFollowTheAmountsOrderAndSplitOctavesInEighths) {
  EXPECT_EQ(ShareHistogram::Bucket(1), 1);
  EXPECT_EQ(ShareHistogram::Bucket(15), 15);
  EXPECT_EQ(ShareHistogram::Bucket(16), 16);
  EXPECT_EQ(ShareHistogram::Bucket(17), 16);  // 16 and 17 share the first eighth of [16, 32).
  EXPECT_EQ(ShareHistogram::Bucket(18), 17);
  EXPECT_EQ(ShareHistogram::Bucket(31), 23);
  EXPECT_EQ(ShareHistogram::Bucket(32), 24);
  EXPECT_EQ(ShareHistogram::Bucket(INT64_MAX), ShareHistogram::kBuckets - 1);
  for (int64_t a = 1; a < 100'000; ++a) {
    ASSERT_LE(ShareHistogram::Bucket(a), ShareHistogram::Bucket(a + 1)) << a;
  }
}

// Exact where no amount shares m's bucket; within that bucket an upper bound at most an eighth of m
// per amount in it above the exact sum.
TEST(ShareHistogramTest, SumOfMinIsExactOutsideMsBucketAndBoundedWithinIt) {
  std::mt19937_64 random(7);
  ShareHistogram histogram;
  std::vector<int64_t> amounts;
  for (int i = 0; i < 2000; ++i) {
    // Sizes from one column to a few million: one-chunk calls to a flood's queue.
    const int64_t a = std::max<int64_t>(1, random() >> (random() % 64));
    const int64_t amount = std::min<int64_t>(a, int64_t{1} << 24);
    amounts.push_back(amount);
    histogram.Add(amount);
  }
  for (int i = 0; i < 2000; ++i) {
    if (i % 3 == 0) {  // Remove one, as a client's work starts.
      const size_t k = random() % amounts.size();
      histogram.Remove(amounts[k]);
      amounts.erase(amounts.begin() + static_cast<ptrdiff_t>(k));
    }
    const int64_t m = std::max<int64_t>(
        0, static_cast<int64_t>(random() >> (random() % 64)) % (int64_t{1} << 25));
    const int64_t exact = ExactSumOfMin(amounts, m);
    const int64_t sharing =
        m == 0 ? 0 : std::count_if(amounts.begin(), amounts.end(), [&](int64_t a) {
          return ShareHistogram::Bucket(a) == ShareHistogram::Bucket(m);
        });
    const int64_t got = histogram.SumOfMin(m);
    ASSERT_GE(got, exact) << "m = " << m;
    ASSERT_LE(got, exact + sharing * (m / 8 + 1)) << "m = " << m;
    if (sharing == 0) ASSERT_EQ(got, exact) << "m = " << m;
  }
  EXPECT_EQ(histogram.count(), static_cast<int64_t>(amounts.size()));
  for (int64_t a : amounts) histogram.Remove(a);
  EXPECT_EQ(histogram.SumOfMin(1'000'000), 0);
}

// Amounts in m's bucket that are all at least m count m each: the bucket's bound is then exact.
TEST(ShareHistogramTest, AmountsOfMsBucketAboveItCountMEach) {
  ShareHistogram histogram;
  histogram.Add(1000);
  histogram.Add(1010);  // Both in [960, 1024), with 990.
  EXPECT_EQ(ShareHistogram::Bucket(990), ShareHistogram::Bucket(1010));
  EXPECT_EQ(histogram.SumOfMin(990), 990 + 990);
  EXPECT_EQ(histogram.SumOfMin(5000), 1000 + 1010);
}

TEST(ShareHistogramTest, SmallAmountsAreExact) {
  ShareHistogram histogram;
  for (int64_t a : {1, 3, 3, 9, 15}) histogram.Add(a);
  EXPECT_EQ(histogram.SumOfMin(3), 1 + 3 + 3 + 3 + 3);
  EXPECT_EQ(histogram.SumOfMin(9), 1 + 3 + 3 + 9 + 9);
  EXPECT_EQ(histogram.SumOfMin(0), 0);
  histogram.Add(0);  // Ignored: an amount must be positive.
  EXPECT_EQ(histogram.count(), 5);
}

}  // namespace
}  // namespace worldgen
