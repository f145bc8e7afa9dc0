#include "engine/splat.h"

#include <algorithm>
#include <cmath>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"

namespace worldgen {

int SplatTextureCount(int biome_count) {
  return (biome_count + kSplatChannels - 1) / kSplatChannels;
}

int64_t SplatBytes(int biome_count, int size) {
  return int64_t{SplatTextureCount(biome_count)} * size * size * kSplatChannels;
}

absl::Status ValidateSplatSize(int biome_count, int size) {
  const int64_t bytes = SplatBytes(biome_count, size);
  if (bytes <= kMaxSplatBytesPerChunk) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("splat textures of %d biomes at chunk size %d would be %d textures x %d x %d "
                      "texels x 4 bytes "
                      "= %d bytes per chunk, over the limit of %d bytes; ask for smaller chunks",
                      biome_count, size, SplatTextureCount(biome_count), size, size, bytes,
                      kMaxSplatBytesPerChunk));
}

void QuantizeSplatWeights(std::span<const float> weights, std::span<uint8_t> out) {
  const size_t n = weights.size();
  double sum = 0.0;
  for (float w : weights) sum += static_cast<double>(w);
  absl::InlinedVector<double, 8> remainder(n);
  int assigned = 0;
  for (size_t i = 0; i < n; ++i) {
    const double scaled = 255.0 * static_cast<double>(weights[i]) / sum;
    const double whole = std::floor(scaled);
    out[i] = static_cast<uint8_t>(whole);
    remainder[i] = scaled - whole;
    assigned += static_cast<int>(whole);
  }
  // The scaled values sum to 255 up to rounding, so 0 <= missing <= n (each remainder is < 1).
  const size_t missing = static_cast<size_t>(std::clamp(255 - assigned, 0, static_cast<int>(n)));
  if (missing == 0) return;
  absl::InlinedVector<uint32_t, 8> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(missing),
                    order.end(), [&](uint32_t a, uint32_t b) {
                      return remainder[a] != remainder[b] ? remainder[a] > remainder[b] : a < b;
                    });
  for (size_t k = 0; k < missing; ++k) ++out[order[k]];
}

std::vector<std::vector<uint8_t>> SplatTextures(std::span<const IndexedLayer> layers,
                                                int biome_count, int size) {
  const size_t columns = static_cast<size_t>(size) * static_cast<size_t>(size);
  std::vector<std::vector<uint8_t>> textures(static_cast<size_t>(SplatTextureCount(biome_count)),
                                             std::vector<uint8_t>(columns * kSplatChannels, 0));
  absl::InlinedVector<float, 8> weights;
  absl::InlinedVector<int, 8> biomes;
  absl::InlinedVector<uint8_t, 8> bytes;
  for (size_t col = 0; col < columns; ++col) {
    weights.clear();
    biomes.clear();
    for (const IndexedLayer& layer : layers) {
      const float w = layer.weights[col];
      if (w == 0.0f) continue;
      weights.push_back(w);
      biomes.push_back(layer.biome);
    }
    bytes.resize(weights.size());
    QuantizeSplatWeights(std::span<const float>(weights.data(), weights.size()),
                         std::span<uint8_t>(bytes.data(), bytes.size()));
    for (size_t i = 0; i < biomes.size(); ++i) {
      const int d = biomes[i];
      textures[static_cast<size_t>(d / kSplatChannels)][col * kSplatChannels + d % kSplatChannels] =
          bytes[i];
    }
  }
  return textures;
}

}  // namespace worldgen
