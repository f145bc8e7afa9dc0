#include "client/cli/commands.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/cli/load_generator.h"
#include "client/cli/output.h"
#include "client/cli/render.h"
#include "client/cli/world_check.h"
#include "client/viewer/map_viewer.h"
#include "client/worldgen_client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051",
          "Server or load balancer, as a gRPC target (host:port).");
ABSL_FLAG(int64_t, deadline_ms, 10000, "Deadline of each call in milliseconds, retries included.");
ABSL_FLAG(int, retries, 5,
          "Retries of a call that failed with UNAVAILABLE (exponential backoff from 50 ms, "
          "capped at 2 s, no jitter).");
ABSL_FLAG(std::string, world, "", "World name; empty selects the server's default world.");
ABSL_FLAG(std::string, world_fingerprint, "",
          "Pin the world's version (describe prints its fingerprint): calls to a server that "
          "serves another config or version of it fail with FAILED_PRECONDITION. Empty: no pin.");
ABSL_FLAG(bool, tls, false,
          "Connect with TLS (to a balancer that terminates it), checking the server's certificate "
          "against the system's roots or --tls_ca_file. Implied by any other --tls_ flag.");
ABSL_FLAG(std::string, tls_ca_file, "",
          "PEM file of the authorities the server's certificate must chain to (default: the "
          "system's roots).");
ABSL_FLAG(std::string, tls_cert_file, "",
          "Mutual TLS: PEM file of this client's certificate chain (with --tls_key_file).");
ABSL_FLAG(std::string, tls_key_file, "",
          "Mutual TLS: PEM file of this client's private key. The three files are read again "
          "every minute by long-running commands (view, load): a renewal is taken without a "
          "restart.");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name the server's certificate must be valid for, when --target's host is not it "
          "(e.g. an IP address).");
ABSL_FLAG(std::string, api_key_file, "",
          "File whose first line is the API key the balancer knows this client by (sent as "
          "`authorization: Bearer KEY`; docs/operations.md, \"API keys\"). Use with --tls.");
ABSL_FLAG(bool, json, false, "Print the result as one line of JSON instead of text.");
ABSL_FLAG(int, size, 0, "Chunk size (columns per side, a power of two); 0 = the world's.");
ABSL_FLAG(bool, heights, true, "Also request blended heights.");
ABSL_FLAG(std::string, region, "", "Block columns to render: minx,minz,maxx,maxz (inclusive).");
ABSL_FLAG(std::string, out, "map.png", "PNG file to write.");
ABSL_FLAG(std::string, layer, "dominant",
          "What to draw: dominant (dominant biome colour, shaded by height), blend (biome colours "
          "mixed by weight), source (the unblended raw map), height (shaded heights in grey), "
          "weight:ID (biome ID's weight as grey, black 0 to white 1) or splat:T (the RGB channels "
          "of splat texture T).");
ABSL_FLAG(int, scale, 1,
          "Blocks per pixel side: 1 blends every column (chunks); N > 1 draws the column at the "
          "centre of each N x N block (from chunks up to 4, or 2 for jittered-cell and "
          "parameter-Voronoi worlds; point samples beyond), a sparse view of a large area.");
ABSL_FLAG(std::string, splat_png, "",
          "Also request the splat textures and write texture t as PREFIX<t>.png (RGBA; the channel "
          "-> biome mapping is printed on stderr).");
ABSL_FLAG(bool, source_biome, false,
          "Also request the biome source's unblended biome (the raw map the blender reads).");
ABSL_FLAG(
    std::string, y, "",
    "chunk, load: a 3D chunk of the vertical range MIN:MAX (blocks, multiples of 16) in cells of "
    "--cell blocks (cave biomes blended in 3D; heights are not sent).");
ABSL_FLAG(int, cell, 4, "chunk, load --y: blocks per cell side (1, 2, 4, 8 or 16).");
ABSL_FLAG(bool, xyz, false, "sample: the arguments are triples X Y Z (3D points).");
ABSL_FLAG(std::string, slice, "",
          "render: a plane through the 3D world instead of the map: y:Y (the region's columns at "
          "height Y), x:X (--region=minz,miny,maxz,maxy) or z:Z (--region=minx,miny,maxx,maxy); "
          "drawn from 3D chunks in cells of one block (--scale=1) or 3D point samples.");
ABSL_FLAG(std::string, service, "", "Health-checked service name; empty = the whole server.");
ABSL_FLAG(int, concurrency, 4, "Concurrent closed-loop workers.");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10),
          "How long to run (e.g. 30s, 2m); 0 = until --requests are done.");
ABSL_FLAG(int64_t, requests, 0, "Total requests to send; 0 = until --duration is over.");
ABSL_FLAG(std::string, pattern, "random",
          "Chunks to ask for: random (uniform in --area), spiral (players loading their "
          "surroundings ring by ring) or hot (a fixed --hot_set of chunks).");
ABSL_FLAG(int, chunks_per_request, 16, "Chunks per GenerateChunk request.");
ABSL_FLAG(
    double, rate, 0,
    "Open loop: requests per second over all workers, latency counted from each request's "
    "scheduled time; 0 = closed loop (each worker sends as soon as its last request is done).");
ABSL_FLAG(int64_t, area, 4096, "random/spiral: chunk coordinates start in [-area, area).");
ABSL_FLAG(int, hot_set, 64, "hot: number of distinct chunks.");
ABSL_FLAG(uint64_t, seed, 1,
          "Seed of the chunk choice (runs with the same seed ask for the same chunks).");
ABSL_FLAG(bool, progress, true, "Print a progress line on stderr every second.");
ABSL_FLAG(std::string, listen, "127.0.0.1:8080",
          "view: address:port the map viewer's HTTP server listens on (port 0: any free one).");
ABSL_FLAG(bool, live, false,
          "check: also ask the --target service for the worlds it serves and compare "
          "fingerprints: a world served live whose fingerprint would change, or that the files "
          "no longer hold, fails the check.");
ABSL_FLAG(std::vector<std::string>, allow_changed, {},
          "check --live: comma-separated worlds whose change or removal is intended.");
ABSL_FLAG(int, max_tile_renders, 4,
          "view: tiles rendered at once, i.e. calls in flight towards the worldgen server.");

namespace worldgen::cli {
namespace {

int Usage(const std::string& message) {
  std::cerr << "worldgen: " << message << "\n";
  return kExitUsage;
}

int Fail(const absl::Status& status) {
  std::cerr << "worldgen: " << status << "\n";
  return kExitError;
}

// ClientOptions::tls from the --tls flags: unset when none is given. The files are the client's
// to read (and to read again when they are renewed, for `view` and `load`); Connect says what is
// wrong with them.
absl::StatusOr<std::optional<ClientOptions::Tls>> TlsFromFlags() {
  ClientOptions::Tls tls;
  tls.root_certs_file = absl::GetFlag(FLAGS_tls_ca_file);
  tls.cert_chain_file = absl::GetFlag(FLAGS_tls_cert_file);
  tls.private_key_file = absl::GetFlag(FLAGS_tls_key_file);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  if (!absl::GetFlag(FLAGS_tls) && tls.root_certs_file.empty() && tls.cert_chain_file.empty() &&
      tls.private_key_file.empty() && tls.server_name.empty()) {
    return std::nullopt;
  }
  if (tls.cert_chain_file.empty() != tls.private_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file and --tls_key_file go together");
  }
  return tls;
}

// The key of --api_key_file (its first line, trailing whitespace dropped); empty without the flag.
absl::StatusOr<std::string> ApiKeyFromFlags() {
  const std::string path = absl::GetFlag(FLAGS_api_key_file);
  if (path.empty()) return std::string();
  std::ifstream file(path);
  std::string key;
  if (!file || !std::getline(file, key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--api_key_file = \"", path, "\" cannot be read, or is empty"));
  }
  return std::string(absl::StripTrailingAsciiWhitespace(key));
}

// What identifies the CLI to the balancer, from the flags: TLS (TlsFromFlags) and the API key
// (ApiKeyFromFlags), for the client every subcommand uses and for the viewer's.
absl::Status CredentialsFromFlags(std::optional<ClientOptions::Tls>* tls, std::string* api_key) {
  absl::StatusOr<std::optional<ClientOptions::Tls>> tls_flags = TlsFromFlags();
  if (!tls_flags.ok()) return tls_flags.status();
  absl::StatusOr<std::string> key = ApiKeyFromFlags();
  if (!key.ok()) return key.status();
  *tls = *std::move(tls_flags);
  *api_key = *std::move(key);
  return absl::OkStatus();
}

// The client every subcommand uses, built from the global flags.
absl::StatusOr<std::unique_ptr<Client>> MakeClient() {
  ClientOptions options;
  options.world = absl::GetFlag(FLAGS_world);
  options.world_fingerprint = absl::GetFlag(FLAGS_world_fingerprint);
  options.deadline = absl::Milliseconds(absl::GetFlag(FLAGS_deadline_ms));
  options.max_retries = absl::GetFlag(FLAGS_retries);
  options.user_agent = "worldgen-cli";  // The servers' call log tells the CLI from game servers.
  if (absl::Status s = CredentialsFromFlags(&options.tls, &options.api_key); !s.ok()) return s;
  return Client::Connect(absl::GetFlag(FLAGS_target), options);
}

bool ParseCoordinate(const std::string& text, double* out) { return absl::SimpleAtod(text, out); }

int RunDescribe(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("describe takes no arguments");
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  if (!world.ok()) return Fail(world.status());
  if (absl::GetFlag(FLAGS_json)) {
    absl::StatusOr<std::string> json = ToJson(*world);
    if (!json.ok()) return Fail(json.status());
    std::cout << *json << "\n";
  } else {
    std::cout << DescribeText(*world);
  }
  return kExitOk;
}

// Writes texture t of `chunk` as <prefix><t>.png and says on stderr which biome each channel holds.
int WriteSplatPngs(const ChunkView& chunk, const v1::WorldDescription& world,
                   const std::string& prefix) {
  const int expected = (world.splat_channel_biome_ids_size() + 3) / 4;
  if (chunk.splat_texture_count() != expected) {
    return Fail(absl::DataLossError(
        absl::StrFormat("%d splat textures for %d biomes, want %d", chunk.splat_texture_count(),
                        world.splat_channel_biome_ids_size(), expected)));
  }
  const auto names = BiomeNames(world);
  for (int t = 0; t < chunk.splat_texture_count(); ++t) {
    const std::string& bytes = chunk.splat_texture(t);
    const std::string path = absl::StrCat(prefix, t, ".png");
    const std::span<const uint8_t> texels(reinterpret_cast<const uint8_t*>(bytes.data()),
                                          bytes.size());
    if (absl::Status written = WriteRgbaPng(chunk.size(), chunk.size(), texels, path);
        !written.ok()) {
      return Fail(written);
    }
    std::string channels;
    for (int k = 0; k < 4 && 4 * t + k < world.splat_channel_biome_ids_size(); ++k) {
      const uint32_t id = world.splat_channel_biome_ids(4 * t + k);
      auto name = names.find(id);
      absl::StrAppend(&channels, " ", absl::string_view(&"RGBA"[k], 1), "=",
                      name == names.end() ? "?" : name->second, "(", id, ")");
    }
    std::cerr << absl::StrFormat("wrote %s: %d x %d RGBA,%s\n", path, chunk.size(), chunk.size(),
                                 channels);
  }
  return kExitOk;
}

// Whether flag `name` holds another value than its default: a flag that applies only beside
// another is refused without it, not ignored.
bool FlagChanged(absl::string_view name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && flag->CurrentValue() != flag->DefaultValue();
}

// --size: 0 (the world's chunk size) or a power of two (the server says which it serves). A
// negative one would reach the wire as a number near 2^32.
absl::Status CheckSizeFlag() {
  const int size = absl::GetFlag(FLAGS_size);
  if (size == 0 || (size > 0 && (size & (size - 1)) == 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--size=", size, " is not 0 (the world's chunk size) or a power of two"));
}

// --y=MIN:MAX as a vertical range in cells of --cell blocks (the server checks the values), or
// none without --y (and then no --cell either).
absl::StatusOr<std::optional<ChunkRequestOptions::Vertical>> VerticalFromFlags() {
  const std::string text = absl::GetFlag(FLAGS_y);
  const int cell = absl::GetFlag(FLAGS_cell);
  if (text.empty()) {
    if (FlagChanged("cell")) {
      return absl::InvalidArgumentError("--cell is the cell side of 3D chunks: give --y=MIN:MAX");
    }
    return std::nullopt;
  }
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  ChunkRequestOptions::Vertical vertical{.cell_size = cell};
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &vertical.min_y) ||
      !absl::SimpleAtoi(parts[1], &vertical.max_y)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--y=", text, " is not a range MIN:MAX of integers (e.g. -64:320)"));
  }
  if (cell < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cell=", cell, " is not a cell side in blocks (1, 2, 4, 8 or 16)"));
  }
  return vertical;
}

int RunChunk(const std::vector<std::string>& args) {
  int64_t x = 0, z = 0;
  if (args.size() != 2 || !absl::SimpleAtoi(args[0], &x) || !absl::SimpleAtoi(args[1], &z)) {
    return Usage("chunk wants two integer chunk coordinates: chunk X Z");
  }
  if (absl::Status size = CheckSizeFlag(); !size.ok()) return Usage(std::string(size.message()));
  const std::string splat_prefix = absl::GetFlag(FLAGS_splat_png);
  ChunkRequestOptions options{.chunk_size = absl::GetFlag(FLAGS_size),
                              .heights = absl::GetFlag(FLAGS_heights),
                              .dominant_biome = true,
                              .source_biome = absl::GetFlag(FLAGS_source_biome),
                              .splat = !splat_prefix.empty()};
  absl::StatusOr<std::optional<ChunkRequestOptions::Vertical>> vertical = VerticalFromFlags();
  if (!vertical.ok()) return Usage(std::string(vertical.status().message()));
  if (*vertical) {
    if (!splat_prefix.empty()) return Usage("--splat_png is per column: it cannot go with --y");
    options.vertical = *vertical;
    options.heights = false;  // Per column: a 2D request's.
  }
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());
  absl::StatusOr<ChunkView> chunk = (*client)->GenerateChunk(x, z, options);
  if (!chunk.ok()) return Fail(chunk.status());
  absl::StatusOr<v1::WorldDescription> world;
  if (!splat_prefix.empty() || !absl::GetFlag(FLAGS_json)) {
    world = (*client)->DescribeWorld();
    if (!world.ok()) return Fail(world.status());
  }
  if (!splat_prefix.empty()) {
    if (int written = WriteSplatPngs(*chunk, *world, splat_prefix); written != kExitOk)
      return written;
  }
  if (absl::GetFlag(FLAGS_json)) {
    absl::StatusOr<std::string> json = ToJson(chunk->proto());
    if (!json.ok()) return Fail(json.status());
    std::cout << *json << "\n";
    return kExitOk;
  }
  std::cout << (chunk->is_volume() ? VolumeText(*chunk, *world) : ChunkText(*chunk, *world));
  return kExitOk;
}

int RunSample(const std::vector<std::string>& args) {
  const bool xyz = absl::GetFlag(FLAGS_xyz);
  const size_t arity = xyz ? 3 : 2;
  if (args.empty() || args.size() % arity != 0) {
    return Usage(xyz ? "sample --xyz wants triples of block coordinates: sample X Y Z [X Y Z ...]"
                     : "sample wants pairs of block coordinates: sample X Z [X Z ...]");
  }
  v1::SampleWeightsRequest request;
  for (size_t i = 0; i < args.size(); i += arity) {
    double v[3];
    for (size_t k = 0; k < arity; ++k) {
      if (!ParseCoordinate(args[i + k], &v[k])) {
        return Usage(absl::StrCat("not a coordinate: ", args[i + k]));
      }
    }
    v1::Point* point = request.add_points();
    point->set_x(v[0]);
    if (xyz) point->set_y(v[1]);
    point->set_z(v[arity - 1]);
  }
  request.set_include_heights(absl::GetFlag(FLAGS_heights));
  request.set_include_source_biome(absl::GetFlag(FLAGS_source_biome));
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());
  absl::StatusOr<v1::SampleWeightsResponse> response = (*client)->SampleWeights(request);
  if (!response.ok()) return Fail(response.status());
  if (absl::GetFlag(FLAGS_json)) {
    absl::StatusOr<std::string> json = ToJson(*response);
    if (!json.ok()) return Fail(json.status());
    std::cout << *json << "\n";
    return kExitOk;
  }
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  if (!world.ok()) return Fail(world.status());
  std::cout << SamplesText(request, *response, *world);
  return kExitOk;
}

int RunRender(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("render takes no positional arguments (use --region, --out)");
  if (absl::GetFlag(FLAGS_region).empty())
    return Usage("render needs --region=minx,minz,maxx,maxz");
  const int scale = absl::GetFlag(FLAGS_scale);
  absl::StatusOr<BlockRegion> region = ParseBlockRegion(absl::GetFlag(FLAGS_region), scale);
  if (!region.ok()) return Usage(std::string(region.status().message()));
  absl::StatusOr<RenderLayer> layer = ParseRenderLayer(absl::GetFlag(FLAGS_layer));
  if (!layer.ok()) return Usage(std::string(layer.status().message()));
  if (absl::Status fits = CheckLayerScale(*layer, scale); !fits.ok()) {
    return Usage(std::string(fits.message()));
  }
  if (absl::Status size = CheckSizeFlag(); !size.ok()) return Usage(std::string(size.message()));
  const std::string plane = absl::GetFlag(FLAGS_slice);
  if (!plane.empty() && FlagChanged("size")) {
    return Usage("--slice draws from 3D chunks of 16 columns: --size does not apply");
  }
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());
  absl::StatusOr<v1::WorldDescription> world = (*client)->DescribeWorld();
  if (!world.ok()) return Fail(world.status());
  if (absl::Status known = CheckRenderLayer(*layer, *world); !known.ok()) {
    return Usage(std::string(known.message()));
  }
  absl::StatusOr<RgbImage> image;
  if (!plane.empty()) {
    absl::StatusOr<Slice> slice = ParseSlice(plane);
    if (!slice.ok()) return Usage(std::string(slice.status().message()));
    if (layer->kind == RenderLayer::Kind::kHeight || layer->kind == RenderLayer::Kind::kSplat) {
      return Usage(
          "--slice draws blend, dominant, source or weight:ID: heights and splat "
          "textures are per column");
    }
    image = RenderSlice(**client, *world, *slice, *region, *layer, scale);
  } else {
    int size = absl::GetFlag(FLAGS_size);
    if (size == 0) size = DefaultRenderChunkSize(*world);
    if (absl::Status served = CheckRenderChunkSize(*world, size); !served.ok()) {
      return Usage(std::string(served.message()));
    }
    image = RenderRegion(**client, *world, *region, *layer, size, scale);
  }
  if (!image.ok()) return Fail(image.status());
  const std::string out = absl::GetFlag(FLAGS_out);
  if (absl::Status written = WritePng(*image, out); !written.ok()) return Fail(written);
  std::cerr << absl::StrFormat("wrote %s: %d x %d pixels\n", out, image->width, image->height);
  return kExitOk;
}

int RunHealth(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("health takes no arguments");
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());
  absl::StatusOr<std::string> status = (*client)->CheckHealth(absl::GetFlag(FLAGS_service));
  if (!status.ok()) return Fail(status.status());
  std::cout << *status << "\n";
  return *status == "SERVING" ? kExitOk : kExitError;
}

int RunLoad(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("load takes no positional arguments");
  LoadConfig config;
  config.concurrency = absl::GetFlag(FLAGS_concurrency);
  config.duration = absl::GetFlag(FLAGS_duration);
  config.requests = absl::GetFlag(FLAGS_requests);
  absl::StatusOr<LoadPattern> pattern = ParseLoadPattern(absl::GetFlag(FLAGS_pattern));
  if (!pattern.ok()) return Usage(std::string(pattern.status().message()));
  config.pattern = *pattern;
  config.chunks_per_request = absl::GetFlag(FLAGS_chunks_per_request);
  if (absl::Status size = CheckSizeFlag(); !size.ok()) return Usage(std::string(size.message()));
  config.chunk.chunk_size = absl::GetFlag(FLAGS_size);
  config.chunk.heights = absl::GetFlag(FLAGS_heights);
  absl::StatusOr<std::optional<ChunkRequestOptions::Vertical>> vertical = VerticalFromFlags();
  if (!vertical.ok()) return Usage(std::string(vertical.status().message()));
  if (*vertical) {
    config.chunk.vertical = *vertical;
    config.chunk.heights = false;  // Per column: a 2D request's, as for `chunk --y`.
  }
  config.seed = absl::GetFlag(FLAGS_seed);
  config.area = absl::GetFlag(FLAGS_area);
  config.hot_set = absl::GetFlag(FLAGS_hot_set);
  config.rate = absl::GetFlag(FLAGS_rate);
  auto client = MakeClient();
  if (!client.ok()) return Usage(client.status().ToString());

  LoadProgress progress;
  if (absl::GetFlag(FLAGS_progress)) {
    // A terminal gets one line rewritten in place; a log gets one line per second.
    const bool tty = isatty(STDERR_FILENO);
    progress = [tty](absl::Duration elapsed, const LoadReport& r) {
      const double s = absl::ToDoubleSeconds(elapsed);
      std::fprintf(
          stderr,
          "%s[load %6.1fs] %lld requests  %.0f chunks/s  %.2f MB/s  %lld retries  %lld errors%s",
          tty ? "\r" : "", s, static_cast<long long>(r.requests), s > 0 ? r.chunks / s : 0.0,
          s > 0 ? r.bytes / 1e6 / s : 0.0, static_cast<long long>(r.retries),
          static_cast<long long>(r.error_count()), tty ? "" : "\n");
      std::fflush(stderr);
    };
  }
  absl::StatusOr<LoadReport> report = cli::RunLoad(**client, config, progress);
  if (progress && isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  if (!report.ok()) return Usage(std::string(report.status().message()));
  std::cout << (absl::GetFlag(FLAGS_json) ? LoadReportJson(config, *report) + "\n"
                                          : LoadReportText(config, *report));
  return report->error_count() == 0 ? kExitOk : kExitError;
}

int RunView(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("view takes no positional arguments (use --listen)");
  viewer::ViewerOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  options.listen = absl::GetFlag(FLAGS_listen);
  options.max_tile_renders = absl::GetFlag(FLAGS_max_tile_renders);
  options.deadline = absl::Milliseconds(absl::GetFlag(FLAGS_deadline_ms));
  options.max_retries = absl::GetFlag(FLAGS_retries);
  if (absl::Status s = CredentialsFromFlags(&options.tls, &options.api_key); !s.ok()) {
    return Usage(std::string(s.message()));
  }
  if (options.max_tile_renders < 1 || options.max_tile_renders > 64) {
    return Usage("--max_tile_renders must be in [1, 64]");
  }
  // Blocked before civetweb starts its threads, which inherit the mask: only sigwait sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  absl::StatusOr<std::unique_ptr<viewer::MapViewer>> view = viewer::MapViewer::Start(options);
  if (!view.ok()) return Fail(view.status());
  std::cout << absl::StrFormat("worldgen view: http://%s:%d/ (worlds of %s)\n",
                               options.listen.substr(0, options.listen.rfind(':')), (*view)->port(),
                               options.target)
            << std::flush;
  int signal = 0;
  sigwait(&stop, &signal);
  std::cerr << "worldgen view: stopping\n";
  return kExitOk;
}

int RunCheck(const std::vector<std::string>& args) {
  if (args.empty()) return Usage("check wants world config files or directories: check PATH...");
  const std::vector<std::string> allow_list = absl::GetFlag(FLAGS_allow_changed);
  const std::set<std::string> allowed(allow_list.begin(), allow_list.end());
  if (!allowed.empty() && !absl::GetFlag(FLAGS_live)) {
    return Usage("--allow_changed goes with --live");
  }
  absl::StatusOr<WorldCheck> check = LoadWorldCheck(args);
  if (!check.ok()) return Fail(check.status());
  if (absl::GetFlag(FLAGS_live)) {
    auto client = MakeClient();
    if (!client.ok()) return Usage(client.status().ToString());
    if (absl::Status compared = CompareWithLive(**client, &*check); !compared.ok()) {
      return Fail(compared);
    }
  }
  std::cout << (absl::GetFlag(FLAGS_json) ? WorldCheckJson(*check, allowed) + "\n"
                                          : WorldCheckText(*check, allowed));
  return UnintendedChanges(*check, allowed).empty() ? kExitOk : kExitError;
}

}  // namespace

const std::vector<std::string>& GlobalFlags() {
  static const auto* flags = new std::vector<std::string>{
      "target",      "deadline_ms",   "retries",      "world",           "world_fingerprint", "tls",
      "tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name", "api_key_file"};
  return *flags;
}

const std::vector<Subcommand>& Subcommands() {
  static const auto* commands = new std::vector<Subcommand>{
      {"describe",
       "",
       "Prints the world's configuration (biome table, blender parameters, seed) and "
       "the server's limits.",
       {"json"},
       RunDescribe},
      {"chunk",
       "X Z",
       "Blends chunk (X, Z) (chunk coordinates) and prints its biomes, the weight "
       "grids, heights and dominant biomes; --json prints the worldgen.v1.ChunkData message "
       "(proto3 JSON "
       "mapping with the .proto field names: 64-bit integers are strings, floats round-trip "
       "exactly). "
       "--source_biome adds the unblended raw map; --splat-png=PREFIX writes the weights as RGBA8 "
       "splat textures PREFIX0.png, PREFIX1.png, ... (channel k of texture t = the biome at "
       "position "
       "4t+k of the id-sorted biome table; every texel's channels sum to 255 over all textures). "
       "--y=MIN:MAX asks for a 3D chunk instead: its sections of cells of --cell blocks, cave "
       "biomes blended in 3D, printed section by section from the top.",
       {"size", "json", "heights", "source_biome", "splat_png", "y", "cell"},
       RunChunk},
      {"sample",
       "X Z [X Z ...]",
       "Blends points in block coordinates (need not be integers) and "
       "prints each point's weights; --json prints the worldgen.v1.SampleWeightsResponse message. "
       "--source_biome adds each point's unblended biome. --xyz takes triples X Y Z: the 3D "
       "blend (cave biomes) at each.",
       {"json", "heights", "source_biome", "xyz"},
       RunSample},
      {"render",
       "",
       "Writes a PNG map of a block region, one pixel per column (or per --scale x --scale "
       "columns), of one --layer: dominant, blend, source, height, weight:ID or splat:T. An "
       "unknown layer, biome id or texture is a usage error. --slice=y:Y|x:X|z:Z draws a plane "
       "through the 3D world instead (vertical slices: --region names z or x, then y).",
       {"region", "out", "size", "layer", "scale", "slice"},
       RunRender},
      {"view",
       "",
       "Serves a browser map viewer of the target's worlds on --listen (default "
       "http://127.0.0.1:8080/): pan and zoom from 4 pixels per block to 1:256, layers, hover "
       "readout, two worlds side by side; tiles are `render`'s images. Runs until SIGINT/SIGTERM.",
       {"listen", "max_tile_renders"},
       RunView},
      {"check",
       "PATH...",
       "Loads world config files (or directories of *.json) as worldgen-server's --world_config "
       "does and prints each world's blender and the fingerprint servers will export for it "
       "(computed by this binary's engine: use the CLI of the release you deploy). Exit code 1 "
       "with the server's own message if a file would stop the server (also: a world that is not "
       "the expectedFingerprint its file sets). --live compares with the "
       "--target service before a rollout: each world is same, new, changed (its terrain changes "
       "for players who have it) or removed (served live, absent from the files); a changed or "
       "removed world fails the check (exit 1) unless --allow_changed names it.",
       {"live", "allow_changed", "json"},
       RunCheck},
      {"health",
       "",
       "Calls grpc.health.v1.Health/Check and prints the status. Exit code 0 iff "
       "SERVING (1 otherwise, also when the server cannot be reached).",
       {"service"},
       RunHealth},
      {"load",
       "",
       "Closed-loop load generator for GenerateChunk: prints throughput (chunks/s, MB/s), "
       "latency percentiles and errors by status code. Exit code 1 if any request failed. "
       "--y=MIN:MAX asks for 3D chunks (their sections of cells of --cell blocks), as chunk does.",
       {"concurrency", "duration", "requests", "pattern", "chunks_per_request", "rate", "size",
        "heights", "y", "cell", "area", "hot_set", "seed", "json", "progress"},
       RunLoad},
  };
  return *commands;
}

}  // namespace worldgen::cli
