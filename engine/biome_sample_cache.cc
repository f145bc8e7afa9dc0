#include "engine/biome_sample_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>

#include "engine/hash.h"

namespace worldgen {
namespace {

#if defined(__SANITIZE_ADDRESS__)
#define WORLDGEN_TILES_ON_THE_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORLDGEN_TILES_ON_THE_HEAP 1
#endif
#endif

// Where tiles live. Gathers visit a cache's tiles at random, a few per chunk or point, so with
// 4 KiB pages a large cache also misses the TLB on nearly every visit: with the whole heap on
// transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) BM_Point over 4,096 points'
// tiles (about 40 MB) ran 12% faster and a cached 3D chunk 7% (AMD EPYC, Zen 4). So tiles are cut
// from 2 MiB-aligned slabs that ask the kernel for huge pages (madvise(MADV_HUGEPAGE), best
// effort: THP's "madvise" mode, Debian's default, grants them), handed out in order so that a
// slab's pages are touched only as its tiles are used, and a freed tile is kept for the next.
// Slabs are never returned: the caches bound how many tiles exist at once. Under
// AddressSanitizer tiles come from the heap, so that a use after free stays detectable.
class TileSlabs {
 public:
  static TileSlabs& Get() {
    static TileSlabs* slabs = new TileSlabs();  // Never destroyed: tiles may outlive statics.
    return *slabs;
  }

  void* Allocate() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_ != nullptr) {
      FreeTile* tile = free_;
      free_ = tile->next;
      return tile;
    }
    if (left_ == 0) {
      void* slab = std::aligned_alloc(kSlabBytes, kSlabBytes);
      if (slab == nullptr) throw std::bad_alloc();
      madvise(slab, kSlabBytes, MADV_HUGEPAGE);  // Refused where THP is off: 4 KiB pages then.
      next_ = static_cast<char*>(slab);
      left_ = kSlabBytes / sizeof(BiomeTile);
    }
    void* tile = next_;
    next_ += sizeof(BiomeTile);
    --left_;
    return tile;
  }

  void Free(void* tile) {
    std::lock_guard<std::mutex> lock(mu_);
    free_ = new (tile) FreeTile{free_};
  }

 private:
  static constexpr size_t kSlabBytes = size_t{2} << 20;
  static_assert(sizeof(BiomeTile) <= kSlabBytes && sizeof(BiomeTile) % alignof(void*) == 0);
  struct FreeTile {
    FreeTile* next;
  };
  std::mutex mu_;
  FreeTile* free_ = nullptr;  // Freed tiles, most recent first.
  char* next_ = nullptr;      // The current slab's first unused tile, `left_` of them.
  size_t left_ = 0;
};

uint64_t HashKey(const BiomeTileKey& key) {
  const uint64_t packed = static_cast<uint64_t>(static_cast<uint32_t>(key.tile_i)) |
                          (static_cast<uint64_t>(static_cast<uint32_t>(key.tile_j)) << 32);
  // tile_k is 0 for every 2D tile, which then hashes as before.
  const uint64_t k = static_cast<uint64_t>(static_cast<uint32_t>(key.tile_k));
  return Mix64(packed ^ Mix64(key.world_uid ^ (k * 0x9e3779b97f4a7c15ULL)));
}

// A shard's lock, taken after a short spin. Holders keep it for one lookup and tile copy (about
// 100 ns), while a waiter that blocks at once sleeps in the kernel until the holder's unlock wakes
// it, microseconds on both threads (BM_Threads, cached, two threads: 7,867 context switches per
// run without the spin, 476 with it). std::mutex underneath, so ThreadSanitizer sees the lock.
class ShardLock {
 public:
  explicit ShardLock(std::mutex& mu) : mu_(mu) {
    for (int spin = 0; spin < kSpins; ++spin) {
      if (mu_.try_lock()) return;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    mu_.lock();
  }
  ~ShardLock() { mu_.unlock(); }
  ShardLock(const ShardLock&) = delete;
  ShardLock& operator=(const ShardLock&) = delete;

 private:
  static constexpr int kSpins = 32;
  std::mutex& mu_;
};

// Copies the samples of `vertices` from one 2D tile into another.
void CopyVertices(const BiomeTile& from, const TileMask& vertices, BiomeTile* to) {
  for (int w = 0; w < TileMask::kWords; ++w) {
    for (uint64_t bits = vertices.words[w]; bits != 0; bits &= bits - 1) {
      const int v = 64 * w + std::countr_zero(bits);
      to->xz[2 * v] = from.xz[2 * v];
      to->xz[2 * v + 1] = from.xz[2 * v + 1];
      to->biome[v] = from.biome[v];
    }
  }
}

}  // namespace

// One independently locked CLOCK cache: an open-addressing table (linear probing, backward-shift
// deletion, so no tombstones) whose slots hold the key, the tile and the referenced bit. The CLOCK
// hand sweeps the table's slots in index order.
class BiomeSampleCache::Shard {
 public:
  explicit Shard(size_t capacity_bytes)
      : max_entries_(capacity_bytes / kBytesPerEntry),
        max_slots_(max_entries_ == 0 ? 0 : std::bit_ceil(2 * max_entries_)),
        hint_count_(max_entries_ == 0 ? 0 : std::min(kMaxHints, std::bit_floor(max_entries_))),
        hints_(new Hint[hint_count_]) {}

  ~Shard() {
    for (Slot& slot : slots_) delete slot.tile;
  }

  std::mutex& mu() { return mu_; }

  // The cached tile for `key` (marked referenced), or null.
  const BiomeTile* FindLocked(const BiomeTileKey& key, uint64_t hash) {
    Slot* slot = Lookup(key, hash);
    if (slot == nullptr) return nullptr;
    if (!slot->referenced) slot->referenced = true;  // Written only when it changes.
    return slot->tile;
  }

  void CountLocked(bool hit) { ++(hit ? hits_ : misses_); }

  // The cached tile for `key`, or null. Counts nothing, marks nothing.
  const BiomeTile* TileLocked(const BiomeTileKey& key, uint64_t hash) {
    Slot* slot = Lookup(key, hash);
    return slot == nullptr ? nullptr : slot->tile;
  }

  // Adds the vertices `computed` holds (those in computed->filled) to the cached tile for `key`
  // and returns it, or null if there is none. Whichever of the two tiles has fewer vertices to
  // take from the other takes them: the cached tile, or `*computed`, which then takes its place
  // and is left with the cached tile's memory. Vertices both hold are kept as they are (they hold
  // the same samples).
  const BiomeTile* MergeLocked(const BiomeTileKey& key, uint64_t hash,
                               std::unique_ptr<BiomeTile>* computed) {
    Slot* slot = Lookup(key, hash);
    if (slot == nullptr) return nullptr;
    BiomeTile& cached = *slot->tile;
    const TileMask to_cached = (*computed)->filled.Without(cached.filled);
    const TileMask to_computed = cached.filled.Without((*computed)->filled);
    if (to_computed.Count() < to_cached.Count()) {
      CopyVertices(cached, to_computed, computed->get());
      (*computed)->filled |= cached.filled;
      BiomeTile* tile = computed->release();
      computed->reset(slot->tile);
      slot->tile = tile;
      Hint& hint = hints_[HintIndex(hash)];
      if (hint.tag.load(std::memory_order_relaxed) == hash)
        hint.tile.store(tile, std::memory_order_relaxed);
    } else {
      CopyVertices(**computed, to_cached, &cached);
      cached.filled |= (*computed)->filled;
    }
    return slot->tile;
  }

  // Starts loading the index slot where a lookup of `hash` begins, and returns where the tile of
  // `hash` was last stored, if the hints know (null otherwise). Takes no lock: the table's address
  // and the hints are atomics, and a stale answer only makes a prefetch useless.
  const BiomeTile* PrefetchSlotAndHint(uint64_t hash) const {
    const Slot* table = table_.load(std::memory_order_relaxed);
    if (table == nullptr) return nullptr;
    __builtin_prefetch(&table[hash & mask_copy_.load(std::memory_order_relaxed)]);
    const Hint& hint = hints_[HintIndex(hash)];
    if (hint.tag.load(std::memory_order_relaxed) != hash) return nullptr;
    return hint.tile.load(std::memory_order_relaxed);
  }

  // Stores the tile in `*computed` for `key`, which is not cached (MergeLocked just found none),
  // unless nothing can be stored, and returns the tile to read. Storing takes `*computed`'s memory
  // and leaves in it the memory of the evicted entry, if any (or null).
  const BiomeTile& InsertLocked(const BiomeTileKey& key, uint64_t hash,
                                std::unique_ptr<BiomeTile>* computed) {
    if (max_entries_ == 0) return **computed;
    BiomeTile* tile = computed->release();
    if (entries_ == max_entries_) {
      computed->reset(EvictOne());
    } else if (2 * (entries_ + 1) > slots_.size()) {
      Grow();
    }
    size_t s = hash & mask_;
    while (slots_[s].tile != nullptr) s = (s + 1) & mask_;
    slots_[s] = {key.world_uid, key.tile_i, key.tile_j, key.tile_k, false, tile};
    ++entries_;
    Hint& hint = hints_[HintIndex(hash)];
    hint.tag.store(hash, std::memory_order_relaxed);
    hint.tile.store(tile, std::memory_order_relaxed);
    return *tile;
  }

  void AddTo(Stats* stats) {
    std::lock_guard<std::mutex> lock(mu_);
    stats->hits += hits_;
    stats->misses += misses_;
    stats->evictions += evictions_;
    stats->bytes += entries_ * kBytesPerEntry;
    stats->entries += entries_;
  }

 private:
  // The key's fields are kept flat, so that the referenced bit takes what would be the key's
  // padding and a slot stays 32 bytes.
  struct Slot {
    uint64_t world_uid = 0;
    int32_t tile_i = 0, tile_j = 0, tile_k = 0;
    bool referenced = false;    // Found since the CLOCK hand last passed.
    BiomeTile* tile = nullptr;  // Owned; null marks an empty slot.
    BiomeTileKey key() const { return {world_uid, tile_i, tile_j, tile_k}; }
  };
  static_assert(sizeof(Slot) == 32, "kBytesPerEntry accounts 32-byte slots");

  // Where the tile of a key hash was stored, for prefetching without the lock: a direct-mapped
  // table of at most one hint per entry, written under the lock, read without it.
  struct Hint {
    std::atomic<uint64_t> tag{0};  // The key's hash; 0: none.
    std::atomic<const BiomeTile*> tile{nullptr};
  };
  static_assert(sizeof(Hint) == 16, "kBytesPerEntry accounts 16-byte hints");
  static constexpr size_t kMaxHints = size_t{1} << 12;
  size_t HintIndex(uint64_t hash) const { return (hash >> 16) & (hint_count_ - 1); }

  Slot* Lookup(const BiomeTileKey& key, uint64_t hash) {
    if (slots_.empty()) return nullptr;
    for (size_t s = hash & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.tile == nullptr) return nullptr;
      if (slot.key() == key) return &slot;
    }
  }

  // Removes the first unreferenced entry at or after the hand, clearing the referenced bits it
  // passes, and returns its tile's memory.
  BiomeTile* EvictOne() {
    for (;;) {
      const size_t s = hand_;
      hand_ = (hand_ + 1) & mask_;
      Slot& slot = slots_[s];
      if (slot.tile == nullptr) continue;
      if (slot.referenced) {
        slot.referenced = false;
        continue;
      }
      BiomeTile* tile = slot.tile;
      const uint64_t hash = HashKey(slot.key());
      Hint& hint = hints_[HintIndex(hash)];
      if (hint.tag.load(std::memory_order_relaxed) == hash)
        hint.tag.store(0, std::memory_order_relaxed);
      EraseAt(s);
      --entries_;
      ++evictions_;
      return tile;
    }
  }

  // Empties slot `s` and shifts back the entries after it that probed past it. An entry shifted
  // from just after the hand to before it waits one more sweep: CLOCK only approximates recency.
  void EraseAt(size_t hole) {
    for (size_t s = (hole + 1) & mask_; slots_[s].tile != nullptr; s = (s + 1) & mask_) {
      const size_t home = HashKey(slots_[s].key()) & mask_;
      if (((s - home) & mask_) >= ((s - hole) & mask_)) {
        slots_[hole] = slots_[s];
        hole = s;
      }
    }
    slots_[hole] = Slot{};
  }

  // Doubles the table (at most to max_slots_, where it stays at most half full).
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::min(max_slots_, std::max<size_t>(2, 2 * old.size())), Slot{});
    mask_ = slots_.size() - 1;
    hand_ = 0;
    table_.store(slots_.data(), std::memory_order_relaxed);
    mask_copy_.store(mask_, std::memory_order_relaxed);
    for (const Slot& slot : old) {
      if (slot.tile == nullptr) continue;
      size_t s = HashKey(slot.key()) & mask_;
      while (slots_[s].tile != nullptr) s = (s + 1) & mask_;
      slots_[s] = slot;
    }
  }

  const size_t max_entries_;
  const size_t max_slots_;
  const size_t hint_count_;  // A power of two (or 0 when nothing is stored).
  const std::unique_ptr<Hint[]> hints_;
  std::mutex mu_;  // std::mutex so ThreadSanitizer sees it. Guards everything below.
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t entries_ = 0;
  size_t hand_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
  // slots_.data() and mask_, for PrefetchSlot's reads without the lock.
  std::atomic<const Slot*> table_{nullptr};
  std::atomic<size_t> mask_copy_{0};
};

void* BiomeTile::operator new(size_t size) {
#ifdef WORLDGEN_TILES_ON_THE_HEAP
  return ::operator new(size);
#else
  (void)size;  // sizeof(BiomeTile): the struct is final.
  return TileSlabs::Get().Allocate();
#endif
}

void BiomeTile::operator delete(void* tile) noexcept {
#ifdef WORLDGEN_TILES_ON_THE_HEAP
  ::operator delete(tile);
#else
  if (tile != nullptr) TileSlabs::Get().Free(tile);
#endif
}

BiomeSampleCache::BiomeSampleCache(size_t capacity_bytes, int shards)
    : capacity_bytes_(capacity_bytes) {
  if (shards < 1) shards = 1;
  shards_.reserve(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    shards_.push_back(std::make_unique<Shard>(capacity_bytes / static_cast<size_t>(shards)));
  }
}

BiomeSampleCache::~BiomeSampleCache() = default;

BiomeSampleCache::Shard& BiomeSampleCache::ShardFor(uint64_t hash) {
  // The shard from the high bits, the slot from the low ones.
  return *shards_[(hash >> 40) % shards_.size()];
}

void BiomeSampleCache::Visit(const BiomeTileKey& key,
                             absl::FunctionRef<bool(const BiomeTile&)> visit,
                             absl::FunctionRef<TileMask()> need,
                             absl::FunctionRef<void(BiomeTile&, const TileMask&)> compute) {
  const uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  TileMask held;  // What the cached tile held when last looked at.
  {
    ShardLock lock(shard.mu());
    const BiomeTile* tile = shard.FindLocked(key, hash);
    const bool hit = tile != nullptr && visit(*tile);
    shard.CountLocked(hit);
    if (hit) return;
    if (tile != nullptr) held = tile->filled;
  }
  const TileMask needed = need();
  // This thread's scratch tile: a miss computes into it and storing swaps it for the evicted
  // entry's memory, so steady-state misses allocate nothing.
  thread_local std::unique_ptr<BiomeTile> scratch;
  for (;;) {
    if (scratch == nullptr) scratch = std::make_unique<BiomeTile>();
    // A tile's first miss computes what that visit reads; a later one the rest of the tile, which
    // is then read from more than one place. So where reads are far apart (a zoomed-out map),
    // each computes about what it reads, and where they are close, a tile costs two calls of the
    // source instead of one (BM_ColdPoints).
    scratch->filled = held.empty() ? needed : TileMask::All().Without(held);
    compute(*scratch, scratch->filled);
    ShardLock lock(shard.mu());
    if (const BiomeTile* tile = shard.MergeLocked(key, hash, &scratch)) {
      if (tile->filled.Covers(needed)) {
        visit(*tile);
        return;
      }
      held = tile->filled;  // Evicted and stored anew meanwhile, with other vertices: again.
      continue;
    }
    if (held.empty()) {  // The scratch tile holds all that is needed: store it.
      visit(shard.InsertLocked(key, hash, &scratch));
      return;
    }
    held = TileMask{};  // Evicted meanwhile, with vertices this visit needs: compute them all.
  }
}

void BiomeSampleCache::Visit(const BiomeTileKey& key, absl::FunctionRef<void(BiomeTile&)> compute,
                             absl::FunctionRef<void(const BiomeTile&)> visit) {
  Visit(
      key,
      [&](const BiomeTile& tile) {
        if (!tile.filled.Covers(TileMask::All())) return false;
        visit(tile);
        return true;
      },
      [] { return TileMask::All(); }, [&](BiomeTile& tile, const TileMask&) { compute(tile); });
}

void BiomeSampleCache::Prefetch(std::span<const BiomeTileKey> keys,
                                absl::FunctionRef<void(size_t, const BiomeTile*)> prefetch) {
  for (size_t k = 0; k < keys.size(); ++k) {
    const uint64_t hash = HashKey(keys[k]);
    if (const BiomeTile* tile = ShardFor(hash).PrefetchSlotAndHint(hash)) prefetch(k, tile);
  }
}

bool BiomeSampleCache::Contains(const BiomeTileKey& key) {
  const uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  ShardLock lock(shard.mu());
  return shard.TileLocked(key, hash) != nullptr;
}

BiomeSampleCache::Stats BiomeSampleCache::stats() const {
  Stats total;
  for (const auto& shard : shards_) shard->AddTo(&total);
  return total;
}

}  // namespace worldgen
