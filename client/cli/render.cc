#include "client/cli/render.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/floor_div.h"

namespace worldgen::cli {
namespace {

constexpr absl::string_view kLayerForms = "dominant, blend, source, height or weight:ID";

uint8_t ToByte(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); }

}  // namespace

absl::StatusOr<BlockRegion> ParseBlockRegion(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  int64_t v[4];
  if (parts.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("--region wants minx,minz,maxx,maxz (4 integers), got \"", text, "\""));
  }
  for (int i = 0; i < 4; ++i) {
    if (!absl::SimpleAtoi(parts[i], &v[i]) || std::abs(v[i]) > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--region: \"", parts[i], "\" is not an integer"));
    }
  }
  BlockRegion region{v[0], v[1], v[2], v[3]};
  if (region.min_x > region.max_x || region.min_z > region.max_z) {
    return absl::InvalidArgumentError(
        absl::StrCat("--region: min must be <= max, got \"", text, "\""));
  }
  if (region.width() * region.height() > kMaxRenderPixels) {
    return absl::InvalidArgumentError(absl::StrFormat("--region: %d x %d is more than %d pixels",
                                                      region.width(), region.height(),
                                                      kMaxRenderPixels));
  }
  return region;
}

absl::StatusOr<RenderLayer> ParseRenderLayer(absl::string_view text) {
  using Kind = RenderLayer::Kind;
  if (text == "dominant") return RenderLayer{Kind::kDominant};
  if (text == "blend") return RenderLayer{Kind::kBlend};
  if (text == "source") return RenderLayer{Kind::kSource};
  if (text == "height") return RenderLayer{Kind::kHeight};
  if (absl::ConsumePrefix(&text, "weight:")) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(text, &id) || text.empty() || !absl::ascii_isdigit(text[0])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--layer=weight:", text, ": \"", text, "\" is not a biome id (a non-negative integer)"));
    }
    return RenderLayer{Kind::kWeight, id};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--layer=", text, " is not a layer; use ", kLayerForms));
}

absl::Status CheckRenderLayer(const RenderLayer& layer, const v1::WorldDescription& world) {
  if (layer.kind != RenderLayer::Kind::kWeight) return absl::OkStatus();
  std::vector<std::string> ids;
  for (const v1::BiomeConfig& biome : world.config().biomes()) {
    if (biome.id() == layer.biome_id) return absl::OkStatus();
    ids.push_back(absl::StrCat(biome.id()));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--layer=weight:", layer.biome_id, ": world \"", world.config().name(),
                   "\" has no biome ", layer.biome_id, "; its ids are ", absl::StrJoin(ids, ", ")));
}

RegionPainter::RegionPainter(const v1::WorldDescription& world, const BlockRegion& region,
                             RenderLayer layer)
    : layer_(layer),
      region_(region),
      window_width_(region.width() + 1),
      window_height_(region.height() + 1) {
  for (const v1::BiomeConfig& biome : world.config().biomes()) colors_[biome.id()] = biome.color();
  const size_t columns = static_cast<size_t>(window_width_ * window_height_);
  if (shaded()) heights_.assign(columns, 0.0f);
  if (layer_.kind != RenderLayer::Kind::kHeight) rgb_.assign(columns * 3, 0);
}

bool RegionPainter::shaded() const {
  return layer_.kind == RenderLayer::Kind::kDominant || layer_.kind == RenderLayer::Kind::kHeight;
}

ChunkRequestOptions RegionPainter::ChunkOptions(int chunk_size) const {
  return {.chunk_size = chunk_size,
          .heights = shaded(),
          .dominant_biome = layer_.kind == RenderLayer::Kind::kDominant,
          .source_biome = layer_.kind == RenderLayer::Kind::kSource};
}

std::vector<ChunkCoord> RegionPainter::Chunks(int chunk_size) const {
  const int64_t n = chunk_size;
  const int64_t x0 = shaded() ? region_.min_x - 1 : region_.min_x;
  const int64_t z0 = shaded() ? region_.min_z - 1 : region_.min_z;
  std::vector<ChunkCoord> chunks;
  for (int64_t cz = FloorDiv(z0, n); cz <= FloorDiv(region_.max_z, n); ++cz) {
    for (int64_t cx = FloorDiv(x0, n); cx <= FloorDiv(region_.max_x, n); ++cx) {
      chunks.push_back({cx, cz});
    }
  }
  return chunks;
}

int64_t RegionPainter::WindowIndex(int64_t x, int64_t z) const {
  const int64_t wx = x - (region_.min_x - 1), wz = z - (region_.min_z - 1);
  if (wx < 0 || wx >= window_width_ || wz < 0 || wz >= window_height_) return -1;
  return wz * window_width_ + wx;
}

void RegionPainter::SetColor(int64_t index, uint32_t biome_id) {
  v1::Color c;
  if (auto it = colors_.find(biome_id); it != colors_.end()) c = it->second;
  uint8_t* out = &rgb_[static_cast<size_t>(index) * 3];
  out[0] = ToByte(c.r());
  out[1] = ToByte(c.g());
  out[2] = ToByte(c.b());
}

void RegionPainter::Paint(const ChunkView& chunk) {
  for (int lz = 0; lz < chunk.size(); ++lz) {
    for (int lx = 0; lx < chunk.size(); ++lx) {
      const int64_t i = WindowIndex(chunk.origin_x() + lx, chunk.origin_z() + lz);
      if (i < 0) continue;
      if (shaded()) heights_[i] = chunk.Height(lx, lz);
      switch (layer_.kind) {
        case RenderLayer::Kind::kDominant:
          SetColor(i, chunk.DominantBiome(lx, lz));
          break;
        case RenderLayer::Kind::kSource:
          SetColor(i, chunk.SourceBiome(lx, lz));
          break;
        case RenderLayer::Kind::kBlend: {
          // Ascending biome id, double sums: the same bytes for the same weights.
          double rgb[3] = {0, 0, 0};
          for (uint32_t id : chunk.biome_ids()) {
            const double w = chunk.Weight(id, lx, lz);
            if (w == 0.0) continue;
            v1::Color c;
            if (auto it = colors_.find(id); it != colors_.end()) c = it->second;
            rgb[0] += w * c.r();
            rgb[1] += w * c.g();
            rgb[2] += w * c.b();
          }
          for (int k = 0; k < 3; ++k) rgb_[static_cast<size_t>(i) * 3 + k] = ToByte(rgb[k]);
          break;
        }
        case RenderLayer::Kind::kWeight: {
          const uint8_t grey = ToByte(255.0 * chunk.Weight(layer_.biome_id, lx, lz));
          for (int k = 0; k < 3; ++k) rgb_[static_cast<size_t>(i) * 3 + k] = grey;
          break;
        }
        case RenderLayer::Kind::kHeight:
          break;
      }
    }
  }
}

RgbImage RegionPainter::Finish() const {
  RgbImage image(static_cast<int>(region_.width()), static_cast<int>(region_.height()));
  std::vector<float> light;
  if (shaded()) light = ReliefLight(heights_, image.width, image.height);
  for (int py = 0; py < image.height; ++py) {
    for (int px = 0; px < image.width; ++px) {
      const size_t i = static_cast<size_t>((py + 1) * window_width_ + (px + 1));
      uint8_t* out = image.at(px, py);
      if (!shaded()) {
        std::copy_n(&rgb_[i * 3], 3, out);
        continue;
      }
      const float l = light[static_cast<size_t>(py) * image.width + px];
      if (layer_.kind == RenderLayer::Kind::kHeight) {
        std::fill_n(out, 3, ToByte(150.0 * l));
      } else {
        for (int k = 0; k < 3; ++k) out[k] = ToByte(rgb_[i * 3 + k] * l);
      }
    }
  }
  return image;
}

absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, const RenderLayer& layer,
                                      int chunk_size) {
  RegionPainter painter(world, region, layer);
  const std::vector<ChunkCoord> chunks = painter.Chunks(chunk_size);
  const size_t batch = std::max<size_t>(1, world.limits().max_chunks_per_request());
  const ChunkRequestOptions options = painter.ChunkOptions(chunk_size);
  for (size_t begin = 0; begin < chunks.size(); begin += batch) {
    const size_t count = std::min(batch, chunks.size() - begin);
    absl::Status status =
        client.GenerateChunks(absl::MakeConstSpan(chunks.data() + begin, count), options,
                              [&](ChunkView chunk) { painter.Paint(chunk); });
    if (!status.ok()) return status;
  }
  return painter.Finish();
}

}  // namespace worldgen::cli
