// ChunkView: one streamed chunk (worldgen.v1.ChunkData), validated and decoded for lookups.
//
//   absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(chunk_data));
//   float w = view->Weight(/*biome_id=*/3, /*local_x=*/5, /*local_z=*/9);
//   uint32_t top = view->DominantBiome(5, 9);
//
// The wire form is sparse: only biomes with a non-zero weight somewhere in the chunk appear, and a
// single-biome chunk carries one entry with an empty weights array (weight exactly 1.0 everywhere).
// ChunkView hides both: Weight() of an absent biome is 0, of the single biome 1.0.
//
// Local coordinates: column (lx, lz), 0 <= lx, lz < size(), is world column
// (origin_x() + lx, origin_z() + lz). Accessors do not bounds-check (like std::vector::operator[]);
// Decode() has checked that every array has the advertised size, and that a 3D chunk's sections
// all carry dominant and source biomes or none do. An optional array (heights, source biomes) is
// there if the request asked for it: has_heights(), has_source_biome(), has_cell_source_biome().
//
// 3D chunks (a request with a vertical range) carry sections instead of columns: is_volume() is
// true and the cell lookups below apply; the column lookups are for 2D chunks only. Cell
// (lx, ly, lz), 0 <= lx, lz < cells_per_side() and 0 <= ly < cell_rows(), counts ly from the
// range's bottom (section ly / (16 / cell_size()), row ly % (16 / cell_size())) and is blended at
// block (origin_x() + cell_size() * lx, min_y() + cell_size() * ly, origin_z() + cell_size() * lz);
// a block takes the weights of the cell it lies in (BlockWeight).
//
// Thread safety: immutable after Decode; all const methods are safe for concurrent use.
#ifndef WORLDGEN_CLIENT_CHUNK_VIEW_H_
#define WORLDGEN_CLIENT_CHUNK_VIEW_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "worldgen/v1/worldgen.pb.h"

namespace worldgen {

class ChunkView {
 public:
  // Checks the message against the contract in worldgen.proto: chunk_size > 0, biomes in strictly
  // ascending id order, each weights array empty (single_biome, exactly one biome) or
  // chunk_size^2 long, heights, dominant_biome and source_biome empty or chunk_size^2 long, every
  // splat texture chunk_size^2 * 4 bytes long. A 3D chunk: a cell size dividing 16 and chunk_size,
  // sections 16 blocks apart in ascending order, each checked as a 2D chunk is (per cell), and no
  // 2D fields.
  // DATA_LOSS names the first violation.
  static absl::StatusOr<ChunkView> Decode(v1::ChunkData data);

  int64_t chunk_x() const { return data_.coord().x(); }
  int64_t chunk_z() const { return data_.coord().z(); }
  int size() const { return size_; }
  // World coordinates of local column (0, 0).
  int64_t origin_x() const { return chunk_x() * size_; }
  int64_t origin_z() const { return chunk_z() * size_; }
  bool single_biome() const { return data_.single_biome(); }

  // Ids of the biomes present (non-zero somewhere), ascending.
  const std::vector<uint32_t>& biome_ids() const { return biome_ids_; }
  bool HasBiome(uint32_t biome_id) const;

  // Weight of `biome_id` at local column (lx, lz): 0 for a biome not present.
  float Weight(uint32_t biome_id, int local_x, int local_z) const;
  // All size()^2 weights of a present biome in the wire layout (weights[lz * size + lx]). Empty for
  // an absent biome and for the biome of a single-biome chunk (its weight is 1.0 everywhere).
  absl::Span<const float> Weights(uint32_t biome_id) const;

  // The same lookups by world column (x, z); the column must lie in this chunk (ContainsColumn).
  bool ContainsColumn(int64_t x, int64_t z) const {
    return x >= origin_x() && x < origin_x() + size_ && z >= origin_z() && z < origin_z() + size_;
  }
  float WeightAtColumn(uint32_t biome_id, int64_t x, int64_t z) const {
    return Weight(biome_id, static_cast<int>(x - origin_x()), static_cast<int>(z - origin_z()));
  }
  uint32_t DominantBiomeAtColumn(int64_t x, int64_t z) const {
    return DominantBiome(static_cast<int>(x - origin_x()), static_cast<int>(z - origin_z()));
  }

  // Heights, if the request asked for them.
  bool has_heights() const { return data_.heights_size() > 0; }
  float Height(int local_x, int local_z) const { return data_.heights(Index(local_x, local_z)); }

  // The biome source's unblended biome at (lx, lz) (the raw map), if the request asked for it.
  bool has_source_biome() const { return data_.source_biome_size() > 0; }
  uint32_t SourceBiome(int local_x, int local_z) const {
    return data_.source_biome(Index(local_x, local_z));
  }

  // Splat textures, if the request asked for them: texture t is size()^2 RGBA8 texels in the wire
  // layout; channel k of texture t is the weight of biome
  // WorldDescription.splat_channel_biome_ids[4t+k] as a byte, and the bytes of each column sum to
  // 255 over all textures.
  int splat_texture_count() const { return data_.splat_textures_size(); }
  const std::string& splat_texture(int t) const { return data_.splat_textures(t); }
  uint8_t SplatByte(int texture, int local_x, int local_z, int channel) const {
    return static_cast<uint8_t>(
        data_.splat_textures(texture)[Index(local_x, local_z) * 4 + channel]);
  }

  // Highest-weight biome at (lx, lz), ties to the lower id. Taken from the message if the request
  // asked for dominant_biome, else computed from the weights (same rule, same answer).
  uint32_t DominantBiome(int local_x, int local_z) const;

  // 3D chunks.
  bool is_volume() const { return data_.sections_size() > 0; }
  int cell_size() const { return static_cast<int>(data_.cell_size()); }
  int cells_per_side() const { return size_ / cell_size(); }
  int cell_rows() const { return data_.sections_size() * (16 / cell_size()); }
  int64_t min_y() const { return data_.sections(0).min_y(); }
  int64_t max_y() const { return min_y() + 16 * int64_t{data_.sections_size()}; }
  // Ids of the biomes present in section `s` (counted from the bottom), ascending.
  const std::vector<uint32_t>& section_biome_ids(int s) const { return section_ids_[s]; }
  // Ids of the biomes present in the section holding cell row ly, ascending.
  const std::vector<uint32_t>& CellBiomeIds(int ly) const {
    return section_biome_ids(CellIndex(0, ly, 0).first);
  }
  bool section_single_biome(int s) const { return data_.sections(s).single_biome(); }
  // Weight of `biome_id` in cell (lx, ly, lz): 0 for a biome absent from its section.
  float CellWeight(uint32_t biome_id, int lx, int ly, int lz) const;
  // Highest-weight biome of the cell, ties to the lower id (from the message if it was asked for).
  uint32_t CellDominantBiome(int lx, int ly, int lz) const;
  // The 3D map's unblended biome at the cell, if the request asked for source biomes.
  bool has_cell_source_biome() const {
    return is_volume() && data_.sections(0).source_biome_size() > 0;
  }
  uint32_t CellSourceBiome(int lx, int ly, int lz) const;
  bool ContainsBlock(int64_t x, int64_t y, int64_t z) const {
    return ContainsColumn(x, z) && y >= min_y() && y < max_y();
  }
  // The weight of the cell holding block (x, y, z) (ContainsBlock must hold).
  float BlockWeight(uint32_t biome_id, int64_t x, int64_t y, int64_t z) const {
    const int c = cell_size();
    return CellWeight(biome_id, static_cast<int>((x - origin_x()) / c),
                      static_cast<int>((y - min_y()) / c), static_cast<int>((z - origin_z()) / c));
  }

  // The message as received.
  const v1::ChunkData& proto() const { return data_; }

 private:
  explicit ChunkView(v1::ChunkData data);
  static absl::StatusOr<ChunkView> DecodeVolume(v1::ChunkData data);
  int Index(int local_x, int local_z) const { return local_z * size_ + local_x; }
  // Position of biome_id in data_.biomes(), or -1.
  int LayerIndex(uint32_t biome_id) const;
  // Section of cell row ly and the cell's index in it.
  std::pair<int, int> CellIndex(int lx, int ly, int lz) const;
  // Position of biome_id in section s's biomes, or -1.
  int SectionLayerIndex(int s, uint32_t biome_id) const;

  v1::ChunkData data_;
  int size_ = 0;
  std::vector<uint32_t> biome_ids_;
  std::vector<std::vector<uint32_t>> section_ids_;  // 3D chunks: per section.
};

}  // namespace worldgen

#endif  // WORLDGEN_CLIENT_CHUNK_VIEW_H_
