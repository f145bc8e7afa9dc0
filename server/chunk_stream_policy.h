// ChunkStreamPolicy: every decision of one GenerateChunk stream, apart from gRPC, so the reactor only
// moves bytes and the policy has unit tests (also under ThreadSanitizer, scripts/tsan.sh).
//
// The stream produces `count` replies, one per chunk index, on the CallScheduler's pool. At most
// `max_outstanding` chunks are outstanding (queued, blending, waiting to be written or being
// written), and each outstanding chunk holds a reply reservation of its call
// (CallScheduler::Call::TryReserveReply), so a slow reader holds a bounded number of bytes and the
// server as a whole never holds more than its reply budget. With the budget full a stream keeps
// going with one chunk at a time (its admission floor) instead of stopping.
//
// Writes happen one at a time, in the order replies became ready. The stream finishes exactly once,
// only when no task is alive and no write is pending:
//   OK after every reply was written; the first production error; or CANCELLED (absl) when the call
//   was cancelled, the client went away (a failed write) or a task found `cancelled()` true. After a
//   stop, no further chunk is blended (queued tasks return at once).
// Finishing destroys the scheduler call (releasing its reservations) and then calls `finish`; after
// that the policy never touches its hooks again, so `finish` may destroy the policy.
//
// Thread safety: Start, WriteDone and Cancel may be called from any thread, concurrently with the
// pool's tasks. The hooks are called without the policy's lock held; `produce` and `cancelled`
// concurrently from pool threads.
#ifndef WORLDGEN_SERVER_CHUNK_STREAM_POLICY_H_
#define WORLDGEN_SERVER_CHUNK_STREAM_POLICY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/call_scheduler.h"

namespace worldgen {

class ChunkStreamPolicy {
 public:
  struct Hooks {
    // Blends and encodes chunk `index`; runs on a pool thread.
    std::function<absl::StatusOr<std::string>(int64_t index)> produce;
    // Whether the call was cancelled or its deadline passed (checked before each blend).
    std::function<bool()> cancelled;
    // Starts writing `reply`; WriteDone must follow. Never called while a write is pending.
    std::function<void(std::string reply)> start_write;
    // The final status; called exactly once.
    std::function<void(absl::Status status)> finish;
  };

  // `count` >= 1, `max_outstanding` >= 1.
  ChunkStreamPolicy(std::unique_ptr<CallScheduler::Call> call, int64_t count, int max_outstanding,
                    Hooks hooks);

  // Submits the first chunks. Call once.
  void Start();
  // The pending write finished; `ok` false means the client is gone.
  void WriteDone(bool ok);
  // The call was cancelled (client cancel or deadline).
  void Cancel();

 private:
  struct Actions {
    std::vector<int64_t> submit;
    std::optional<std::string> write;
    std::optional<absl::Status> finish;
    std::unique_ptr<CallScheduler::Call> finished_call;  // Taken from call_ when finishing.
  };

  void RunTask(int64_t index);
  // Applies `update` and decides under mu_, then acts outside it.
  void Advance(absl::FunctionRef<void()> update);
  Actions DecideLocked();

  std::unique_ptr<CallScheduler::Call> call_;  // Guarded by mu_; taken away when finishing.
  const int64_t count_;
  const int max_outstanding_;
  const Hooks hooks_;
  std::atomic<bool> stop_{false};  // Mirrors "cancelled or failed" for the tasks' lock-free check.

  std::mutex mu_;  // Guards everything below. Taken before the scheduler's lock, never after.
  int64_t next_index_ = 0;
  int tasks_ = 0;                  // Submitted and not yet through Advance.
  std::deque<std::string> ready_;  // Produced, waiting to be written.
  bool writing_ = false;
  bool cancelled_ = false;
  absl::Status error_;
  bool finished_ = false;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_CHUNK_STREAM_POLICY_H_
