#include "server/scheduling/chunk_stream_policy.h"

#include <algorithm>
#include <utility>

namespace worldgen {

ChunkStreamPolicy::ChunkStreamPolicy(std::unique_ptr<CallScheduler::Call> call, int64_t count,
                                     int max_outstanding, Hooks hooks)
    : call_(std::move(call)),
      count_(count),
      max_outstanding_(max_outstanding < 1 ? 1 : max_outstanding),
      hooks_(std::move(hooks)) {}

int ChunkStreamPolicy::BufferChunks(int max_chunks, int64_t max_bytes,
                                    int64_t reply_bytes_per_chunk) {
  int64_t chunks = max_chunks;
  if (reply_bytes_per_chunk > 0) chunks = std::min(chunks, max_bytes / reply_bytes_per_chunk);
  return static_cast<int>(std::max<int64_t>(chunks, 1));
}

void ChunkStreamPolicy::Start() {
  Advance([] {});
}

void ChunkStreamPolicy::WriteDone(bool ok) {
  Advance([&] {
    writing_ = false;
    call_->ReleaseReply();
    if (!ok) cancelled_ = true;  // The client is gone.
  });
}

void ChunkStreamPolicy::Cancel() {
  Advance([&] { cancelled_ = true; });
}

void ChunkStreamPolicy::RunTask(int64_t index, const CallScheduler::Call* call) {
  // Stopped: another task failed or the call was cancelled; either way that is already recorded.
  const bool stopped = stop_.load(std::memory_order_relaxed);
  // Shed by the scheduler: end the stream with the scheduler's status, blending nothing more.
  const bool shed = !stopped && call->shed();
  const bool cancelled = !stopped && !shed && hooks_.cancelled();
  if (shed) return TaskDone(call->ShedStatus(), false, false);
  if (stopped || cancelled)
    return TaskDone(absl::CancelledError("not produced"), stopped, cancelled);
  // Until `done` runs the task counts in tasks_, so the stream cannot finish (nor the policy be
  // destroyed) before it.
  hooks_.produce(index,
                 [this](absl::StatusOr<Reply> reply) { TaskDone(std::move(reply), false, false); });
}

void ChunkStreamPolicy::TaskDone(absl::StatusOr<Reply> reply, bool stopped, bool cancelled) {
  Advance([&] {
    --tasks_;
    if (stopped || cancelled) {
      if (cancelled) cancelled_ = true;
      call_->ReleaseReply();
    } else if (!reply.ok()) {
      if (error_.ok()) error_ = reply.status();
      call_->ReleaseReply();
    } else {
      ready_.push_back(*std::move(reply));
    }
  });
}

void ChunkStreamPolicy::Advance(absl::FunctionRef<void()> update) {
  Actions actions;
  CallScheduler::Call* call = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    update();
    actions = DecideLocked();
    call = call_.get();  // Read under the lock: a finishing thread takes call_ away.
  }
  if (actions.finish.has_value()) {
    // Without a last reply, the call's reservations are released before the final status.
    if (actions.finish->last_reply == nullptr) actions.finish->admission.reset();
    hooks_.finish(*std::move(actions.finish));
    return;
  }
  if (actions.write != nullptr) hooks_.start_write(std::move(actions.write));
  // Every task submitted below is counted in tasks_, so the stream cannot finish (and the policy
  // cannot be destroyed) before the last submission; after it, neither `this` nor `call` is
  // touched. A one-chunk stream's task may run (and finish the stream) inside that last submission.
  for (size_t i = 0; i < actions.submit.size(); ++i) {
    const int64_t index = actions.submit[i];
    auto task = [this, index, call] { RunTask(index, call); };
    if (count_ == 1) {
      call->SubmitOrRunHere(std::move(task));
    } else {
      call->Submit(std::move(task));
    }
  }
}

ChunkStreamPolicy::Actions ChunkStreamPolicy::DecideLocked() {
  Actions actions;
  if (finished_) return actions;
  // A shed call submits nothing more; what it already produced is dropped with it.
  if (error_.ok() && !cancelled_ && call_->shed()) error_ = call_->ShedStatus();
  const bool stopping = cancelled_ || !error_.ok();
  if (stopping) stop_.store(true, std::memory_order_relaxed);
  if (!stopping) {
    while (next_index_ < count_ &&
           tasks_ + static_cast<int64_t>(ready_.size()) + (writing_ ? 1 : 0) < max_outstanding_ &&
           call_->TryReserveReply()) {
      ++tasks_;
      actions.submit.push_back(next_index_++);
    }
  }
  if (writing_) return actions;
  const bool all_produced = next_index_ == count_ && tasks_ == 0;
  if (!stopping && !ready_.empty()) {
    if (all_produced && ready_.size() == 1) {  // The last reply: written with the final status.
      finished_ = true;
      actions.finish = Ending{absl::OkStatus(), std::move(ready_.front()), std::move(call_)};
      ready_.clear();
      return actions;
    }
    writing_ = true;
    actions.write = std::move(ready_.front());
    ready_.pop_front();
    return actions;
  }
  if (tasks_ == 0 && (stopping || (all_produced && ready_.empty()))) {
    finished_ = true;
    ready_.clear();
    absl::Status status = absl::OkStatus();
    if (cancelled_) {
      status = absl::CancelledError("call cancelled");
    } else if (!error_.ok()) {
      status = error_;
    }
    actions.finish = Ending{std::move(status), nullptr, std::move(call_)};
  }
  return actions;
}

}  // namespace worldgen
