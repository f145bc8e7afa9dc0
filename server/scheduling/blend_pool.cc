#include "server/scheduling/blend_pool.h"

#include <pthread.h>

#include <string>
#include <utility>

namespace worldgen {

BlendPool::BlendPool(int threads) {
  if (threads < 1) threads = 1;
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    workers_.emplace_back([this, i] {
      // Named for top -H, perf and /proc/<pid>/task/*/comm (bench/server_cpu.sh).
      pthread_setname_np(pthread_self(), ("blend-" + std::to_string(i)).c_str());
      WorkerLoop();
    });
  }
}

BlendPool::~BlendPool() { Shutdown(); }

void BlendPool::Submit(absl::AnyInvocable<void() &&> task) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(task));
      lock.unlock();
      wake_.notify_one();
      return;
    }
  }
  std::move(task)();
}

void BlendPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

void BlendPool::WorkerLoop() {
  while (true) {
    absl::AnyInvocable<void() &&> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping and drained.
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace worldgen
