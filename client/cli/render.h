// `worldgen render`: a map image of a block region, one pixel per column, drawing one layer:
//
//   dominant   the dominant biome's colour, lit by ReliefLight (client/rgb_image.h) (default);
//   blend      the biome colours mixed by weight, unshaded: transitions show as gradients;
//   source     the biome source's unblended biome colour (the raw map the blender reads), unshaded;
//   height     grey, 150 x ReliefLight: relief and altitude;
//   weight:ID  grey = 255 * weight of biome ID (0 black, 1 white), unshaded.
//
// The image is (max_x - min_x + 1) x (max_z - min_z + 1) pixels, x to the right, z downwards.
#ifndef WORLDGEN_CLIENT_CLI_RENDER_H_
#define WORLDGEN_CLIENT_CLI_RENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/rgb_image.h"
#include "client/worldgen_client.h"

namespace worldgen::cli {

// Inclusive rectangle of block columns.
struct BlockRegion {
  int64_t min_x = 0;
  int64_t min_z = 0;
  int64_t max_x = 0;
  int64_t max_z = 0;
  int64_t width() const { return max_x - min_x + 1; }
  int64_t height() const { return max_z - min_z + 1; }
};

// Images are limited to this many pixels (a 8192 x 8192 map).
inline constexpr int64_t kMaxRenderPixels = int64_t{8192} * 8192;

// Parses "minx,minz,maxx,maxz" (integers, min <= max, at most kMaxRenderPixels columns).
absl::StatusOr<BlockRegion> ParseBlockRegion(absl::string_view text);

struct RenderLayer {
  enum class Kind { kDominant, kBlend, kSource, kHeight, kWeight };
  Kind kind = Kind::kDominant;
  uint32_t biome_id = 0;  // kWeight only.
};

// Parses a --layer value: "dominant", "blend", "source", "height" or "weight:ID" with ID a biome id
// (decimal). INVALID_ARGUMENT naming the value and the accepted forms otherwise.
absl::StatusOr<RenderLayer> ParseRenderLayer(absl::string_view text);

// OK, or INVALID_ARGUMENT if the layer names a biome id that `world`'s biome table lacks.
absl::Status CheckRenderLayer(const RenderLayer& layer, const v1::WorldDescription& world);

// Paints one layer of a region from chunks that arrive in any order. Not thread-safe.
class RegionPainter {
 public:
  RegionPainter(const v1::WorldDescription& world, const BlockRegion& region, RenderLayer layer);

  // The chunk fields the layer needs.
  ChunkRequestOptions ChunkOptions(int chunk_size) const;
  // Every chunk of `chunk_size` the image needs: those touching the region, plus the column to the
  // north-west of it that the shading of the top row and left column reads.
  std::vector<ChunkCoord> Chunks(int chunk_size) const;

  // Paints the chunk's columns that fall in the image (others are ignored). The chunk must carry
  // what ChunkOptions asked for.
  void Paint(const ChunkView& chunk);

  // The image; columns no chunk painted are black.
  RgbImage Finish() const;

 private:
  bool shaded() const;
  // Index into the painted window (the region plus one column north and west), or -1 if outside.
  int64_t WindowIndex(int64_t x, int64_t z) const;
  void SetColor(int64_t index, uint32_t biome_id);

  RenderLayer layer_;
  BlockRegion region_;
  int64_t window_width_ = 0, window_height_ = 0;
  absl::flat_hash_map<uint32_t, v1::Color> colors_;
  std::vector<float> heights_;  // Per window column, for the shaded layers.
  std::vector<uint8_t> rgb_;    // Per window column, for the other layers (3 bytes each).
};

// Fetches the chunks of `chunk_size` that RegionPainter asks for, in requests of at most the
// server's max_chunks_per_request, and paints them.
absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, const RenderLayer& layer,
                                      int chunk_size);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_RENDER_H_
