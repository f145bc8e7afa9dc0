// BlendPool: a fixed set of worker threads that run blending tasks from one bounded FIFO queue.
// gRPC's threads only enqueue; all blending runs here.
//
// Admission: TrySubmit refuses a task when `max_queue` tasks are already waiting (not counting those
// running), so a caller can fail fast with RESOURCE_EXHAUSTED. Submit ignores the bound; it exists for
// work that was already admitted and must make progress (a stream's next chunk when it has nothing
// else outstanding), so each admitted call can add at most one task beyond the bound.
//
// Thread safety: all methods are safe for concurrent use. Tasks must not block on other tasks.
// The lock is a std::mutex, not absl::Mutex, so ThreadSanitizer (scripts/tsan.sh) can check the pool:
// apt's Abseil is not instrumented, std's primitives are intercepted.
#ifndef WORLDGEN_SERVER_BLEND_POOL_H_
#define WORLDGEN_SERVER_BLEND_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"

namespace worldgen {

class BlendPool {
 public:
  // Starts `threads` (>= 1) workers. `max_queue` >= 1.
  BlendPool(int threads, size_t max_queue);
  // Shutdown(), then joins.
  ~BlendPool();
  BlendPool(const BlendPool&) = delete;
  BlendPool& operator=(const BlendPool&) = delete;

  // Enqueues `task` unless max_queue tasks are already waiting; returns whether it was enqueued.
  bool TrySubmit(absl::AnyInvocable<void() &&> task);
  // Enqueues `task` regardless of the bound. After Shutdown, runs it on the calling thread instead.
  void Submit(absl::AnyInvocable<void() &&> task);

  // Tasks waiting (not yet running).
  size_t queue_depth() const;
  int threads() const { return static_cast<int>(workers_.size()); }
  size_t max_queue() const { return max_queue_; }

  // Runs every task already queued, then stops the workers and joins them. Idempotent. After it,
  // TrySubmit returns false.
  void Shutdown();

 private:
  void WorkerLoop();

  const size_t max_queue_;
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::condition_variable wake_;  // Signalled when a task is queued or stopping_ is set.
  std::deque<absl::AnyInvocable<void() &&>> queue_;  // Guarded by mu_.
  bool stopping_ = false;                            // Guarded by mu_.
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_BLEND_POOL_H_
