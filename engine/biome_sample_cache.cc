#include "engine/biome_sample_cache.h"

#include <list>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace worldgen {

template <typename H>
H AbslHashValue(H h, const BiomeTileKey& key) {
  return H::combine(std::move(h), key.world_uid, key.tile_i, key.tile_j);
}

// One independently locked LRU list. Most recently used at the front.
class BiomeSampleCache::Shard {
 public:
  explicit Shard(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  std::shared_ptr<const BiomeTile> Find(const BiomeTileKey& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  void Insert(const BiomeTileKey& key, std::shared_ptr<const BiomeTile> tile) {
    if (capacity_bytes_ < kBytesPerEntry) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.contains(key)) return;  // Another thread computed the same tile first.
    lru_.emplace_front(key, std::move(tile));
    index_.emplace(key, lru_.begin());
    bytes_ += kBytesPerEntry;
    while (bytes_ > capacity_bytes_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
      bytes_ -= kBytesPerEntry;
      ++evictions_;
    }
  }

  void AddTo(Stats* stats) const {
    std::lock_guard<std::mutex> lock(mu_);
    stats->hits += hits_;
    stats->misses += misses_;
    stats->evictions += evictions_;
    stats->bytes += bytes_;
    stats->entries += index_.size();
  }

 private:
  // Guarded by mu_: everything below.
  using Entry = std::pair<BiomeTileKey, std::shared_ptr<const BiomeTile>>;
  const size_t capacity_bytes_;
  mutable std::mutex mu_;  // std::mutex so ThreadSanitizer sees it.
  std::list<Entry> lru_;
  absl::flat_hash_map<BiomeTileKey, std::list<Entry>::iterator> index_;
  uint64_t bytes_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
};

BiomeSampleCache::BiomeSampleCache(size_t capacity_bytes, int shards)
    : capacity_bytes_(capacity_bytes) {
  if (shards < 1) shards = 1;
  shards_.reserve(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    shards_.push_back(std::make_unique<Shard>(capacity_bytes / static_cast<size_t>(shards)));
  }
}

BiomeSampleCache::~BiomeSampleCache() = default;

std::shared_ptr<const BiomeTile> BiomeSampleCache::GetOrCompute(
    const BiomeTileKey& key, absl::FunctionRef<void(BiomeTile&)> compute) {
  Shard& shard = *shards_[absl::HashOf(key) % shards_.size()];
  if (std::shared_ptr<const BiomeTile> found = shard.Find(key)) return found;
  auto tile = std::make_shared<BiomeTile>();
  compute(*tile);
  shard.Insert(key, tile);
  return tile;
}

BiomeSampleCache::Stats BiomeSampleCache::stats() const {
  Stats total;
  for (const auto& shard : shards_) shard->AddTo(&total);
  return total;
}

}  // namespace worldgen
