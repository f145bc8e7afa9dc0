#include "server/scheduling/call_scheduler.h"

#include <atomic>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/scheduling/blend_pool.h"

// std::latch and std::mutex, not Abseil's: these tests also run under ThreadSanitizer
// (scripts/tsan.sh), which sees std's synchronization but not that of apt's uninstrumented Abseil.
namespace worldgen {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

CallShape Shape(int64_t tasks, int64_t columns_per_task, int64_t reply_bytes = 0,
                absl::Time deadline = absl::InfiniteFuture()) {
  CallShape shape;
  shape.tasks = tasks;
  shape.columns_per_task = columns_per_task;
  shape.reply_bytes_per_task = reply_bytes;
  shape.deadline = deadline;
  return shape;
}

// A pool whose only thread is held by a gate task (of a background call, so it does not count as an
// interactive pick) until Open(), so tasks queue up and the order the scheduler picks them in can
// be observed.
class GatedScheduler {
 public:
  explicit GatedScheduler(CallScheduler::Options options) : pool_(1), scheduler_(&pool_, options) {
    gate_call_ = *scheduler_.Admit(Shape(1, options.interactive_max_columns + 1), kNow);
    gate_call_->Submit([this] {
      started_.count_down();
      open_.wait();
    });
    started_.wait();
  }
  ~GatedScheduler() {
    Open();
    pool_.Shutdown();
  }
  CallScheduler& scheduler() { return scheduler_; }
  void Open() {
    if (!opened_) open_.count_down();
    opened_ = true;
  }
  // Queues a task that appends `label` to the run order.
  void Queue(CallScheduler::Call& call, std::string label) {
    call.Submit([this, label] {
      std::lock_guard<std::mutex> lock(mu_);
      order_.push_back(label);
    });
  }
  std::vector<std::string> Drain() {
    Open();
    pool_.Shutdown();
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }

 private:
  BlendPool pool_;
  CallScheduler scheduler_;
  std::unique_ptr<CallScheduler::Call> gate_call_;
  std::latch started_{1}, open_{1};
  bool opened_ = false;
  std::mutex mu_;
  std::vector<std::string> order_;
};

CallScheduler::Options Options(int64_t interactive_max_columns = 100) {
  CallScheduler::Options options;
  options.interactive_max_columns = interactive_max_columns;
  options.max_queue_seconds = 1e6;
  options.deadline_fill = 1;  // Estimates below are exact figures.
  return options;
}

// Options whose initial guesses lie within 4 times of the costs the tests below record (1 us per
// column, 10-100 us per 2D point, 400 us per 3D point, 4 us per cell), so each first sample
// replaces its guess whole.
CallScheduler::Options MeasuredOptions(int64_t interactive_max_columns) {
  CallScheduler::Options options = Options(interactive_max_columns);
  options.initial_seconds_per_column = 5e-7;
  options.initial_seconds_per_point = 5e-5;
  options.initial_seconds_per_volume_point = 2e-4;
  options.initial_seconds_per_cell = 2e-6;
  return options;
}

// A stream's last task ends its call; whoever waited for that may then destroy the scheduler while
// the pool thread is still in the scheduler's bookkeeping after the task (CI's ASan pass caught a
// test doing so: the pool thread then locked a destroyed mutex). The destructor waits for it.
TEST(CallSchedulerTest, DestroyingTheSchedulerWaitsForAPoolThreadStillInItsBookkeeping) {
  BlendPool pool(1);
  auto scheduler = std::make_unique<CallScheduler>(&pool, Options());
  CallScheduler::Call* call = scheduler->Admit(Shape(1, 1), kNow)->release();
  std::latch call_ended{1};
  std::atomic<bool> task_returned{false};
  call->Submit([&] {
    delete call;  // The task ends its own call, as a stream's last chunk does.
    call_ended.count_down();
    absl::SleepFor(absl::Milliseconds(50));  // Still on the pool thread, inside RunNext.
    task_returned = true;
  });
  call_ended.wait();
  scheduler.reset();
  EXPECT_TRUE(task_returned.load());
}

TEST(CallSchedulerTest, SmallCallsAreInteractiveAndBigOnesBackground) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, Options(100));
  EXPECT_EQ((*scheduler.Admit(Shape(4, 25), kNow))->call_class(), CallClass::kInteractive);
  EXPECT_EQ((*scheduler.Admit(Shape(5, 25), kNow))->call_class(), CallClass::kBackground);
}

TEST(CallSchedulerTest, AOneTaskCallOvertakesAQueuedStream) {
  GatedScheduler gated(Options(100));
  auto stream = *gated.scheduler().Admit(Shape(1000, 64), kNow);
  for (int i = 0; i < 6; ++i) gated.Queue(*stream, "stream");
  auto probe = *gated.scheduler().Admit(Shape(1, 64), kNow);
  gated.Queue(*probe, "probe");
  std::vector<std::string> order = gated.Drain();
  ASSERT_EQ(order.size(), 7u);
  EXPECT_EQ(order[0], "probe");
}

TEST(CallSchedulerTest, InteractiveCallsTakeTurnsAndBackgroundGetsEveryFourthPick) {
  GatedScheduler gated(Options(100));
  auto a = *gated.scheduler().Admit(Shape(4, 10), kNow);
  auto b = *gated.scheduler().Admit(Shape(4, 10), kNow);
  auto big = *gated.scheduler().Admit(Shape(10, 100), kNow);
  for (int i = 0; i < 3; ++i) gated.Queue(*big, "big");
  for (int i = 0; i < 3; ++i) gated.Queue(*a, "a");
  for (int i = 0; i < 3; ++i) gated.Queue(*b, "b");
  std::vector<std::string> order = gated.Drain();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a", "big", "b", "a", "b", "big", "big"}));
}

CallShape ClientShape(std::string client, int64_t tasks, int64_t columns_per_task,
                      absl::Time deadline = absl::InfiniteFuture()) {
  CallShape shape = Shape(tasks, columns_per_task, 0, deadline);
  shape.client = std::move(client);
  return shape;
}

// Turns go to the client that has had the fewest columns started, not to the call: a client with
// five calls gets no more picks than one with a single call, and a client whose tasks are four
// times bigger gets a quarter of the picks.
TEST(CallSchedulerTest, InteractiveClientsTakeTurnsByTheColumnsTheyHadStarted) {
  GatedScheduler gated(Options(100));
  CallScheduler& scheduler = gated.scheduler();
  std::vector<std::unique_ptr<CallScheduler::Call>> calls;
  for (int i = 0; i < 5; ++i) calls.push_back(*scheduler.Admit(ClientShape("flood", 1, 10), kNow));
  auto quiet = *scheduler.Admit(ClientShape("quiet", 3, 10), kNow);
  for (auto& call : calls) gated.Queue(*call, "flood");
  for (int i = 0; i < 3; ++i) gated.Queue(*quiet, "quiet");
  EXPECT_EQ(gated.Drain(), (std::vector<std::string>{"flood", "quiet", "flood", "quiet", "flood",
                                                     "quiet", "flood", "flood"}));

  GatedScheduler sized(Options(100));
  auto big = *sized.scheduler().Admit(ClientShape("big", 2, 40), kNow);
  auto small = *sized.scheduler().Admit(ClientShape("small", 8, 10), kNow);
  for (int i = 0; i < 2; ++i) sized.Queue(*big, "big");
  for (int i = 0; i < 8; ++i) sized.Queue(*small, "small");
  EXPECT_EQ(sized.Drain(), (std::vector<std::string>{"big", "small", "small", "small", "small",
                                                     "big", "small", "small", "small", "small"}));
}

// A client that was idle joins at the current turn: it does not get a run of picks for the time
// it had nothing queued.
TEST(CallSchedulerTest, AClientThatWasIdleEarnsNoRunOfPicks) {
  GatedScheduler gated(Options(100));
  CallScheduler& scheduler = gated.scheduler();
  auto busy = *scheduler.Admit(ClientShape("busy", 4, 10), kNow);
  std::unique_ptr<CallScheduler::Call> late;
  gated.Queue(*busy, "busy");
  // The busy client's second task brings the late client, 20 columns behind it.
  busy->Submit([&] {
    late = *scheduler.Admit(ClientShape("late", 2, 10), kNow);
    gated.Queue(*late, "late");
    gated.Queue(*late, "late");
    gated.Queue(*busy, "busy");  // (the order entry of this task)
  });
  gated.Queue(*busy, "busy");
  EXPECT_EQ(gated.Drain(), (std::vector<std::string>{"busy", "late", "busy", "late", "busy"}));
}

// A client flooding the server with interactive calls is refused for its own queued work; another
// client's call is counted behind at most as much of the flood as its own work and is admitted.
TEST(CallSchedulerTest, AFloodingClientIsRefusedWhileAnotherClientIsAdmitted) {
  BlendPool pool(1);
  CallScheduler::Options options = Options(1000);
  options.initial_seconds_per_column = 1e-3;  // One thread: 100 columns take 100 ms.
  CallScheduler scheduler(&pool, options);
  const absl::Time deadline = kNow + absl::Milliseconds(1000);
  std::vector<std::unique_ptr<CallScheduler::Call>> flood;
  for (int i = 0; i < 10; ++i) {
    auto call = scheduler.Admit(ClientShape("10.0.0.1", 1, 100, deadline), kNow);
    ASSERT_TRUE(call.ok()) << i << ": " << call.status();
    flood.push_back(*std::move(call));
  }
  const absl::Status refused =
      scheduler.Admit(ClientShape("10.0.0.1", 1, 100, deadline), kNow).status();
  EXPECT_EQ(CallScheduler::RefusalReason(refused), "deadline");
  EXPECT_EQ(CallScheduler::RetryAfter(refused), absl::Milliseconds(1000));
  // The other client's first call counts 100 ms of its own and 100 of the flood's.
  auto other =
      scheduler.Admit(ClientShape("10.0.0.2", 1, 100, kNow + absl::Milliseconds(200)), kNow);
  ASSERT_TRUE(other.ok()) << other.status();
  auto third =
      scheduler.Admit(ClientShape("10.0.0.2", 3, 100, kNow + absl::Milliseconds(750)), kNow);
  EXPECT_EQ(CallScheduler::RefusalReason(third.status()), "deadline");  // 400 + 400 ms
  EXPECT_NE(third.status().message().find(
                "2 clients share the server, this client's own queued work is 100.0 ms"),
            std::string::npos)
      << third.status();
  auto two = scheduler.Admit(ClientShape("10.0.0.2", 2, 100, kNow + absl::Milliseconds(600)), kNow);
  EXPECT_TRUE(two.ok()) << two.status();  // 300 + 300 ms
  EXPECT_EQ(scheduler.stats().interactive_clients, 2);
  flood.clear();
  EXPECT_EQ(scheduler.stats().interactive_clients, 1);
  // Calls that all name one client count all interactive work, as before clients were told apart.
  auto one = scheduler.Admit(ClientShape("10.0.0.2", 5, 100, kNow + absl::Milliseconds(750)), kNow);
  EXPECT_EQ(CallScheduler::RefusalReason(one.status()), "deadline");  // 300 + 500 ms
  EXPECT_NE(one.status().message().find("(estimated 800.0 ms with headroom, deadline in 750.0 ms)"),
            std::string::npos)
      << one.status();
}

// One thread at 1 ms per column and a 500 ms queue bound: 100 columns take 100 ms.
CallScheduler::Options QueueBoundOptions(int64_t interactive_max_columns) {
  CallScheduler::Options options = Options(interactive_max_columns);
  options.initial_seconds_per_column = 1e-3;
  options.max_queue_seconds = 0.5;
  return options;
}

// Client "a" fills the queue bound with five calls of 100 columns; its sixth is refused.
std::vector<std::unique_ptr<CallScheduler::Call>> FillTheQueueBound(CallScheduler& scheduler) {
  std::vector<std::unique_ptr<CallScheduler::Call>> flood;
  for (int i = 0; i < 5; ++i) flood.push_back(*scheduler.Admit(ClientShape("a", 1, 100), kNow));
  EXPECT_EQ(CallScheduler::RefusalReason(scheduler.Admit(ClientShape("a", 1, 100), kNow).status()),
            "queue_full");
  return flood;
}

// The queue bound counts the same fair share: a client past it is refused, another is not.
TEST(CallSchedulerTest, TheQueueBoundCountsAClientsFairShare) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, QueueBoundOptions(1000));
  const std::vector<std::unique_ptr<CallScheduler::Call>> flood = FillTheQueueBound(scheduler);
  auto other = scheduler.Admit(ClientShape("b", 2, 100), kNow);
  EXPECT_TRUE(other.ok()) << other.status();  // 200 + 200 ms of 500
  EXPECT_EQ(CallScheduler::RefusalReason(scheduler.Admit(ClientShape("c", 3, 100), kNow).status()),
            "queue_full");  // 300 + 300 + 200
}

TEST(CallSchedulerTest, BackgroundCallsRunEarliestDeadlineFirst) {
  GatedScheduler gated(Options(1));
  auto late = *gated.scheduler().Admit(Shape(2, 10, 0, kNow + absl::Hours(2)), kNow);
  auto none = *gated.scheduler().Admit(Shape(2, 10), kNow);
  auto early = *gated.scheduler().Admit(Shape(2, 10, 0, kNow + absl::Hours(1)), kNow);
  for (auto* call : {late.get(), none.get(), early.get()}) {
    const std::string label = call == late.get() ? "late" : call == early.get() ? "early" : "none";
    gated.Queue(*call, label);
    gated.Queue(*call, label);
  }
  EXPECT_EQ(gated.Drain(),
            (std::vector<std::string>{"early", "early", "late", "late", "none", "none"}));
}

// Background clients take turns by the columns they had started, as interactive ones do; within
// a client, its calls run earliest deadline first.
TEST(CallSchedulerTest, BackgroundClientsTakeTurnsAndEachRunsItsCallsEarliestDeadlineFirst) {
  GatedScheduler gated(Options(1));
  CallScheduler& scheduler = gated.scheduler();
  auto a_late = *scheduler.Admit(ClientShape("a", 2, 10, kNow + absl::Hours(2)), kNow);
  auto a_early = *scheduler.Admit(ClientShape("a", 2, 10, kNow + absl::Hours(1)), kNow);
  auto b = *scheduler.Admit(ClientShape("b", 2, 10), kNow);
  for (int i = 0; i < 2; ++i) gated.Queue(*a_late, "a-late");
  for (int i = 0; i < 2; ++i) gated.Queue(*a_early, "a-early");
  for (int i = 0; i < 2; ++i) gated.Queue(*b, "b");
  EXPECT_EQ(scheduler.stats().background_clients, 3);  // With the gate's client.
  EXPECT_EQ(gated.Drain(),
            (std::vector<std::string>{"a-early", "b", "a-early", "b", "a-late", "a-late"}));
}

// A client whose background calls fill the server up to their deadlines does not keep another
// client's bulk call out: that call counts the flood's work only up to its own, and the flood's
// newest calls are shed to keep the deadlines promised, until both clients hold as much.
TEST(CallSchedulerTest, ABackgroundFloodIsShedForAnotherClientsFairShare) {
  BlendPool pool(1);
  CallScheduler::Options options = Options(1);  // Every call below is background.
  options.initial_seconds_per_column = 1e-3;    // One thread: 100 columns take 100 ms.
  CallScheduler scheduler(&pool, options);
  const absl::Time deadline = kNow + absl::Milliseconds(1000);
  std::vector<std::unique_ptr<CallScheduler::Call>> flood;
  for (int i = 0; i < 10; ++i) {
    auto call = scheduler.Admit(ClientShape("a", 1, 100, deadline), kNow);
    ASSERT_TRUE(call.ok()) << i << ": " << call.status();
    flood.push_back(*std::move(call));
  }
  EXPECT_EQ(CallScheduler::RefusalReason(
                scheduler.Admit(ClientShape("a", 1, 100, deadline), kNow).status()),
            "deadline");
  std::vector<std::unique_ptr<CallScheduler::Call>> other;
  while (true) {
    auto call = scheduler.Admit(ClientShape("b", 1, 100, deadline), kNow);
    if (!call.ok()) {
      EXPECT_EQ(CallScheduler::RefusalReason(call.status()), "deadline");
      EXPECT_NE(call.status().message().find(
                    "2 clients share the server, this client's own queued work is 500.0 ms"),
                std::string::npos)
          << call.status();
      break;
    }
    other.push_back(*std::move(call));
    ASSERT_LE(other.size(), 10u);
  }
  // Each of b's calls shed one of a's, newest first: 500 ms each.
  EXPECT_EQ(other.size(), 5u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(flood[i]->shed(), i >= 5) << i;
  const absl::Status shed = flood[9]->ShedStatus();
  EXPECT_NE(shed.message().find("more than its fair share"), std::string::npos) << shed;
  EXPECT_EQ(scheduler.stats().shed_calls, 5);
  EXPECT_EQ(scheduler.stats().pending_columns, 1000);
  // With one client, a call that would make an admitted one late is refused, not shed: 600 ms due
  // in 700 fit, but a's last call would end at 1100.
  other.clear();
  auto late = scheduler.Admit(ClientShape("a", 6, 100, kNow + absl::Milliseconds(700)), kNow);
  EXPECT_EQ(CallScheduler::RefusalReason(late.status()), "deadline");
  EXPECT_NE(late.status().message().find("delaying an admitted call"), std::string::npos)
      << late.status();
}

// The queue bound counts a background call's fair share too; past the bound, the client with the
// most unstarted background work gives up its newest call, for a background call and for an
// interactive one alike.
TEST(CallSchedulerTest, TheQueueBoundShedsTheLargestBackgroundClientsNewestCall) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, QueueBoundOptions(50));  // 100 columns are background.
  const std::vector<std::unique_ptr<CallScheduler::Call>> flood = FillTheQueueBound(scheduler);
  auto b = scheduler.Admit(ClientShape("b", 1, 100), kNow);  // 100 + 100 of 500 ms
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(flood[4]->shed());
  EXPECT_NE(flood[4]->ShedStatus().message().find("more than its fair share"), std::string::npos);
  // b's is the newest background call, but a holds more: a's newest goes for an interactive call.
  auto interactive = scheduler.Admit(ClientShape("c", 1, 50), kNow);
  ASSERT_TRUE(interactive.ok()) << interactive.status();
  EXPECT_TRUE(flood[3]->shed());
  EXPECT_FALSE((*b)->shed());
  EXPECT_NE(flood[3]->ShedStatus().message().find("to serve interactive calls first"),
            std::string::npos);
  EXPECT_EQ(scheduler.stats().shed_calls, 2);
}

TEST(CallSchedulerTest, RefusesAtOnceWhatCannotFinishBeforeItsDeadline) {
  BlendPool pool(2);
  CallScheduler::Options options = Options(100);
  options.initial_seconds_per_column = 1e-3;  // 2 threads: 1000 columns take 0.5 s.
  CallScheduler scheduler(&pool, options);
  absl::StatusOr<std::unique_ptr<CallScheduler::Call>> too_slow =
      scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(400)), kNow);
  ASSERT_EQ(too_slow.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_slow.status().message().find("before its deadline"), std::string::npos);
  EXPECT_EQ(CallScheduler::RefusalReason(too_slow.status()), "deadline");
  // 0.5 s of work fits a 0.6 s deadline, but not a second call behind it.
  auto first = scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(600)), kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(
      scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(900)), kNow).status().code(),
      absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(1100)), kNow).ok());
  // Once the first call is gone its work no longer counts.
  first->reset();
  EXPECT_TRUE(scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(600)), kNow).ok());
}

TEST(CallSchedulerTest, RefusesACallThatWouldMakeAnAdmittedOneLate) {
  BlendPool pool(1);
  CallScheduler::Options options = Options(1);
  options.initial_seconds_per_column = 1e-3;
  CallScheduler scheduler(&pool, options);
  // 8 s of work due in 10 s.
  auto admitted = scheduler.Admit(Shape(8, 1000, 0, kNow + absl::Seconds(10)), kNow);
  ASSERT_TRUE(admitted.ok());
  // 3 s due in 5 s would run first (earlier deadline) and fits itself, but makes the first 11 s
  // late.
  absl::Status refused = scheduler.Admit(Shape(3, 1000, 0, kNow + absl::Seconds(5)), kNow).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("delaying an admitted call"), std::string::npos);
  EXPECT_TRUE(scheduler.Admit(Shape(2, 1000, 0, kNow + absl::Seconds(5)), kNow).ok());
}

TEST(CallSchedulerTest, DeadlineFillLeavesHeadroom) {
  BlendPool pool(1);
  CallScheduler::Options options = Options(100);
  options.initial_seconds_per_column = 1e-3;
  options.deadline_fill = 0.5;  // 1 s of work needs 2 s.
  CallScheduler scheduler(&pool, options);
  EXPECT_FALSE(scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(1900)), kNow).ok());
  EXPECT_TRUE(scheduler.Admit(Shape(10, 100, 0, kNow + absl::Milliseconds(2000)), kNow).ok());
}

TEST(CallSchedulerTest, CostEstimateFollowsMeasuredTasks) {
  BlendPool pool(1);
  CallScheduler::Options options = Options();
  options.initial_seconds_per_column = 5e-7;
  CallScheduler scheduler(&pool, options);
  scheduler.RecordTaskCost(1000, absl::Milliseconds(1));  // The first sample replaces the guess.
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_column, 1e-6);
  scheduler.RecordTaskCost(1000, absl::Milliseconds(2));  // Then a fifth of the way to each.
  EXPECT_NEAR(scheduler.stats().seconds_per_column, 1.2e-6, 1e-12);
  scheduler.RecordTaskCost(0, absl::Seconds(5));  // Ignored.
  EXPECT_NEAR(scheduler.stats().seconds_per_column, 1.2e-6, 1e-12);
  scheduler.RecordTaskCost(1000, absl::Microseconds(200));  // Falls as far as it likes.
  EXPECT_NEAR(scheduler.stats().seconds_per_column, 1.0e-6, 1e-12);
}

// A task whose thread lost the CPU (a preempted 25 us chunk measured at 3 ms) counts as at most 4
// times the estimate: one such sample raises it 1.6-fold, not 24-fold, and the first one 4-fold
// over the guess; a sustained rise is still followed, 1.6-fold per task.
TEST(CallSchedulerTest, OneSlowTaskRaisesTheEstimateByABoundedFactor) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, Options());  // The guess: 2e-7 s per column.
  scheduler.RecordTaskCost(256, absl::Milliseconds(3));
  EXPECT_NEAR(scheduler.stats().seconds_per_column, 8e-7, 1e-15);
  for (int i = 0; i < 5; ++i) scheduler.RecordTaskCost(256, absl::Microseconds(25));
  const double settled = scheduler.stats().seconds_per_column;
  scheduler.RecordTaskCost(256, absl::Milliseconds(3));
  EXPECT_NEAR(scheduler.stats().seconds_per_column, 1.6 * settled, 1e-15);
  double previous = scheduler.stats().seconds_per_column;
  for (int i = 0; i < 30; ++i) {
    scheduler.RecordTaskCost(256, absl::Milliseconds(3));
    const double now = scheduler.stats().seconds_per_column;
    EXPECT_LE(now, 1.6 * previous * (1 + 1e-12));
    previous = now;
  }
  EXPECT_NEAR(previous, 3e-3 / 256, 3e-3 / 256 * 0.01) << "a sustained cost is reached";
}

// Points have a cost estimate of their own: a point call's cost leaves the columns' estimate alone
// (a zoomed-out map's scattered points cost ~200 columns each), and a point call counts as the
// columns that cost the same.
TEST(CallSchedulerTest, PointsAreCountedByTheirOwnCost) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, MeasuredOptions(10000));
  scheduler.RecordTaskCost(1000, absl::Milliseconds(1));   // 1 us per column
  scheduler.RecordPointCost(100, absl::Milliseconds(10));  // 100 us per point
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_column, 1e-6);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_point, 1e-4);
  CallShape points;
  points.points_per_task = 50;  // = 5000 columns
  points.columns_per_task = 1;  // ignored
  auto small = scheduler.Admit(points, kNow);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->call_class(), CallClass::kInteractive);
  EXPECT_EQ(scheduler.stats().pending_columns, 5000);
  points.points_per_task = 101;
  auto large = scheduler.Admit(points, kNow);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ((*large)->call_class(), CallClass::kBackground);
  EXPECT_EQ(scheduler.stats().pending_columns, 5000 + 10100);
  scheduler.RecordPointCost(0, absl::Seconds(1));  // Ignored.
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_point, 1e-4);
}

// Points with a y have an estimate of their own beside the 2D points': each kind's cost moves only
// its own, and a call counts each kind of its points by its estimate.
TEST(CallSchedulerTest, PointsWithAYAreCountedByTheirOwnCost) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, MeasuredOptions(10000));
  scheduler.RecordTaskCost(1000, absl::Milliseconds(1));         // 1 us per column
  scheduler.RecordPointCost(100, absl::Milliseconds(1));         // 10 us per 2D point
  scheduler.RecordVolumePointCost(100, absl::Milliseconds(40));  // 400 us per 3D point
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_column, 1e-6);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_point, 1e-5);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_volume_point, 4e-4);
  CallShape points;
  points.points_per_task = 30;
  points.volume_points_per_task = 20;  // 10 x 10 + 20 x 400 = 8,100 columns
  auto mixed = scheduler.Admit(points, kNow);
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ((*mixed)->call_class(), CallClass::kInteractive);
  EXPECT_EQ(scheduler.stats().pending_columns, 8100);
  points.volume_points_per_task = 30;  // 12,000 columns: past interactive_max_columns
  auto volume = scheduler.Admit(points, kNow);
  ASSERT_TRUE(volume.ok());
  EXPECT_EQ((*volume)->call_class(), CallClass::kBackground);
  EXPECT_EQ(scheduler.stats().pending_columns, 8100 + 12000);
  points.volume_points_per_task = 0;  // 300 columns
  auto planar = scheduler.Admit(points, kNow);
  ASSERT_TRUE(planar.ok());
  EXPECT_EQ(scheduler.stats().pending_columns, 8100 + 12000 + 300);
  points.volume_points_per_task = 31;  // more than the points: all of them have a y
  auto clamped = scheduler.Admit(points, kNow);
  ASSERT_TRUE(clamped.ok());
  EXPECT_EQ(scheduler.stats().pending_columns, 8100 + 12000 + 300 + 12000);
  scheduler.RecordVolumePointCost(0, absl::Seconds(1));  // Ignored.
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_volume_point, 4e-4);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_point, 1e-5);
}

// 3D cells have an estimate of their own: neither points' nor columns' costs move it, nor it
// theirs.
TEST(CallSchedulerTest, CellsAreCountedByTheirOwnCost) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, MeasuredOptions(10000));
  scheduler.RecordTaskCost(1000, absl::Milliseconds(1));   // 1 us per column
  scheduler.RecordPointCost(100, absl::Milliseconds(10));  // 100 us per point
  scheduler.RecordCellCost(1000, absl::Milliseconds(4));   // 4 us per cell
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_column, 1e-6);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_point, 1e-4);
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_cell, 4e-6);
  CallShape cells;
  cells.tasks = 2;
  cells.cells_per_task = 1000;  // = 4000 columns each
  cells.columns_per_task = 1;   // ignored
  cells.points_per_task = 1;    // ignored
  auto call = scheduler.Admit(cells, kNow);
  ASSERT_TRUE(call.ok());
  EXPECT_EQ((*call)->call_class(), CallClass::kInteractive);
  EXPECT_EQ(scheduler.stats().pending_columns, 8000);
  cells.cells_per_task = 1251;  // 2 x 5004 columns: past interactive_max_columns
  auto large = scheduler.Admit(cells, kNow);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ((*large)->call_class(), CallClass::kBackground);
  scheduler.RecordCellCost(0, absl::Seconds(1));  // Ignored.
  EXPECT_DOUBLE_EQ(scheduler.stats().seconds_per_cell, 4e-6);
}

TEST(CallSchedulerTest, ReplyBudgetBoundsReservationsAndAlwaysLeavesACallItsFloor) {
  BlendPool pool(1);
  CallScheduler::Options options = Options();
  options.max_reply_bytes = 1000;
  CallScheduler scheduler(&pool, options);
  auto a = *scheduler.Admit(Shape(10, 1, 400), kNow);
  auto b = *scheduler.Admit(Shape(10, 1, 400), kNow);
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 800);
  absl::Status full = scheduler.Admit(Shape(10, 1, 400), kNow).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CallScheduler::RefusalReason(full), "reply_memory");
  EXPECT_TRUE(a->TryReserveReply());   // The floor.
  EXPECT_FALSE(a->TryReserveReply());  // 1200 > 1000.
  EXPECT_TRUE(b->TryReserveReply());
  a->ReleaseReply();
  EXPECT_TRUE(a->TryReserveReply());  // Its floor again.
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 800);
  b.reset();
  EXPECT_TRUE(a->TryReserveReply());
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 800);
  a.reset();
  EXPECT_EQ(scheduler.stats().reserved_reply_bytes, 0);
}

// A queue bound of 1 s, and an estimate by which 1000 columns take 0.5 s on 2 threads.
CallScheduler::Options OneSecondBoundOptions() {
  CallScheduler::Options options = Options(100);
  options.initial_seconds_per_column = 1e-3;
  options.max_queue_seconds = 1;
  return options;
}

TEST(CallSchedulerTest, RefusesBackgroundWorkPastTheQueuedSecondsAndSaysWhenToComeBack) {
  BlendPool pool(2);
  CallScheduler scheduler(&pool, OneSecondBoundOptions());
  auto first = scheduler.Admit(Shape(10, 150), kNow);  // 0.75 s queued.
  ASSERT_TRUE(first.ok()) << first.status();
  absl::Status full = scheduler.Admit(Shape(10, 100), kNow).status();  // Would make it 1.25 s.
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CallScheduler::RefusalReason(full), "queue_full");
  EXPECT_NE(full.message().find("750.0 ms of blending queued"), std::string::npos) << full;
  EXPECT_NE(full.message().find("max_queue_seconds = 1"), std::string::npos) << full;
  EXPECT_EQ(CallScheduler::RetryAfter(full), absl::Milliseconds(250));  // The excess drained.
  EXPECT_NE(full.message().find("retry in 250 ms"), std::string::npos) << full;
  auto second = scheduler.Admit(Shape(5, 100), kNow);  // Exactly 1 s fits.
  EXPECT_TRUE(second.ok()) << second.status();
  EXPECT_DOUBLE_EQ(scheduler.stats().queued_seconds, 1.0);
}

// A call whose own work is past the bound would be refused again after any wait: it is told so,
// with no time to come back, on an idle server as on a busy one.
TEST(CallSchedulerTest, ACallBiggerThanTheQueueBoundIsToldToSplitNotToComeBack) {
  BlendPool pool(2);
  CallScheduler scheduler(&pool, OneSecondBoundOptions());
  for (const CallShape& shape : {Shape(10, 201), Shape(1, 2010)}) {  // 1.005 s of work.
    absl::Status refused = scheduler.Admit(shape, kNow).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(CallScheduler::RefusalReason(refused), "queue_full");
    EXPECT_EQ(CallScheduler::RetryAfter(refused), absl::InfiniteDuration());
    EXPECT_NE(refused.message().find("this call alone is 1005.0 ms of blending"), std::string::npos)
        << refused;
    EXPECT_EQ(refused.message().find("retry in"), std::string::npos) << refused;
  }
  auto fits = scheduler.Admit(Shape(10, 200), kNow);  // Exactly 1 s.
  EXPECT_TRUE(fits.ok()) << fits.status();
}

// A reply budget of 1000 bytes, of which background calls may reserve 750.
CallScheduler::Options ThousandByteReplyOptions() {
  CallScheduler::Options options = Options(100);
  options.max_reply_bytes = 1000;
  options.interactive_reply_share = 0.25;
  return options;
}

// A reply that alone passes the reply budget can never be reserved: such a call is told so, not to
// come back (a "retry in 100 ms" would be answered the same for ever).
TEST(CallSchedulerTest, AReplyBiggerThanTheReplyBudgetIsRefusedForGood) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, ThousandByteReplyOptions());
  for (const auto& [shape, limit] :
       {std::pair{Shape(1, 1, 1001), "max_reply_bytes = 1000"},
        std::pair{Shape(10, 100, 751), "background calls may reserve 750"}}) {
    absl::Status refused = scheduler.Admit(shape, kNow).status();
    EXPECT_EQ(CallScheduler::RefusalReason(refused), "reply_memory");
    EXPECT_EQ(CallScheduler::RetryAfter(refused), absl::InfiniteDuration());
    EXPECT_NE(refused.message().find(absl::StrCat("one reply of this call may take ",
                                                  shape.reply_bytes_per_task, " bytes, more than ",
                                                  limit, " however empty")),
              std::string::npos)
        << refused;
  }
  EXPECT_TRUE(scheduler.Admit(Shape(1, 1, 1000), kNow).ok());
  EXPECT_TRUE(scheduler.Admit(Shape(10, 100, 750), kNow).ok());
}

// Many small calls with many tasks each: what counts is their work, not how many tasks wait (a
// bound of 1024 waiting tasks refused most of 200 players' 16-chunk calls).
TEST(CallSchedulerTest, ABurstThatFitsItsDeadlinesIsAdmittedWhateverItsTaskCount) {
  CallScheduler::Options options;  // The server's defaults.
  GatedScheduler gated(options);
  std::vector<std::unique_ptr<CallScheduler::Call>> calls;
  for (int i = 0; i < 1000; ++i) {
    auto call = gated.scheduler().Admit(Shape(16, 256, 3000, kNow + absl::Seconds(10)), kNow);
    ASSERT_TRUE(call.ok()) << i << ": " << call.status();
    for (int k = 0; k < 16; ++k) gated.Queue(**call, "chunk");
    calls.push_back(*std::move(call));
  }
  EXPECT_EQ(gated.scheduler().stats().queued_tasks, 16000);
  EXPECT_EQ(gated.Drain().size(), 16000u);
}

TEST(CallSchedulerTest, RetryAfterOfADeadlineRefusalIsTheWorkAheadOfIt) {
  BlendPool pool(1);
  CallScheduler::Options options = Options(100);
  options.initial_seconds_per_column = 1e-3;
  CallScheduler scheduler(&pool, options);
  auto ahead = scheduler.Admit(Shape(2, 40), kNow);  // 80 ms of interactive work.
  ASSERT_TRUE(ahead.ok());
  absl::Status late =
      scheduler.Admit(Shape(1, 50, 0, kNow + absl::Milliseconds(100)), kNow).status();
  EXPECT_EQ(CallScheduler::RefusalReason(late), "deadline");
  EXPECT_EQ(CallScheduler::RetryAfter(late), absl::Milliseconds(80));
  EXPECT_EQ(CallScheduler::RetryAfter(absl::ResourceExhaustedError("no payload")),
            absl::ZeroDuration());
}

// Interactive calls are refused only for interactive work: background work past the bound is shed,
// newest admission first, and the shed calls learn it with a status that says when to come back.
TEST(CallSchedulerTest, InteractiveCallsShedTheNewestBackgroundWorkInsteadOfBeingRefused) {
  GatedScheduler gated([] {
    CallScheduler::Options options = Options(100);
    options.initial_seconds_per_column = 1e-3;  // One thread: 1000 columns take 1 s.
    options.max_queue_seconds = 1;
    return options;
  }());
  CallScheduler& scheduler = gated.scheduler();
  // The gate's call has started its only task: it holds nothing unstarted.
  auto older = *scheduler.Admit(Shape(6, 100), kNow);
  auto newer = *scheduler.Admit(Shape(3, 100), kNow);
  auto fits = *scheduler.Admit(Shape(1, 100), kNow);  // 1000 columns: exactly the bound.
  EXPECT_FALSE(older->shed());
  EXPECT_FALSE(newer->shed());
  auto probe = scheduler.Admit(Shape(1, 100), kNow);  // 1100: the newer background call goes.
  ASSERT_TRUE(probe.ok()) << probe.status();
  EXPECT_FALSE(older->shed());
  EXPECT_TRUE(newer->shed());
  const absl::Status shed = newer->ShedStatus();
  EXPECT_EQ(shed.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(shed.message().find("shed with 300 columns not started"), std::string::npos) << shed;
  EXPECT_EQ(CallScheduler::RetryAfter(shed), absl::Milliseconds(800));
  CallScheduler::Stats stats = scheduler.stats();
  EXPECT_EQ(stats.pending_columns, 800);
  EXPECT_EQ(stats.shed_calls, 1);
  // Background calls are still refused, not shed, past the bound; interactive ones keep coming
  // until interactive work alone fills it, shedding the older call on the way.
  EXPECT_EQ(CallScheduler::RefusalReason(scheduler.Admit(Shape(3, 100), kNow).status()),
            "queue_full");
  std::vector<std::unique_ptr<CallScheduler::Call>> interactive;
  for (int i = 0; i < 8; ++i) {
    auto call = scheduler.Admit(Shape(1, 100), kNow);
    ASSERT_TRUE(call.ok()) << i << ": " << call.status();
    interactive.push_back(*std::move(call));
  }
  EXPECT_TRUE(older->shed());
  EXPECT_EQ(scheduler.stats().shed_calls, 2);
  absl::Status refused = scheduler.Admit(Shape(1, 100), kNow).status();
  EXPECT_EQ(CallScheduler::RefusalReason(refused), "queue_full");
  EXPECT_NE(refused.message().find("for interactive calls"), std::string::npos) << refused;
  // A shed call's queued tasks still run (its stream ends on them); they count as no work.
  gated.Queue(*newer, "shed task");
  EXPECT_EQ(scheduler.stats().pending_columns, 1000);
  std::vector<std::string> order = gated.Drain();
  EXPECT_EQ(order, std::vector<std::string>{"shed task"});
}

TEST(CallSchedulerTest, BackgroundCallsLeaveAShareOfTheReplyBudgetToInteractiveOnes) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, ThousandByteReplyOptions());
  auto bulk = *scheduler.Admit(Shape(10, 100, 300), kNow);
  auto bulk2 = *scheduler.Admit(Shape(10, 100, 300), kNow);
  absl::Status full = scheduler.Admit(Shape(10, 100, 300), kNow).status();
  EXPECT_EQ(CallScheduler::RefusalReason(full), "reply_memory");
  EXPECT_NE(full.message().find("background calls may reserve 750"), std::string::npos) << full;
  EXPECT_EQ(CallScheduler::RetryAfter(full), CallScheduler::kReplyMemoryRetry);
  EXPECT_TRUE(bulk->TryReserveReply());                          // Its floor.
  EXPECT_FALSE(bulk->TryReserveReply());                         // 900 > 750.
  auto interactive = scheduler.Admit(Shape(1, 100, 300), kNow);  // 900 <= 1000.
  ASSERT_TRUE(interactive.ok()) << interactive.status();
  EXPECT_TRUE((*interactive)->TryReserveReply());
  EXPECT_EQ(CallScheduler::RefusalReason(scheduler.Admit(Shape(1, 100, 300), kNow).status()),
            "reply_memory");
}

TEST(CallSchedulerTest, DestroyingACallDropsItsQueuedTasksAndReleasesEverything) {
  GatedScheduler gated(Options(1));
  auto call = *gated.scheduler().Admit(Shape(5, 10, 100), kNow);
  for (int i = 0; i < 3; ++i) gated.Queue(*call, "dropped");
  EXPECT_EQ(gated.scheduler().stats().queued_tasks, 3);
  call.reset();
  CallScheduler::Stats stats = gated.scheduler().stats();
  EXPECT_EQ(stats.queued_tasks, 0);
  EXPECT_EQ(stats.pending_columns, 0);
  EXPECT_EQ(stats.reserved_reply_bytes, 0);
  EXPECT_TRUE(gated.Drain().empty());
}

// SubmitOrRunHere runs the task on the calling thread only when that overtakes no one: no task is
// waiting and a pool thread is idle.
TEST(CallSchedulerTest, SubmitOrRunHereRunsOnTheCallerOnlyWhenAPoolThreadIsIdle) {
  BlendPool pool(2);
  CallScheduler scheduler(&pool, Options(1000));
  auto call = *scheduler.Admit(Shape(3, 10), kNow);
  std::thread::id ran_on;
  call->SubmitOrRunHere([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());  // Ran before SubmitOrRunHere returned.
  EXPECT_EQ(scheduler.stats().pending_columns, 20);

  // One of the two threads busy: the other is idle, so the caller still stands in for it.
  auto busy = *scheduler.Admit(Shape(1, 10), kNow);
  std::latch started(1), release(1);
  busy->Submit([&] {
    started.count_down();
    release.wait();
  });
  started.wait();
  ran_on = std::thread::id();
  call->SubmitOrRunHere([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());

  // Both busy (the caller's own task holds the second one): queued, and not run by the idle pool
  // thread either (two tasks run at most) until one of the two running tasks ends.
  std::latch queued_ran(1);
  std::thread::id queued_on;
  call->SubmitOrRunHere([&] {
    call->SubmitOrRunHere([&] {
      queued_on = std::this_thread::get_id();
      queued_ran.count_down();
    });
    EXPECT_EQ(scheduler.stats().queued_tasks, 1);
    release.count_down();
  });
  queued_ran.wait();
  EXPECT_NE(queued_on, std::this_thread::get_id());
  pool.Shutdown();
  EXPECT_EQ(scheduler.stats().pending_columns, 0);
}

// A running background task lends its thread between the pieces of its work: the interactive
// tasks waiting meanwhile run on it, at most kBackgroundTurn - 1 per call, in turn order, and no
// background task does; a task run there lends nothing itself; with nothing waiting, nothing runs;
// an interactive task lends nothing.
TEST(CallSchedulerTest, ABackgroundTaskLendsItsThreadToWaitingInteractiveTasks) {
  BlendPool pool(1);
  CallScheduler scheduler(&pool, Options(100));
  auto bulk = *scheduler.Admit(Shape(1, 1000), kNow);
  auto other_bulk = *scheduler.Admit(Shape(1, 1000), kNow);
  auto one = *scheduler.Admit(Shape(5, 10), kNow);
  ASSERT_EQ(bulk->call_class(), CallClass::kBackground);
  ASSERT_EQ(one->call_class(), CallClass::kInteractive);
  std::latch bulk_started(1), all_queued(1), all_ran(1);
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  bool other_bulk_ran = false, other_bulk_ran_while_lending = false;
  absl::Duration nested = absl::InfiniteDuration();
  std::vector<size_t> ran_after;  // how many interactive tasks had run after each lending
  absl::Duration idle = absl::InfiniteDuration(), first = absl::ZeroDuration();
  absl::Duration interactive_lender = absl::InfiniteDuration();
  size_t ran_for_interactive_lender = 99;
  std::thread::id bulk_thread;
  bulk->Submit([&] {
    bulk_thread = std::this_thread::get_id();
    idle = scheduler.RunWaitingInteractive(CallClass::kBackground);  // Nothing waits yet.
    bulk_started.count_down();
    all_queued.wait();
    interactive_lender = scheduler.RunWaitingInteractive(CallClass::kInteractive);
    {
      std::lock_guard<std::mutex> lock(mu);
      ran_for_interactive_lender = order.size();
    }
    first = scheduler.RunWaitingInteractive(CallClass::kBackground);
    for (int lent = 0; lent < 2; ++lent) {
      if (lent > 0) scheduler.RunWaitingInteractive(CallClass::kBackground);
      std::lock_guard<std::mutex> lock(mu);
      ran_after.push_back(order.size());
      other_bulk_ran_while_lending |= other_bulk_ran;
    }
  });
  bulk_started.wait();
  other_bulk->Submit([&] {
    std::lock_guard<std::mutex> lock(mu);
    other_bulk_ran = true;
  });
  for (int i = 0; i < 5; ++i) {
    one->Submit([&, i] {
      // Lends nothing from inside a task it was lent for.
      if (i == 0) nested = scheduler.RunWaitingInteractive(CallClass::kBackground);
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      if (order.size() == 5) all_ran.count_down();
    });
  }
  all_queued.count_down();
  all_ran.wait();
  pool.Shutdown();
  EXPECT_EQ(idle, absl::ZeroDuration());
  EXPECT_EQ(interactive_lender, absl::ZeroDuration());  // Only a background call lends.
  EXPECT_EQ(ran_for_interactive_lender, 0u);
  EXPECT_GT(first, absl::ZeroDuration());
  EXPECT_EQ(nested, absl::ZeroDuration());
  EXPECT_EQ(ran_after, (std::vector<size_t>{3, 5}));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (const std::thread::id& thread : threads) EXPECT_EQ(thread, bulk_thread);
  EXPECT_FALSE(other_bulk_ran_while_lending);
  EXPECT_TRUE(other_bulk_ran);  // After the bulk task, by its own pool token.
  const CallScheduler::Stats stats = scheduler.stats();
  int64_t interactive_started = 0;
  for (int64_t c : stats.interactive_waits.counts) interactive_started += c;
  EXPECT_EQ(interactive_started, 5);
  EXPECT_EQ(stats.pending_columns, 0);
  EXPECT_EQ(stats.queued_tasks, 0);
}

TEST(CallSchedulerTest, SubmitOrRunHereQueuesBehindWaitingTasksInPolicyOrder) {
  GatedScheduler gated(Options(100));
  auto stream = *gated.scheduler().Admit(Shape(1000, 64), kNow);
  for (int i = 0; i < 3; ++i) gated.Queue(*stream, "stream");
  auto probe = *gated.scheduler().Admit(Shape(1, 64), kNow);
  probe->SubmitOrRunHere([] { ADD_FAILURE() << "ran before the waiting tasks were considered"; });
  EXPECT_EQ(gated.scheduler().stats().queued_tasks, 4);
  probe.reset();  // Drops its queued task unrun.
  EXPECT_EQ(gated.Drain(), (std::vector<std::string>{"stream", "stream", "stream"}));
}

// Each started task's wait for a thread goes into its call's CallTimes and its class's histogram:
// what tells an operator that calls were slow because the pool was busy.
TEST(CallSchedulerTest, TasksCountTheirWaitForAThreadPerCallAndPerClass) {
  using Waits = CallScheduler::WaitHistogram;
  // How many waits a histogram holds, and how many of them are in buckets reaching `seconds` (whose
  // upper bound is at least that).
  auto count = [](const Waits& waits) {
    int64_t n = 0;
    for (int64_t c : waits.counts) n += c;
    return n;
  };
  auto longer = [](const Waits& waits, double seconds) {
    int64_t n = 0;
    for (size_t i = 0; i < waits.counts.size(); ++i) {
      if (i == Waits::kBounds.size() || Waits::kBounds[i] >= seconds) n += waits.counts[i];
    }
    return n;
  };
  constexpr absl::Duration kHeld = absl::Milliseconds(30);
  {
    GatedScheduler gated(Options());
    CallShape shape = Shape(2, 10);
    shape.times = std::make_shared<CallTimes>();
    auto call = *gated.scheduler().Admit(shape, kNow);
    gated.Queue(*call, "held");  // Waits for the gate.
    absl::SleepFor(kHeld);
    gated.Queue(*call, "next");
    EXPECT_EQ(gated.Drain(), (std::vector<std::string>{"held", "next"}));
    EXPECT_GE(shape.times->queued(), kHeld);
    EXPECT_EQ(shape.times->blend(), absl::ZeroDuration()) << "the service adds blending";
    const CallScheduler::Stats stats = gated.scheduler().stats();
    EXPECT_EQ(count(stats.interactive_waits), 2);
    EXPECT_EQ(longer(stats.interactive_waits, absl::ToDoubleSeconds(kHeld)), 1);
    EXPECT_NEAR(stats.interactive_waits.sum_seconds, absl::ToDoubleSeconds(shape.times->queued()),
                1e-6);
    EXPECT_EQ(count(stats.background_waits), 1) << "the gate's own task";
    EXPECT_EQ(longer(stats.background_waits, absl::ToDoubleSeconds(kHeld)), 0);
  }
  {
    // A task run on the caller's thread waited for nothing: counted, in the first bucket.
    BlendPool pool(1);
    CallScheduler scheduler(&pool, Options());
    CallShape shape = Shape(1, 10);
    shape.times = std::make_shared<CallTimes>();
    auto call = *scheduler.Admit(shape, kNow);
    call->SubmitOrRunHere([] {});
    const CallScheduler::Stats stats = scheduler.stats();
    EXPECT_EQ(stats.interactive_waits.counts[0], 1);
    EXPECT_EQ(stats.interactive_waits.sum_seconds, 0);
    EXPECT_EQ(shape.times->queued(), absl::ZeroDuration());
    pool.Shutdown();
  }
}

// A call whose only task ends it (as a stream's last chunk does): another pool thread's token may
// pick the task the moment it is queued, so the call can be destroyed while Submit is still
// returning. Submit must not touch the call after queuing (ThreadSanitizer and ASan check this).
TEST(CallSchedulerTest, ACallMayBeDestroyedByItsTaskWhileSubmitReturns) {
  BlendPool pool(3);
  CallScheduler scheduler(&pool, Options(1000));
  std::atomic<int> ran{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 3; ++t) {
    submitters.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::latch done(1);
        auto* call = scheduler.Admit(Shape(1, 1), absl::Now())->release();
        call->Submit([&, call] {
          delete call;
          ran.fetch_add(1);
          done.count_down();
        });
        done.wait();
      }
    });
  }
  for (std::thread& s : submitters) s.join();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 3 * 2000);
  EXPECT_EQ(scheduler.stats().calls, 0);
}

// Threads admitting, reserving, submitting and dropping calls at once: every task of a call that
// lives until its tasks ran runs once, and everything is released at the end.
TEST(CallSchedulerTest, ConcurrentCallsLeaveNothingBehind) {
  BlendPool pool(3);
  CallScheduler::Options options = Options(50);
  options.max_reply_bytes = 50'000;
  CallScheduler scheduler(&pool, options);
  std::atomic<int> ran{0}, expected{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const int tasks = 1 + (i + t) % 5;
        auto call = scheduler.Admit(Shape(tasks, 10 + i % 20, 1000), absl::Now());
        if (!call.ok()) continue;
        std::latch done(tasks);
        for (int k = 0; k < tasks; ++k) {
          if ((*call)->TryReserveReply()) (*call)->ReleaseReply();
          auto task = [&] {
            ran.fetch_add(1);
            done.count_down();
          };
          if (k % 2 == 0) {
            (*call)->SubmitOrRunHere(task);
          } else {
            (*call)->Submit(task);
          }
        }
        expected.fetch_add(tasks);
        done.wait();
        scheduler.RecordTaskCost(10, absl::Microseconds(5));
      }
    });
  }
  for (std::thread& c : clients) c.join();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), expected.load());
  CallScheduler::Stats stats = scheduler.stats();
  EXPECT_EQ(stats.calls, 0);
  EXPECT_EQ(stats.queued_tasks, 0);
  EXPECT_EQ(stats.pending_columns, 0);
  EXPECT_EQ(stats.reserved_reply_bytes, 0);
}

}  // namespace
}  // namespace worldgen
