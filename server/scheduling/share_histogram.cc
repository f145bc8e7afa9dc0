#include "server/scheduling/share_histogram.h"

#include <algorithm>
#include <bit>

namespace worldgen {

int ShareHistogram::Bucket(int64_t amount) {
  const uint64_t value = static_cast<uint64_t>(amount);
  if (value < 16) return static_cast<int>(value);
  const int octave = std::bit_width(value) - 1;  // 4..62
  const int eighth = static_cast<int>((value >> (octave - 3)) & 7);
  return 16 + (octave - 4) * 8 + eighth;
}

void ShareHistogram::Update(int64_t amount, int sign) {
  if (amount <= 0) return;
  const int bucket = Bucket(amount);
  count_ += sign;
  bucket_count_[bucket] += sign;
  bucket_sum_[bucket] += sign * amount;
  for (int i = bucket + 1; i <= kBuckets; i += i & -i) {
    count_tree_[i] += sign;
    sum_tree_[i] += sign * amount;
  }
}

int64_t ShareHistogram::Prefix(const std::array<int64_t, kBuckets + 1>& tree, int buckets) {
  int64_t sum = 0;
  for (int i = buckets; i > 0; i -= i & -i) sum += tree[i];
  return sum;
}

int64_t ShareHistogram::SumOfMin(int64_t m) const {
  if (m <= 0 || count_ == 0) return 0;
  const int bucket = Bucket(m);
  const int64_t below = Prefix(sum_tree_, bucket);
  const int64_t above = count_ - Prefix(count_tree_, bucket + 1);
  return below + above * m + std::min(bucket_sum_[bucket], bucket_count_[bucket] * m);
}

}  // namespace worldgen
