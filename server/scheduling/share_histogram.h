// ShareHistogram: a multiset of positive amounts (the clients' unstarted work of one class of
// calls, in columns) that answers "the sum over all of min(amount, m)" in O(log) for the
// scheduler's fair share (CallScheduler, "Fair share"), however many clients there are.
//
//   ShareHistogram h;
//   h.Add(1000); h.Add(100);
//   h.SumOfMin(300);  // 300 + 100 = 400
//
// Amounts are kept in buckets: every value below 16 has its own, larger ones an eighth of an
// octave each (1/8 of the bucket's lowest value wide), with each bucket's count and sum in Fenwick
// trees. Amounts in buckets wholly below m count whole and those wholly above count m each, which
// is exact; the bucket that holds m counts min(its sum, its count x m), an upper bound at most an
// eighth above the exact sum of its amounts. Not thread-safe (the scheduler holds its lock).
#ifndef WORLDGEN_SERVER_SCHEDULING_SHARE_HISTOGRAM_H_
#define WORLDGEN_SERVER_SCHEDULING_SHARE_HISTOGRAM_H_

#include <array>
#include <cstdint>

namespace worldgen {

class ShareHistogram {
 public:
  // Adds one amount (> 0; others are ignored), or removes one added before.
  void Add(int64_t amount) { Update(amount, +1); }
  void Remove(int64_t amount) { Update(amount, -1); }

  // The sum over the amounts of min(amount, m), m >= 0: exact except within m's own bucket (above).
  int64_t SumOfMin(int64_t m) const;

  int64_t count() const { return count_; }

  // The bucket of an amount (> 0); bucket order is amount order.
  static int Bucket(int64_t amount);
  static constexpr int kBuckets = 16 + 59 * 8;

 private:
  void Update(int64_t amount, int sign);
  // Sum of tree's first `buckets` entries.
  static int64_t Prefix(const std::array<int64_t, kBuckets + 1>& tree, int buckets);

  int64_t count_ = 0;
  std::array<int64_t, kBuckets> bucket_count_{}, bucket_sum_{};
  std::array<int64_t, kBuckets + 1> count_tree_{}, sum_tree_{};  // Fenwick, 1-based
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_SHARE_HISTOGRAM_H_
