#include "server/scheduling/call_scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/optional.h"

namespace worldgen {
namespace {

// Weight of the newest task in the seconds-per-column average.
constexpr double kCostSmoothing = 0.2;
// A sample counts at most this many times the estimate it updates. A task's cost is its wall time,
// which holds whatever took its thread off the CPU: on a busy host a preempted blend thread
// measures a 25 us chunk at milliseconds. Uncapped, one such task multiplied the estimate, and a
// burst that fitted was refused for its deadline (measured: 1,000 16-chunk streams beside two CPU
// burners, served in 0.24-0.29 s, had streams refused in 2 of 30 runs; capped, in 0 of 70).
// Capped, one sample raises an estimate at most 1.6-fold (the first one 4-fold over the
// configured guess), and a real rise in cost is followed within a few tasks.
constexpr double kMaxSampleRise = 4.0;

constexpr absl::string_view kRefusalReasonKey = "worldgen/refusal_reason";
constexpr absl::string_view kRetryAfterKey = "worldgen/retry_after_ms";

std::string Millis(absl::Duration d) {
  return absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(d));
}

// Why a background call was shed (its status's message).
constexpr absl::string_view kShedForInteractive = "to serve interactive calls first";
constexpr absl::string_view kShedForFairShare =
    "as its client holds more than its fair share of the queue and another client's call needed "
    "room";

int64_t WholeMillisUp(absl::Duration d) {
  return std::max<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1))), 1);
}

// RESOURCE_EXHAUSTED saying why (`reason`, for metrics), what, and when to come back.
absl::Status Refuse(absl::string_view reason, absl::string_view message,
                    absl::Duration retry_after) {
  const int64_t retry_ms = WholeMillisUp(retry_after);
  absl::Status status =
      absl::ResourceExhaustedError(absl::StrCat(message, "; retry in ", retry_ms, " ms"));
  if (!reason.empty()) status.SetPayload(kRefusalReasonKey, absl::Cord(reason));
  status.SetPayload(kRetryAfterKey, absl::Cord(absl::StrCat(retry_ms)));
  return status;
}

// RESOURCE_EXHAUSTED for a call that waiting cannot help: no time to come back (RetryAfter is
// infinite, sent as gRPC's "do not retry" pushback).
absl::Status RefuseForGood(absl::string_view reason, absl::string_view message) {
  absl::Status status = absl::ResourceExhaustedError(message);
  status.SetPayload(kRefusalReasonKey, absl::Cord(reason));
  status.SetPayload(kRetryAfterKey, absl::Cord("-1"));
  return status;
}

}  // namespace

CallScheduler::CallScheduler(BlendPool* pool, Options options)
    : pool_(pool),
      options_(options),
      seconds_per_column_(options.initial_seconds_per_column),
      seconds_per_point_(options.initial_seconds_per_point),
      seconds_per_volume_point_(options.initial_seconds_per_volume_point),
      seconds_per_cell_(options.initial_seconds_per_cell) {
  if (!(options_.deadline_fill > 0 && options_.deadline_fill <= 1)) options_.deadline_fill = 1;
  if (!(options_.max_queue_seconds > 0)) options_.max_queue_seconds = 1;
  if (!(options_.interactive_reply_share >= 0 && options_.interactive_reply_share < 1)) {
    options_.interactive_reply_share = 0;
  }
}

CallScheduler::~CallScheduler() {
  // A pool thread may still be inside RunNext after the last call ended (its task's bookkeeping, or
  // a token whose task was dropped with its call): wait until none is.
  std::unique_lock<std::mutex> lock(mu_);
  tokens_done_.wait(lock, [this] { return pool_tokens_ == 0; });
}

std::string CallScheduler::RefusalReason(const absl::Status& status) {
  absl::optional<absl::Cord> reason = status.GetPayload(kRefusalReasonKey);
  return reason.has_value() ? std::string(*reason) : std::string();
}

absl::Duration CallScheduler::RetryAfter(const absl::Status& status) {
  absl::optional<absl::Cord> millis = status.GetPayload(kRetryAfterKey);
  int64_t ms = 0;
  if (!millis.has_value() || !absl::SimpleAtoi(std::string(*millis), &ms)) {
    return absl::ZeroDuration();
  }
  return ms < 0 ? absl::InfiniteDuration() : absl::Milliseconds(ms);
}

absl::Duration CallScheduler::WorkLocked(int64_t columns) const {
  return absl::Seconds(static_cast<double>(columns) * seconds_per_column_ / pool_->threads());
}

int64_t CallScheduler::UnitColumnsLocked(int64_t units, double seconds_per_unit) const {
  // Bounded ratio: a column estimate near zero must not overflow the count.
  const double ratio = std::min(seconds_per_unit / std::max(seconds_per_column_, 1e-12), 1e6);
  return std::max<int64_t>(1, std::llround(static_cast<double>(units) * ratio));
}

int64_t CallScheduler::PointColumnsLocked(const CallShape& shape) const {
  const int64_t volume =
      std::clamp<int64_t>(shape.volume_points_per_task, 0, shape.points_per_task);
  const int64_t planar = shape.points_per_task - volume;
  return (planar > 0 ? UnitColumnsLocked(planar, seconds_per_point_) : 0) +
         (volume > 0 ? UnitColumnsLocked(volume, seconds_per_volume_point_) : 0);
}

int64_t CallScheduler::OthersShareLocked(const Shares& shares, int64_t own_pending, int64_t m) {
  // The histogram holds the client's own amount too; min(own, m) is what it counts for it, exactly
  // when it is alone in m's bucket (so one client's work is never counted twice).
  return std::max<int64_t>(
      shares.histogram.SumOfMin(m) - std::min(std::max<int64_t>(own_pending, 0), m), 0);
}

void CallScheduler::AddClientPendingLocked(Shares& shares, Client& client, int64_t columns) {
  shares.histogram.Remove(client.pending_columns);
  client.pending_columns += columns;
  shares.histogram.Add(client.pending_columns);
  shares.pending_columns += columns;
}

absl::Duration CallScheduler::EstimateLocked(int64_t columns) const {
  return WorkLocked(columns) / options_.deadline_fill;
}

absl::StatusOr<std::unique_ptr<CallScheduler::Call>> CallScheduler::Admit(const CallShape& shape,
                                                                          absl::Time now) {
  const int64_t tasks = std::max<int64_t>(shape.tasks, 1);
  // Declared before the lock: a refused call is destroyed after the lock is released (~Call locks).
  std::unique_ptr<Call> call;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t columns_per_task =
      shape.cells_per_task > 0    ? UnitColumnsLocked(shape.cells_per_task, seconds_per_cell_)
      : shape.points_per_task > 0 ? PointColumnsLocked(shape)
                                  : std::max<int64_t>(shape.columns_per_task, 1);
  const int64_t own = tasks * columns_per_task;
  const CallClass call_class =
      own <= options_.interactive_max_columns ? CallClass::kInteractive : CallClass::kBackground;
  const bool interactive = call_class == CallClass::kInteractive;
  call.reset(new Call(this, call_class));
  const absl::Duration bound = absl::Seconds(options_.max_queue_seconds);
  if (WorkLocked(own) > bound) {
    return RefuseForGood(
        "queue_full",
        absl::StrCat("this call alone is ", Millis(WorkLocked(own)),
                     " of blending, more than max_queue_seconds = ", options_.max_queue_seconds,
                     " allows however empty the queue: split it into calls of fewer or smaller "
                     "chunks or points"));
  }
  const int64_t reply_limit = interactive ? options_.max_reply_bytes : BackgroundReplyLimit();
  if (shape.reply_bytes_per_task > reply_limit) {
    return RefuseForGood(
        "reply_memory",
        absl::StrCat(
            "one reply of this call may take ", shape.reply_bytes_per_task, " bytes, more than ",
            interactive ? "max_reply_bytes = " : "background calls may reserve ", reply_limit,
            " however empty the reply memory: ask for smaller chunks or fewer options"));
  }
  if (reserved_reply_bytes_ + shape.reply_bytes_per_task > reply_limit) {
    return Refuse("reply_memory",
                  absl::StrCat("reply memory is full: ", reserved_reply_bytes_,
                               " bytes reserved for unsent replies, this "
                               "call needs ",
                               shape.reply_bytes_per_task, ", ",
                               interactive ? "max_reply_bytes = " : "background calls may reserve ",
                               reply_limit),
                  kReplyMemoryRetry);
  }
  const OrderKey key{shape.deadline, next_admission_};
  if (interactive) {
    // The interactive work that runs before its end: its client's, and the others' fair share of
    // the turns meanwhile.
    const auto mine = interactive_.clients.find(shape.client);
    const int64_t mine_pending =
        mine == interactive_.clients.end() ? 0 : mine->second.pending_columns;
    const int64_t queued =
        mine_pending + OthersShareLocked(interactive_, mine_pending, mine_pending + own);
    if (WorkLocked(queued + own) > bound) {
      return Refuse("queue_full",
                    absl::StrCat("blend queue is full: ", Millis(WorkLocked(queued)),
                                 " of blending queued for interactive calls, this call adds ",
                                 Millis(WorkLocked(own)),
                                 ", max_queue_seconds = ", options_.max_queue_seconds),
                    WorkLocked(queued + own) - bound);
    }
    const absl::Time finish = now + EstimateLocked(queued + own);
    if (finish > shape.deadline) {
      return Refuse(
          "deadline",
          absl::StrCat(
              "server cannot finish this call before its deadline (estimated ",
              Millis(finish - now), " with headroom, deadline in ", Millis(shape.deadline - now),
              ShareClauseLocked(interactive_, mine_pending, mine != interactive_.clients.end()),
              ")"),
          WorkLocked(queued));
    }
  } else {
    const auto mine = background_.clients.find(shape.client);
    const int64_t mine_pending =
        mine == background_.clients.end() ? 0 : mine->second.pending_columns;
    while (true) {
      const Client* late = nullptr;
      absl::Status refused = AdmitBackgroundLocked(shape, key, own, now, &late);
      if (refused.ok()) break;
      // A call of a client holding more background work than this one's client would is shed
      // rather than this call refused: the promise of a deadline holds within a fair share.
      if (late == nullptr || late->pending_columns <= mine_pending + own) return refused;
      ShedNewestLocked(background_.clients.at(late->name), kShedForFairShare);
    }
  }
  ++next_admission_;
  call->columns_per_task_ = columns_per_task;
  call->times_ = shape.times;
  call->reply_bytes_per_task_ = shape.reply_bytes_per_task;
  call->tasks_unstarted_ = tasks;
  call->order_ = key;
  reserved_reply_bytes_ += shape.reply_bytes_per_task;  // The floor.
  Shares& shares = SharesOf(*call);
  auto [client, added] = shares.clients.try_emplace(shape.client);
  if (added) client->second.name = shape.client;
  ++client->second.calls;
  AddClientPendingLocked(shares, client->second, own);
  if (!interactive) {
    client->second.by_deadline.emplace(key, call.get());
    if (key.first != absl::InfiniteFuture()) background_deadlines_.insert(key.first);
  }
  call->client_ = &client->second;
  calls_.insert(call.get());
  ShedLocked(interactive ? kShedForInteractive : kShedForFairShare);
  return call;
}

std::string CallScheduler::ShareClauseLocked(const Shares& shares, int64_t mine_pending,
                                             bool present) const {
  const size_t others = shares.clients.size() - (present ? 1 : 0);
  if (others == 0) return {};
  return absl::StrCat("; ", others + 1,
                      " clients share the server, this client's own queued work is ",
                      Millis(WorkLocked(mine_pending)));
}

absl::Status CallScheduler::AdmitBackgroundLocked(const CallShape& shape, const OrderKey& key,
                                                  int64_t own, absl::Time now,
                                                  const Client** late) const {
  const auto mine = background_.clients.find(shape.client);
  const Client* const client = mine == background_.clients.end() ? nullptr : &mine->second;
  const int64_t mine_pending = client == nullptr ? 0 : client->pending_columns;
  const int64_t interactive = interactive_.pending_columns;
  const absl::Duration bound = absl::Seconds(options_.max_queue_seconds);
  // The queue bound: all interactive work, this client's background work and the others' share
  // of the turns while it is done. Past the bound the others' excess is shed (ShedLocked).
  const int64_t queued =
      interactive + mine_pending + OthersShareLocked(background_, mine_pending, mine_pending + own);
  if (WorkLocked(queued + own) > bound) {
    return Refuse("queue_full",
                  absl::StrCat("blend queue is full: ", Millis(WorkLocked(queued)),
                               " of blending queued, this call adds ", Millis(WorkLocked(own)),
                               ", max_queue_seconds = ", options_.max_queue_seconds,
                               ShareClauseLocked(background_, mine_pending, client != nullptr)),
                  WorkLocked(queued + own) - bound);
  }
  // This call's deadline: its client's background work due no later (that runs first), then the
  // others' share of the turns, and all interactive work.
  auto unstarted = [](const Call& call) { return call.tasks_unstarted_ * call.columns_per_task_; };
  int64_t mine_first = 0;
  if (client != nullptr) {
    for (auto it = client->by_deadline.begin(); it != client->by_deadline.lower_bound(key); ++it) {
      mine_first += unstarted(*it->second);
    }
  }
  const int64_t m = mine_first + own;
  const int64_t ahead = interactive + mine_first + OthersShareLocked(background_, mine_pending, m);
  const absl::Time finish = now + EstimateLocked(ahead + own);
  if (finish > shape.deadline) {
    return Refuse(
        "deadline",
        absl::StrCat("server cannot finish this call before its deadline (estimated ",
                     Millis(finish - now), " with headroom for the ", ahead + own,
                     " columns ahead of and in it, deadline in ", Millis(shape.deadline - now),
                     ShareClauseLocked(background_, mine_pending, client != nullptr), ")"),
        WorkLocked(ahead));
  }
  // Every admitted background call with a deadline, by the same count before and after this one:
  // refuse only if this call is what would make one late. None ends later than all unstarted work
  // and this call's: when that is done before the earliest deadline, none can be made late.
  const int64_t everything = interactive + background_.pending_columns + own;
  if (background_deadlines_.empty() ||
      now + EstimateLocked(everything) <= *background_deadlines_.begin()) {
    return absl::OkStatus();
  }
  // Clients of background work, with this call's.
  const int64_t clients =
      static_cast<int64_t>(background_.clients.size()) + (client == nullptr ? 1 : 0);
  for (const auto& [name, other] : background_.clients) {
    const bool same = &other == client;
    int64_t theirs = 0;  // `other`'s work up to and including the call
    for (const auto& [other_key, call] : other.by_deadline) {
      if (other_key.first == absl::InfiniteFuture()) break;  // No deadline: never late.
      theirs += unstarted(*call);
      if (same && other_key < key) continue;          // Runs before this call, as before.
      if (!same && theirs <= mine_pending) continue;  // Its share of this client's: unchanged.
      // Late only if the most that may run before its end is: the others' work, each at most
      // its own (with this call's, for this call's client).
      const int64_t others_at_most = std::min(everything - interactive - other.pending_columns,
                                              (clients - 1) * (same ? theirs + own : theirs));
      if (now + EstimateLocked(interactive + theirs + (same ? own : 0) + others_at_most) <=
          other_key.first) {
        continue;
      }
      const int64_t before =
          interactive + theirs + OthersShareLocked(background_, other.pending_columns, theirs);
      // The same client: this call runs first. Another: it takes a share of up to `theirs`.
      const int64_t after =
          same ? interactive + theirs + own +
                     OthersShareLocked(background_, other.pending_columns, theirs + own)
               : before - std::min(mine_pending, theirs) + std::min(mine_pending + own, theirs);
      if (now + EstimateLocked(after) > other_key.first &&
          now + EstimateLocked(before) <= other_key.first) {
        if (!same) *late = &other;
        return Refuse(
            "deadline",
            absl::StrCat(
                "server cannot take this call without delaying an admitted call past its deadline "
                "(estimated ",
                Millis(EstimateLocked(own)), " of work)"),
            WorkLocked(before));
      }
    }
  }
  return absl::OkStatus();
}

int64_t CallScheduler::BackgroundReplyLimit() const {
  return static_cast<int64_t>(static_cast<double>(options_.max_reply_bytes) *
                              (1 - options_.interactive_reply_share));
}

void CallScheduler::ShedLocked(absl::string_view why) {
  const absl::Duration bound = absl::Seconds(options_.max_queue_seconds);
  while (WorkLocked(interactive_.pending_columns + background_.pending_columns) > bound) {
    // The client with the most unstarted background work.
    Client* largest = nullptr;
    for (auto& [name, client] : background_.clients) {
      if (client.pending_columns > 0 &&
          (largest == nullptr || client.pending_columns > largest->pending_columns)) {
        largest = &client;
      }
    }
    if (largest == nullptr) return;
    ShedNewestLocked(*largest, why);
  }
}

void CallScheduler::ShedNewestLocked(Client& client, absl::string_view why) {
  Call* newest = nullptr;
  for (const auto& [key, call] : client.by_deadline) {
    if (call->tasks_unstarted_ > 0 && (newest == nullptr || key.second > newest->order_.second)) {
      newest = call;
    }
  }
  if (newest == nullptr) return;
  const int64_t dropped = newest->tasks_unstarted_ * newest->columns_per_task_;
  AddClientPendingLocked(background_, client, -dropped);
  newest->tasks_unstarted_ = 0;
  const absl::Duration queued =
      WorkLocked(interactive_.pending_columns + background_.pending_columns);
  newest->shed_status_ =
      Refuse("",
             absl::StrCat("server overloaded: this background call was shed with ", dropped,
                          " columns not started, ", why, " (", Millis(queued),
                          " of blending still queued)"),
             queued);
  newest->shed_.store(true, std::memory_order_release);
  ++shed_calls_;
}

int64_t CallScheduler::HeldReplyBytes(const Call& call) {
  return std::max<int64_t>(call.reservations_, 1) * call.reply_bytes_per_task_;
}

void CallScheduler::RemoveCallLocked(Call* call) {
  queued_tasks_ -= static_cast<int64_t>(call->lane_.size());
  const int64_t unstarted = call->tasks_unstarted_ * call->columns_per_task_;
  reserved_reply_bytes_ -= HeldReplyBytes(*call);
  if (Client* client = call->client_; client != nullptr) {  // Null: refused at admission.
    Shares& shares = SharesOf(*call);
    AddClientPendingLocked(shares, *client, -unstarted);
    bool left_turns = false;  // Its client has no queued task any more.
    if (call->class_ == CallClass::kInteractive) {
      auto it = std::find(client->runnable.begin(), client->runnable.end(), call);
      if (it != client->runnable.end()) {
        client->runnable.erase(it);
        left_turns = client->runnable.empty();
      }
    } else {
      client->by_deadline.erase(call->order_);
      if (const auto it = background_deadlines_.find(call->order_.first);
          it != background_deadlines_.end()) {
        background_deadlines_.erase(it);
      }
      left_turns = client->queued.erase(call->order_) > 0 && client->queued.empty();
    }
    if (left_turns) shares.turns.erase(client->turn);
    if (--client->calls == 0) shares.clients.erase(client->name);
  }
  calls_.erase(call);
}

namespace {

// Moves an estimate towards a measured sample (at most kMaxSampleRise times it): the first sample
// replaces the initial guess.
void Smooth(double sample, double& estimate, bool& measured) {
  sample = std::min(sample, kMaxSampleRise * estimate);
  if (!measured) {
    estimate = sample;
    measured = true;
  } else {
    estimate += kCostSmoothing * (sample - estimate);
  }
}

}  // namespace

void CallScheduler::RecordUnitCost(int64_t units, absl::Duration elapsed, double& estimate,
                                   bool& measured) {
  if (units <= 0) return;
  const double sample = absl::ToDoubleSeconds(elapsed) / static_cast<double>(units);
  std::lock_guard<std::mutex> lock(mu_);
  Smooth(sample, estimate, measured);
}

void CallScheduler::RecordTaskCost(int64_t columns, absl::Duration elapsed) {
  RecordUnitCost(columns, elapsed, seconds_per_column_, cost_measured_);
}

void CallScheduler::RecordPointCost(int64_t points, absl::Duration elapsed) {
  RecordUnitCost(points, elapsed, seconds_per_point_, point_cost_measured_);
}

void CallScheduler::RecordVolumePointCost(int64_t points, absl::Duration elapsed) {
  RecordUnitCost(points, elapsed, seconds_per_volume_point_, volume_point_cost_measured_);
}

void CallScheduler::RecordCellCost(int64_t cells, absl::Duration elapsed) {
  RecordUnitCost(cells, elapsed, seconds_per_cell_, cell_cost_measured_);
}

CallScheduler::Stats CallScheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats;
  stats.calls = static_cast<int64_t>(calls_.size());
  stats.queued_tasks = queued_tasks_;
  stats.pending_columns = interactive_.pending_columns + background_.pending_columns;
  stats.reserved_reply_bytes = reserved_reply_bytes_;
  stats.seconds_per_column = seconds_per_column_;
  stats.seconds_per_point = seconds_per_point_;
  stats.seconds_per_volume_point = seconds_per_volume_point_;
  stats.seconds_per_cell = seconds_per_cell_;
  stats.queued_seconds = absl::ToDoubleSeconds(WorkLocked(stats.pending_columns));
  stats.shed_calls = shed_calls_;
  stats.interactive_clients = static_cast<int64_t>(interactive_.clients.size());
  stats.background_clients = static_cast<int64_t>(background_.clients.size());
  stats.threads = pool_->threads();
  stats.interactive_waits = interactive_waits_;
  stats.background_waits = background_waits_;
  return stats;
}

void CallScheduler::RunNext() {
  std::unique_lock<std::mutex> lock(mu_);
  RunNextLocked(lock);
  // The last touch of `this` (the destructor waits for it under mu_).
  if (--pool_tokens_ == 0) tokens_done_.notify_all();
}

void CallScheduler::RunNextLocked(std::unique_lock<std::mutex>& lock) {
  while (true) {
    if (running_tasks_ >= pool_->threads()) {
      // Callers' threads hold the slots (SubmitOrRunHere): the first of them to end re-issues this.
      ++deferred_tokens_;
      return;
    }
    const bool interactive_turn =
        !interactive_.turns.empty() &&
        (background_.turns.empty() || interactive_picks_in_a_row_ < kBackgroundTurn - 1);
    if ((interactive_turn ? interactive_ : background_).turns.empty()) {
      return;  // The token of a task dropped with its call, or of one run in another's slot.
    }
    absl::AnyInvocable<void()&&> task = TakeNextLocked(interactive_turn);
    lock.unlock();
    std::move(task)();
    lock.lock();
    --running_tasks_;
    // A deferred token's task: run it on this thread now rather than hand it to another.
    if (deferred_tokens_ == 0) return;
    --deferred_tokens_;
  }
}

absl::AnyInvocable<void() &&> CallScheduler::TakeNextLocked(bool interactive) {
  Shares& shares = interactive ? interactive_ : background_;
  Client* client = shares.turns.begin()->second;
  shares.turns.erase(shares.turns.begin());
  shares.clock = client->started_columns;
  Call* call = nullptr;
  if (interactive) {
    call = client->runnable.front();
    client->runnable.pop_front();
    ++interactive_picks_in_a_row_;
  } else {
    call = client->by_deadline.at(*client->queued.begin());
    interactive_picks_in_a_row_ = 0;
  }
  Call::Queued queued = std::move(call->lane_.front());
  call->lane_.pop_front();
  --queued_tasks_;
  StartedLocked(call, absl::Now() - queued.since);
  if (interactive) {
    if (!call->lane_.empty()) client->runnable.push_back(call);
    if (!client->runnable.empty()) QueueTurnLocked(shares, *client);
  } else {
    if (call->lane_.empty()) client->queued.erase(call->order_);
    if (!client->queued.empty()) QueueTurnLocked(shares, *client);
  }
  return std::move(queued.task);
}

absl::Duration CallScheduler::RunWaitingInteractive(CallClass lender) {
  // Set while this thread runs tasks lent to: a call from inside one of them lends nothing.
  thread_local bool lending = false;
  if (lender != CallClass::kBackground || lending) return absl::ZeroDuration();
  std::unique_lock<std::mutex> lock(mu_);
  if (interactive_.turns.empty()) return absl::ZeroDuration();
  const absl::Time start = absl::Now();
  lending = true;
  for (int ran = 0; ran < kBackgroundTurn - 1 && !interactive_.turns.empty(); ++ran) {
    absl::AnyInvocable<void()&&> task = TakeNextLocked(/*interactive=*/true);
    // It runs in the calling task's slot, which that task keeps: no more tasks run than threads.
    // Its pool token finds nothing to run, or another task that was waiting.
    --running_tasks_;
    lock.unlock();
    std::move(task)();
    lock.lock();
  }
  lending = false;
  return absl::Now() - start;
}

void CallScheduler::WaitHistogram::Add(absl::Duration waited) {
  const double seconds = absl::ToDoubleSeconds(waited);
  ++counts[std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin()];
  sum_seconds += seconds;
}

void CallScheduler::StartedLocked(Call* call, absl::Duration waited) {
  (call->class_ == CallClass::kInteractive ? interactive_waits_ : background_waits_).Add(waited);
  if (call->times_ != nullptr) call->times_->AddQueued(waited);
  ++running_tasks_;
  call->client_->started_columns += call->columns_per_task_;
  if (call->tasks_unstarted_ > 0) {
    --call->tasks_unstarted_;
    AddClientPendingLocked(SharesOf(*call), *call->client_, -call->columns_per_task_);
  }
}

void CallScheduler::RunnableLocked(Call* call) {
  Client& client = *call->client_;
  if (call->class_ == CallClass::kInteractive) {
    client.runnable.push_back(call);
    if (client.runnable.size() > 1) return;  // Already in the turns.
  } else {
    client.queued.insert(call->order_);
    if (client.queued.size() > 1) return;
  }
  // An idle client joins at the current turn: its idle time earns it no run of picks.
  Shares& shares = SharesOf(*call);
  client.started_columns = std::max(client.started_columns, shares.clock);
  QueueTurnLocked(shares, client);
}

void CallScheduler::QueueTurnLocked(Shares& shares, Client& client) {
  client.turn = {client.started_columns, next_turn_++};
  shares.turns.emplace(client.turn, &client);
}

CallScheduler::Call::~Call() {
  std::lock_guard<std::mutex> lock(scheduler_->mu_);
  scheduler_->RemoveCallLocked(this);
}

bool CallScheduler::Call::TryReserveReply() {
  std::lock_guard<std::mutex> lock(scheduler_->mu_);
  if (reservations_ == 0) {  // Covered by the admission floor.
    reservations_ = 1;
    return true;
  }
  const int64_t limit = class_ == CallClass::kInteractive ? scheduler_->options_.max_reply_bytes
                                                          : scheduler_->BackgroundReplyLimit();
  if (scheduler_->reserved_reply_bytes_ + reply_bytes_per_task_ > limit) return false;
  scheduler_->reserved_reply_bytes_ += reply_bytes_per_task_;
  ++reservations_;
  return true;
}

absl::Status CallScheduler::Call::ShedStatus() const {
  std::lock_guard<std::mutex> lock(scheduler_->mu_);
  return shed_status_;
}

void CallScheduler::Call::ReleaseReply() {
  std::lock_guard<std::mutex> lock(scheduler_->mu_);
  if (reservations_ > 1) scheduler_->reserved_reply_bytes_ -= reply_bytes_per_task_;
  if (reservations_ > 0) --reservations_;
}

void CallScheduler::Call::Submit(absl::AnyInvocable<void() &&> task) {
  // Read before the task is queued: from then on any pool thread's token may pick it, and the task
  // may end the call (a stream's last chunk), so `this` must not be touched after the unlock.
  CallScheduler* const scheduler = scheduler_;
  const absl::Time now = absl::Now();
  {
    std::lock_guard<std::mutex> lock(scheduler->mu_);
    const bool was_idle = lane_.empty();
    lane_.push_back({std::move(task), now});
    ++scheduler->queued_tasks_;
    ++scheduler->pool_tokens_;
    if (was_idle) scheduler->RunnableLocked(this);
  }
  scheduler->pool_->Submit([scheduler] { scheduler->RunNext(); });
}

void CallScheduler::Call::SubmitOrRunHere(absl::AnyInvocable<void() &&> task) {
  CallScheduler* const scheduler = scheduler_;
  bool run_here = false;
  {
    std::lock_guard<std::mutex> lock(scheduler->mu_);
    run_here =
        scheduler->queued_tasks_ == 0 && scheduler->running_tasks_ < scheduler->pool_->threads();
    if (run_here) scheduler->StartedLocked(this, absl::ZeroDuration());
  }
  if (!run_here) {
    Submit(std::move(task));
    return;
  }
  std::move(task)();  // May destroy this Call: only the scheduler is touched after it.
  bool reissue = false;
  {
    std::lock_guard<std::mutex> lock(scheduler->mu_);
    --scheduler->running_tasks_;
    reissue = scheduler->deferred_tokens_ > 0;
    if (reissue) {
      --scheduler->deferred_tokens_;
      ++scheduler->pool_tokens_;
    }
  }
  if (reissue) scheduler->pool_->Submit([scheduler] { scheduler->RunNext(); });
}

}  // namespace worldgen
