// Fuzz target: what the map viewer and the CLI read from a user, checked against what the renderer
// then relies on. The first byte picks the parser, the rest is its text:
//   0: a tile path (ParseTilePath): zoom in [kMinZoom, 0], tile indices within
//      kMaxTypedCoordinate, so a tile's block region cannot overflow; its layer as in 1.
//   1: a layer (ParseRenderLayer): if CheckRenderLayer accepts it for a world of biomes 2 and 5
//      (one splat texture), it names one of them or texture 0.
//   2: a region (ParseBlockRegion, scale 1 + the second byte): ordered, coordinates
//      within kMaxTypedCoordinate, at most kMaxRenderPixels pixels.
//   3: a slice (ParseSlice): its plane within kMaxTypedCoordinate.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "client/cli/render.h"
#include "client/viewer/map_viewer.h"
#include "worldgen/v1/worldgen.pb.h"

namespace {

using worldgen::cli::kMaxTypedCoordinate;

bool Typed(int64_t v) { return v >= -kMaxTypedCoordinate && v <= kMaxTypedCoordinate; }

const worldgen::v1::WorldDescription& TwoBiomes() {
  static const auto* world = [] {
    auto* w = new worldgen::v1::WorldDescription();
    w->mutable_config()->set_name("two");
    for (uint32_t id : {2u, 5u}) {
      w->mutable_config()->add_biomes()->set_id(id);
      w->add_splat_channel_biome_ids(id);
    }
    return w;
  }();
  return *world;
}

void CheckLayer(absl::string_view text) {
  using Kind = worldgen::cli::RenderLayer::Kind;
  absl::StatusOr<worldgen::cli::RenderLayer> layer = worldgen::cli::ParseRenderLayer(text);
  if (!layer.ok() || !worldgen::cli::CheckRenderLayer(*layer, TwoBiomes()).ok()) return;
  if (layer->kind == Kind::kWeight && layer->biome_id != 2 && layer->biome_id != 5) std::abort();
  if (layer->kind == Kind::kSplat && layer->texture != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      absl::StatusOr<worldgen::viewer::TileAddress> tile = worldgen::viewer::ParseTilePath(text);
      if (!tile.ok()) return 0;
      if (tile->zoom < worldgen::viewer::kMinZoom || tile->zoom > 0 || !Typed(tile->x) ||
          !Typed(tile->y)) {
        std::abort();
      }
      CheckLayer(tile->layer);
      return 0;
    }
    case 1:
      CheckLayer(text);
      return 0;
    case 2: {
      const int scale = 1 + data[1];
      absl::StatusOr<worldgen::cli::BlockRegion> region =
          worldgen::cli::ParseBlockRegion(text.substr(1), scale);
      if (!region.ok()) return 0;
      if (!Typed(region->min_x) || !Typed(region->min_z) || !Typed(region->max_x) ||
          !Typed(region->max_z) || region->min_x > region->max_x || region->min_z > region->max_z) {
        std::abort();
      }
      // In double: the sides' product may be past int64 (each is exact, the product near the
      // limit too).
      const double pixels = static_cast<double>((region->width() + scale - 1) / scale) *
                            static_cast<double>((region->height() + scale - 1) / scale);
      if (pixels > static_cast<double>(worldgen::cli::kMaxRenderPixels)) std::abort();
      return 0;
    }
    default: {
      absl::StatusOr<worldgen::cli::Slice> slice = worldgen::cli::ParseSlice(text);
      if (slice.ok() && !Typed(slice->at)) std::abort();
      return 0;
    }
  }
}
