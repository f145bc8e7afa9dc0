// ChunkStreamPolicy: every decision of one GenerateChunk stream, apart from gRPC, so the reactor
// only moves bytes and the policy has unit tests (also under ThreadSanitizer, scripts/tsan.sh).
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
//   OK with the last reply (written together with the status: one gRPC operation instead of a write
//   and a finish); the first production error; the scheduler's ShedStatus (RESOURCE_EXHAUSTED) when
//   it shed the call; or CANCELLED (absl) when the call was cancelled, the client went away (a
//   failed write) or a task found `cancelled()` true. After a stop, no further chunk is blended
//   (queued tasks return at once).
// Finishing without a reply destroys the scheduler call (releasing its reservations) and then calls
// `finish`; with the last reply, `finish` gets the call, whose reservation covers those bytes until
// the caller drops it. After `finish` the policy never touches its hooks again, so `finish` may
// destroy the policy.
//
// Hand-offs: a one-chunk stream's chunk is produced on the thread that calls Start when a pool
// thread is idle (CallScheduler::Call::SubmitOrRunHere), so an idle server answers it without
// waking a pool thread; every other chunk is blended on the pool.
//
// Thread safety: Start, WriteDone and Cancel may be called from any thread, concurrently with the
// pool's tasks. The hooks are called without the policy's lock held; `produce` and `cancelled`
// concurrently from pool threads.
#ifndef WORLDGEN_SERVER_SCHEDULING_CHUNK_STREAM_POLICY_H_
#define WORLDGEN_SERVER_SCHEDULING_CHUNK_STREAM_POLICY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/scheduling/call_scheduler.h"

namespace worldgen {

class ChunkStreamPolicy {
 public:
  // One encoded reply, shared (a cached or joined chunk's bytes are not copied).
  using Reply = std::shared_ptr<const std::string>;

  // How the stream ends.
  struct Ending {
    absl::Status status;
    // The stream's last reply, to be written together with the status (no WriteDone follows); null
    // when nothing is left to write.
    Reply last_reply;
    // The call's admission when `last_reply` is set (its reservation covers those bytes: drop it
    // when they are released); null otherwise (already released).
    std::unique_ptr<CallScheduler::Call> admission;
  };

  // Hands a produced reply (non-null) or the production's error to the policy; call it once.
  using Produced = absl::AnyInvocable<void(absl::StatusOr<Reply>) &&>;

  struct Hooks {
    // Produces chunk `index` and hands it to `done`: before returning (blended here), or later on
    // another thread (another call blending the same chunk publishes it), so that a task never
    // waits on its thread for another. Called on a pool thread, or for a one-chunk stream possibly
    // on Start's thread.
    std::function<void(int64_t index, Produced done)> produce;
    // Whether the call was cancelled or its deadline passed (checked before each blend).
    std::function<bool()> cancelled;
    // Starts writing `reply`; WriteDone must follow. Never called while a write is pending.
    std::function<void(Reply reply)> start_write;
    // The end of the stream; called exactly once.
    std::function<void(Ending ending)> finish;
  };

  // How many chunks a stream may have outstanding: `max_chunks`, or fewer when that many worst-case
  // replies would take more than `max_bytes`, but at least one. Deep buffers save thread wake-ups
  // on small chunks; on big ones they would hold a large share of the server's reply budget (and
  // get new calls refused) for no gain, each chunk's blending being long against its write.
  static int BufferChunks(int max_chunks, int64_t max_bytes, int64_t reply_bytes_per_chunk);

  // `count` >= 1, `max_outstanding` >= 1.
  ChunkStreamPolicy(std::unique_ptr<CallScheduler::Call> call, int64_t count, int max_outstanding,
                    Hooks hooks);

  // Submits the first chunks (a one-chunk stream's may be produced, written and finished before
  // Start returns). Call once.
  void Start();
  // The pending write finished; `ok` false means the client is gone.
  void WriteDone(bool ok);
  // The call was cancelled (client cancel or deadline).
  void Cancel();

 private:
  struct Actions {
    std::vector<int64_t> submit;
    Reply write;
    std::optional<Ending> finish;  // Holds call_ when finishing.
  };

  void RunTask(int64_t index, const CallScheduler::Call* call);
  // A task's outcome: `reply`, unless it found the stream stopped or the call cancelled.
  void TaskDone(absl::StatusOr<Reply> reply, bool stopped, bool cancelled);
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
  int tasks_ = 0;            // Submitted and not yet through Advance.
  std::deque<Reply> ready_;  // Produced, waiting to be written.
  bool writing_ = false;
  bool cancelled_ = false;
  absl::Status error_;
  bool finished_ = false;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_CHUNK_STREAM_POLICY_H_
