// MapViewer: `worldgen view`, a browser map of the worlds a worldgen server (or a load balancer in
// front of replicas) serves. An HTTP server (civetweb, Debian's libcivetweb, which prometheus-cpp
// already brings) that talks to the worldgen target over gRPC with worldgen::Client and serves:
//
//   GET /, /viewer.js, /viewer.css, /leaflet/...
//       the page (client/viewer/web/) and Leaflet (Debian's libjs-leaflet), every file compiled
//       into the binary: nothing comes from a CDN;
//   GET /api/worlds
//       {"target", "default", "worlds": [{"name", "version", "description"}]}: every world's
//       DescribeWorld (proto3 JSON, .proto field names) and its version, the server's
//       fingerprint of it (WorldDescription.fingerprint: its config and the engine's answers);
//   GET /api/sample?world=&x=&z=
//       SampleWeights of one point with heights and source biome (JSON);
//   GET /api/points?world=&min_x=&min_z=&max_x=&max_z=[&v=]
//       ListSamplingPoints of the box [min_x, max_x) x [min_z, max_z): {"blender", "points":
//       [[x, z, biome_id], ...]}, where the world's blender reads the biome map (the page's
//       "sampling points" overlay); 400 with the server's reason when the box holds too many;
//   GET /tiles/WORLD/LAYER/Z/X/Y.png
//       a 256 x 256 tile: `worldgen render` of one layer (client/cli/render.h, the same code) of
//       blocks [256 s X, 256 s (X + 1)) x [256 s Y, 256 s (Y + 1)) at s = 2^-Z blocks per pixel,
//       Z in [kMinZoom, 0]. Z = 0 blends every column as chunks; Z < 0 draws the column at each
//       pixel's centre, from chunks down to s = cli::MaxChunkRenderScale, else one point sample
//       per pixel.
//
// Caching: a tile's (and a points answer's) ETag is the world's version; with ?v=VERSION equal to
// the current one it is sent with Cache-Control immutable (the page puts the version in its URLs,
// so a changed world config, or a server that answers differently, changes every URL), else with
// no-cache. If-None-Match with the current ETag gets 304 without a blend. World descriptions are
// fetched again once older than describe_ttl.
//
// Load on the worldgen server: at most max_tile_renders tiles (or points answers) are made at once
// (the others wait their turn); each tile is one streaming call (or a few, of at most
// max_chunks_per_request chunks each) while drawn from chunks, else ceil(257^2 / max_points) point
// calls.
//
// Failures: when the worldgen server cannot be reached, tiles answer 503 with a striped error tile
// and the reason in X-Worldgen-Error (and Cache-Control: no-store), /api/* answer 503 with
// {"error": ...}; the page shows the reason and reloads its tiles once /api/worlds answers again.
// Bad paths or parameters answer 400 (or 404) naming what is wrong.
//
// Thread safety: civetweb's worker threads call the handlers concurrently; all state is guarded.
#ifndef WORLDGEN_CLIENT_VIEWER_MAP_VIEWER_H_
#define WORLDGEN_CLIENT_VIEWER_MAP_VIEWER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/worldgen_client.h"

namespace worldgen::viewer {

inline constexpr int kTilePixels = 256;
// The striped tile of a 503 (the server could not answer) is this many pixels a side, so the page,
// which cannot read an image's HTTP status, tells it from a tile and tries it again.
inline constexpr int kErrorTilePixels = 32;
// Zoom levels with tiles: 0 (one column per pixel) down to 1:256. The page zooms in further by
// enlarging Z = 0 tiles (up to 4 pixels per block).
inline constexpr int kMinZoom = -8;

struct ViewerOptions {
  // The worldgen server or load balancer (a gRPC target).
  std::string target = "127.0.0.1:50051";
  // Where to listen, civetweb's form: "127.0.0.1:8080" (port 0: any free port).
  std::string listen = "127.0.0.1:8080";
  // Tiles rendered at once (gRPC calls in flight towards the target, per tile one at a time).
  int max_tile_renders = 4;
  // HTTP worker threads (requests beyond them queue in civetweb).
  int http_threads = 16;
  // Deadline and retries of each gRPC call (short: a viewer should say "down" quickly).
  absl::Duration deadline = absl::Seconds(10);
  int max_retries = 1;
  // TLS towards the target (ClientOptions::tls); unset: plaintext.
  std::optional<ClientOptions::Tls> tls;
  // API key towards the target (ClientOptions::api_key); empty: none.
  std::string api_key;
  // Age after which a world's description is fetched again (a restarted server may have a new
  // config).
  absl::Duration describe_ttl = absl::Seconds(2);
};

// One HTTP answer.
struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// A parsed tile path.
struct TileAddress {
  std::string world;
  std::string layer;
  int zoom = 0;
  int64_t x = 0;
  int64_t y = 0;
  int scale() const { return 1 << -zoom; }
};

// Parses "/tiles/WORLD/LAYER/Z/X/Y.png"; INVALID_ARGUMENT naming the part that is wrong.
absl::StatusOr<TileAddress> ParseTilePath(absl::string_view path);

class MapViewer {
 public:
  // Starts listening; the gRPC target is contacted on the first request.
  static absl::StatusOr<std::unique_ptr<MapViewer>> Start(const ViewerOptions& options);
  ~MapViewer();  // Stops the HTTP server (waits for requests in progress).

  // The port it listens on.
  int port() const;

  // The handlers, without HTTP: what GET `path` (decoded, no query) with `query` (raw) and the
  // request's If-None-Match answers.
  HttpResponse Get(absl::string_view path, absl::string_view query,
                   absl::string_view if_none_match);

  // gRPC clients held, for worlds the server serves (the default included): per world one for
  // descriptions and samples, and one pinned to the version its tiles were last stamped with.
  int clients() const;

 private:
  struct State;
  explicit MapViewer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace worldgen::viewer

#endif  // WORLDGEN_CLIENT_VIEWER_MAP_VIEWER_H_
