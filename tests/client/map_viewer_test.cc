// worldgen view's handlers (MapViewer::Get, without HTTP) against a real worldgen-server: tile
// addressing, caching headers, errors. The page itself is tested in a browser (tests/viewer).
#include "client/viewer/map_viewer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/render.h"
#include "client/rgb_image.h"
#include "client/worldgen_client.h"
#include "tests/client/subprocess.h"
#include "tests/support/server_process.h"

namespace worldgen::viewer {
namespace {

using ::worldgen::testing::PickFreePort;
using ::worldgen::testing::ServerProcess;

std::string Header(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

TEST(ParseTilePathTest, ReadsWorldLayerZoomAndTile) {
  absl::StatusOr<TileAddress> tile = ParseTilePath("/tiles/archipelago/weight:3/-4/-7/12.png");
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_EQ(tile->world, "archipelago");
  EXPECT_EQ(tile->layer, "weight:3");
  EXPECT_EQ(tile->zoom, -4);
  EXPECT_EQ(tile->scale(), 16);
  EXPECT_EQ(tile->x, -7);
  EXPECT_EQ(tile->y, 12);
  for (const char* bad :
       {"/tiles/w/dominant/0/0/0", "/tiles/w/dominant/1/0/0.png", "/tiles/w/dominant/-9/0/0.png",
        "/tiles/w/dominant/0/a/0.png", "/tiles/w/dominant/0/0/0/0.png",
        "/tile/w/dominant/0/0/0.png", "/tiles/w/dominant/0/0/99999999999999999.png",
        "/tiles/w/dominant/0/-9223372036854775808/0.png",
        "/tiles/w/dominant/0/0/-9223372036854775808.png"}) {
    EXPECT_EQ(ParseTilePath(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

class MapViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ViewerOptions options;
    options.target = server_->target();
    options.listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<MapViewer>> viewer = MapViewer::Start(options);
    ASSERT_TRUE(viewer.ok()) << viewer.status();
    viewer_ = *std::move(viewer);
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<MapViewer> viewer_;
};

// Tile (X, Y) at zoom Z is render's image of blocks [256 s X, 256 s (X + 1)) x [256 s Y, ...) at
// s = 2^-Z blocks per pixel.
TEST_F(MapViewerTest, ATileIsRendersImageOfItsBlocks) {
  const HttpResponse tile = viewer_->Get("/tiles/default/blend/-2/1/-1.png", "", "");
  ASSERT_EQ(tile.status, 200) << tile.body;
  EXPECT_EQ(tile.content_type, "image/png");
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(server_->target());
  ASSERT_TRUE(client.ok());
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  ASSERT_TRUE(world.ok());
  absl::StatusOr<RgbImage> image =
      cli::RenderRegion(**client, *world, {1024, -1024, 2047, -1}, *cli::ParseRenderLayer("blend"),
                        cli::DefaultRenderChunkSize(*world), 4);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, kTilePixels);
  EXPECT_EQ(tile.body, *EncodePng(*image));
}

// The ETag is the world's version, the server's fingerprint of the world (so a server whose
// answers change gets new URLs): the page's ?v= with it gets a year's immutable caching, a
// revalidation with it gets 304 without a blend; without it, no-cache.
TEST_F(MapViewerTest, CachingFollowsTheWorldsVersion) {
  const HttpResponse first = viewer_->Get("/tiles/default/dominant/0/0/0.png", "", "");
  ASSERT_EQ(first.status, 200);
  const std::string etag = Header(first, "ETag");
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(server_->target());
  ASSERT_TRUE(client.ok());
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  ASSERT_TRUE(world.ok());
  ASSERT_EQ(world->fingerprint().size(), 16u) << world->fingerprint();
  EXPECT_EQ(etag, absl::StrCat("\"", world->fingerprint(), "\""));
  EXPECT_EQ(Header(first, "Cache-Control"), "no-cache");
  const std::string version = etag.substr(1, 16);
  const HttpResponse current =
      viewer_->Get("/tiles/default/dominant/0/0/0.png", absl::StrCat("v=", version), "");
  EXPECT_EQ(Header(current, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(current.body, first.body);
  const HttpResponse revalidated = viewer_->Get("/tiles/default/dominant/0/0/0.png", "", etag);
  EXPECT_EQ(revalidated.status, 304);
  EXPECT_TRUE(revalidated.body.empty());
  // If-None-Match is a list of tags compared weakly, or *.
  for (const std::string& header :
       {absl::StrCat("W/", etag), absl::StrCat("\"0000000000000000\", ", etag), std::string("*")}) {
    EXPECT_EQ(viewer_->Get("/tiles/default/dominant/0/0/0.png", "", header).status, 304) << header;
  }
  EXPECT_EQ(viewer_->Get("/tiles/default/dominant/0/0/0.png", "", "\"0000000000000000\"").status,
            200);
  // Another world has another version.
  const HttpResponse worlds = viewer_->Get("/api/worlds", "", "");
  ASSERT_EQ(worlds.status, 200) << worlds.body;
  EXPECT_TRUE(absl::StrContains(worlds.body, absl::StrCat("\"version\":\"", version, "\"")));
}

// /api/points lists the server's ListSamplingPoints answer for the box, exactly (17 digits).
TEST_F(MapViewerTest, PointsAreTheServersSamplingPointsOfTheBox) {
  const HttpResponse r =
      viewer_->Get("/api/points", "world=default&min_x=-64&min_z=0&max_x=64&max_z=96.5", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(server_->target());
  ASSERT_TRUE(client.ok());
  v1::ListSamplingPointsRequest request;
  request.set_min_x(-64);
  request.set_max_x(64);
  request.set_max_z(96.5);
  absl::StatusOr<v1::ListSamplingPointsResponse> points = (*client)->ListSamplingPoints(request);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_GT(points->points_size(), 100);
  std::string expected = "{\"blender\":\"scattered\",\"points\":[";
  for (int n = 0; n < points->points_size(); ++n) {
    const v1::SamplingPoint& p = points->points(n);
    absl::StrAppendFormat(&expected, "%s[%.17g,%.17g,%u]", n ? "," : "", p.x(), p.z(),
                          p.biome_id());
  }
  EXPECT_EQ(r.body, expected + "]}");
  // Cached like tiles: the world's version is the ETag; immutable when the query names it.
  const std::string etag = Header(r, "ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(Header(r, "Cache-Control"), "no-cache");
  const std::string box = "world=default&min_x=-64&min_z=0&max_x=64&max_z=96.5";
  const HttpResponse current =
      viewer_->Get("/api/points", box + "&v=" + etag.substr(1, etag.size() - 2), "");
  EXPECT_EQ(Header(current, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(current.body, r.body);
  const HttpResponse revalidated = viewer_->Get("/api/points", box, etag);
  EXPECT_EQ(revalidated.status, 304);
  EXPECT_TRUE(revalidated.body.empty());
  const HttpResponse too_many =
      viewer_->Get("/api/points", "world=default&min_x=0&min_z=0&max_x=1e5&max_z=1e5", "");
  EXPECT_EQ(too_many.status, 400);
  EXPECT_TRUE(absl::StrContains(too_many.body, "max_sampling_points_per_request")) << too_many.body;
}

TEST_F(MapViewerTest, BadRequestsAreNamed) {
  struct Case {
    const char* path;
    const char* query;
    int status;
    const char* says;
  };
  for (const Case& c : {
           Case{"/tiles/default/shade/0/0/0.png", "", 400, "is not a layer"},
           Case{"/tiles/default/weight:999/0/0/0.png", "", 400, "has no biome 999"},
           Case{"/tiles/default/splat:0/-1/0/0.png", "", 400, "1 block per pixel only"},
           Case{"/tiles/default/dominant/0/1000000000/0.png", "", 404, "past the world's bound"},
           Case{"/api/sample", "world=default&x=1", 400, "\"error\""},
           Case{"/api/points", "world=default&min_x=0&min_z=0&max_x=nan&max_z=1", 400,
                "with numbers"},
           Case{"/api/points", "world=default&min_x=5&min_z=0&max_x=5&max_z=1", 400, "is empty"},
       }) {
    const HttpResponse r = viewer_->Get(c.path, c.query, "");
    EXPECT_EQ(r.status, c.status) << c.path;
    EXPECT_TRUE(absl::StrContains(r.body, c.says)) << c.path << ": " << r.body;
  }
  const HttpResponse unknown_world = viewer_->Get("/tiles/nowhere/dominant/0/0/0.png", "", "");
  EXPECT_GE(unknown_world.status, 400);
  EXPECT_LT(unknown_world.status, 500) << unknown_world.body;
  EXPECT_EQ(viewer_->Get("/nothing-here", "", "").status, 404);
}

// World names come from the browser: one the server does not serve is refused without a gRPC client
// kept for it, so a stream of made-up names cannot grow the viewer's memory.
TEST_F(MapViewerTest, UnknownWorldsLeaveNoClientBehind) {
  ASSERT_EQ(viewer_->Get("/api/worlds", "", "").status, 200);  // As the page does first.
  ASSERT_EQ(viewer_->Get("/tiles/default/dominant/0/0/0.png", "", "").status, 200);
  const int served = viewer_->clients();
  for (int k = 0; k < 20; ++k) {
    const std::string world = absl::StrCat("nowhere", k);
    const HttpResponse tile =
        viewer_->Get(absl::StrCat("/tiles/", world, "/dominant/0/0/0.png"), "", "");
    EXPECT_EQ(tile.status, 404) << tile.body;
    EXPECT_TRUE(absl::StrContains(tile.body, absl::StrCat("\"", world, "\" is not served")))
        << tile.body;
    EXPECT_EQ(viewer_->Get("/api/sample", absl::StrCat("world=", world, "&x=1&z=2"), "").status,
              404);
    EXPECT_EQ(viewer_
                  ->Get("/api/points",
                        absl::StrCat("world=", world, "&min_x=0&min_z=0&max_x=8&max_z=8"), "")
                  .status,
              404);
  }
  EXPECT_EQ(viewer_->clients(), served);
}

TEST_F(MapViewerTest, ThePageAndLeafletAreServedFromTheBinary) {
  const HttpResponse page = viewer_->Get("/", "", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(absl::StrContains(page.body, "/leaflet/leaflet.js"));
  const HttpResponse leaflet = viewer_->Get("/leaflet/leaflet.js", "", "");
  EXPECT_EQ(leaflet.status, 200);
  EXPECT_GT(leaflet.body.size(), 100000u);
  EXPECT_TRUE(absl::StrContains(leaflet.body, "Leaflet"));
  EXPECT_EQ(viewer_->Get("/leaflet/images/layers.png", "", "").content_type, "image/png");
  EXPECT_GT(viewer_->port(), 0);
}

// The shading of a tile reads the pixel north-west of it; at the world's west and north edges that
// pixel lies past the coordinate bound, and the tile is shaded as if the world went on level there
// (it used to fail with the server's INVALID_ARGUMENT for that column).
TEST_F(MapViewerTest, TilesOnTheWorldsWestAndNorthEdgesAreDrawn) {
  const int64_t bound = 33554432;  // The default world's world_coordinate_bound.
  for (int zoom : {0, -2, -3}) {
    const int64_t span = int64_t{kTilePixels} << -zoom;
    for (const char* layer : {"dominant", "height"}) {
      for (const auto& [x, y] :
           {std::pair(-bound / span, int64_t{0}), std::pair(int64_t{0}, -bound / span)}) {
        const std::string path =
            absl::StrFormat("/tiles/default/%s/%d/%d/%d.png", layer, zoom, x, y);
        const HttpResponse tile = viewer_->Get(path, "", "");
        EXPECT_EQ(tile.status, 200) << path << ": " << tile.body;
      }
    }
  }
}

// A tile is stamped with the version the viewer last described, and its render pins that version:
// a server that has since changed the world (a rollout, an edited config) refuses, and the viewer
// answers 503 without caching instead of a tile cached for a year under a version it does not
// show. The next request describes the world again.
TEST(MapViewerVersionTest, ATileIsNeverStampedWithAVersionItDoesNotShow) {
  absl::StatusOr<std::string> steppe =
      testing::ReadFile(absl::StrCat(WORLDGEN_SOURCE_DIR, "/docker/worlds/steppe.json"));
  ASSERT_TRUE(steppe.ok()) << steppe.status();
  absl::StatusOr<std::unique_ptr<testing::TempDir>> dir = testing::TempDir::Create("viewer-pin");
  ASSERT_TRUE(dir.ok());
  // Unpinned (the file's expectedFingerprint would refuse a reseeded copy), then seeds 311 and 312.
  const std::string::size_type pin = steppe->find("\"expectedFingerprint\"");
  ASSERT_NE(pin, std::string::npos);
  std::string unpinned = *steppe;
  unpinned.erase(pin, unpinned.find('\n', pin) - pin + 1);
  const std::string::size_type seed = unpinned.find("\"seed\": \"311\"");
  ASSERT_NE(seed, std::string::npos);
  std::string reseeded = unpinned;
  reseeded.replace(seed, 13, "\"seed\": \"312\"");
  ASSERT_TRUE(testing::WriteFile((*dir)->File("old.json"), unpinned).ok());
  ASSERT_TRUE(testing::WriteFile((*dir)->File("new.json"), reseeded).ok());
  absl::StatusOr<int> port = PickFreePort();
  ASSERT_TRUE(port.ok());
  const std::string port_flag = absl::StrCat("--port=", *port);
  auto old_server =
      ServerProcess::Start({port_flag, absl::StrCat("--world_config=", (*dir)->File("old.json"))});
  ASSERT_TRUE(old_server.ok()) << old_server.status();
  ViewerOptions options;
  options.target = (*old_server)->target();
  options.listen = "127.0.0.1:0";
  options.describe_ttl = absl::Minutes(10);  // The viewer keeps what it described.
  absl::StatusOr<std::unique_ptr<MapViewer>> viewer = MapViewer::Start(options);
  ASSERT_TRUE(viewer.ok()) << viewer.status();
  const HttpResponse first = (*viewer)->Get("/tiles/steppe/blend/0/0/0.png", "", "");
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string old_version = Header(first, "ETag");

  (*old_server)->Kill();
  auto new_server =
      ServerProcess::Start({port_flag, absl::StrCat("--world_config=", (*dir)->File("new.json"))});
  ASSERT_TRUE(new_server.ok()) << new_server.status();
  const std::string path = "/tiles/steppe/blend/0/1/0.png";
  const HttpResponse stale =
      (*viewer)->Get(path, absl::StrCat("v=", old_version.substr(1, 16)), "");
  EXPECT_EQ(stale.status, 503) << Header(stale, "ETag");
  EXPECT_EQ(Header(stale, "Cache-Control"), "no-store");
  EXPECT_TRUE(absl::StrContains(Header(stale, "X-Worldgen-Error"), "FAILED_PRECONDITION"))
      << Header(stale, "X-Worldgen-Error");
  const HttpResponse fresh = (*viewer)->Get(path, "", "");
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_NE(Header(fresh, "ETag"), old_version);
}

TEST(MapViewerDownTest, AnUnreachableServerGetsErrorTilesThatSayWhy) {
  absl::StatusOr<int> port = PickFreePort();
  ASSERT_TRUE(port.ok());
  ViewerOptions options;
  options.target = absl::StrCat("127.0.0.1:", *port);  // Nobody listens.
  options.listen = "127.0.0.1:0";
  options.max_retries = 0;
  options.deadline = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<MapViewer>> viewer = MapViewer::Start(options);
  ASSERT_TRUE(viewer.ok()) << viewer.status();
  const HttpResponse tile = (*viewer)->Get("/tiles/default/dominant/0/0/0.png", "", "");
  EXPECT_EQ(tile.status, 503);
  EXPECT_EQ(tile.content_type, "image/png");
  EXPECT_EQ(Header(tile, "Cache-Control"), "no-store");
  EXPECT_TRUE(absl::StrContains(Header(tile, "X-Worldgen-Error"), "UNAVAILABLE"))
      << Header(tile, "X-Worldgen-Error");
  // A malformed layer is the request's fault, server or not.
  EXPECT_EQ((*viewer)->Get("/tiles/default/bogus/0/0/0.png", "", "").status, 400);
  const HttpResponse worlds = (*viewer)->Get("/api/worlds", "", "");
  EXPECT_EQ(worlds.status, 503);
  EXPECT_TRUE(absl::StrContains(worlds.body, "\"error\":\"UNAVAILABLE")) << worlds.body;
}

}  // namespace
}  // namespace worldgen::viewer
