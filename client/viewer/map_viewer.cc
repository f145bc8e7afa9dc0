#include "client/viewer/map_viewer.h"

#include <CivetServer.h>
#include <civetweb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <semaphore>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/output.h"
#include "client/cli/render.h"
#include "client/rgb_image.h"
#include "client/viewer/viewer_assets.h"
#include "client/worldgen_client.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace worldgen::viewer {
namespace {

constexpr int kMaxTileRenders = 64;
// How long civetweb waits on a connection's reads and writes.
constexpr int kRequestTimeoutMs = 5000;

HttpResponse Text(int status, std::string message) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(message);
  response.body += "\n";
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

HttpResponse Json(int status, std::string json) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(json);
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

HttpResponse JsonError(int status, absl::string_view message) {
  return Json(status, absl::StrCat("{\"error\":", cli::JsonString(message), "}"));
}

// The HTTP status for a failed gRPC call: the server said the request is wrong (400, 404), or
// it could not answer (503).
int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    default:
      return 503;
  }
}

// A world's version: the server's fingerprint of it (its config and what the engine answers, so a
// server upgrade that changes the answers changes the version too). From a server older than
// fingerprints, FNV-1a over the config in deterministic wire form.
std::string VersionOf(const v1::WorldDescription& world) {
  if (!world.fingerprint().empty()) return world.fingerprint();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    world.config().SerializeToCodedStream(&coded);
  }
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return absl::StrFormat("%016x", hash);
}

// The value of `name` in a raw query string ("a=1&b=2"), URL-decoded; empty if absent.
std::string QueryValue(absl::string_view query, absl::string_view name) {
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first != name) continue;
    std::string raw(kv.second), decoded(raw.size() + 1, '\0');
    const int n = mg_url_decode(raw.c_str(), static_cast<int>(raw.size()), decoded.data(),
                                static_cast<int>(decoded.size()), /*is_form_url_encoded=*/1);
    decoded.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return decoded;
  }
  return "";
}

// Diagonal dark-red stripes: what a tile shows while the worldgen server cannot be reached.
std::string ErrorTilePng() {
  // Smaller than a tile (the page scales it up): the page tells it from a tile by its size.
  RgbImage image(kErrorTilePixels, kErrorTilePixels);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const bool stripe = ((x + y) / 2) % 2 == 0;
      uint8_t* p = image.at(x, y);
      p[0] = stripe ? 120 : 70;
      p[1] = p[2] = stripe ? 30 : 20;
    }
  }
  absl::StatusOr<std::string> png = EncodePng(image);
  return png.ok() ? *std::move(png) : std::string();
}

}  // namespace

absl::StatusOr<TileAddress> ParseTilePath(absl::string_view path) {
  const std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  // "", "tiles", world, layer, z, x, "y.png"
  if (parts.size() != 7 || !parts[0].empty() || parts[1] != "tiles" ||
      !absl::EndsWith(parts[6], ".png")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", path, "\" is not a tile path: /tiles/WORLD/LAYER/Z/X/Y.png"));
  }
  TileAddress tile;
  tile.world = std::string(parts[2]);
  tile.layer = std::string(parts[3]);
  absl::string_view y = parts[6];
  y.remove_suffix(4);
  if (!absl::SimpleAtoi(parts[4], &tile.zoom) || tile.zoom < kMinZoom || tile.zoom > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("zoom \"", parts[4], "\" is not an integer in [", kMinZoom, ", 0]"));
  }
  if (absl::Status s = cli::ParseTypedCoordinate("tile x ", parts[5], &tile.x); !s.ok()) return s;
  if (absl::Status s = cli::ParseTypedCoordinate("tile y ", y, &tile.y); !s.ok()) return s;
  return tile;
}

struct MapViewer::State {
  struct World {
    v1::WorldDescription description;
    std::string version;
    absl::Time fetched;
  };

  // Serves every GET and HEAD through MapViewer::Get; other methods get 405.
  class Handler : public CivetHandler {
   public:
    explicit Handler(MapViewer* viewer) : viewer_(viewer) {}
    bool handleGet(CivetServer*, mg_connection* conn) override { return Respond(conn, true); }
    bool handleHead(CivetServer*, mg_connection* conn) override { return Respond(conn, false); }
    bool handlePost(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
    bool handlePut(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
    bool handleDelete(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
    bool handlePatch(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }

   private:
    // GET's status and headers, and its body unless `body` is false (HEAD).
    bool Respond(mg_connection* conn, bool body) {
      const mg_request_info* request = mg_get_request_info(conn);
      const char* if_none_match = mg_get_header(conn, "If-None-Match");
      const HttpResponse response = viewer_->Get(request->local_uri ? request->local_uri : "/",
                                                 request->query_string ? request->query_string : "",
                                                 if_none_match ? if_none_match : "");
      mg_response_header_start(conn, response.status);
      // A 304 carries no content headers (RFC 9110, 15.4.5).
      if (response.status != 304) {
        mg_response_header_add(conn, "Content-Type", response.content_type.c_str(), -1);
        const std::string length = absl::StrCat(response.body.size());
        mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
      }
      for (const auto& [name, value] : response.headers) {
        mg_response_header_add(conn, name.c_str(), value.c_str(), -1);
      }
      mg_response_header_send(conn);
      if (body && !response.body.empty())
        mg_write(conn, response.body.data(), response.body.size());
      return true;
    }

    static bool NotAllowed(mg_connection* conn) {
      constexpr absl::string_view kBody = "the map viewer answers GET and HEAD only\n";
      mg_response_header_start(conn, 405);
      mg_response_header_add(conn, "Allow", "GET, HEAD", -1);
      mg_response_header_add(conn, "Content-Type", "text/plain; charset=utf-8", -1);
      const std::string length = absl::StrCat(kBody.size());
      mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
      mg_response_header_send(conn);
      mg_write(conn, kBody.data(), kBody.size());
      return true;
    }

    MapViewer* viewer_;
  };

  explicit State(const ViewerOptions& options)
      : options(options),
        renders(std::clamp(options.max_tile_renders, 1, kMaxTileRenders)),
        error_tile(ErrorTilePng()) {}

  // The client for `world` ("" = the server's default), made on first use. Names come from the
  // browser, so a client is made only for a world the server lists (NOT_FOUND otherwise): made-up
  // names must not pile up clients. With a `fingerprint`, every call pins it: a server serving
  // another version of the world refuses (FAILED_PRECONDITION) instead of answering for a response
  // stamped with this version. One pinned client per world, for its latest version; a render
  // still using the one it replaced keeps it alive.
  absl::StatusOr<std::shared_ptr<Client>> ClientFor(const std::string& world,
                                                    const std::string& fingerprint = "") {
    if (!world.empty()) {
      absl::StatusOr<World> first = Describe("");
      if (!first.ok()) return first.status();
      const auto& served = first->description.available_worlds();
      if (std::find(served.begin(), served.end(), world) == served.end()) {
        return absl::NotFoundError(absl::StrCat("world \"", world, "\" is not served by ",
                                                options.target, " (it serves ",
                                                absl::StrJoin(served, ", "), ")"));
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    WorldClient& slot = clients[{world, !fingerprint.empty()}];
    if (!slot.client || slot.fingerprint != fingerprint) {
      ClientOptions client_options;
      client_options.world = world;
      client_options.world_fingerprint = fingerprint;
      client_options.deadline = options.deadline;
      client_options.max_retries = options.max_retries;
      client_options.tls = options.tls;
      client_options.api_key = options.api_key;
      absl::StatusOr<std::unique_ptr<Client>> made =
          Client::Connect(options.target, client_options);
      if (!made.ok()) return made.status();
      slot = {fingerprint, *std::move(made)};
    }
    return slot.client;
  }

  // `world`'s description, fetched again once older than describe_ttl.
  absl::StatusOr<World> Describe(const std::string& world) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = worlds.find(world);
      if (it != worlds.end() && absl::Now() - it->second.fetched < options.describe_ttl) {
        return it->second;
      }
    }
    absl::StatusOr<std::shared_ptr<Client>> client = ClientFor(world);
    if (!client.ok()) return client.status();
    absl::StatusOr<v1::WorldDescription> description = (*client)->DescribeWorld();
    if (!description.ok()) return description.status();
    World fresh{*std::move(description), "", absl::Now()};
    fresh.version = VersionOf(fresh.description);
    std::lock_guard<std::mutex> lock(mu);
    worlds[world] = fresh;
    return fresh;
  }

  HttpResponse Worlds() {
    absl::StatusOr<World> first = Describe("");
    if (!first.ok()) return JsonError(HttpStatusOf(first.status()), first.status().ToString());
    std::string json = absl::StrCat(
        "{\"target\":", cli::JsonString(options.target),
        ",\"default\":", cli::JsonString(first->description.config().name()), ",\"worlds\":[");
    bool comma = false;
    for (const std::string& name : first->description.available_worlds()) {
      absl::StatusOr<World> world = Describe(name);
      if (!world.ok()) return JsonError(HttpStatusOf(world.status()), world.status().ToString());
      absl::StatusOr<std::string> description = cli::ToJson(world->description);
      if (!description.ok()) return JsonError(500, description.status().ToString());
      absl::StrAppend(&json, comma ? "," : "", "{\"name\":", cli::JsonString(name),
                      ",\"version\":\"", world->version, "\",\"description\":", *description, "}");
      comma = true;
    }
    absl::StrAppend(&json, "]}");
    return Json(200, std::move(json));
  }

  HttpResponse Sample(absl::string_view query) {
    const std::string world = QueryValue(query, "world");
    double x = 0, z = 0;
    if (!absl::SimpleAtod(QueryValue(query, "x"), &x) ||
        !absl::SimpleAtod(QueryValue(query, "z"), &z) || !std::isfinite(x) || !std::isfinite(z)) {
      return JsonError(400, "sample wants ?world=NAME&x=X&z=Z with numbers X and Z");
    }
    absl::StatusOr<std::shared_ptr<Client>> client = ClientFor(world);
    if (!client.ok()) return JsonError(HttpStatusOf(client.status()), client.status().ToString());
    v1::SampleWeightsRequest request;
    v1::Point* point = request.add_points();
    point->set_x(x);
    point->set_z(z);
    request.set_include_heights(true);
    request.set_include_source_biome(true);
    absl::StatusOr<v1::SampleWeightsResponse> response = (*client)->SampleWeights(request);
    if (!response.ok()) {
      return JsonError(HttpStatusOf(response.status()), response.status().ToString());
    }
    absl::StatusOr<std::string> json = cli::ToJson(*response);
    if (!json.ok()) return JsonError(500, json.status().ToString());
    return Json(200, *std::move(json));
  }

  // The blender's sampling points in a box, as {"blender", "points": [[x, z, biome_id], ...]}:
  // compact, for an overlay that may hold tens of thousands. Cached like tiles (the points change
  // only with the world's config).
  HttpResponse SamplingPoints(absl::string_view query, absl::string_view if_none_match) {
    const std::string world_name = QueryValue(query, "world");
    v1::ListSamplingPointsRequest request;
    request.set_world(world_name);
    double box[4];
    const char* const names[4] = {"min_x", "min_z", "max_x", "max_z"};
    for (int k = 0; k < 4; ++k) {
      if (!absl::SimpleAtod(QueryValue(query, names[k]), &box[k]) || !std::isfinite(box[k])) {
        return JsonError(400, "points wants ?world=NAME&min_x=&min_z=&max_x=&max_z= with numbers");
      }
    }
    request.set_min_x(box[0]);
    request.set_min_z(box[1]);
    request.set_max_x(box[2]);
    request.set_max_z(box[3]);
    absl::StatusOr<World> world = Describe(world_name);
    if (!world.ok()) return JsonError(HttpStatusOf(world.status()), world.status().ToString());
    HttpResponse response = Versioned(*world, query, if_none_match);
    if (response.status == 304) return response;
    absl::StatusOr<std::shared_ptr<Client>> client =
        ClientFor(world_name, world->description.fingerprint());
    if (!client.ok()) return JsonError(503, client.status().ToString());
    absl::StatusOr<v1::ListSamplingPointsResponse> points;
    {
      renders.acquire();
      points = (*client)->ListSamplingPoints(request);
      renders.release();
    }
    if (!points.ok()) {
      ForgetIfChanged(world_name, points.status());
      return JsonError(HttpStatusOf(points.status()), points.status().ToString());
    }
    std::string json = absl::StrCat("{\"blender\":", cli::JsonString(world->description.blender()),
                                    ",\"points\":[");
    for (int n = 0; n < points->points_size(); ++n) {
      const v1::SamplingPoint& p = points->points(n);
      absl::StrAppendFormat(&json, "%s[%.17g,%.17g,%u]", n > 0 ? "," : "", p.x(), p.z(),
                            p.biome_id());
    }
    json += "]}";
    response.content_type = "application/json";
    response.body = std::move(json);
    return response;
  }

  // A response whose content changes only with `world`'s version (VersionOf): the version is its
  // ETag, and it may be cached for good when the request names the current version (?v=, as the
  // page does), else revalidated. Status 304, no body, when If-None-Match holds that ETag already.
  static HttpResponse Versioned(const World& world, absl::string_view query,
                                absl::string_view if_none_match) {
    HttpResponse response;
    const std::string etag = absl::StrCat("\"", world.version, "\"");
    const bool current = QueryValue(query, "v") == world.version;
    response.headers = {
        {"ETag", etag},
        {"Cache-Control", current ? "public, max-age=31536000, immutable" : "no-cache"}};
    if (EtagListed(if_none_match, etag)) response.status = 304;
    return response;
  }

  // Whether an If-None-Match header (a list of entity tags, or *) holds `etag`, compared weakly as
  // RFC 9110 (13.1.2) asks: W/"v" matches "v".
  static bool EtagListed(absl::string_view if_none_match, absl::string_view etag) {
    for (absl::string_view tag : absl::StrSplit(if_none_match, ',')) {
      tag = absl::StripAsciiWhitespace(tag);
      absl::ConsumePrefix(&tag, "W/");
      if (tag == "*" || tag == etag) return true;
    }
    return false;
  }

  HttpResponse Unavailable(const absl::Status& status) {
    HttpResponse response;
    response.status = 503;
    response.content_type = "image/png";
    response.body = error_tile;
    // Header values are one line.
    std::string reason = status.ToString();
    std::replace_if(
        reason.begin(), reason.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
    response.headers.emplace_back("X-Worldgen-Error", reason);
    response.headers.emplace_back("Cache-Control", "no-store");
    return response;
  }

  // After a pinned call failed because the server now serves another version of `world` (a
  // rollout or a config change), the next request describes it again.
  void ForgetIfChanged(const std::string& world, const absl::Status& status) {
    if (status.code() != absl::StatusCode::kFailedPrecondition) return;
    std::lock_guard<std::mutex> lock(mu);
    worlds.erase(world);
  }

  // A failed gRPC call's tile: the error tile when the server could not answer, else its message.
  HttpResponse TileFailure(const absl::Status& status) {
    const int http_status = HttpStatusOf(status);
    return http_status == 503 ? Unavailable(status) : Text(http_status, status.ToString());
  }

  HttpResponse Tile(absl::string_view path, absl::string_view query,
                    absl::string_view if_none_match) {
    absl::StatusOr<TileAddress> tile = ParseTilePath(path);
    if (!tile.ok()) return Text(400, std::string(tile.status().message()));
    // A malformed layer is the request's fault whether or not the server answers.
    absl::StatusOr<cli::RenderLayer> layer = cli::ParseRenderLayer(tile->layer);
    if (!layer.ok()) return Text(400, std::string(layer.status().message()));
    absl::StatusOr<World> world = Describe(tile->world);
    if (!world.ok()) return TileFailure(world.status());
    if (absl::Status known = cli::CheckRenderLayer(*layer, world->description); !known.ok()) {
      return Text(400, std::string(known.message()));
    }
    const int64_t span = int64_t{kTilePixels} * tile->scale();
    const cli::BlockRegion region{tile->x * span, tile->y * span, tile->x * span + span - 1,
                                  tile->y * span + span - 1};
    const double bound = world->description.limits().world_coordinate_bound();
    if (bound > 0 && (std::max(std::abs(region.min_x), std::abs(region.max_x + 1)) > bound ||
                      std::max(std::abs(region.min_z), std::abs(region.max_z + 1)) > bound)) {
      return Text(404, absl::StrFormat("tile %d/%d at zoom %d lies past the world's bound %g",
                                       tile->x, tile->y, tile->zoom, bound));
    }
    HttpResponse response = Versioned(*world, query, if_none_match);
    if (response.status == 304) return response;
    absl::StatusOr<std::shared_ptr<Client>> client =
        ClientFor(tile->world, world->description.fingerprint());
    if (!client.ok()) return Unavailable(client.status());
    absl::StatusOr<RgbImage> image;
    {
      renders.acquire();
      image = cli::RenderRegion(**client, world->description, region, *layer,
                                cli::DefaultRenderChunkSize(world->description), tile->scale());
      renders.release();
    }
    if (!image.ok()) {
      ForgetIfChanged(tile->world, image.status());
      return TileFailure(image.status());
    }
    absl::StatusOr<std::string> png = EncodePng(*image);
    if (!png.ok()) return Text(500, png.status().ToString());
    response.content_type = "image/png";
    response.body = *std::move(png);
    return response;
  }

  HttpResponse Asset(absl::string_view path) {
    if (path == "/") path = "/index.html";
    for (const ViewerAsset& asset : ViewerAssets()) {
      if (path != asset.path) continue;
      HttpResponse response;
      response.content_type = std::string(asset.content_type);
      if (absl::StartsWith(response.content_type, "text/")) {
        response.content_type += "; charset=utf-8";
      }
      response.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
      response.headers.emplace_back("Cache-Control", "no-cache");
      return response;
    }
    return Text(404, absl::StrCat("no page at ", path));
  }

  ViewerOptions options;
  std::counting_semaphore<kMaxTileRenders> renders;
  const std::string error_tile;
  std::mutex mu;
  struct WorldClient {
    std::string fingerprint;  // Pinned by every call; empty for none.
    std::shared_ptr<Client> client;
  };
  std::map<std::pair<std::string, bool>, WorldClient> clients;  // By (world, pinned).
  std::map<std::string, World> worlds;
  std::unique_ptr<Handler> handler;
  std::unique_ptr<CivetServer> http;  // Last: stopped first.
};

MapViewer::MapViewer(std::unique_ptr<State> state) : state_(std::move(state)) {}

MapViewer::~MapViewer() {
  if (state_->http) state_->http->close();
}

absl::StatusOr<std::unique_ptr<MapViewer>> MapViewer::Start(const ViewerOptions& options) {
  auto viewer = std::unique_ptr<MapViewer>(new MapViewer(std::make_unique<State>(options)));
  viewer->state_->handler = std::make_unique<State::Handler>(viewer.get());
  const std::vector<std::string> civet_options = {
      "listening_ports", options.listen, "num_threads",
      absl::StrCat(std::max(1, options.http_threads)), "enable_keep_alive", "yes",
      // Each connection holds a thread: one that sends nothing is dropped after this (civetweb's
      // default of 30 s let 16 idle connections stall every request for that long).
      "request_timeout_ms", absl::StrCat(kRequestTimeoutMs)};
  try {
    viewer->state_->http = std::make_unique<CivetServer>(civet_options);
  } catch (const CivetException& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen, ": ", e.what()));
  }
  viewer->state_->http->addHandler("/", viewer->state_->handler.get());
  return viewer;
}

int MapViewer::clients() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return static_cast<int>(state_->clients.size());
}

int MapViewer::port() const {
  std::vector<int> ports = state_->http->getListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

HttpResponse MapViewer::Get(absl::string_view path, absl::string_view query,
                            absl::string_view if_none_match) {
  if (absl::StartsWith(path, "/tiles/")) return state_->Tile(path, query, if_none_match);
  if (path == "/api/worlds") return state_->Worlds();
  if (path == "/api/sample") return state_->Sample(query);
  if (path == "/api/points") return state_->SamplingPoints(query, if_none_match);
  return state_->Asset(path);
}

}  // namespace worldgen::viewer
