// `worldgen render`: a map image of a block region, dominant biome colours shaded by blended heights.
#ifndef WORLDGEN_CLIENT_CLI_RENDER_H_
#define WORLDGEN_CLIENT_CLI_RENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/rgb_image.h"
#include "client/worldgen_client.h"

namespace worldgen::cli {

// Inclusive rectangle of block columns; the image is (max_x - min_x + 1) x (max_z - min_z + 1)
// pixels, x to the right, z downwards.
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

// Fetches every chunk of size `chunk_size` touching the region (plus one column to the north-west,
// for shading) in requests of at most the server's max_chunks_per_request, and paints each column
// with its dominant biome's colour from `world`, lit from the north-west by the height slope.
absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, int chunk_size);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_RENDER_H_
