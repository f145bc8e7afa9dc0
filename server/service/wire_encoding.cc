#include "server/service/wire_encoding.h"

#include <vector>

#include "engine/world_spec.h"

namespace worldgen {

namespace {

// True if the chunk is one biome at weight exactly 1.0 everywhere: flagged by the engine, or a lone
// layer (other biomes' samples were near but reached no column) whose weights are all 1.0f.
bool IsSingleBiome(bool flagged, const std::vector<BiomeLayer>& layers) {
  if (flagged) return true;
  if (layers.size() != 1) return false;
  for (float w : layers[0].weights) {
    if (w != 1.0f) return false;
  }
  return true;
}

// The layers as BiomeWeights, weights omitted when `single_biome`.
void EncodeLayers(const std::vector<BiomeLayer>& layers, bool single_biome,
                  google::protobuf::RepeatedPtrField<v1::BiomeWeights>* out) {
  for (const BiomeLayer& layer : layers) {
    v1::BiomeWeights* biome = out->Add();
    biome->set_biome_id(layer.biome_id);
    if (!single_biome) biome->mutable_weights()->Add(layer.weights.begin(), layer.weights.end());
  }
}

// Bytes of a tag plus a length prefix of a length-delimited field (both varints, length < 2^35).
constexpr int64_t kFieldOverhead = 1 + 5;
constexpr int64_t kMaxVarint32 = 5;
constexpr int64_t kMaxVarint64 = 10;

}  // namespace

int64_t MaxEncodedChunkBytes(int chunk_size, int biome_count, const BlendOptions& options) {
  const int64_t columns = int64_t{chunk_size} * chunk_size;
  const int64_t coord = kFieldOverhead + 2 * (1 + kMaxVarint64);
  const int64_t scalars = (1 + kMaxVarint32) + 2;  // chunk_size, single_biome
  const int64_t biome = kFieldOverhead + (1 + kMaxVarint32) + kFieldOverhead + 4 * columns;
  int64_t total = coord + scalars + biome_count * biome;
  if (options.heights) total += kFieldOverhead + 4 * columns;
  if (options.dominant_biome) total += kFieldOverhead + kMaxVarint32 * columns;
  if (options.source_biome) total += kFieldOverhead + kMaxVarint32 * columns;
  if (options.splat) {
    // One RGBA8 texture per four biomes, each its own length-delimited field.
    const int64_t textures = (int64_t{biome_count} + 3) / 4;
    total += textures * (kFieldOverhead + 4 * columns);
  }
  return total;
}

int64_t MaxEncodedVolumeBytes(int chunk_size, int cell, int64_t sections, int biome_count,
                              const BlendOptions& options) {
  const int64_t side = chunk_size / cell;
  const int64_t cells = side * side * (kSectionHeight / cell);
  const int64_t head = kFieldOverhead + 2 * (1 + kMaxVarint64) + 2 * (1 + kMaxVarint32);
  const int64_t biome = kFieldOverhead + (1 + kMaxVarint32) + kFieldOverhead + 4 * cells;
  int64_t section = kFieldOverhead + (1 + kMaxVarint64) + 2 + biome_count * biome;
  if (options.dominant_biome) section += kFieldOverhead + kMaxVarint32 * cells;
  if (options.source_biome) section += kFieldOverhead + kMaxVarint32 * cells;
  return head + sections * section;
}

int64_t MaxEncodedSampleBytes(int64_t points, int biome_count, const BlendOptions& options) {
  const int64_t weight = kFieldOverhead + (1 + kMaxVarint32) + (1 + 4);
  // The request's y is not echoed; a point's reply is the same with or without it.
  const int64_t point = kFieldOverhead + biome_count * weight + (options.heights ? 1 + 4 : 0) +
                        (options.source_biome ? 1 + kMaxVarint32 : 0) + (1 + kMaxVarint32);
  return points * point;
}

int64_t MaxEncodedSamplingPointsBytes(int64_t points) {
  const int64_t point = kFieldOverhead + 2 * (1 + 8) + (1 + kMaxVarint32);  // x, z, biome_id
  return points * point;
}

void EncodeChunk(const ChunkBlend& blend, v1::ChunkData* out) {
  out->mutable_coord()->set_x(blend.chunk_x);
  out->mutable_coord()->set_z(blend.chunk_z);
  out->set_chunk_size(static_cast<uint32_t>(blend.size));
  const bool single_biome = IsSingleBiome(blend.single_biome, blend.layers);
  out->set_single_biome(single_biome);
  EncodeLayers(blend.layers, single_biome, out->mutable_biomes());
  out->mutable_heights()->Add(blend.heights.begin(), blend.heights.end());
  out->mutable_dominant_biome()->Add(blend.dominant_biome.begin(), blend.dominant_biome.end());
  out->mutable_source_biome()->Add(blend.source_biome.begin(), blend.source_biome.end());
  for (const std::vector<uint8_t>& texture : blend.splat_textures) {
    out->add_splat_textures(reinterpret_cast<const char*>(texture.data()), texture.size());
  }
}

void EncodeVolume(const VolumeBlend& blend, v1::ChunkData* out) {
  out->mutable_coord()->set_x(blend.chunk_x);
  out->mutable_coord()->set_z(blend.chunk_z);
  out->set_chunk_size(static_cast<uint32_t>(blend.size));
  out->set_cell_size(static_cast<uint32_t>(blend.cell));
  out->mutable_sections()->Reserve(static_cast<int>(blend.sections.size()));
  for (const SectionBlend& section : blend.sections) {
    v1::ChunkSection* encoded = out->add_sections();
    encoded->set_min_y(section.min_y);
    const bool single_biome = IsSingleBiome(section.single_biome, section.layers);
    encoded->set_single_biome(single_biome);
    EncodeLayers(section.layers, single_biome, encoded->mutable_biomes());
    encoded->mutable_dominant_biome()->Add(section.dominant_biome.begin(),
                                           section.dominant_biome.end());
    encoded->mutable_source_biome()->Add(section.source_biome.begin(), section.source_biome.end());
  }
}

void EncodePoint(const PointBlend& blend, const BlendOptions& options, v1::PointWeights* out) {
  out->mutable_weights()->Reserve(static_cast<int>(blend.weights.size()));
  for (const BiomeWeight& weight : blend.weights) {
    v1::BiomeWeight* w = out->add_weights();
    w->set_biome_id(weight.biome_id);
    w->set_weight(weight.weight);
  }
  if (options.heights) out->set_height(blend.height);
  if (options.source_biome) out->set_source_biome(blend.source_biome);
  out->set_dominant_biome(blend.dominant_biome);
}

}  // namespace worldgen
