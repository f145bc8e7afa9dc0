#include "client/cli/render.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "absl/functional/function_ref.h"
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

constexpr absl::string_view kLayerForms = "dominant, blend, source, height, weight:ID or splat:T";

uint8_t ToByte(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); }

}  // namespace

absl::Status ParseTypedCoordinate(absl::string_view what, absl::string_view text, int64_t* out) {
  if (!absl::SimpleAtoi(text, out)) {
    return absl::InvalidArgumentError(absl::StrCat(what, "\"", text, "\" is not an integer"));
  }
  // Compared without std::abs, which overflows on INT64_MIN.
  if (*out < -kMaxTypedCoordinate || *out > kMaxTypedCoordinate) {
    return absl::InvalidArgumentError(absl::StrCat(what, "\"", text, "\" is out of [-2^40, 2^40]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BlockRegion> ParseBlockRegion(absl::string_view text, int scale) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  int64_t v[4];
  if (parts.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("--region wants minx,minz,maxx,maxz (4 integers), got \"", text, "\""));
  }
  for (int i = 0; i < 4; ++i) {
    if (absl::Status s = ParseTypedCoordinate("--region: ", parts[i], &v[i]); !s.ok()) return s;
  }
  BlockRegion region{v[0], v[1], v[2], v[3]};
  if (region.min_x > region.max_x || region.min_z > region.max_z) {
    return absl::InvalidArgumentError(
        absl::StrCat("--region: min must be <= max, got \"", text, "\""));
  }
  if (scale < 1 || scale > kMaxRenderScale) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--scale=%d is not in [1, %d] blocks per pixel", scale, kMaxRenderScale));
  }
  const int64_t width = (region.width() + scale - 1) / scale;
  const int64_t height = (region.height() + scale - 1) / scale;
  // Compared by division: sides of up to 2^41 columns make width * height overflow int64.
  if (width > kMaxRenderPixels / height) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--region: %d x %d columns at %d per pixel is %d x %d, more than %d pixels",
                        region.width(), region.height(), scale, width, height, kMaxRenderPixels));
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
  if (absl::ConsumePrefix(&text, "splat:")) {
    uint32_t t = 0;
    if (!absl::SimpleAtoi(text, &t) || text.empty() || !absl::ascii_isdigit(text[0])) {
      return absl::InvalidArgumentError(
          absl::StrCat("--layer=splat:", text, ": \"", text,
                       "\" is not a texture index (a non-negative integer)"));
    }
    return RenderLayer{.kind = Kind::kSplat, .texture = t};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--layer=", text, " is not a layer; use ", kLayerForms));
}

absl::Status CheckRenderLayer(const RenderLayer& layer, const v1::WorldDescription& world) {
  if (layer.kind == RenderLayer::Kind::kSplat) {
    const int textures = (world.splat_channel_biome_ids_size() + 3) / 4;
    // Compared unsigned: an index past INT_MAX must not become a negative int that passes.
    if (layer.texture < static_cast<uint32_t>(textures)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("--layer=splat:", layer.texture, ": world \"",
                                                   world.config().name(), "\" has ", textures,
                                                   " splat texture(s), numbered from 0"));
  }
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
                             RenderLayer layer, int scale, bool flat)
    : layer_(layer),
      flat_(flat),
      region_(region),
      scale_(std::clamp(scale, 1, kMaxRenderScale)),
      window_width_((region.width() + scale_ - 1) / scale_ + 1),
      window_height_((region.height() + scale_ - 1) / scale_ + 1) {
  const double bound = world.limits().world_coordinate_bound();
  // The centre, unless the last block is cut short at the world's positive edge, where its
  // centre may lie past the bound: then as far from each block's start as the last one allows.
  auto offset = [&](int64_t min, int64_t length, int64_t pixels) {
    const int64_t centre = scale_ / 2;
    const int64_t last = min + scale_ * (pixels - 2) + centre;
    if (bound <= 0 || static_cast<double>(last) < bound) return centre;
    return std::min<int64_t>(centre, (length - 1) % scale_);
  };
  offset_x_ = offset(region.min_x, region.width(), window_width_);
  offset_z_ = offset(region.min_z, region.height(), window_height_);
  bool first = true;
  for (const v1::BiomeConfig& biome : world.config().biomes()) {
    colors_[biome.id()] = biome.color();
    // The defaults of world_config.proto, for descriptions that leave them out.
    const double base = biome.has_height_base() ? biome.height_base() : 64.0;
    const double amplitude = biome.has_height_amplitude() ? biome.height_amplitude() : 8.0;
    const float low = static_cast<float>(base - amplitude);
    const float high = static_cast<float>(base + amplitude);
    lowest_ = first ? low : std::min(lowest_, low);
    highest_ = first ? high : std::max(highest_, high);
    first = false;
  }
  const size_t pixels = static_cast<size_t>(window_width_ * window_height_);
  if (shaded()) {
    heights_.assign(pixels, 0.0f);
    auto inside = [bound](int64_t column) {
      return bound <= 0 || static_cast<double>(column) >= -bound;
    };
    first_x_ = inside(ColumnX(0)) ? 0 : 1;
    first_z_ = inside(ColumnZ(0)) ? 0 : 1;
  }
  if (layer_.kind != RenderLayer::Kind::kHeight) rgb_.assign(pixels * 3, 0);
}

bool RegionPainter::shaded() const {
  if (flat_) return false;
  return layer_.kind == RenderLayer::Kind::kDominant || layer_.kind == RenderLayer::Kind::kHeight;
}

ChunkRequestOptions RegionPainter::ChunkOptions(int chunk_size) const {
  return {.chunk_size = chunk_size,
          .heights = shaded(),
          .dominant_biome = layer_.kind == RenderLayer::Kind::kDominant,
          .source_biome = layer_.kind == RenderLayer::Kind::kSource,
          .splat = layer_.kind == RenderLayer::Kind::kSplat};
}

PointRequestOptions RegionPainter::PointOptions() const {
  return {.heights = shaded(), .source_biome = layer_.kind == RenderLayer::Kind::kSource};
}

std::vector<ChunkCoord> RegionPainter::Chunks(int chunk_size) const {
  const int64_t n = chunk_size;
  const int64_t x0 = ColumnX(first_x_), z0 = ColumnZ(first_z_);
  const int64_t x1 = ColumnX(window_width_ - 1);
  const int64_t z1 = ColumnZ(window_height_ - 1);
  std::vector<ChunkCoord> chunks;
  for (int64_t cz = FloorDiv(z0, n); cz <= FloorDiv(z1, n); ++cz) {
    for (int64_t cx = FloorDiv(x0, n); cx <= FloorDiv(x1, n); ++cx) chunks.push_back({cx, cz});
  }
  return chunks;
}

std::vector<std::pair<double, double>> RegionPainter::Points() const {
  std::vector<std::pair<double, double>> points;
  points.reserve(static_cast<size_t>((window_width_ - first_x_) * (window_height_ - first_z_)));
  for (int64_t pz = first_z_; pz < window_height_; ++pz) {
    for (int64_t px = first_x_; px < window_width_; ++px) {
      points.emplace_back(static_cast<double>(ColumnX(px)), static_cast<double>(ColumnZ(pz)));
    }
  }
  return points;
}

int64_t RegionPainter::WindowIndex(int64_t x, int64_t z) const {
  const int64_t dx = x - ColumnX(0), dz = z - ColumnZ(0);
  if (dx < 0 || dz < 0 || dx % scale_ != 0 || dz % scale_ != 0) return -1;
  const int64_t px = dx / scale_, pz = dz / scale_;
  if (px >= window_width_ || pz >= window_height_) return -1;
  return pz * window_width_ + px;
}

namespace {

// What one column shows, read from a chunk (ChunkColumn) or a point sample (PointColumn): the one
// interface RegionPainter::PaintColumn draws from, so both paths paint the same bytes.
struct ChunkColumn {
  const ChunkView& chunk;
  int lx, lz;
  float height() const { return chunk.Height(lx, lz); }
  uint32_t dominant() const { return chunk.DominantBiome(lx, lz); }
  uint32_t source() const { return chunk.SourceBiome(lx, lz); }
  float Weight(uint32_t id) const { return chunk.Weight(id, lx, lz); }
  // fn(id, weight) for every biome of the chunk, ascending id.
  template <typename Fn>
  void ForEachWeight(Fn fn) const {
    for (uint32_t id : chunk.biome_ids()) fn(id, chunk.Weight(id, lx, lz));
  }
  // The RGBA texel of splat texture `t`, or null if the chunk has no such texture.
  const char* SplatTexel(uint32_t t) const {
    if (t >= static_cast<uint32_t>(chunk.splat_texture_count())) return nullptr;
    return chunk.splat_texture(static_cast<int>(t)).data() +
           (static_cast<size_t>(lz) * chunk.size() + lx) * 4;
  }
};

// A cell of a 3D chunk: its section's biomes (ascending id, zero in some cells).
struct CellColumn {
  const ChunkView& chunk;
  int lx, ly, lz;
  float height() const { return 0.0f; }  // Slices are flat.
  uint32_t dominant() const { return chunk.CellDominantBiome(lx, ly, lz); }
  uint32_t source() const { return chunk.CellSourceBiome(lx, ly, lz); }
  float Weight(uint32_t id) const { return chunk.CellWeight(id, lx, ly, lz); }
  template <typename Fn>
  void ForEachWeight(Fn fn) const {
    for (uint32_t id : chunk.CellBiomeIds(ly)) fn(id, chunk.CellWeight(id, lx, ly, lz));
  }
  const char* SplatTexel(uint32_t) const { return nullptr; }
};

struct PointColumn {
  const PointSample& sample;
  float height() const { return sample.height; }
  uint32_t dominant() const { return sample.dominant_biome; }
  uint32_t source() const { return sample.source_biome; }
  float Weight(uint32_t id) const {
    for (const PointSample::Weight& w : sample.weights) {
      if (w.biome_id == id) return w.weight;
    }
    return 0.0f;
  }
  // Non-zero weights only, ascending id (SampleWeights sorts them).
  template <typename Fn>
  void ForEachWeight(Fn fn) const {
    for (const PointSample::Weight& w : sample.weights) fn(w.biome_id, w.weight);
  }
  const char* SplatTexel(uint32_t) const { return nullptr; }  // Points carry no splat bytes.
};

}  // namespace

const v1::Color& RegionPainter::ColorOf(uint32_t biome_id) const {
  static const v1::Color kUnknown;
  auto it = colors_.find(biome_id);
  return it == colors_.end() ? kUnknown : it->second;
}

void RegionPainter::SetMix(int64_t index, const double (&rgb)[3]) {
  for (int k = 0; k < 3; ++k) rgb_[static_cast<size_t>(index) * 3 + k] = ToByte(rgb[k]);
}

template <typename Values>
void RegionPainter::PaintColumn(int64_t index, const Values& column) {
  if (shaded()) heights_[index] = column.height();
  switch (layer_.kind) {
    case RenderLayer::Kind::kDominant:
    case RenderLayer::Kind::kSource: {
      const v1::Color& c = ColorOf(layer_.kind == RenderLayer::Kind::kDominant ? column.dominant()
                                                                               : column.source());
      SetMix(index,
             {static_cast<double>(c.r()), static_cast<double>(c.g()), static_cast<double>(c.b())});
      break;
    }
    case RenderLayer::Kind::kBlend: {
      // Ascending biome id, double sums: the same bytes for the same weights.
      double rgb[3] = {0, 0, 0};
      column.ForEachWeight([&](uint32_t id, float weight) {
        if (weight == 0.0f) return;
        const double w = weight;
        const v1::Color& c = ColorOf(id);
        rgb[0] += w * c.r();
        rgb[1] += w * c.g();
        rgb[2] += w * c.b();
      });
      SetMix(index, rgb);
      break;
    }
    case RenderLayer::Kind::kWeight: {
      const double grey = 255.0 * column.Weight(layer_.biome_id);
      SetMix(index, {grey, grey, grey});
      break;
    }
    case RenderLayer::Kind::kSplat:
      if (const char* texel = column.SplatTexel(layer_.texture)) {
        for (int k = 0; k < 3; ++k) {
          rgb_[static_cast<size_t>(index) * 3 + k] = static_cast<uint8_t>(texel[k]);
        }
      }
      break;
    case RenderLayer::Kind::kHeight:
      break;
  }
}

void RegionPainter::Paint(const ChunkView& chunk) {
  for (int lz = 0; lz < chunk.size(); ++lz) {
    for (int lx = 0; lx < chunk.size(); ++lx) {
      const int64_t i = WindowIndex(chunk.origin_x() + lx, chunk.origin_z() + lz);
      if (i >= 0) PaintColumn(i, ChunkColumn{chunk, lx, lz});
    }
  }
}

void RegionPainter::Paint(int64_t x, int64_t z, const PointSample& sample) {
  const int64_t i = WindowIndex(x, z);
  if (i >= 0) PaintColumn(i, PointColumn{sample});
}

void RegionPainter::PaintCell(int64_t x, int64_t z, const ChunkView& chunk, int lx, int ly,
                              int lz) {
  const int64_t i = WindowIndex(x, z);
  if (i >= 0) PaintColumn(i, CellColumn{chunk, lx, ly, lz});
}

RgbImage RegionPainter::Finish() const {
  RgbImage image(width(), height());
  std::vector<float> light;
  if (shaded()) {
    // A window column or row not blended (past the world's bound) repeats its neighbour's
    // heights, in a copy made only then.
    std::vector<float> edged;
    if (first_x_ == 1 || first_z_ == 1) {
      edged = heights_;
      for (int64_t pz = 0; pz < window_height_ && first_x_ == 1; ++pz) {
        edged[pz * window_width_] = edged[pz * window_width_ + 1];
      }
      for (int64_t px = 0; px < window_width_ && first_z_ == 1; ++px) {
        edged[px] = edged[window_width_ + px];
      }
    }
    light = ReliefLight(edged.empty() ? heights_ : edged, image.width, image.height, lowest_,
                        highest_, static_cast<float>(scale_));
  }
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

namespace {

absl::Status CheckScale(int scale) {
  if (scale < 1 || scale > kMaxRenderScale) {
    return absl::InvalidArgumentError(
        absl::StrFormat("scale %d is not in [1, %d] blocks per pixel", scale, kMaxRenderScale));
  }
  return absl::OkStatus();
}

// Paints the painter's `cells` from point samples asked for in batches of at most the server's
// max_points_per_request: `sample(begin, count)` answers cells [begin, begin + count).
absl::Status PaintPoints(
    const v1::WorldDescription& world, const std::vector<std::pair<double, double>>& cells,
    absl::FunctionRef<absl::StatusOr<std::vector<PointSample>>(size_t begin, size_t count)> sample,
    RegionPainter* painter) {
  const size_t batch = std::max<size_t>(1, world.limits().max_points_per_request());
  for (size_t begin = 0; begin < cells.size(); begin += batch) {
    absl::StatusOr<std::vector<PointSample>> samples =
        sample(begin, std::min(batch, cells.size() - begin));
    if (!samples.ok()) return samples.status();
    for (size_t k = 0; k < samples->size(); ++k) {
      const auto& [a, b] = cells[begin + k];
      painter->Paint(static_cast<int64_t>(a), static_cast<int64_t>(b), (*samples)[k]);
    }
  }
  return absl::OkStatus();
}

// Asks for `chunks` in requests of at most `batch` chunks each, handing each chunk to `paint`.
absl::Status GenerateInBatches(Client& client, const std::vector<ChunkCoord>& chunks, size_t batch,
                               const ChunkRequestOptions& options,
                               const std::function<void(ChunkView)>& paint) {
  for (size_t begin = 0; begin < chunks.size(); begin += batch) {
    const size_t count = std::min(batch, chunks.size() - begin);
    absl::Status status =
        client.GenerateChunks(absl::MakeConstSpan(chunks.data() + begin, count), options, paint);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Paints a slice at one block per pixel from the 3D chunks holding its plane within `region`
// (RenderSlice's region: x and z for a y slice, across and y for an x or z slice), 16 x 16 with
// cells of one block: a chunk gathers the lattice once for all its cells, where a 3D point gathers
// a whole sphere of it for one (docs/performance.md, 3D biomes).
// Returns nullopt, having asked for nothing, when the server's limits leave no room for one such
// section per request or the sections would cross world_y_bound: the caller samples points.
std::optional<absl::Status> PaintSliceFromChunks(Client& client, const v1::WorldDescription& world,
                                                 const Slice& slice, const BlockRegion& region,
                                                 RegionPainter* painter) {
  constexpr int64_t kSize = 16, kSection = 16;
  const v1::ServerLimits& limits = world.limits();
  // Blocks of height one request's chunks may hold: whole sections, each chunk at most
  // max_cells_per_chunk cells (kSize^2 per block of height), at most max_sections_per_request.
  const int64_t rows = std::min<int64_t>(static_cast<int64_t>(limits.max_cells_per_chunk()) /
                                             (kSize * kSize) / kSection,
                                         limits.max_sections_per_request()) *
                       kSection;
  if (rows < kSection || kSize < limits.min_chunk_size() || kSize > limits.max_chunk_size()) {
    return std::nullopt;
  }
  // The plane's blocks: lo[a] <= v[a] <= hi[a] along x, y, z.
  int64_t lo[3] = {}, hi[3] = {};
  switch (slice.axis) {
    case Slice::Axis::kY:
      lo[0] = region.min_x, hi[0] = region.max_x, lo[1] = hi[1] = slice.at;
      lo[2] = region.min_z, hi[2] = region.max_z;
      break;
    case Slice::Axis::kX:
      lo[0] = hi[0] = slice.at, lo[1] = region.min_z, hi[1] = region.max_z;
      lo[2] = region.min_x, hi[2] = region.max_x;
      break;
    case Slice::Axis::kZ:
      lo[0] = region.min_x, hi[0] = region.max_x, lo[1] = region.min_z, hi[1] = region.max_z;
      lo[2] = hi[2] = slice.at;
      break;
  }
  const int64_t y0 = FloorDiv(lo[1], kSection) * kSection;
  const int64_t y1 = (FloorDiv(hi[1], kSection) + 1) * kSection;
  if (y0 < -limits.world_y_bound() || y1 > limits.world_y_bound()) return std::nullopt;
  std::vector<ChunkCoord> chunks;
  for (int64_t cz = FloorDiv(lo[2], kSize); cz <= FloorDiv(hi[2], kSize); ++cz) {
    for (int64_t cx = FloorDiv(lo[0], kSize); cx <= FloorDiv(hi[0], kSize); ++cx) {
      chunks.push_back({cx, cz});
    }
  }
  // The plane's cells in one chunk, painted at the painter's (across, down) coordinates.
  auto paint = [&](const ChunkView& chunk) {
    const int n = chunk.size(), ys = chunk.cell_rows();
    switch (slice.axis) {
      case Slice::Axis::kY: {
        const int ly = static_cast<int>(slice.at - chunk.min_y());
        if (ly < 0 || ly >= ys) return;
        for (int lz = 0; lz < n; ++lz) {
          for (int lx = 0; lx < n; ++lx) {
            painter->PaintCell(chunk.origin_x() + lx, chunk.origin_z() + lz, chunk, lx, ly, lz);
          }
        }
        return;
      }
      case Slice::Axis::kX:
      case Slice::Axis::kZ: {
        // The plane's cell k along the chunk's other horizontal axis, y upwards.
        const bool x_plane = slice.axis == Slice::Axis::kX;
        const int fixed =
            static_cast<int>(slice.at - (x_plane ? chunk.origin_x() : chunk.origin_z()));
        const int64_t along = x_plane ? chunk.origin_z() : chunk.origin_x();
        for (int ly = 0; ly < ys; ++ly) {
          for (int k = 0; k < n; ++k) {
            painter->PaintCell(along + k, -(chunk.min_y() + ly), chunk, x_plane ? fixed : k, ly,
                               x_plane ? k : fixed);
          }
        }
        return;
      }
    }
  };
  ChunkRequestOptions options = painter->ChunkOptions(static_cast<int>(kSize));
  for (int64_t bottom = y0; bottom < y1; bottom += rows) {
    const int64_t top = std::min(y1, bottom + rows);
    options.vertical = ChunkRequestOptions::Vertical{bottom, top, 1};
    const int64_t sections = (top - bottom) / kSection;
    const size_t batch = static_cast<size_t>(
        std::max<int64_t>(1, std::min<int64_t>(limits.max_chunks_per_request(),
                                               limits.max_sections_per_request() / sections)));
    if (absl::Status status = GenerateInBatches(client, chunks, batch, options, paint);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

int MaxChunkRenderScale(const v1::WorldDescription& world) {
  switch (world.config().blender()) {
    case v1::BLENDER_KIND_JITTERED_CELLS:
    case v1::BLENDER_KIND_PARAMETER_VORONOI:
      return 2;
    default:
      return 4;
  }
}

int DefaultRenderChunkSize(const v1::WorldDescription& world) {
  return static_cast<int>(std::min<uint32_t>(64, world.limits().max_chunk_size()));
}

absl::Status CheckRenderChunkSize(const v1::WorldDescription& world, int chunk_size) {
  const v1::ServerLimits& limits = world.limits();
  if (chunk_size > 0 && (chunk_size & (chunk_size - 1)) == 0 &&
      static_cast<uint32_t>(chunk_size) >= limits.min_chunk_size() &&
      static_cast<uint32_t>(chunk_size) <= limits.max_chunk_size()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("chunk size ", chunk_size, " is not a power of two the server serves (",
                   limits.min_chunk_size(), " to ", limits.max_chunk_size(), ")"));
}

absl::Status CheckLayerScale(const RenderLayer& layer, int scale) {
  if (layer.kind != RenderLayer::Kind::kSplat || scale == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "splat:%d is drawn from chunks' splat textures, at 1 block per pixel only (asked for %d)",
      layer.texture, scale));
}

absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, const RenderLayer& layer,
                                      int chunk_size, int scale) {
  if (absl::Status scale_ok = CheckScale(scale); !scale_ok.ok()) return scale_ok;
  if (absl::Status fits = CheckLayerScale(layer, scale); !fits.ok()) return fits;
  if (absl::Status served = CheckRenderChunkSize(world, chunk_size); !served.ok()) return served;
  RegionPainter painter(world, region, layer, scale);
  if (scale <= MaxChunkRenderScale(world)) {
    const std::vector<ChunkCoord> chunks = painter.Chunks(chunk_size);
    const size_t batch = std::max<size_t>(1, world.limits().max_chunks_per_request());
    absl::Status painted =
        GenerateInBatches(client, chunks, batch, painter.ChunkOptions(chunk_size),
                          [&](ChunkView chunk) { painter.Paint(chunk); });
    if (!painted.ok()) return painted;
    return painter.Finish();
  }
  const std::vector<std::pair<double, double>> points = painter.Points();
  const PointRequestOptions options = painter.PointOptions();
  absl::Status painted = PaintPoints(
      world, points,
      [&](size_t begin, size_t count) {
        return client.SamplePoints(absl::MakeConstSpan(points.data() + begin, count), options);
      },
      &painter);
  if (!painted.ok()) return painted;
  return painter.Finish();
}

absl::StatusOr<Slice> ParseSlice(absl::string_view text) {
  Slice slice;
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "x:")) {
    slice.axis = Slice::Axis::kX;
  } else if (absl::ConsumePrefix(&rest, "y:")) {
    slice.axis = Slice::Axis::kY;
  } else if (absl::ConsumePrefix(&rest, "z:")) {
    slice.axis = Slice::Axis::kZ;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--slice=", text, " is not a plane; use y:Y, x:X or z:Z"));
  }
  if (absl::Status s = ParseTypedCoordinate(absl::StrCat("--slice=", text, ": "), rest, &slice.at);
      !s.ok()) {
    return s;
  }
  return slice;
}

absl::StatusOr<RgbImage> RenderSlice(Client& client, const v1::WorldDescription& world,
                                     const Slice& slice, const BlockRegion& region,
                                     const RenderLayer& layer, int scale) {
  if (absl::Status scale_ok = CheckScale(scale); !scale_ok.ok()) return scale_ok;
  if (layer.kind == RenderLayer::Kind::kHeight || layer.kind == RenderLayer::Kind::kSplat) {
    return absl::InvalidArgumentError(
        "--slice draws weights, dominant or source biomes: heights and splat textures are per "
        "column");
  }
  // The painter's plane: across = image x, down = image y. A vertical slice has y upwards, so its
  // painter rows count -y.
  const bool vertical = slice.axis != Slice::Axis::kY;
  const BlockRegion plane =
      vertical ? BlockRegion{region.min_x, -region.max_z, region.max_x, -region.min_z} : region;
  RegionPainter painter(world, plane, layer, scale, /*flat=*/true);
  if (scale == 1) {
    std::optional<absl::Status> painted =
        PaintSliceFromChunks(client, world, slice, region, &painter);
    if (painted.has_value()) {
      if (!painted->ok()) return *painted;
      return painter.Finish();
    }
  }
  const std::vector<std::pair<double, double>> cells = painter.Points();
  std::vector<Point3> points;
  points.reserve(cells.size());
  const double at = static_cast<double>(slice.at);
  for (const auto& [a, b] : cells) {
    switch (slice.axis) {
      case Slice::Axis::kY:
        points.push_back({a, at, b});
        break;
      case Slice::Axis::kX:
        points.push_back({at, -b, a});
        break;
      case Slice::Axis::kZ:
        points.push_back({a, -b, at});
        break;
    }
  }
  const PointRequestOptions options = painter.PointOptions();
  absl::Status painted = PaintPoints(
      world, cells,
      [&](size_t begin, size_t count) {
        return client.SamplePoints3D(absl::MakeConstSpan(points.data() + begin, count), options);
      },
      &painter);
  if (!painted.ok()) return painted;
  return painter.Finish();
}

}  // namespace worldgen::cli
