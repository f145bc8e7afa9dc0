#include "client/cli/render.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/floor_div.h"

namespace worldgen::cli {

absl::StatusOr<BlockRegion> ParseBlockRegion(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  int64_t v[4];
  if (parts.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("--region wants minx,minz,maxx,maxz (4 integers), got \"", text, "\""));
  }
  for (int i = 0; i < 4; ++i) {
    if (!absl::SimpleAtoi(parts[i], &v[i]) || std::abs(v[i]) > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(absl::StrCat("--region: \"", parts[i], "\" is not an integer"));
    }
  }
  BlockRegion region{v[0], v[1], v[2], v[3]};
  if (region.min_x > region.max_x || region.min_z > region.max_z) {
    return absl::InvalidArgumentError(absl::StrCat("--region: min must be <= max, got \"", text, "\""));
  }
  if (region.width() * region.height() > kMaxRenderPixels) {
    return absl::InvalidArgumentError(absl::StrFormat("--region: %d x %d is more than %d pixels",
                                                      region.width(), region.height(), kMaxRenderPixels));
  }
  return region;
}

absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, int chunk_size) {
  const int64_t n = chunk_size;
  // Columns painted plus one to the north-west whose height the shading needs.
  const int64_t x0 = region.min_x - 1, z0 = region.min_z - 1;
  const int64_t w = region.width() + 1, h = region.height() + 1;
  std::vector<float> heights(static_cast<size_t>(w * h), 0.0f);
  std::vector<uint32_t> dominant(static_cast<size_t>(w * h), 0);

  std::vector<ChunkCoord> chunks;
  for (int64_t cz = FloorDiv(z0, n); cz <= FloorDiv(region.max_z, n); ++cz) {
    for (int64_t cx = FloorDiv(x0, n); cx <= FloorDiv(region.max_x, n); ++cx) chunks.push_back({cx, cz});
  }
  const size_t batch = std::max<size_t>(1, world.limits().max_chunks_per_request());
  const ChunkRequestOptions options{.chunk_size = chunk_size, .heights = true, .dominant_biome = true};
  auto paint = [&](ChunkView chunk) {
    for (int lz = 0; lz < chunk.size(); ++lz) {
      const int64_t z = chunk.origin_z() + lz - z0;
      if (z < 0 || z >= h) continue;
      for (int lx = 0; lx < chunk.size(); ++lx) {
        const int64_t x = chunk.origin_x() + lx - x0;
        if (x < 0 || x >= w) continue;
        heights[z * w + x] = chunk.Height(lx, lz);
        dominant[z * w + x] = chunk.DominantBiome(lx, lz);
      }
    }
  };
  for (size_t begin = 0; begin < chunks.size(); begin += batch) {
    const size_t count = std::min(batch, chunks.size() - begin);
    absl::Status status =
        client.GenerateChunks(absl::MakeConstSpan(chunks.data() + begin, count), options, paint);
    if (!status.ok()) return status;
  }

  absl::flat_hash_map<uint32_t, v1::Color> colors;
  for (const v1::BiomeConfig& biome : world.config().biomes()) colors[biome.id()] = biome.color();
  const std::vector<float> light = ReliefLight(heights, static_cast<int>(region.width()),
                                               static_cast<int>(region.height()));
  RgbImage image(static_cast<int>(region.width()), static_cast<int>(region.height()));
  for (int py = 0; py < image.height; ++py) {
    for (int px = 0; px < image.width; ++px) {
      const float l = light[static_cast<size_t>(py) * image.width + px];
      v1::Color c;
      if (auto it = colors.find(dominant[(py + 1) * w + (px + 1)]); it != colors.end()) c = it->second;
      uint8_t* out = image.at(px, py);
      out[0] = static_cast<uint8_t>(std::clamp(c.r() * l, 0.0f, 255.0f));
      out[1] = static_cast<uint8_t>(std::clamp(c.g() * l, 0.0f, 255.0f));
      out[2] = static_cast<uint8_t>(std::clamp(c.b() * l, 0.0f, 255.0f));
    }
  }
  return image;
}

}  // namespace worldgen::cli
