// `worldgen render` and the map viewer's tiles (client/viewer): a map image of a block region,
// drawing one layer:
//
//   dominant   the dominant biome's colour, lit by ReliefLight (client/rgb_image.h) (default);
//   blend      the biome colours mixed by weight, unshaded: transitions show as gradients;
//   source     the biome source's unblended biome colour (the raw map the blender reads), unshaded;
//   height     grey, 150 x ReliefLight: relief and altitude;
//   weight:ID  grey = 255 * weight of biome ID (0 black, 1 white), unshaded;
//   splat:T    the R, G and B channels of splat texture T (the weights of the biomes at positions
//              4T..4T+2 of WorldDescription.splat_channel_biome_ids; channel A is not drawn).
//
// Scale: at scale 1 one pixel is one column, blended a chunk at a time (GenerateChunk). At scale
// s > 1 one pixel stands for s x s columns and shows the one at its centre, (min + s*p + s/2)
// (integer division), blended as a point (SampleWeights): a sparse view of a large area, which
// costs one blend per pixel whatever s is. Columns are integers, so a pixel equals the column's
// value in a chunk bit for bit. Splat textures come only with chunks: splat:T needs scale 1.
//
// Shading is the same function of a column's height and its north-west neighbour's (one pixel
// away) wherever a region starts: altitude is measured against the world's height range (every
// biome's height_base +- height_amplitude), not the region's, so adjacent regions (the viewer's
// tiles) meet without seams.
//
// The image is ceil(width / s) x ceil(height / s) pixels, x to the right, z downwards.
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

// The largest magnitude of a coordinate typed by a user: a block coordinate of --region or --slice,
// a tile index of the map viewer. Far past any world's bound, and small enough that a tile index
// times a tile's span of blocks stays far inside int64.
inline constexpr int64_t kMaxTypedCoordinate = int64_t{1} << 40;

// Parses a decimal integer in [-kMaxTypedCoordinate, kMaxTypedCoordinate] into `*out`, else
// INVALID_ARGUMENT that quotes `text` after the prefix `what` and says whether it is not an integer
// or out of range.
absl::Status ParseTypedCoordinate(absl::string_view what, absl::string_view text, int64_t* out);

// Images are limited to this many pixels (a 8192 x 8192 map).
inline constexpr int64_t kMaxRenderPixels = int64_t{8192} * 8192;

// Largest scale (blocks per pixel) RenderRegion accepts.
inline constexpr int kMaxRenderScale = 1024;

// The largest scale at which RenderRegion draws `world` from chunks (blending every column of a
// pixel's square to show its centre one) rather than from point samples: 4, or 2 for the blenders
// whose point reads only a few cells (jittered cells, parameter Voronoi). Chunks and points give
// the same bytes; this is only the cheaper of the two (docs/performance.md, "Renders from chunks").
int MaxChunkRenderScale(const v1::WorldDescription& world);

// Parses "minx,minz,maxx,maxz" (integers, min <= max, at most kMaxRenderPixels pixels at `scale`
// columns per pixel side, scale in [1, kMaxRenderScale]).
absl::StatusOr<BlockRegion> ParseBlockRegion(absl::string_view text, int scale = 1);

struct RenderLayer {
  enum class Kind { kDominant, kBlend, kSource, kHeight, kWeight, kSplat };
  Kind kind = Kind::kDominant;
  uint32_t biome_id = 0;  // kWeight only.
  uint32_t texture = 0;   // kSplat only.
};

// Parses a --layer value: "dominant", "blend", "source", "height", "weight:ID" with ID a biome id
// or "splat:T" with T a texture index (decimal). INVALID_ARGUMENT naming the value and the accepted
// forms otherwise.
absl::StatusOr<RenderLayer> ParseRenderLayer(absl::string_view text);

// OK, or INVALID_ARGUMENT if the layer names a biome id that `world`'s biome table lacks or a splat
// texture past its last.
absl::Status CheckRenderLayer(const RenderLayer& layer, const v1::WorldDescription& world);

// Paints one layer of a region from chunks (scale 1) or point samples (any scale) that arrive in
// any order. Not thread-safe.
class RegionPainter {
 public:
  // `scale` in [1, kMaxRenderScale]. `flat`: no relief shading (a slice through the volume).
  RegionPainter(const v1::WorldDescription& world, const BlockRegion& region, RenderLayer layer,
                int scale = 1, bool flat = false);

  int width() const { return static_cast<int>(window_width_ - 1); }
  int height() const { return static_cast<int>(window_height_ - 1); }

  // The chunk fields the layer needs.
  ChunkRequestOptions ChunkOptions(int chunk_size) const;
  // Every chunk of `chunk_size` holding a column the image shows, plus the pixel to the north-west
  // that the shading of the top row and left column reads (unless it lies past the world's
  // coordinate bound: the edge is then shaded as if the world went on level).
  std::vector<ChunkCoord> Chunks(int chunk_size) const;
  // The same columns as points, row by row (the sampling past MaxChunkRenderScale).
  std::vector<std::pair<double, double>> Points() const;
  PointRequestOptions PointOptions() const;

  // Paints the chunk's columns that the image shows (others are ignored). The chunk must carry
  // what ChunkOptions asked for.
  void Paint(const ChunkView& chunk);
  // Paints the sample of column (x, z) if the image shows it (else ignored). It must carry what
  // PointOptions asked for. kSplat cannot be painted from samples (ignored).
  void Paint(int64_t x, int64_t z, const PointSample& sample);
  // Paints cell (lx, ly, lz) of a 3D chunk as the sample of column (x, z) of a flat painter (a
  // slice's plane), if the image shows it. The chunk must carry what ChunkOptions asked for.
  void PaintCell(int64_t x, int64_t z, const ChunkView& chunk, int lx, int ly, int lz);

  // The image; pixels nothing painted are black.
  RgbImage Finish() const;

 private:
  bool shaded() const;
  // The column window pixel p shows along x or z: its block's centre (for a last block cut short,
  // where the whole block would be), except where that lies past the world's bound: then every
  // block of the axis shows the column as far from its start as the last block holds.
  int64_t ColumnX(int64_t p) const { return region_.min_x + scale_ * (p - 1) + offset_x_; }
  int64_t ColumnZ(int64_t p) const { return region_.min_z + scale_ * (p - 1) + offset_z_; }
  // Index into the painted window (the image plus one pixel north and west) of the pixel showing
  // column (x, z), or -1 if no pixel shows it.
  int64_t WindowIndex(int64_t x, int64_t z) const;
  // The biome's colour (black for an id the world lacks).
  const v1::Color& ColorOf(uint32_t biome_id) const;
  void SetMix(int64_t index, const double (&rgb)[3]);
  // Paints the pixel at window `index` from a column's values (ChunkColumn or PointColumn in
  // render.cc): the one place a column becomes a pixel.
  template <typename Values>
  void PaintColumn(int64_t index, const Values& column);

  RenderLayer layer_;
  bool flat_ = false;
  BlockRegion region_;
  int scale_ = 1;
  int64_t window_width_ = 0, window_height_ = 0;
  int64_t offset_x_ = 0, offset_z_ = 0;  // Of the column shown in each block (ColumnX, ColumnZ).
  // The first window column and row blended: 0 when shading reads the pixel north-west of the
  // image, 1 when nothing does or it lies past the world's bound.
  int64_t first_x_ = 1, first_z_ = 1;
  float lowest_ = 0, highest_ = 0;  // The world's height range, for the shading.
  absl::flat_hash_map<uint32_t, v1::Color> colors_;
  std::vector<float> heights_;  // Per window pixel, for the shaded layers.
  std::vector<uint8_t> rgb_;    // Per window pixel, for the other layers (3 bytes each).
};

// The chunk size RenderRegion is given by default: large chunks mean fewer, bigger messages; 64,
// or the largest the server accepts if smaller.
int DefaultRenderChunkSize(const v1::WorldDescription& world);
// OK, or INVALID_ARGUMENT if `chunk_size` is not a power of two within the world's served range
// (ServerLimits): checked before a region is cut into chunks of it.
absl::Status CheckRenderChunkSize(const v1::WorldDescription& world, int chunk_size);
// OK, or INVALID_ARGUMENT for a splat layer at a scale past 1 (the textures are per column).
absl::Status CheckLayerScale(const RenderLayer& layer, int scale);

// A plane through the 3D world (`worldgen render --slice`): y = Y (horizontal: the region's columns
// at height Y), x = X or z = Z (vertical: the region names (z or x, y) instead, and the image has y
// upwards). Parsed from "y:Y", "x:X" or "z:Z" (integers within the world's bounds).
struct Slice {
  enum class Axis { kX, kY, kZ };
  Axis axis = Axis::kY;
  int64_t at = 0;
};
absl::StatusOr<Slice> ParseSlice(absl::string_view text);

// Renders `layer` of the slice's plane over `region` (minx,minz,maxx,maxz for y;
// minz,miny,maxz,maxy for x; minx,miny,maxx,maxy for z) at `scale` blocks per pixel: cave biomes
// blended in 3D, a world without them its columns' weights at every y. At scale 1 from the 3D
// chunks (16 x 16, cells of one block) holding the plane, whose cells are SampleWeights at their
// blocks bit for bit, in requests within the server's chunk, section and cell limits; at larger
// scales (or where those limits or world_y_bound leave no room for a 16-block section) from 3D
// point samples in requests of at most max_points_per_request. Unshaded; the height and splat
// layers are INVALID_ARGUMENT (they are per column).
absl::StatusOr<RgbImage> RenderSlice(Client& client, const v1::WorldDescription& world,
                                     const Slice& slice, const BlockRegion& region,
                                     const RenderLayer& layer, int scale);

// Renders `layer` of `region` at `scale` blocks per pixel: up to MaxChunkRenderScale from the
// chunks of `chunk_size` RegionPainter asks for, in requests of at most the server's
// max_chunks_per_request (each pixel shows the centre column of its square, bit for bit the point
// sample there); at larger scales from point samples, in requests of at most
// max_points_per_request.
// INVALID_ARGUMENT for a scale out of range, splat at a scale past 1, or a chunk size the server
// does not serve.
absl::StatusOr<RgbImage> RenderRegion(Client& client, const v1::WorldDescription& world,
                                      const BlockRegion& region, const RenderLayer& layer,
                                      int chunk_size, int scale = 1);

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_RENDER_H_
