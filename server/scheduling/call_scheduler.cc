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
  if (!millis.has_value() || !absl::SimpleAtoi(std::string(*millis), &ms) || ms < 0) {
    return absl::ZeroDuration();
  }
  return absl::Milliseconds(ms);
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

int64_t CallScheduler::InteractiveAheadLocked(const std::string& client, int64_t own) const {
  const auto found = clients_.find(client);
  const int64_t mine = own + (found == clients_.end() ? 0 : found->second.pending_columns);
  // Every client's unstarted work, each at most `mine`: the client's own counts whole.
  return own + interactive_shares_.SumOfMin(mine);
}

void CallScheduler::AddClientPendingLocked(Client& client, int64_t columns) {
  interactive_shares_.Remove(client.pending_columns);
  client.pending_columns += columns;
  interactive_shares_.Add(client.pending_columns);
  interactive_pending_columns_ += columns;
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
  const int64_t reply_limit = interactive ? options_.max_reply_bytes : BackgroundReplyLimit();
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
  // Unstarted work that counts against this call: for an interactive call, the interactive work
  // that runs before its end (its client's, and the others' fair share of the turns meanwhile).
  const int64_t queued = interactive ? InteractiveAheadLocked(shape.client, own) - own
                                     : interactive_pending_columns_ + background_pending_columns_;
  const absl::Duration bound = absl::Seconds(options_.max_queue_seconds);
  if (WorkLocked(queued + own) > bound) {
    return Refuse(
        "queue_full",
        absl::StrCat("blend queue is full: ", Millis(WorkLocked(queued)), " of blending queued",
                     interactive ? " for interactive calls" : "", ", this call adds ",
                     Millis(WorkLocked(own)), ", max_queue_seconds = ", options_.max_queue_seconds),
        WorkLocked(queued + own) - bound);
  }
  const OrderKey key{shape.deadline, next_admission_};
  if (interactive) {
    const absl::Time finish = now + EstimateLocked(queued + own);
    if (finish > shape.deadline) {
      // Beside other clients, say how much of the work ahead is this client's own.
      std::string share;
      const auto mine = clients_.find(shape.client);
      const int64_t mine_pending = mine == clients_.end() ? 0 : mine->second.pending_columns;
      const size_t others = clients_.size() - (mine == clients_.end() ? 0 : 1);
      if (others > 0) {
        share = absl::StrCat("; ", others + 1,
                             " clients share the server, this client's own queued work is ",
                             Millis(WorkLocked(mine_pending)));
      }
      return Refuse("deadline",
                    absl::StrCat("server cannot finish this call before its deadline (estimated ",
                                 Millis(finish - now), " with headroom, deadline in ",
                                 Millis(shape.deadline - now), share, ")"),
                    WorkLocked(queued));
    }
  } else {
    // Work of background calls with a later deadline than this one (they would run after it).
    int64_t later = 0;
    for (auto it = background_.upper_bound(key); it != background_.end(); ++it) {
      later += it->second->tasks_unstarted_ * it->second->columns_per_task_;
    }
    const int64_t ahead = interactive_pending_columns_ + background_pending_columns_ - later;
    int64_t cumulative = ahead + own;
    const absl::Time finish = now + EstimateLocked(cumulative);
    if (finish > shape.deadline) {
      return Refuse("deadline",
                    absl::StrCat("server cannot finish this call before its deadline (estimated ",
                                 Millis(finish - now), " with headroom for the ", cumulative,
                                 " columns ahead of and in it, deadline in ",
                                 Millis(shape.deadline - now), ")"),
                    WorkLocked(ahead));
    }
    for (auto it = background_.upper_bound(key); it != background_.end(); ++it) {
      const Call& other = *it->second;
      cumulative += other.tasks_unstarted_ * other.columns_per_task_;
      const absl::Time other_deadline = it->first.first;
      // Refuse only if this call is what would make the other one late.
      if (now + EstimateLocked(cumulative) > other_deadline &&
          now + EstimateLocked(cumulative - own) <= other_deadline) {
        return Refuse(
            "deadline",
            absl::StrCat(
                "server cannot take this call without delaying an admitted call past its deadline "
                "(estimated ",
                Millis(EstimateLocked(own)), " of work)"),
            WorkLocked(cumulative - own));
      }
    }
  }
  ++next_admission_;
  call->columns_per_task_ = columns_per_task;
  call->reply_bytes_per_task_ = shape.reply_bytes_per_task;
  call->tasks_unstarted_ = tasks;
  call->order_ = key;
  reserved_reply_bytes_ += shape.reply_bytes_per_task;  // The floor.
  if (interactive) {
    auto [client, added] = clients_.try_emplace(shape.client);
    if (added) client->second.name = shape.client;
    ++client->second.calls;
    AddClientPendingLocked(client->second, own);
    call->client_ = &client->second;
    ShedLocked();
  } else {
    background_pending_columns_ += own;
    background_.emplace(key, call.get());
  }
  calls_.insert(call.get());
  return call;
}

int64_t CallScheduler::BackgroundReplyLimit() const {
  return static_cast<int64_t>(static_cast<double>(options_.max_reply_bytes) *
                              (1 - options_.interactive_reply_share));
}

void CallScheduler::ShedLocked() {
  const absl::Duration bound = absl::Seconds(options_.max_queue_seconds);
  while (WorkLocked(interactive_pending_columns_ + background_pending_columns_) > bound) {
    Call* newest = nullptr;
    for (const auto& [key, call] : background_) {
      if (call->tasks_unstarted_ > 0 && (newest == nullptr || key.second > newest->order_.second)) {
        newest = call;
      }
    }
    if (newest == nullptr) return;
    const int64_t dropped = newest->tasks_unstarted_ * newest->columns_per_task_;
    background_pending_columns_ -= dropped;
    newest->tasks_unstarted_ = 0;
    newest->shed_status_ = Refuse(
        "",
        absl::StrCat("server overloaded: this background call was shed with ", dropped,
                     " columns not started, "
                     "to serve interactive calls first (",
                     Millis(WorkLocked(interactive_pending_columns_ + background_pending_columns_)),
                     " of blending still queued)"),
        WorkLocked(interactive_pending_columns_ + background_pending_columns_));
    newest->shed_.store(true, std::memory_order_release);
    ++shed_calls_;
  }
}

int64_t CallScheduler::HeldReplyBytes(const Call& call) {
  return std::max<int64_t>(call.reservations_, 1) * call.reply_bytes_per_task_;
}

void CallScheduler::RemoveCallLocked(Call* call) {
  queued_tasks_ -= static_cast<int64_t>(call->lane_.size());
  const int64_t unstarted = call->tasks_unstarted_ * call->columns_per_task_;
  reserved_reply_bytes_ -= HeldReplyBytes(*call);
  if (call->class_ == CallClass::kInteractive) {
    if (Client* client = call->client_; client != nullptr) {  // Null: refused at admission.
      AddClientPendingLocked(*client, -unstarted);
      auto it = std::find(client->runnable.begin(), client->runnable.end(), call);
      if (it != client->runnable.end()) {
        client->runnable.erase(it);
        if (client->runnable.empty()) interactive_runnable_.erase(client->turn);
      }
      if (--client->calls == 0) clients_.erase(client->name);
    }
  } else {
    background_pending_columns_ -= unstarted;
    background_.erase(call->order_);
    background_runnable_.erase(call->order_);
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
  stats.pending_columns = interactive_pending_columns_ + background_pending_columns_;
  stats.reserved_reply_bytes = reserved_reply_bytes_;
  stats.seconds_per_column = seconds_per_column_;
  stats.seconds_per_point = seconds_per_point_;
  stats.seconds_per_volume_point = seconds_per_volume_point_;
  stats.seconds_per_cell = seconds_per_cell_;
  stats.queued_seconds = absl::ToDoubleSeconds(WorkLocked(stats.pending_columns));
  stats.shed_calls = shed_calls_;
  stats.interactive_clients = static_cast<int64_t>(clients_.size());
  stats.threads = pool_->threads();
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
    Call* call = nullptr;
    const bool interactive_turn =
        !interactive_runnable_.empty() &&
        (background_runnable_.empty() || interactive_picks_in_a_row_ < kBackgroundTurn - 1);
    Client* client = nullptr;
    if (interactive_turn) {
      client = interactive_runnable_.begin()->second;
      interactive_runnable_.erase(interactive_runnable_.begin());
      call = client->runnable.front();
      client->runnable.pop_front();
      interactive_clock_ = client->started_columns;
      ++interactive_picks_in_a_row_;
    } else if (!background_runnable_.empty()) {
      call = background_.at(*background_runnable_.begin());
      interactive_picks_in_a_row_ = 0;
    } else {
      return;  // The token of a task dropped with its call.
    }
    absl::AnyInvocable<void()&&> task = std::move(call->lane_.front());
    call->lane_.pop_front();
    --queued_tasks_;
    StartedLocked(call);
    if (client != nullptr) {
      if (!call->lane_.empty()) client->runnable.push_back(call);
      if (!client->runnable.empty()) QueueTurnLocked(*client);
    } else if (call->lane_.empty()) {
      background_runnable_.erase(call->order_);
    }
    lock.unlock();
    std::move(task)();
    lock.lock();
    --running_tasks_;
    // A deferred token's task: run it on this thread now rather than hand it to another.
    if (deferred_tokens_ == 0) return;
    --deferred_tokens_;
  }
}

void CallScheduler::StartedLocked(Call* call) {
  ++running_tasks_;
  if (call->client_ != nullptr) call->client_->started_columns += call->columns_per_task_;
  if (call->tasks_unstarted_ > 0) {
    --call->tasks_unstarted_;
    if (call->client_ != nullptr) {
      AddClientPendingLocked(*call->client_, -call->columns_per_task_);
    } else {
      background_pending_columns_ -= call->columns_per_task_;
    }
  }
}

void CallScheduler::InteractiveRunnableLocked(Call* call) {
  Client& client = *call->client_;
  client.runnable.push_back(call);
  if (client.runnable.size() > 1) return;  // Already in the turns.
  // An idle client joins at the current turn: its idle time earns it no run of picks.
  client.started_columns = std::max(client.started_columns, interactive_clock_);
  QueueTurnLocked(client);
}

void CallScheduler::QueueTurnLocked(Client& client) {
  client.turn = {client.started_columns, next_turn_++};
  interactive_runnable_.emplace(client.turn, &client);
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
  {
    std::lock_guard<std::mutex> lock(scheduler->mu_);
    const bool was_idle = lane_.empty();
    lane_.push_back(std::move(task));
    ++scheduler->queued_tasks_;
    ++scheduler->pool_tokens_;
    if (was_idle) {
      if (class_ == CallClass::kInteractive) {
        scheduler->InteractiveRunnableLocked(this);
      } else {
        scheduler->background_runnable_.insert(order_);
      }
    }
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
    if (run_here) scheduler->StartedLocked(this);
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
