#include "server/scheduling/chunk_stream_policy.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/scheduling/blend_pool.h"
#include "server/scheduling/call_scheduler.h"

// std synchronization only: these tests also run under ThreadSanitizer (scripts/tsan.sh).
namespace worldgen {
namespace {

// A stand-in for the gRPC reactor: produces "chunk <i>" replies, writes them on its own writer
// thread (acknowledging each write only while the reader is reading), and records the final status:
// at once, or with a last reply after writing it (holding the handed-over admission until then, as
// the reactor does until OnDone).
class FakeStream {
 public:
  FakeStream(CallScheduler& scheduler, int64_t count, int max_outstanding, int64_t reply_bytes = 10)
      : scheduler_(scheduler) {
    CallShape shape;
    shape.tasks = count;
    shape.columns_per_task = 1;
    shape.reply_bytes_per_task = reply_bytes;
    auto call = scheduler.Admit(shape, absl::Now());
    EXPECT_TRUE(call.ok()) << call.status();
    policy_ = std::make_unique<ChunkStreamPolicy>(
        *std::move(call), count, max_outstanding,
        ChunkStreamPolicy::Hooks{[this](int64_t index, ChunkStreamPolicy::Produced done) {
                                   if (deferring_.load()) {
                                     std::lock_guard<std::mutex> lock(mu_);
                                     deferred_.emplace_back(index, std::move(done));
                                     return;
                                   }
                                   std::move(done)(Produce(index));
                                 },
                                 [this] { return cancelled_.load(); },
                                 [this](ChunkStreamPolicy::Reply reply) {
                                   std::lock_guard<std::mutex> lock(mu_);
                                   pending_.push_back(*reply);
                                   wake_.notify_all();
                                 },
                                 [this](ChunkStreamPolicy::Ending ending) {
                                   std::lock_guard<std::mutex> lock(mu_);
                                   EXPECT_FALSE(end_called_) << "finish called twice";
                                   end_called_ = true;
                                   EXPECT_EQ(ending.last_reply == nullptr,
                                             ending.admission == nullptr);
                                   // Moved, not copied: no reference of this Status is dropped
                                   // after the unlock (TSan cannot see the reference count of apt's
                                   // uninstrumented Abseil).
                                   final_status_ = std::move(ending.status);
                                   if (ending.last_reply != nullptr) {
                                     pending_.push_back(*ending.last_reply);
                                     last_admission_ = std::move(ending.admission);
                                     last_pending_ = true;
                                   } else {
                                     status_ = std::move(final_status_);
                                     finished_ = true;
                                   }
                                   wake_.notify_all();
                                 }});
    writer_ = std::thread([this] { WriterLoop(); });
  }
  ~FakeStream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
      reading_ = true;
      wake_.notify_all();
    }
    writer_.join();
  }

  // Blends chunk `index` (a string), counting how many are in flight at once.
  absl::StatusOr<ChunkStreamPolicy::Reply> Produce(int64_t index) {
    produced_.fetch_add(1);
    const int outstanding = in_flight_.fetch_add(1) + 1;
    int seen = peak_.load();
    while (outstanding > seen && !peak_.compare_exchange_weak(seen, outstanding)) {
    }
    if (index == fail_at_) return absl::InternalError("blend failed");
    {
      std::lock_guard<std::mutex> lock(mu_);
      produced_on_.push_back(std::this_thread::get_id());
    }
    return std::make_shared<const std::string>(absl::StrCat("chunk ", index));
  }

  void Start() { policy_->Start(); }
  // From now on `produce` returns at once and keeps its `done`, as a call joining another's blend
  // of the same chunk does; CompleteDeferred hands the replies on, from the calling thread.
  void Defer() { deferring_ = true; }
  size_t deferred() {
    std::lock_guard<std::mutex> lock(mu_);
    return deferred_.size();
  }
  void CompleteDeferred() {
    std::vector<std::pair<int64_t, ChunkStreamPolicy::Produced>> taken;
    {
      std::lock_guard<std::mutex> lock(mu_);
      taken.swap(deferred_);
    }
    for (auto& [index, done] : taken) std::move(done)(Produce(index));
  }
  void FailAt(int64_t index) { fail_at_ = index; }
  void SetReading(bool reading) {
    std::lock_guard<std::mutex> lock(mu_);
    reading_ = reading;
    wake_.notify_all();
  }
  void CancelFromTasks() { cancelled_ = true; }
  void Cancel() { policy_->Cancel(); }
  void ClientGone() {
    std::lock_guard<std::mutex> lock(mu_);
    client_gone_ = true;
    wake_.notify_all();
  }

  absl::Status WaitFinished() {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait(lock, [this] { return finished_; });
    return status_;
  }
  // Waits until `n` chunks were produced or a bounded wall time passed (for "never more than").
  void WaitProduced(int n) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (produced_.load() < n && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  }
  std::vector<std::string> written() {
    std::lock_guard<std::mutex> lock(mu_);
    return written_;
  }
  int produced() const { return produced_.load(); }
  // The threads chunks were produced on (read after the stream finished).
  std::vector<std::thread::id> produced_on() {
    std::lock_guard<std::mutex> lock(mu_);
    return produced_on_;
  }
  int peak_outstanding() const { return peak_.load(); }

 private:
  void WriterLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      wake_.wait(lock,
                 [this] { return closing_ || (!pending_.empty() && (reading_ || client_gone_)); });
      if (pending_.empty()) return;
      std::string reply = std::move(pending_.front());
      pending_.pop_front();
      const bool ok = !client_gone_;
      if (ok) written_.push_back(reply);
      in_flight_.fetch_sub(1);
      if (last_pending_ && pending_.empty()) {  // The last reply, written with the status.
        std::unique_ptr<CallScheduler::Call> admission = std::move(last_admission_);
        lock.unlock();
        admission.reset();  // Releases the last reply's reservation once its bytes are written.
        lock.lock();
        status_ = std::move(final_status_);
        finished_ = true;
        last_pending_ = false;
        wake_.notify_all();
        continue;
      }
      lock.unlock();
      policy_->WriteDone(ok);
      lock.lock();
    }
  }

  CallScheduler& scheduler_;
  std::unique_ptr<ChunkStreamPolicy> policy_;
  std::atomic<int> produced_{0}, in_flight_{0}, peak_{0};
  std::atomic<int64_t> fail_at_{-1};
  std::atomic<bool> cancelled_{false}, deferring_{false};
  std::vector<std::pair<int64_t, ChunkStreamPolicy::Produced>> deferred_;  // Guarded by mu_.
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> pending_;
  std::vector<std::string> written_;
  std::vector<std::thread::id> produced_on_;
  bool reading_ = true, client_gone_ = false, closing_ = false, finished_ = false;
  bool end_called_ = false, last_pending_ = false;
  absl::Status status_, final_status_;
  std::unique_ptr<CallScheduler::Call> last_admission_;
  std::thread writer_;
};

class ChunkStreamPolicyTest : public ::testing::Test {
 protected:
  static CallShape Shape300() {
    CallShape shape;
    shape.columns_per_task = 300;
    return shape;
  }
  CallScheduler::Options Options(int64_t max_reply_bytes = 1 << 20) {
    CallScheduler::Options options;
    options.max_reply_bytes = max_reply_bytes;
    return options;
  }
  BlendPool pool_{3};
};

TEST_F(ChunkStreamPolicyTest, WritesEveryChunkOnceThenFinishesOk) {
  CallScheduler scheduler(&pool_, Options());
  {
    FakeStream stream(scheduler, 200, 4);
    stream.Start();
    EXPECT_TRUE(stream.WaitFinished().ok());
    std::vector<std::string> written = stream.written();
    std::set<std::string> unique(written.begin(), written.end());
    EXPECT_EQ(written.size(), 200u);
    EXPECT_EQ(unique.size(), 200u);
    EXPECT_LE(stream.peak_outstanding(), 4);
  }
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 0);
  EXPECT_EQ(scheduler.stats().calls, 0);
}

TEST_F(ChunkStreamPolicyTest, ASlowReaderHoldsAtMostTheBufferAndItsReservations) {
  CallScheduler scheduler(&pool_, Options());
  FakeStream stream(scheduler, 100, 3, /*reply_bytes=*/1000);
  stream.SetReading(false);
  stream.Start();
  stream.WaitProduced(3);
  absl::SleepFor(absl::Milliseconds(50));  // Give a wrong policy time to overproduce.
  EXPECT_EQ(stream.produced(), 3);
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 3000);
  stream.SetReading(true);
  EXPECT_TRUE(stream.WaitFinished().ok());
  EXPECT_EQ(stream.written().size(), 100u);
}

TEST(ChunkStreamPolicyBufferTest, BufferChunksKeepsTheWorstCaseBytesWithinTheCap) {
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(16, 8 << 20, 14'000), 16);      // 16 x 16 chunks
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(16, 8 << 20, 900'000), 9);      // 128 x 128
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(16, 8 << 20, 3'600'000), 2);    // 256 x 256
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(16, 8 << 20, 20'000'000), 1);   // never below one
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(4, 1, 0), 4);                   // nothing to bound
  EXPECT_EQ(ChunkStreamPolicy::BufferChunks(16, int64_t{1} << 62, 1), 16);  // no overflow
}

TEST_F(ChunkStreamPolicyTest, AFullReplyBudgetLeavesOneChunkAtATimeAndStillFinishes) {
  CallScheduler scheduler(&pool_, Options(/*max_reply_bytes=*/1000));
  FakeStream stream(scheduler, 50, 4, /*reply_bytes=*/1000);  // Budget = its floor only.
  stream.Start();
  EXPECT_TRUE(stream.WaitFinished().ok());
  EXPECT_EQ(stream.written().size(), 50u);
  EXPECT_EQ(stream.peak_outstanding(), 1);
}

TEST_F(ChunkStreamPolicyTest, CancelStopsBlendingAndFinishesCancelled) {
  CallScheduler scheduler(&pool_, Options());
  FakeStream stream(scheduler, 1000, 4);
  stream.SetReading(false);
  stream.Start();
  stream.WaitProduced(4);
  stream.Cancel();
  stream.SetReading(true);
  EXPECT_TRUE(absl::IsCancelled(stream.WaitFinished()));
  EXPECT_LE(stream.produced(), 4);
}

TEST_F(ChunkStreamPolicyTest, AFailedWriteOrACancelledContextStopsTheStream) {
  CallScheduler scheduler(&pool_, Options());
  {
    FakeStream gone(scheduler, 1000, 4);
    gone.ClientGone();
    gone.Start();
    EXPECT_TRUE(absl::IsCancelled(gone.WaitFinished()));
    EXPECT_LT(gone.produced(), 1000);
  }
  {
    FakeStream expired(scheduler, 1000, 4);
    expired.CancelFromTasks();
    expired.Start();
    EXPECT_TRUE(absl::IsCancelled(expired.WaitFinished()));
    EXPECT_EQ(expired.produced(), 0);
  }
}

TEST_F(ChunkStreamPolicyTest, TheFirstProductionErrorEndsTheStream) {
  CallScheduler scheduler(&pool_, Options());
  FakeStream stream(scheduler, 1000, 4);
  stream.FailAt(10);
  stream.Start();
  absl::Status status = stream.WaitFinished();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "blend failed");
  EXPECT_LT(stream.written().size(), 1000u);
}

// A background stream the scheduler sheds for an interactive call blends nothing more and ends with
// the scheduler's status (RESOURCE_EXHAUSTED, with when to come back).
TEST_F(ChunkStreamPolicyTest, AShedStreamStopsBlendingAndEndsWithTheSchedulersStatus) {
  CallScheduler::Options options = Options();
  options.interactive_max_columns = 300;
  options.initial_seconds_per_column = 1e-3;  // Three threads: 1000 columns take 0.33 s.
  options.max_queue_seconds = 0.4;
  CallScheduler scheduler(&pool_, options);
  FakeStream stream(scheduler, 1000, 4);
  stream.SetReading(false);
  stream.Start();
  stream.WaitProduced(4);
  auto interactive = scheduler.Admit(Shape300(), absl::Now());  // 0.1 s more: past the bound.
  ASSERT_TRUE(interactive.ok()) << interactive.status();
  EXPECT_EQ(scheduler.stats().shed_calls, 1);
  stream.SetReading(true);
  const absl::Status status = stream.WaitFinished();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_GT(CallScheduler::RetryAfter(status), absl::ZeroDuration());
  EXPECT_LE(stream.produced(), 4);
  EXPECT_LE(stream.written().size(), 4u);
}

// A chunk another call is blending is handed on later by that call's thread: the task returns its
// pool thread at once, so other streams run meanwhile (here on a pool of one thread), and the
// stream finishes once the deferred replies arrive.
TEST_F(ChunkStreamPolicyTest, AProductionCompletedLaterFreesThePoolThreadMeanwhile) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, Options());
  FakeStream joiner(scheduler, 3, 4);
  joiner.Defer();
  joiner.Start();
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (joiner.deferred() < 3 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(joiner.deferred(), 3u);
  FakeStream other(scheduler, 5, 4);
  other.Start();
  EXPECT_TRUE(other.WaitFinished().ok());  // The only pool thread was free.
  EXPECT_EQ(other.written().size(), 5u);
  joiner.CompleteDeferred();
  EXPECT_TRUE(joiner.WaitFinished().ok());
  EXPECT_EQ(joiner.written(), (std::vector<std::string>{"chunk 0", "chunk 1", "chunk 2"}));
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 0);
}

// A one-chunk stream on an idle pool: its chunk is produced on Start's thread (no hand-off), and
// the reply comes with the final status and the admission, whose reservation lasts until the reply
// is written.
TEST_F(ChunkStreamPolicyTest, AOneChunkStreamOnAnIdlePoolRunsHereAndEndsWithItsReply) {
  CallScheduler scheduler(&pool_, Options());
  {
    FakeStream stream(scheduler, 1, 4, /*reply_bytes=*/1000);
    stream.SetReading(false);
    stream.Start();
    EXPECT_EQ(stream.produced(), 1);  // Before Start returned.
    EXPECT_EQ(stream.produced_on(), std::vector<std::thread::id>{std::this_thread::get_id()});
    EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 1000);  // Held with the unwritten reply.
    EXPECT_EQ(scheduler.stats().calls, 1);
    stream.SetReading(true);
    EXPECT_TRUE(stream.WaitFinished().ok());
    EXPECT_EQ(stream.written(), std::vector<std::string>{"chunk 0"});
    EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 0);
  }
  EXPECT_EQ(scheduler.stats().calls, 0);
}

// With every pool thread busy, a one-chunk stream's chunk waits its turn on the pool like any task.
TEST_F(ChunkStreamPolicyTest, AOneChunkStreamOnABusyPoolIsQueued) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, Options());
  CallShape busy_shape;
  auto busy = *scheduler.Admit(busy_shape, absl::Now());
  std::latch started(1), release(1);
  busy->Submit([&] {
    started.count_down();
    release.wait();
  });
  started.wait();
  {
    FakeStream stream(scheduler, 1, 4);
    stream.Start();
    EXPECT_EQ(stream.produced(), 0);  // Queued behind the busy thread, not run on this one.
    release.count_down();
    EXPECT_TRUE(stream.WaitFinished().ok());
    EXPECT_EQ(stream.written(), std::vector<std::string>{"chunk 0"});
    ASSERT_EQ(stream.produced_on().size(), 1u);
    EXPECT_NE(stream.produced_on()[0], std::this_thread::get_id());
  }
  pool.Shutdown();
}

// Many streams at once on a small budget, some cancelled midway: each finishes exactly once and the
// scheduler ends with nothing reserved.
TEST_F(ChunkStreamPolicyTest, ManyConcurrentStreamsReleaseEverything) {
  CallScheduler scheduler(&pool_, Options(/*max_reply_bytes=*/20 * 100));
  {
    std::vector<std::unique_ptr<FakeStream>> streams;
    for (int i = 0; i < 12; ++i) {
      streams.push_back(std::make_unique<FakeStream>(scheduler, 40 + i, 1 + i % 4, 100));
    }
    for (auto& stream : streams) stream->Start();
    for (int i = 0; i < 12; i += 3) streams[static_cast<size_t>(i)]->Cancel();
    for (int i = 0; i < 12; ++i) {
      absl::Status status = streams[static_cast<size_t>(i)]->WaitFinished();
      if (i % 3 == 0) {
        EXPECT_TRUE(status.ok() || absl::IsCancelled(status)) << status;
      } else {
        EXPECT_TRUE(status.ok()) << status;
        EXPECT_EQ(streams[static_cast<size_t>(i)]->written().size(), static_cast<size_t>(40 + i));
      }
    }
  }
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 0);
  EXPECT_EQ(scheduler.stats().calls, 0);
}

}  // namespace
}  // namespace worldgen
