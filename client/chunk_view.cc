#include "client/chunk_view.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace worldgen {

namespace {

// The sparse weights of one 2D chunk or one 3D section: `biomes` ascending, each weights array
// empty (single_biome, one biome) or `cells` long, `dominant` and `source` empty or `cells` long.
// The empty string, or what is wrong.
std::string CheckLayers(const google::protobuf::RepeatedPtrField<v1::BiomeWeights>& biomes,
                        bool single_biome, int64_t cells, int dominant, int source) {
  if (biomes.empty()) return "no biomes";
  if (single_biome) {
    if (biomes.size() != 1) {
      return absl::StrFormat("single_biome with %d biome entries", biomes.size());
    }
    if (biomes[0].weights_size() != 0) return "single_biome with a weights array";
  }
  for (int i = 0; i < biomes.size(); ++i) {
    if (i > 0 && biomes[i].biome_id() <= biomes[i - 1].biome_id()) {
      return "biome ids are not strictly ascending";
    }
    if (!single_biome && biomes[i].weights_size() != cells) {
      return absl::StrFormat("biome %d has %d weights, want %d", biomes[i].biome_id(),
                             biomes[i].weights_size(), cells);
    }
  }
  if (dominant != 0 && dominant != cells) {
    return absl::StrFormat("%d dominant biome ids, want %d", dominant, cells);
  }
  if (source != 0 && source != cells) {
    return absl::StrFormat("%d source biome ids, want %d", source, cells);
  }
  return "";
}

}  // namespace

absl::StatusOr<ChunkView> ChunkView::DecodeVolume(v1::ChunkData data) {
  const int64_t n = data.chunk_size();
  auto fail = [&](const std::string& what) {
    return absl::DataLossError(
        absl::StrFormat("chunk (%d, %d): %s", data.coord().x(), data.coord().z(), what));
  };
  const int64_t c = data.cell_size();
  if (c <= 0 || c > 16 || 16 % c != 0 || n % c != 0) {
    return fail(absl::StrFormat("cell_size %d does not divide 16 and chunk_size %d", c, n));
  }
  if (data.sections_size() == 0) return fail("a cell size without sections");
  if (data.biomes_size() != 0 || data.heights_size() != 0 || data.dominant_biome_size() != 0 ||
      data.source_biome_size() != 0 || data.splat_textures_size() != 0 || data.single_biome()) {
    return fail("a 3D chunk with 2D fields");
  }
  const int64_t cells = (n / c) * (n / c) * (16 / c);
  // max_y() = the first section's min_y + 16 per section must be an int64.
  if (data.sections(0).min_y() > std::numeric_limits<int64_t>::max() - 16 * data.sections_size()) {
    return fail(absl::StrFormat("%d sections from y %d pass the largest int64",
                                data.sections_size(), data.sections(0).min_y()));
  }
  const v1::ChunkSection& first = data.sections(0);
  for (int s = 0; s < data.sections_size(); ++s) {
    const v1::ChunkSection& section = data.sections(s);
    if (section.min_y() != first.min_y() + 16 * int64_t{s}) {
      return fail(absl::StrFormat("section %d at y %d does not follow y %d", s, section.min_y(),
                                  data.sections(s - 1).min_y()));
    }
    // Asked-for arrays are in every section or none: accessors take them per chunk.
    if ((section.dominant_biome_size() == 0) != (first.dominant_biome_size() == 0) ||
        (section.source_biome_size() == 0) != (first.source_biome_size() == 0)) {
      return fail(absl::StrFormat(
          "section at y %d and the lowest one disagree on which of dominant and source biomes "
          "they carry",
          section.min_y()));
    }
    const std::string error =
        CheckLayers(section.biomes(), section.single_biome(), cells, section.dominant_biome_size(),
                    section.source_biome_size());
    if (!error.empty()) return fail(absl::StrFormat("section at y %d: %s", section.min_y(), error));
  }
  return ChunkView(std::move(data));
}

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
  if (data.sections_size() > 0 || data.cell_size() != 0) return DecodeVolume(std::move(data));
  const std::string error = CheckLayers(data.biomes(), data.single_biome(), columns,
                                        data.dominant_biome_size(), data.source_biome_size());
  if (!error.empty()) return fail(error);
  if (data.heights_size() != 0 && data.heights_size() != columns) {
    return fail(absl::StrFormat("%d heights, want %d", data.heights_size(), columns));
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
  for (const v1::ChunkSection& section : data_.sections()) {
    std::vector<uint32_t>& ids = section_ids_.emplace_back();
    for (const v1::BiomeWeights& layer : section.biomes()) ids.push_back(layer.biome_id());
  }
}

std::pair<int, int> ChunkView::CellIndex(int lx, int ly, int lz) const {
  const int rows = 16 / cell_size(), m = cells_per_side();
  return {ly / rows, ((ly % rows) * m + lz) * m + lx};
}

int ChunkView::SectionLayerIndex(int s, uint32_t biome_id) const {
  const std::vector<uint32_t>& ids = section_ids_[static_cast<size_t>(s)];
  auto it = std::lower_bound(ids.begin(), ids.end(), biome_id);
  if (it == ids.end() || *it != biome_id) return -1;
  return static_cast<int>(it - ids.begin());
}

float ChunkView::CellWeight(uint32_t biome_id, int lx, int ly, int lz) const {
  const auto [s, at] = CellIndex(lx, ly, lz);
  const int layer = SectionLayerIndex(s, biome_id);
  if (layer < 0) return 0.0f;
  if (data_.sections(s).single_biome()) return 1.0f;
  return data_.sections(s).biomes(layer).weights(at);
}

uint32_t ChunkView::CellDominantBiome(int lx, int ly, int lz) const {
  const auto [s, at] = CellIndex(lx, ly, lz);
  const v1::ChunkSection& section = data_.sections(s);
  if (section.dominant_biome_size() > 0) return section.dominant_biome(at);
  if (section.single_biome()) return section.biomes(0).biome_id();
  // Ascending ids and a strict comparison give ties to the lower id.
  uint32_t best_id = section.biomes(0).biome_id();
  float best = section.biomes(0).weights(at);
  for (int i = 1; i < section.biomes_size(); ++i) {
    if (section.biomes(i).weights(at) > best) {
      best = section.biomes(i).weights(at);
      best_id = section.biomes(i).biome_id();
    }
  }
  return best_id;
}

uint32_t ChunkView::CellSourceBiome(int lx, int ly, int lz) const {
  const auto [s, at] = CellIndex(lx, ly, lz);
  return data_.sections(s).source_biome(at);
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
