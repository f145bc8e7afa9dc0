// The viewer's page, script, style and Leaflet (Debian's libjs-leaflet), compiled into the binary
// by embed_assets.cmake at build time, so `worldgen view` needs no files beside it.
#ifndef WORLDGEN_CLIENT_VIEWER_VIEWER_ASSETS_H_
#define WORLDGEN_CLIENT_VIEWER_VIEWER_ASSETS_H_

#include <cstddef>
#include <span>

namespace worldgen::viewer {

struct ViewerAsset {
  const char* path;  // URL path, e.g. "/index.html", "/leaflet/leaflet.js".
  const char* content_type;
  const unsigned char* data;
  size_t size;
};

std::span<const ViewerAsset> ViewerAssets();

}  // namespace worldgen::viewer

#endif  // WORLDGEN_CLIENT_VIEWER_VIEWER_ASSETS_H_
