#include "server/service/wire_encoding.h"

namespace worldgen {

namespace {

// True if the chunk is one biome at weight exactly 1.0 everywhere: flagged by the engine, or a lone
// layer (other biomes' samples were near but reached no column) whose weights are all 1.0f.
bool IsSingleBiome(const ChunkBlend& blend) {
  if (blend.single_biome) return true;
  if (blend.layers.size() != 1) return false;
  for (float w : blend.layers[0].weights) {
    if (w != 1.0f) return false;
  }
  return true;
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

int64_t MaxEncodedSampleBytes(int64_t points, int biome_count, const BlendOptions& options) {
  const int64_t weight = kFieldOverhead + (1 + kMaxVarint32) + (1 + 4);
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
  const bool single_biome = IsSingleBiome(blend);
  out->set_single_biome(single_biome);
  for (const BiomeLayer& layer : blend.layers) {
    v1::BiomeWeights* biome = out->add_biomes();
    biome->set_biome_id(layer.biome_id);
    if (!single_biome) biome->mutable_weights()->Add(layer.weights.begin(), layer.weights.end());
  }
  out->mutable_heights()->Add(blend.heights.begin(), blend.heights.end());
  out->mutable_dominant_biome()->Add(blend.dominant_biome.begin(), blend.dominant_biome.end());
  out->mutable_source_biome()->Add(blend.source_biome.begin(), blend.source_biome.end());
  for (const std::vector<uint8_t>& texture : blend.splat_textures) {
    out->add_splat_textures(reinterpret_cast<const char*>(texture.data()), texture.size());
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
