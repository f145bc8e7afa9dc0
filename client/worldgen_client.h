// worldgen::Client: the C++ client a game server links to talk to worldgen replicas.
//
//   auto client = worldgen::Client::Connect("worldgen-lb:50051");
//   if (!client.ok()) ...;
//   absl::StatusOr<worldgen::ChunkView> chunk = (*client)->GenerateChunk(3, -2);
//   float w = chunk->Weight(/*biome_id=*/2, /*lx=*/0, /*lz=*/15);
//
//   absl::Status s = (*client)->GenerateRegion({.min_x = -4, .min_z = -4, .max_x = 3, .max_z = 3},
//                                              {.heights = true},
//                                              [&](worldgen::ChunkView chunk) { Store(chunk); });
//
// Errors are absl::Status with the gRPC status code and message (the codes are numerically equal).
//
// Deadlines and retries. Every call has one deadline, ClientOptions::deadline from the moment it
// starts, covering all its attempts. A failed attempt whose code is in ClientOptions::retry_codes
// (default: UNAVAILABLE, i.e. the request never reached a server or a replica went away, plus
// stream resets by a proxy in front of a replica that died and cancellations by a draining replica,
// see retry_stream_resets and retry_server_cancellations) is retried at most `max_retries` times,
// waiting RetryBackoff(options, k) before retry k: a fixed, jitter-free exponential schedule, so a
// test or an operator can predict it. RESOURCE_EXHAUSTED with the server's grpc-retry-pushback-ms
// trailer (an overloaded server saying when to come back, see honor_pushback) is retried after
// exactly that wait, if it ends before the deadline; without the trailer, or past the deadline, it
// is returned as it is. No other code is retried. The worldgen RPCs are pure functions of their
// request, so a retry is always safe. A streaming call (GenerateChunks/GenerateRegion) that fails
// with a retryable code is retried for the chunks not yet delivered only: every requested chunk
// reaches the callback exactly once, and a stream that fails after its last chunk has succeeded.
// A chunk that breaks the contract (ChunkView::Decode) or lacks what the call asked for (another
// size, cell size or y range, 2D for 3D or the reverse, no heights, source biomes or splat
// textures where they were asked for) ends the call with DATA_LOSS before it reaches the callback,
// so every accessor the caller uses because it asked has something to read.
//
// Connections. A Client made by Connect holds two HTTP/2 connections: calls of more than
// ClientOptions::bulk_columns columns (the server's --interactive_max_columns: its background
// class) go over one, all others over the other. HTTP/2 sends the frames of all of a connection's
// streams through one queue, so a one-chunk reply would otherwise wait behind every byte of bulk
// replies already written before it (measured: a one-chunk call's p99 went from 1 to 100-260 ms
// while bulk streams filled a shared connection, and stayed at 3-6 ms on a connection of its own),
// whatever order the server blends in.
//
// Thread safety: a Client is safe for concurrent use by any number of threads (share one per
// process; it multiplexes calls over its connections). Callbacks run on the calling thread, one
// at a time, before the call returns.
#ifndef WORLDGEN_CLIENT_WORLDGEN_CLIENT_H_
#define WORLDGEN_CLIENT_WORLDGEN_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/chunk_view.h"
#include "grpcpp/channel.h"
#include "worldgen/v1/worldgen.grpc.pb.h"

namespace worldgen {

struct ClientOptions {
  // World to query; empty selects the server's "default" world.
  std::string world;
  // If set, every call for `world` pins this fingerprint (WorldDescription.fingerprint; as
  // GenerateChunkRequest.world_fingerprint): a replica serving another config or version of the
  // world refuses with FAILED_PRECONDITION, which is not retried. Take it from DescribeWorld when
  // the game's world is created, and store it with the world.
  std::string world_fingerprint;
  // Deadline of each call, from its start, covering every attempt and backoff.
  absl::Duration deadline = absl::Seconds(10);
  // Retries after the first attempt for codes in retry_codes; 0 disables retries.
  int max_retries = 5;
  std::vector<absl::StatusCode> retry_codes = {absl::StatusCode::kUnavailable};
  // Also retry INTERNAL errors that are HTTP/2 stream resets ("Received RST_STREAM ..."): that is
  // how nginx and other proxies report a replica that died in the middle of a response. A worldgen
  // server reports its own errors in trailers, never with a reset.
  bool retry_stream_resets = true;
  // Also retry CANCELLED. The client never cancels its own calls, so a CANCELLED comes from the
  // other side: a replica shutting down cancels the calls that reach it after it began to drain
  // (seen through nginx, whose kept-alive upstream connection still sends them there).
  bool retry_server_cancellations = true;
  // Retry RESOURCE_EXHAUSTED that carries the server's grpc-retry-pushback-ms trailer, after the
  // wait it names (counted against max_retries), when that wait ends before the call's deadline.
  bool honor_pushback = true;
  // Backoff before retry k (k >= 1): min(max_backoff, initial_backoff * backoff_multiplier^(k-1)).
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(2);
  double backoff_multiplier = 2.0;
  // HTTP/2 keepalive pings while calls are in flight: one after keepalive_time without activity;
  // the connection is dropped (and the call fails UNAVAILABLE, so it is retried) if the ping is not
  // acknowledged within keepalive_timeout: a replica or proxy that vanished without closing the
  // connection is noticed. No pings on idle connections (gRPC servers answer those with GOAWAY
  // "too_many_pings" unless they permit them). Zero keepalive_time disables.
  absl::Duration keepalive_time = absl::Seconds(30);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // Upper bound of gRPC's own reconnect backoff, so a replica that comes back is found quickly.
  absl::Duration max_reconnect_backoff = absl::Seconds(1);
  // Calls of more columns than this (chunks x chunk_size^2, or points) use the bulk connection (see
  // "Connections" above); keep it equal to the server's --interactive_max_columns. A chunk call of
  // the world's chunk size (chunk_size 0) counts the size of the world's last reply, 16 before any.
  int64_t bulk_columns = 16384;
  // Send the routing key (worldgen.proto, "Routing key") with every call, so a balancer that hashes
  // it keeps a region's blends in one replica's caches.
  bool send_route_key = true;
  // Who is calling ("survival-eu-3/1.4"): sent at the start of every call's user-agent header,
  // before "worldgen-client" and gRPC's own, so the servers' call log (user_agent) tells one game
  // server from another. Printable ASCII, at most kMaxUserAgentBytes.
  std::string user_agent;
  // An API key the balancer knows this game server by (docs/operations.md, "API keys"): sent with
  // every call as `authorization: Bearer KEY`. Printable ASCII without spaces, at most
  // kMaxApiKeyBytes; empty sends none. Send keys over TLS only (ClientOptions::tls).
  std::string api_key;
  // The game server's tracing: called on the calling thread before each attempt of a call, it
  // returns the current span as a W3C traceparent ("00-<trace id>-<span id>-01", e.g. from
  // OpenTelemetry's propagator), or "" for none. The client sends it as the `traceparent` header,
  // and the replicas' call log names the call's trace_id and span_id. A value that is not a
  // traceparent fails the call with INVALID_ARGUMENT before anything is sent.
  std::function<std::string()> traceparent;
  // Transport security towards a balancer that terminates TLS (docs/operations.md, "TLS").
  // Unset: plaintext (a replica or balancer on a private network).
  struct Tls {
    // PEM certificates of the authorities the server's certificate must chain to; empty: the
    // system's roots (gRPC's default roots file).
    std::string root_certs_pem;
    // Mutual TLS: this client's certificate chain and private key, PEM; both or neither.
    std::string cert_chain_pem;
    std::string private_key_pem;
    // Or the same from files that are renewed in place (cert-manager, a mounted Kubernetes Secret,
    // a sidecar): instead of the *_pem fields, never beside them. Checked like them when the client
    // is made. Afterwards the first call after each `reload_interval` reads them again; when they
    // changed and pass the same checks, calls from then on go over new connections that present
    // the new certificate and trust the new roots (calls under way finish on the old ones). Files
    // that do not pass (a key that is not its certificate's, say, caught half-written) are not
    // taken: the client keeps what it has and reads again after the next interval
    // (ClientStats::tls_reloads, tls_refusals). Roots: root_certs_file, or empty for the system's.
    std::string root_certs_file;
    std::string cert_chain_file;
    std::string private_key_file;
    absl::Duration reload_interval = absl::Minutes(1);  // 1 s to 24 h
    // The name the server's certificate must be valid for, when it is not the target's host (a
    // target given as an IP address, or a balancer reached under another name); empty: the host.
    std::string server_name;
  };
  std::optional<Tls> tls;
};

// Most chunks one GenerateChunks or GenerateRegion call takes (calls are expanded into a set of
// pending chunks); no server accepts anywhere near this many (ServerLimits.max_chunks_per_request).
inline constexpr int64_t kMaxChunksPerCall = int64_t{1} << 20;
inline constexpr size_t kMaxUserAgentBytes = 64;
inline constexpr size_t kMaxApiKeyBytes = 256;

// The routing key of a call whose first chunk corner or point is block column (x, z) of `world`.
std::string RouteKey(const std::string& world, double x, double z);
inline constexpr char kRouteKeyHeader[] = "worldgen-route";
inline constexpr int kRouteRegionBlocks = 128;

// The wait before retry `retry` (1-based) under `options`.
absl::Duration RetryBackoff(const ClientOptions& options, int retry);

// What to compute besides weights, for the chunk calls.
struct ChunkRequestOptions {
  // Columns per chunk side: a power of two the server accepts (see ServerLimits); 0 = the world's.
  int chunk_size = 0;
  bool heights = false;
  bool dominant_biome = false;
  // The biome source's unblended biome per column: the raw map the blender read
  // (ChunkView::SourceBiome).
  bool source_biome = false;
  // The weights as RGBA8 splat textures (ChunkView::splat_texture); bounded by
  // ServerLimits.max_splat_bytes_per_chunk.
  bool splat = false;
  // 3D: the sections of [min_y, max_y) in cubic cells of cell_size blocks (ChunkView's cell
  // lookups); dominant_biome and source_biome are then per cell, heights and splat refused.
  struct Vertical {
    int64_t min_y = 0;
    int64_t max_y = 0;
    int cell_size = 4;
  };
  std::optional<Vertical> vertical = std::nullopt;
};

// What to compute besides weights, for the point calls.
struct PointRequestOptions {
  bool heights = false;
  // The biome source's unblended biome at each point (PointSample::source_biome).
  bool source_biome = false;
};

// A point of a 3D query (SamplePoints3D).
struct Point3 {
  double x = 0.0, y = 0.0, z = 0.0;
};

struct ChunkCoord {
  int64_t x = 0;
  int64_t z = 0;
  friend bool operator==(const ChunkCoord&, const ChunkCoord&) = default;
};

// Inclusive rectangle of chunks [min_x, max_x] x [min_z, max_z].
struct ChunkRegion {
  int64_t min_x = 0;
  int64_t min_z = 0;
  int64_t max_x = 0;
  int64_t max_z = 0;
};

// The blend at one point.
struct PointSample {
  struct Weight {
    uint32_t biome_id = 0;
    float weight = 0.0f;
  };
  std::vector<Weight> weights;  // Non-zero weights only, ascending biome id.
  float height = 0.0f;          // Only if heights were requested.
  uint32_t dominant_biome = 0;
  uint32_t source_biome = 0;  // Only if source biomes were requested.
};

// Counters since the client was created; cheap to read at any time.
struct ClientStats {
  int64_t calls = 0;     // Calls started (one per public method call).
  int64_t attempts = 0;  // RPC attempts, including retries.
  int64_t retries = 0;   // Attempts that were retries.
  // ClientOptions::Tls from files: renewals taken (new connections), and reads of files that
  // changed but did not pass the checks (the connections in use were kept).
  int64_t tls_reloads = 0;
  int64_t tls_refusals = 0;
  // Where the server says the calls' time went, summed over the attempts it answered after
  // admitting them (its `server-timing` trailer): waiting for a blend thread, which grows when the
  // service is too busy for its load, and blending. What a call took beyond both was the network,
  // the balancer, replies waiting to be read, or a refusal and retry.
  absl::Duration server_queued;
  absl::Duration server_blend;
};

class Client {
 public:
  // Creates a channel to `target` (any gRPC target: "host:port", "dns:///name:port", ...). Does not
  // wait for a connection; the first call connects. INVALID_ARGUMENT for bad options.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& target,
                                                         ClientOptions options = {});
  // Uses an existing channel (tests, custom credentials).
  static std::unique_ptr<Client> FromChannel(std::shared_ptr<grpc::Channel> channel,
                                             ClientOptions options = {});

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  const ClientOptions& options() const { return options_; }

  // DescribeWorld: the world's full configuration and the server's limits; of ClientOptions::world,
  // or of the world named (empty: the server's default world).
  absl::StatusOr<v1::WorldDescription> DescribeWorld();
  absl::StatusOr<v1::WorldDescription> DescribeWorld(absl::string_view world);

  // One chunk.
  absl::StatusOr<ChunkView> GenerateChunk(int64_t chunk_x, int64_t chunk_z,
                                          const ChunkRequestOptions& request = {});

  // Streams the chunks (in the server's order, each distinct chunk exactly once; duplicates in
  // `chunks` are requested once) to `on_chunk`. Returns OK once
  // every chunk was delivered, or the error that ended the call; chunks delivered before an error
  // stay delivered. The number of chunks is limited by ServerLimits.max_chunks_per_request.
  absl::Status GenerateChunks(absl::Span<const ChunkCoord> chunks,
                              const ChunkRequestOptions& request,
                              const std::function<void(ChunkView)>& on_chunk);
  absl::Status GenerateRegion(const ChunkRegion& region, const ChunkRequestOptions& request,
                              const std::function<void(ChunkView)>& on_chunk);

  // Blends arbitrary points (x, z) in block coordinates; one sample per point, in order.
  absl::StatusOr<std::vector<PointSample>> SamplePoints(
      absl::Span<const std::pair<double, double>> points, const PointRequestOptions& request = {});
  // The same at (x, y, z): a world's cave biomes blended in 3D (its column's weights where no cave
  // reaches; height is the column's, source_biome the 3D map's).
  absl::StatusOr<std::vector<PointSample>> SamplePoints3D(absl::Span<const Point3> points,
                                                          const PointRequestOptions& request = {});
  // The same call with the raw messages (the CLI prints these as JSON). `request.world` is
  // filled from the options if empty.
  absl::StatusOr<v1::SampleWeightsResponse> SampleWeights(v1::SampleWeightsRequest request);

  // Where the world's blender reads the biome map in the box [min_x, max_x) x [min_z, max_z)
  // (ListSamplingPoints): lattice points, grid vertices or cell points, each with its biome id.
  // `request.world` is filled from the options if empty.
  absl::StatusOr<v1::ListSamplingPointsResponse> ListSamplingPoints(
      v1::ListSamplingPointsRequest request);

  // grpc.health.v1.Health/Check for `service` ("" = the whole server). Returns the serving status
  // name ("SERVING", "NOT_SERVING", "UNKNOWN", "SERVICE_UNKNOWN"); no retries.
  absl::StatusOr<std::string> CheckHealth(const std::string& service = "");

  ClientStats stats() const;

 private:
  // Runs `attempt` until it succeeds, fails with a code not in retry_codes, runs out of retries, or
  // the call's deadline passes. `attempt` gets the deadline for its grpc::ClientContext and returns
  // its status through AttemptStatus.
  absl::Status WithRetries(const std::function<absl::Status(absl::Time deadline)>& attempt);
  // An attempt's status, with the server's pushback kept on it (for IsRetryable and WithRetries),
  // after adding the server's timing of it to the stats.
  absl::Status AttemptStatus(const grpc::Status& status, const grpc::ClientContext& context);
  // Prepares an attempt's context: its deadline, API key and traceparent (INVALID_ARGUMENT when
  // ClientOptions::traceparent gave a malformed one).
  absl::Status StartAttempt(grpc::ClientContext& context, absl::Time deadline) const;
  bool IsRetryable(const absl::Status& status) const;
  // Waits until `until` while driving the channel's reconnection.
  void BackOff(absl::Time until);
  absl::Status StreamChunks(v1::GenerateChunkRequest request, size_t expected,
                            const std::function<void(ChunkView)>& on_chunk);
  // Adds the routing key for block column (x, z) to `context` (if send_route_key).
  void AddRouteKey(grpc::ClientContext& context, const std::string& world, double x,
                   double z) const;
  // The client's connections: a channel for small calls, one for bulk calls.
  struct Channels {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::WorldGen::Stub> stub;
    // The bulk calls' connection (FromChannel: the same channel as the others).
    std::unique_ptr<v1::WorldGen::Stub> bulk_stub;
  };
  // Remakes the channels when TLS files changed (Connect with ClientOptions::Tls::*_file).
  struct TlsReload;
  Client(std::shared_ptr<const Channels> channels, ClientOptions options,
         std::unique_ptr<TlsReload> reload);

  // The channels for an attempt, read again from the TLS files when due; keep the pointer for as
  // long as the attempt uses them.
  std::shared_ptr<const Channels> CurrentChannels();
  // The stub of `channels` for a call of `columns` columns: the bulk connection's past
  // bulk_columns.
  v1::WorldGen::Stub& StubFor(const Channels& channels, int64_t columns) const;

  ClientOptions options_;
  // The channels, which never change (null with TLS files: reload_ holds them then).
  const std::shared_ptr<const Channels> channels_;
  const std::unique_ptr<TlsReload> reload_;
  // Chunk side of the world's replies to chunk_size 0 requests, as last seen.
  std::atomic<int64_t> world_chunk_size_{16};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> attempts_{0};
  std::atomic<int64_t> retries_{0};
  std::atomic<int64_t> server_queued_ns_{0};
  std::atomic<int64_t> server_blend_ns_{0};
};

}  // namespace worldgen

#endif  // WORLDGEN_CLIENT_WORLDGEN_CLIENT_H_
