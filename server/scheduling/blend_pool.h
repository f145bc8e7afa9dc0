// BlendPool: a fixed set of worker threads that run tasks from one FIFO queue. The CallScheduler
// decides what runs and what is admitted (--max_queue_seconds); the pool only runs.
//
// Thread safety: all methods are safe for concurrent use. Tasks must not block on other tasks.
// The lock is a std::mutex, not absl::Mutex, so ThreadSanitizer (scripts/tsan.sh) can check the
// pool: apt's Abseil is not instrumented, std's primitives are intercepted.
#ifndef WORLDGEN_SERVER_SCHEDULING_BLEND_POOL_H_
#define WORLDGEN_SERVER_SCHEDULING_BLEND_POOL_H_

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
  // Starts `threads` (>= 1) workers.
  explicit BlendPool(int threads);
  // Shutdown(), then joins.
  ~BlendPool();
  BlendPool(const BlendPool&) = delete;
  BlendPool& operator=(const BlendPool&) = delete;

  // Enqueues `task`. After Shutdown, runs it on the calling thread instead.
  void Submit(absl::AnyInvocable<void() &&> task);

  int threads() const { return static_cast<int>(workers_.size()); }

  // Runs every task already queued, then stops the workers and joins them. Idempotent.
  void Shutdown();

 private:
  void WorkerLoop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;  // Signalled when a task is queued or stopping_ is set.
  std::deque<absl::AnyInvocable<void() &&>> queue_;  // Guarded by mu_.
  bool stopping_ = false;                            // Guarded by mu_.
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_BLEND_POOL_H_
