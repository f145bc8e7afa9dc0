#include "client/chunk_view.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace worldgen {

absl::StatusOr<ChunkView> ChunkView::Decode(v1::ChunkData data) {
  const int64_t n = data.chunk_size();
  if (n <= 0 || n > 4096) {
    return absl::DataLossError(absl::StrFormat("chunk (%d, %d): chunk_size %d is out of range",
                                               data.coord().x(), data.coord().z(), n));
  }
  const int64_t columns = n * n;
  auto fail = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrFormat("chunk (%d, %d): %s", data.coord().x(), data.coord().z(), what));
  };
  if (data.biomes_size() == 0) return fail("no biomes");
  if (data.single_biome()) {
    if (data.biomes_size() != 1) {
      return fail(absl::StrFormat("single_biome with %d biome entries", data.biomes_size()));
    }
    if (data.biomes(0).weights_size() != 0) return fail("single_biome with a weights array");
  }
  for (int i = 0; i < data.biomes_size(); ++i) {
    const v1::BiomeWeights& layer = data.biomes(i);
    if (i > 0 && layer.biome_id() <= data.biomes(i - 1).biome_id()) {
      return fail("biome ids are not strictly ascending");
    }
    if (!data.single_biome() && layer.weights_size() != columns) {
      return fail(absl::StrFormat("biome %d has %d weights, want %d", layer.biome_id(),
                                  layer.weights_size(), columns));
    }
  }
  if (data.heights_size() != 0 && data.heights_size() != columns) {
    return fail(absl::StrFormat("%d heights, want %d", data.heights_size(), columns));
  }
  if (data.dominant_biome_size() != 0 && data.dominant_biome_size() != columns) {
    return fail(
        absl::StrFormat("%d dominant biome ids, want %d", data.dominant_biome_size(), columns));
  }
  if (data.source_biome_size() != 0 && data.source_biome_size() != columns) {
    return fail(absl::StrFormat("%d source biome ids, want %d", data.source_biome_size(), columns));
  }
  for (int t = 0; t < data.splat_textures_size(); ++t) {
    if (static_cast<int64_t>(data.splat_textures(t).size()) != columns * 4) {
      return fail(absl::StrFormat("splat texture %d has %d bytes, want %d", t,
                                  data.splat_textures(t).size(), columns * 4));
    }
  }
  return ChunkView(std::move(data));
}

ChunkView::ChunkView(v1::ChunkData data) : data_(std::move(data)), size_(data_.chunk_size()) {
  biome_ids_.reserve(data_.biomes_size());
  for (const v1::BiomeWeights& layer : data_.biomes()) biome_ids_.push_back(layer.biome_id());
}

int ChunkView::LayerIndex(uint32_t biome_id) const {
  auto it = std::lower_bound(biome_ids_.begin(), biome_ids_.end(), biome_id);
  if (it == biome_ids_.end() || *it != biome_id) return -1;
  return static_cast<int>(it - biome_ids_.begin());
}

bool ChunkView::HasBiome(uint32_t biome_id) const { return LayerIndex(biome_id) >= 0; }

float ChunkView::Weight(uint32_t biome_id, int local_x, int local_z) const {
  const int layer = LayerIndex(biome_id);
  if (layer < 0) return 0.0f;
  if (single_biome()) return 1.0f;
  return data_.biomes(layer).weights(Index(local_x, local_z));
}

absl::Span<const float> ChunkView::Weights(uint32_t biome_id) const {
  const int layer = LayerIndex(biome_id);
  if (layer < 0 || single_biome()) return {};
  const auto& weights = data_.biomes(layer).weights();
  return absl::MakeConstSpan(weights.data(), weights.size());
}

uint32_t ChunkView::DominantBiome(int local_x, int local_z) const {
  const int index = Index(local_x, local_z);
  if (data_.dominant_biome_size() > 0) return data_.dominant_biome(index);
  if (single_biome()) return biome_ids_[0];
  // Ascending ids and a strict comparison give ties to the lower id.
  uint32_t best_id = biome_ids_[0];
  float best = data_.biomes(0).weights(index);
  for (int i = 1; i < data_.biomes_size(); ++i) {
    const float w = data_.biomes(i).weights(index);
    if (w > best) {
      best = w;
      best_id = biome_ids_[i];
    }
  }
  return best_id;
}

}  // namespace worldgen
