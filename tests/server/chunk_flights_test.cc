#include "server/scheduling/chunk_flights.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

// std primitives only: these tests also run under ThreadSanitizer (scripts/tsan.sh).
namespace worldgen {
namespace {

using Flights = ChunkFlights<int, std::string>;

std::shared_ptr<const std::string> Text(const char* s) {
  return std::make_shared<const std::string>(s);
}

TEST(ChunkFlightsTest, FirstAskerLeadsOthersJoinAndAllGetTheOneResult) {
  Flights flights(0);  // Single-flight only.
  std::shared_ptr<const std::string> hit;
  EXPECT_EQ(flights.Lookup(7, &hit, nullptr), Flights::Outcome::kLeader);
  std::vector<std::shared_ptr<const std::string>> got(3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        flights.Lookup(7, &hit, [&got, i](std::shared_ptr<const std::string> v) { got[i] = v; }),
        Flights::Outcome::kJoined);
  }
  EXPECT_EQ(flights.Lookup(8, &hit, nullptr), Flights::Outcome::kLeader)
      << "other keys are separate";
  const auto value = Text("chunk 7");
  flights.Publish(7, value, 100);
  for (const auto& v : got) EXPECT_EQ(v, value) << "the very same object, computed once";
  // Capacity 0: nothing kept, so the next request leads again.
  EXPECT_EQ(flights.Lookup(7, &hit, nullptr), Flights::Outcome::kLeader);
  const Flights::Stats stats = flights.stats();
  EXPECT_EQ(stats.leaders, 3u);
  EXPECT_EQ(stats.joined, 3u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.entries, 0u);
}

TEST(ChunkFlightsTest, AbandonTellsJoinersWithNullAndEndsTheFlight) {
  Flights flights(1000);
  std::shared_ptr<const std::string> hit;
  ASSERT_EQ(flights.Lookup(1, &hit, nullptr), Flights::Outcome::kLeader);
  bool told = false;
  std::shared_ptr<const std::string> seen = Text("not yet");
  ASSERT_EQ(flights.Lookup(1, &hit,
                           [&](std::shared_ptr<const std::string> v) {
                             told = true;
                             seen = v;
                           }),
            Flights::Outcome::kJoined);
  flights.Abandon(1);
  EXPECT_TRUE(told);
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(flights.Lookup(1, &hit, nullptr), Flights::Outcome::kLeader) << "nothing was cached";
}

TEST(ChunkFlightsTest, CachedResultsAreHitsAndTheLeastRecentlyUsedIsEvicted) {
  Flights flights(250);
  std::shared_ptr<const std::string> hit;
  for (int key : {1, 2}) {
    ASSERT_EQ(flights.Lookup(key, &hit, nullptr), Flights::Outcome::kLeader);
    flights.Publish(key, Text("x"), 100);
  }
  ASSERT_EQ(flights.Lookup(1, &hit, nullptr), Flights::Outcome::kHit);  // 1 is now the most recent.
  EXPECT_EQ(*hit, "x");
  ASSERT_EQ(flights.Lookup(3, &hit, nullptr), Flights::Outcome::kLeader);
  flights.Publish(3, Text("y"), 100);  // 300 > 250: evicts 2, the least recently used.
  EXPECT_EQ(flights.Lookup(1, &hit, nullptr), Flights::Outcome::kHit);
  EXPECT_EQ(flights.Lookup(3, &hit, nullptr), Flights::Outcome::kHit);
  EXPECT_EQ(flights.Lookup(2, &hit, nullptr), Flights::Outcome::kLeader);
  flights.Abandon(2);
  const Flights::Stats stats = flights.stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.bytes, 200u);
  EXPECT_EQ(stats.entries, 2u);
  // A value larger than the whole capacity is handed out but never kept.
  ASSERT_EQ(flights.Lookup(9, &hit, nullptr), Flights::Outcome::kLeader);
  flights.Publish(9, Text("huge"), 251);
  EXPECT_EQ(flights.Lookup(9, &hit, nullptr), Flights::Outcome::kLeader);
  flights.Abandon(9);
  EXPECT_EQ(flights.stats().bytes, 200u);
}

// Threads asking for overlapping keys at once: every request gets exactly one answer, each key is
// computed by one leader at a time, and every answer carries its own key's value.
TEST(ChunkFlightsTest, ConcurrentAskersGetOneAnswerEachAndLeadersNeverOverlap) {
  Flights flights(64 * 8);
  constexpr int kThreads = 4, kRounds = 3000, kKeys = 16;
  std::vector<std::atomic<int>> leading(kKeys);
  std::atomic<int> answers{0}, wrong{0}, overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const int key = (r * 7 + t * 3) % kKeys;
        auto check = [&, key](std::shared_ptr<const std::string> v) {
          // Null means the leader abandoned: a real caller would compute; counting it is enough.
          if (v != nullptr && *v != std::to_string(key)) wrong.fetch_add(1);
          answers.fetch_add(1);
        };
        std::shared_ptr<const std::string> hit;
        switch (flights.Lookup(key, &hit, check)) {
          case Flights::Outcome::kHit:
            check(hit);
            break;
          case Flights::Outcome::kJoined:
            break;
          case Flights::Outcome::kLeader: {
            // The flight lasts until Publish/Abandon; no other leader may exist meanwhile.
            if (leading[key].fetch_add(1) != 0) overlaps.fetch_add(1);
            auto value = std::make_shared<const std::string>(std::to_string(key));
            std::this_thread::yield();
            leading[key].fetch_sub(1);
            answers.fetch_add(1);
            if (r % 5 == 0) {
              flights.Abandon(key);
            } else {
              flights.Publish(key, std::move(value), 8);
            }
            break;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(answers.load(), kThreads * kRounds);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
  const Flights::Stats stats = flights.stats();
  EXPECT_EQ(stats.hits + stats.joined + stats.leaders, static_cast<uint64_t>(kThreads * kRounds));
  EXPECT_LE(stats.bytes, flights.capacity_bytes());
}

}  // namespace
}  // namespace worldgen
