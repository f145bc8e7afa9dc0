// The GenerateChunk replies ChunkFlights shares: one encoded ChunkData per (world, chunk, size,
// options), computed once however many calls ask for it at the same time, and kept in a bounded LRU
// of encoded chunks when --chunk_cache_bytes > 0.
//
// A key names everything a reply's bytes depend on: the World object (its uid, so two configs never
// share an entry), the chunk coordinates and size, every BlendOptions flag, and a 3D reply's range
// and cell size.
#ifndef WORLDGEN_SERVER_SERVICE_CHUNK_REPLY_FLIGHTS_H_
#define WORLDGEN_SERVER_SERVICE_CHUNK_REPLY_FLIGHTS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "engine/chunk.h"
#include "server/scheduling/chunk_flights.h"

namespace worldgen {

struct ChunkReplyKey {
  uint64_t world_uid = 0;
  int64_t x = 0, z = 0;
  int32_t size = 0;
  uint32_t options = 0;  // ChunkReplyOptionBits
  // A 3D reply's range and cell size (GenerateChunkRequest.vertical); cell 0 for a 2D reply.
  int64_t min_y = 0, max_y = 0;
  int32_t cell = 0;
  bool operator==(const ChunkReplyKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const ChunkReplyKey& key) {
    return H::combine(std::move(h), key.world_uid, key.x, key.z, key.size, key.options, key.min_y,
                      key.max_y, key.cell);
  }
};

// Every flag of BlendOptions, one bit each: a reply asked for with other options is another entry.
inline uint32_t ChunkReplyOptionBits(const BlendOptions& options) {
  static_assert(sizeof(BlendOptions) == 4,
                "BlendOptions changed: give the new option a bit here so cached replies differ");
  return (options.heights ? 1u : 0u) | (options.dominant_biome ? 2u : 0u) |
         (options.source_biome ? 4u : 0u) | (options.splat ? 8u : 0u);
}

using ChunkReplyFlights = ChunkFlights<ChunkReplyKey, std::string>;

// Bytes an entry is accounted for in the LRU: the encoded reply plus the key, list and index
// overhead.
inline size_t ChunkReplyEntryBytes(const std::string& encoded) { return encoded.size() + 160; }

}  // namespace worldgen

#endif  // WORLDGEN_SERVER_SERVICE_CHUNK_REPLY_FLIGHTS_H_
