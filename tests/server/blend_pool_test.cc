#include "server/blend_pool.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace worldgen {
namespace {

TEST(BlendPoolTest, RunsEveryTaskOnItsThreads) {
  BlendPool pool(3, 1000);
  EXPECT_EQ(pool.threads(), 3);
  std::atomic<int> ran{0};
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 500);
}

TEST(BlendPoolTest, TrySubmitRefusesWhenTheQueueIsFullAndSubmitDoesNot) {
  BlendPool pool(1, 2);
  absl::Notification started, release;
  ASSERT_TRUE(pool.TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // The only worker is now busy; the queue is empty.
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_EQ(pool.queue_depth(), 2u);
  EXPECT_FALSE(pool.TrySubmit([&] { ran.fetch_add(100); }));
  pool.Submit([&] { ran.fetch_add(1); });  // Admitted work may exceed the bound.
  EXPECT_EQ(pool.queue_depth(), 3u);
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(pool.queue_depth(), 0u);
}

TEST(BlendPoolTest, AfterShutdownTrySubmitRefusesAndSubmitRunsInline) {
  BlendPool pool(2, 10);
  pool.Shutdown();
  pool.Shutdown();  // Idempotent.
  EXPECT_FALSE(pool.TrySubmit([] {}));
  bool ran = false;
  pool.Submit([&] { ran = true; });
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace worldgen
