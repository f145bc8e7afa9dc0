// ChunkFlights: concurrent requests for the same chunk are computed once (single-flight), and
// optionally the finished results are kept in a bounded LRU so repeats are served without blending.
//
// Many players standing in one place make a game server ask for the same chunks again and again,
// often at the same moment. A request looks its key up:
//   * kHit:    a cached result is returned at once;
//   * kJoined: another request is computing it; `on_ready` runs once that one Publishes (with the
//              value) or Abandons (with null: the joiner must compute it itself);
//   * kLeader: nobody is; the caller must compute it and then call Publish or Abandon exactly once.
// Waiting never blocks a thread: joiners are callbacks, so pool threads are never parked behind
// other tasks. Callbacks run on the publishing thread, outside the lock, in join order.
//
// Values are immutable and shared (shared_ptr<const Value>); `bytes` given to Publish is what the
// LRU accounts against its capacity (0 capacity: single-flight only, nothing is kept).
//
// Thread safety: all methods are safe for concurrent use. std::mutex (not absl::Mutex) so the TSan
// pass (scripts/tsan.sh) can check it: apt's Abseil is not instrumented.
#ifndef WORLDGEN_SERVER_SCHEDULING_CHUNK_FLIGHTS_H_
#define WORLDGEN_SERVER_SCHEDULING_CHUNK_FLIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"

namespace worldgen {

template <typename Key, typename Value>
class ChunkFlights {
 public:
  using Ready = absl::AnyInvocable<void(std::shared_ptr<const Value>) &&>;
  enum class Outcome { kHit, kJoined, kLeader };

  struct Stats {
    uint64_t hits = 0;     // Served from the LRU.
    uint64_t joined = 0;   // Waited for a computation already under way.
    uint64_t leaders = 0;  // Computed.
    uint64_t evictions = 0;
    uint64_t bytes = 0;  // Accounted bytes held by the LRU now.
    uint64_t entries = 0;
  };

  explicit ChunkFlights(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  ChunkFlights(const ChunkFlights&) = delete;
  ChunkFlights& operator=(const ChunkFlights&) = delete;

  // See the class comment. On kHit, *hit is set and `on_ready` is dropped; on kJoined it is kept
  // until the leader publishes or abandons; on kLeader it is dropped.
  Outcome Lookup(const Key& key, std::shared_ptr<const Value>* hit, Ready on_ready) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cached_.find(key); it != cached_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      *hit = it->second->value;
      ++stats_.hits;
      return Outcome::kHit;
    }
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      it->second.push_back(std::move(on_ready));
      ++stats_.joined;
      return Outcome::kJoined;
    }
    in_flight_.emplace(key, std::vector<Ready>());
    ++stats_.leaders;
    return Outcome::kLeader;
  }

  // The leader's result: handed to every joiner, and kept if it fits the capacity.
  void Publish(const Key& key, std::shared_ptr<const Value> value, size_t bytes) {
    std::vector<Ready> waiters = Land(key, value, bytes);
    for (Ready& ready : waiters) std::move(ready)(value);
  }

  // The leader gave up (cancelled, failed): every joiner is told with null.
  void Abandon(const Key& key) {
    std::vector<Ready> waiters = Land(key, nullptr, 0);
    for (Ready& ready : waiters) std::move(ready)(nullptr);
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    Stats s = stats_;
    s.bytes = bytes_;
    s.entries = cached_.size();
    return s;
  }
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  struct Entry {
    Key key;
    std::shared_ptr<const Value> value;
    size_t bytes;
  };

  // Ends the flight of `key` (which must be in flight), stores `value` if any and it fits, and
  // returns the joiners to call outside the lock.
  std::vector<Ready> Land(const Key& key, const std::shared_ptr<const Value>& value, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto flight = in_flight_.find(key);
    if (flight == in_flight_.end()) return {};
    std::vector<Ready> waiters = std::move(flight->second);
    in_flight_.erase(flight);
    if (value != nullptr && bytes <= capacity_bytes_ && !cached_.contains(key)) {
      lru_.push_front(Entry{key, value, bytes});
      cached_.emplace(key, lru_.begin());
      bytes_ += bytes;
      while (bytes_ > capacity_bytes_) {
        bytes_ -= lru_.back().bytes;
        cached_.erase(lru_.back().key);
        lru_.pop_back();
        ++stats_.evictions;
      }
    }
    return waiters;
  }

  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  // Guarded by mu_: everything below. Most recently used at the front.
  std::list<Entry> lru_;
  absl::flat_hash_map<Key, typename std::list<Entry>::iterator> cached_;
  absl::flat_hash_map<Key, std::vector<Ready>> in_flight_;
  size_t bytes_ = 0;
  Stats stats_;
};

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SCHEDULING_CHUNK_FLIGHTS_H_
