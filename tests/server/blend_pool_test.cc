#include "server/scheduling/blend_pool.h"

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

// std::latch, not absl::Notification: these tests also run under ThreadSanitizer (scripts/tsan.sh),
// which sees std's synchronization but not that of apt's uninstrumented Abseil.
namespace worldgen {
namespace {

TEST(BlendPoolTest, RunsEveryTaskOnItsThreads) {
  BlendPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  std::atomic<int> ran{0};
  for (int i = 0; i < 500; ++i) pool.Submit([&] { ran.fetch_add(1); });
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 500);
}

TEST(BlendPoolTest, AfterShutdownSubmitRunsInline) {
  BlendPool pool(2);
  pool.Shutdown();
  pool.Shutdown();  // Idempotent.
  bool ran = false;
  pool.Submit([&] { ran = true; });
  EXPECT_TRUE(ran);
}

// Many submitters racing each other, tasks that submit follow-up work (as a stream's next chunk
// does), and a shutdown in the middle: every submitted task runs exactly once (queued on a worker,
// or inline once the pool is stopping), none is lost.
TEST(BlendPoolTest, ConcurrentSubmittersAndShutdownLoseNoAcceptedTask) {
  BlendPool pool(3);
  std::atomic<int> accepted{0}, ran{0}, plain_results{0};
  std::vector<int> results(4 * 2000, 0);  // Each written by one task; read after Shutdown.
  std::latch go(5), halfway(1);
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      go.arrive_and_wait();
      for (int i = 0; i < 2000; ++i) {
        if (t == 0 && i == 1000) halfway.count_down();
        const int slot = t * 2000 + i;
        auto task = [&, slot] {
          results[static_cast<size_t>(slot)] = slot + 1;
          ran.fetch_add(1);
          if (slot % 7 == 0) {
            accepted.fetch_add(1);
            pool.Submit([&] {
              plain_results.fetch_add(1);
              ran.fetch_add(1);
            });
          }
        };
        accepted.fetch_add(1);
        pool.Submit(task);  // Runs inline once the pool is stopping.
      }
    });
  }
  go.arrive_and_wait();
  halfway.wait();
  pool.Shutdown();  // While the submitters are still going.
  for (std::thread& s : submitters) s.join();
  EXPECT_EQ(ran.load(), accepted.load());
  int written = 0;
  for (size_t slot = 0; slot < results.size(); ++slot) {
    if (results[slot] != 0) {
      EXPECT_EQ(results[slot], static_cast<int>(slot) + 1);
      ++written;
    }
  }
  EXPECT_EQ(written + plain_results.load(), accepted.load());
}

}  // namespace
}  // namespace worldgen
