// worldgen-server: serves the worldgen.v1.WorldGen gRPC service, health and reflection, and
// Prometheus metrics. Flags: --help. Exit codes: 0 after a clean SIGTERM/SIGINT shutdown, 1 if a
// port cannot be bound, 2 for bad flags or world configs.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "engine/biome_sample_cache.h"
#include "engine/world.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_posix.h"
#include "prometheus/exposer.h"
#include "proto/world_config.h"
#include "proto/world_registry.h"
#include "server/network/tcp_listener.h"
#include "server/scheduling/blend_pool.h"
#include "server/scheduling/call_scheduler.h"
#include "server/scheduling/cpu_budget.h"
#include "server/service/fair_share.h"
#include "server/service/metrics.h"
#include "server/service/worldgen_service.h"

ABSL_FLAG(int32_t, port, 50051, "gRPC port; 0 picks a free one (printed in the start line)");
ABSL_FLAG(std::string, listen_address, "0.0.0.0",
          "Address for gRPC and metrics (0.0.0.0 in a container, 127.0.0.1 in tests)");
ABSL_FLAG(
    int32_t, metrics_port, 9464,
    "Prometheus metrics port (path /metrics); 0 picks a free one (printed in the start line)");
ABSL_FLAG(int32_t, blend_threads, 0,
          "Blending threads; 0 = the CPUs this process may use: the affinity mask, lowered by a "
          "container's CPU limit (cgroup CFS quota), rounded up");
ABSL_FLAG(uint64_t, cache_bytes, 64ull << 20,
          "Capacity of the biome sample cache shared by all worlds, in bytes; 0 disables it");
ABSL_FLAG(
    uint64_t, chunk_cache_bytes, 0,
    "Capacity of the cache of encoded GenerateChunk replies, in bytes: repeats of a chunk (same "
    "world, size and options) are sent without blending. 0 (default) keeps none; concurrent "
    "requests for one chunk are blended once either way");
ABSL_FLAG(
    std::vector<std::string>, world_config, {},
    "World config JSON file (protobuf JSON mapping of worldgen.v1.WorldConfig) or a directory "
    "of *.json files; repeatable and comma-separated (from --flagfile or --fromenv: its last "
    "value). The embedded world \"default\" is always served");
ABSL_FLAG(int32_t, max_chunks_per_request, 1024, "Most chunks one GenerateChunk call may ask for");
ABSL_FLAG(int32_t, max_points_per_request, 4096, "Most points one SampleWeights call may ask for");
ABSL_FLAG(int32_t, max_sections_per_request, 6144,
          "Most chunk sections (chunks x sections of the vertical range) one 3D GenerateChunk call "
          "may ask for");
ABSL_FLAG(int32_t, max_sampling_points_per_request,
          worldgen::RequestLimits{}.max_sampling_points_per_request,
          "Most sampling points one ListSamplingPoints box may hold (the blender's bound)");
ABSL_FLAG(
    double, max_queue_seconds, worldgen::CallScheduler::Options{}.max_queue_seconds,
    "Most admitted, unstarted blending work, in seconds of the whole pool's time (chunks x "
    "chunk_size^2 columns x the measured cost per column / --blend_threads). A background call "
    "past it gets RESOURCE_EXHAUSTED with a retry-after; an interactive call is refused only "
    "when interactive work alone passes it, and background calls are shed (the newest of the "
    "game server with the most background work first) to make room for it");
ABSL_FLAG(
    int64_t, max_reply_bytes, int64_t{256} << 20,
    "Bytes all calls together may hold for blended replies not yet sent (each outstanding chunk "
    "reserves its worst-case encoded size); a new call that would exceed it gets "
    "RESOURCE_EXHAUSTED, running streams slow down to one chunk at a time. Background calls "
    "may reserve at most 7/8 of it: the rest is kept for interactive calls");
ABSL_FLAG(
    int64_t, interactive_max_columns, 16384,
    "Calls of at most this many columns (chunks x chunk_size^2, or points) are interactive: "
    "they take turns ahead of bigger (background) calls, which keep a quarter of the threads");
ABSL_FLAG(
    double, admission_deadline_fill, 0.5,
    "Share (0, 1] of a call's remaining deadline its estimated blending (and that of the work "
    "ahead of it) may fill; a call that does not fit is refused at once with "
    "RESOURCE_EXHAUSTED. The rest is headroom for writing replies and the client's reading");
ABSL_FLAG(int32_t, max_request_bytes, 1 << 20,
          "Largest request message accepted (bigger: RESOURCE_EXHAUSTED). Compressed requests are "
          "refused before they are read (UNIMPLEMENTED naming the encoding): only identity is "
          "accepted");
ABSL_FLAG(int32_t, max_concurrent_streams, 256,
          "Calls one HTTP/2 connection may have open at once");
ABSL_FLAG(
    int64_t, grpc_memory_bytes, int64_t{512} << 20,
    "gRPC's own memory quota (connections, HTTP/2 buffers); under pressure it refuses new work");
ABSL_FLAG(bool, http2_guard, false,
          "For a replica exposed to clients without a balancer: relay each gRPC connection through "
          "the server's HTTP/2 frame guard, which closes a connection (GOAWAY ENHANCE_YOUR_CALM) "
          "that resets streams faster than --http2_max_resets_per_second (the rapid reset attack, "
          "which gRPC 1.51 does not limit) or floods PING/SETTINGS. Off by default: behind nginx "
          "(docker/nginx/) the balancer holds these limits, and the relay would cost a thread "
          "crossing and a copy each way per connection");
ABSL_FLAG(int32_t, http2_max_resets_per_second, 200,
          "With --http2_guard: RST_STREAM frames one connection may send per second on average, in "
          "bursts of at most this many");
ABSL_FLAG(
    int32_t, http2_max_control_frames_per_second, 200,
    "With --http2_guard: SETTINGS and PING frames (other than acknowledgements) one connection "
    "may send per second on average, in bursts of at most this many (each one queues an "
    "answer the server holds until the client reads it)");
ABSL_FLAG(double, max_connection_idle_seconds, 300,
          "A connection with no call for this long is closed (GOAWAY)");
ABSL_FLAG(
    int32_t, metrics_threads, 8,
    "Threads serving /metrics; each idle or slow HTTP client of that port occupies one for at "
    "most --metrics_request_timeout_ms");
ABSL_FLAG(int32_t, metrics_request_timeout_ms, 2000,
          "A /metrics client must send its request within this many milliseconds");
ABSL_FLAG(
    double, shutdown_drain_delay_seconds, 5,
    "On SIGTERM/SIGINT: how long health reports NOT_SERVING while calls are still accepted, so "
    "load balancers stop sending before the server stops accepting");
ABSL_FLAG(int32_t, stream_buffer_chunks, worldgen::ServiceOptions{}.stream_buffer_chunks,
          "Chunks a GenerateChunk stream may have blending or waiting for a slow reader (deeper "
          "lets a pool thread blend a stream's chunks back to back instead of waking per write)");
ABSL_FLAG(
    int64_t, stream_buffer_bytes, worldgen::ServiceOptions{}.stream_buffer_bytes,
    "At most this many bytes of worst-case replies per stream: big chunks get a shallower "
    "buffer than --stream_buffer_chunks (at least one chunk), so a few streams of them do not "
    "hold the whole --max_reply_bytes");
ABSL_FLAG(std::string, call_log, "errors",
          "Call log on stderr, one JSON line per call (worldgen.v1.CallLogLine in "
          "proto/worldgen/v1/call_log.proto): errors (every status but OK and CANCELLED, and "
          "calls slower than --call_log_slow_ms), all, or off");
ABSL_FLAG(int32_t, call_log_slow_ms, 0,
          "With --call_log=errors: also log OK and CANCELLED calls that took at least this many "
          "milliseconds (a GenerateChunk stream: this many per chunk); 0 logs none of them");
ABSL_FLAG(int32_t, call_log_lines_per_second, 100,
          "Most call-log lines written per second (bursts of as many); the lines over it are "
          "dropped and counted in the next line's `suppressed`");
ABSL_FLAG(std::string, fair_share, "peer",
          "Whom work is shared fairly between, interactive and background each (a game server "
          "flooding the server is refused or shed for its own queued work, not everyone's): peer "
          "(the connection's IP address), "
          "forwarded_for (the last address in X-Forwarded-For, the one a balancer in front saw), "
          "client_header (x-worldgen-client, which the deployment's nginx sets to the game "
          "server's address and, with mutual TLS or API keys, its certificate's subject or key's "
          "name), or off (calls, not "
          "clients). Set forwarded_for and client_header only behind a balancer that sets the "
          "header, as a client could name any");
ABSL_FLAG(double, shutdown_grace_seconds, 10,
          "After the drain delay: how long in-flight calls may take to finish before they are "
          "cancelled. A second SIGTERM/SIGINT exits at once");

namespace worldgen {
namespace {

constexpr int kExitBindFailure = 1;
constexpr int kExitBadConfig = 2;
// At shutdown, how long clients may take to read their finished streams and close (see Run).
constexpr absl::Duration kShutdownLinger = absl::Seconds(1);

[[noreturn]] void Die(int code, const std::string& message) {
  std::fprintf(stderr, "worldgen-server: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(code);
}

// Every --world_config value on the command line (absl keeps only the last occurrence of a flag).
std::vector<std::string> WorldConfigValues(int argc, char** argv) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (absl::ConsumePrefix(&arg, "world_config=")) {
      values.emplace_back(arg);
    } else if (arg == "world_config" && i + 1 < argc) {
      values.emplace_back(argv[++i]);
    }
  }
  return values;
}

std::string HostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

void CheckPositive(absl::string_view name, int64_t value) {
  if (value < 1) Die(kExitBadConfig, absl::StrCat("--", name, " = ", value, " must be at least 1"));
}

double NonNegativeSeconds(absl::string_view name, double value) {
  if (!(value >= 0) || value > 86400) {
    Die(kExitBadConfig, absl::StrCat("--", name, " = ", value, " must be in [0, 86400] seconds"));
  }
  return value;
}

std::chrono::system_clock::duration ToChrono(double seconds) {
  return std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

int Run(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, so by default every absl::Mutex lock that may block
  // (gRPC's own locks are absl::Mutex) runs Abseil's debug deadlock check, which takes one
  // process-wide spin lock: threads that share no lock still queue on it (bench/lock_bench.cc
  // measures it; figures in docs/performance.md on cores). The check is a debugging aid; a
  // server runs without it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::SetProgramUsageMessage(
      "worldgen-server [flags]: serves biome blending weights over gRPC (worldgen.v1.WorldGen), "
      "with health, reflection and Prometheus metrics.");
  // --help lists the flags defined in this file (absl's default looks for <program>.cc).
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view path) {
    return absl::EndsWith(path, "server/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<std::string> config_values = WorldConfigValues(argc, argv);
  absl::ParseCommandLine(argc, argv);
  // Abseil keeps the flag's last value: one the command line did not end with came from
  // --flagfile or --fromenv, and counts too.
  if (const std::string last = absl::StrJoin(absl::GetFlag(FLAGS_world_config), ",");
      !last.empty() && (config_values.empty() || config_values.back() != last)) {
    config_values.push_back(last);
  }
  const std::vector<std::string> config_paths = WorldConfigPaths(config_values);

  // Signals are taken synchronously by sigwait below; block them before any thread starts so every
  // thread inherits the mask.
  // A shell starts background jobs with SIGINT ignored, and an ignored signal never reaches
  // sigwait.
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const int port = absl::GetFlag(FLAGS_port);
  const int metrics_port = absl::GetFlag(FLAGS_metrics_port);
  if (port < 0 || port > 65535)
    Die(kExitBadConfig, absl::StrCat("--port = ", port, " is not a port"));
  if (metrics_port < 0 || metrics_port > 65535) {
    Die(kExitBadConfig, absl::StrCat("--metrics_port = ", metrics_port, " is not a port"));
  }
  int blend_threads = absl::GetFlag(FLAGS_blend_threads);
  if (blend_threads < 0) Die(kExitBadConfig, "--blend_threads must be >= 0 (0 = the CPU budget)");
  const CpuBudget cpu_budget = DetectCpuBudget();
  const bool blend_threads_from_budget = blend_threads == 0;
  if (blend_threads_from_budget) blend_threads = cpu_budget.cpus;
  CheckPositive("max_chunks_per_request", absl::GetFlag(FLAGS_max_chunks_per_request));
  CheckPositive("max_points_per_request", absl::GetFlag(FLAGS_max_points_per_request));
  CheckPositive("max_sections_per_request", absl::GetFlag(FLAGS_max_sections_per_request));
  CheckPositive("max_sampling_points_per_request",
                absl::GetFlag(FLAGS_max_sampling_points_per_request));
  const double max_queue_seconds = absl::GetFlag(FLAGS_max_queue_seconds);
  if (!(max_queue_seconds > 0 && max_queue_seconds <= 86400)) {
    Die(kExitBadConfig,
        absl::StrCat("--max_queue_seconds = ", max_queue_seconds, " must be in (0, 86400]"));
  }
  CheckPositive("stream_buffer_chunks", absl::GetFlag(FLAGS_stream_buffer_chunks));
  CheckPositive("stream_buffer_bytes", absl::GetFlag(FLAGS_stream_buffer_bytes));
  CheckPositive("max_reply_bytes", absl::GetFlag(FLAGS_max_reply_bytes));
  CheckPositive("interactive_max_columns", absl::GetFlag(FLAGS_interactive_max_columns));
  CheckPositive("max_request_bytes", absl::GetFlag(FLAGS_max_request_bytes));
  CheckPositive("max_concurrent_streams", absl::GetFlag(FLAGS_max_concurrent_streams));
  CheckPositive("http2_max_resets_per_second", absl::GetFlag(FLAGS_http2_max_resets_per_second));
  CheckPositive("http2_max_control_frames_per_second",
                absl::GetFlag(FLAGS_http2_max_control_frames_per_second));
  CheckPositive("grpc_memory_bytes", absl::GetFlag(FLAGS_grpc_memory_bytes));
  CheckPositive("metrics_threads", absl::GetFlag(FLAGS_metrics_threads));
  CheckPositive("metrics_request_timeout_ms", absl::GetFlag(FLAGS_metrics_request_timeout_ms));
  CheckPositive("call_log_lines_per_second", absl::GetFlag(FLAGS_call_log_lines_per_second));
  absl::StatusOr<CallLog::Level> call_log_level =
      CallLog::ParseLevel(absl::GetFlag(FLAGS_call_log));
  if (!call_log_level.ok()) {
    Die(kExitBadConfig, absl::StrCat("--call_log: ", call_log_level.status().message()));
  }
  absl::StatusOr<FairShare> fair_share = ParseFairShare(absl::GetFlag(FLAGS_fair_share));
  if (!fair_share.ok()) {
    Die(kExitBadConfig, absl::StrCat("--fair_share: ", fair_share.status().message()));
  }
  if (absl::GetFlag(FLAGS_call_log_slow_ms) < 0) {
    Die(kExitBadConfig, absl::StrCat("--call_log_slow_ms = ", absl::GetFlag(FLAGS_call_log_slow_ms),
                                     " must be >= 0"));
  }
  const double deadline_fill = absl::GetFlag(FLAGS_admission_deadline_fill);
  if (!(deadline_fill > 0 && deadline_fill <= 1)) {
    Die(kExitBadConfig,
        absl::StrCat("--admission_deadline_fill = ", deadline_fill, " must be in (0, 1]"));
  }
  const double grace_seconds =
      NonNegativeSeconds("shutdown_grace_seconds", absl::GetFlag(FLAGS_shutdown_grace_seconds));
  const double drain_seconds = NonNegativeSeconds(
      "shutdown_drain_delay_seconds", absl::GetFlag(FLAGS_shutdown_drain_delay_seconds));
  const double idle_seconds = NonNegativeSeconds("max_connection_idle_seconds",
                                                 absl::GetFlag(FLAGS_max_connection_idle_seconds));
  if (idle_seconds < 0.001) Die(kExitBadConfig, "--max_connection_idle_seconds must be > 0");
  const std::string listen_address = absl::GetFlag(FLAGS_listen_address);
  const uint64_t cache_bytes = absl::GetFlag(FLAGS_cache_bytes);

  if (absl::Status forced = CheckForcedSimdVariant(); !forced.ok()) {
    Die(kExitBadConfig, std::string(forced.message()));
  }
  absl::StatusOr<std::unique_ptr<const WorldRegistry>> worlds = WorldRegistry::Load(config_paths);
  if (!worlds.ok())
    Die(kExitBadConfig, absl::StrCat("--world_config: ", worlds.status().message()));

  std::unique_ptr<BiomeSampleCache> cache;
  if (cache_bytes > 0) cache = std::make_unique<BiomeSampleCache>(cache_bytes);
  BlendPool pool(blend_threads);
  CallScheduler::Options scheduler_options;
  scheduler_options.max_queue_seconds = max_queue_seconds;
  scheduler_options.max_reply_bytes = absl::GetFlag(FLAGS_max_reply_bytes);
  scheduler_options.interactive_max_columns = absl::GetFlag(FLAGS_interactive_max_columns);
  scheduler_options.deadline_fill = absl::GetFlag(FLAGS_admission_deadline_fill);
  CallScheduler scheduler(&pool, scheduler_options);
  ChunkReplyFlights replies(static_cast<size_t>(absl::GetFlag(FLAGS_chunk_cache_bytes)));
  ServerMetrics metrics(cache.get(), &scheduler, &replies);
  for (const std::string& name : (*worlds)->names()) {
    metrics.RecordWorld(name, (*worlds)->fingerprint(name));
  }

  std::unique_ptr<prometheus::Exposer> exposer;
  int bound_metrics_port = 0;
  try {
    // civetweb: a fixed set of threads, each held by one connection for at most the request
    // timeout, so idle or slow clients of the metrics port delay a scrape by a bounded time.
    exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", HostPort(listen_address, metrics_port), "num_threads",
        absl::StrCat(absl::GetFlag(FLAGS_metrics_threads)), "request_timeout_ms",
        absl::StrCat(absl::GetFlag(FLAGS_metrics_request_timeout_ms)), "linger_timeout_ms", "0"});
    for (const auto& collectable : metrics.collectables())
      exposer->RegisterCollectable(collectable);
    std::vector<int> ports = exposer->GetListeningPorts();
    if (!ports.empty()) bound_metrics_port = ports.front();
  } catch (const std::exception& e) {
    Die(kExitBindFailure, absl::StrCat("cannot serve metrics on ",
                                       HostPort(listen_address, metrics_port), ": ", e.what()));
  }

  // The gRPC port is accepted by TcpListener, not by gRPC: it keeps accepting after file
  // descriptors ran out (gRPC 1.51's own listener stops for good), and hands connections to gRPC,
  // which gives them the channel arguments set below.
  absl::StatusOr<std::unique_ptr<TcpListener>> listener = TcpListener::Bind(listen_address, port);
  if (!listener.ok()) {
    Die(kExitBindFailure, absl::StrCat("cannot serve gRPC on ", HostPort(listen_address, port),
                                       ": ", listener.status().message()));
  }
  const int bound_port = (*listener)->port();

  ServiceOptions options;
  options.limits.max_chunks_per_request = absl::GetFlag(FLAGS_max_chunks_per_request);
  options.limits.max_points_per_request = absl::GetFlag(FLAGS_max_points_per_request);
  options.limits.max_sections_per_request = absl::GetFlag(FLAGS_max_sections_per_request);
  options.limits.max_sampling_points_per_request =
      absl::GetFlag(FLAGS_max_sampling_points_per_request);
  options.stream_buffer_chunks = absl::GetFlag(FLAGS_stream_buffer_chunks);
  options.stream_buffer_bytes = absl::GetFlag(FLAGS_stream_buffer_bytes);
  options.fair_share = *fair_share;
  // gRPC names connections handed over by descriptor "fd:N"; the listener knows their addresses.
  options.peer_name = [listener = listener->get()](absl::string_view peer,
                                                   absl::Time call_started) {
    return listener->PeerOf(peer, call_started);
  };
  std::unique_ptr<CallLog> call_log;
  if (*call_log_level != CallLog::Level::kOff) {
    call_log = std::make_unique<CallLog>(
        CallLog::Options{.level = *call_log_level,
                         .slow = absl::Milliseconds(absl::GetFlag(FLAGS_call_log_slow_ms)),
                         .lines_per_second = absl::GetFlag(FLAGS_call_log_lines_per_second)},
        CallLog::StderrSink(), options.peer_name);
    options.call_log = call_log.get();
  }
  WorldGenService service(worlds->get(), &scheduler, cache.get(), &replies, &metrics, options);

  grpc::EnableDefaultHealthCheckService(true);
  // gRPC's health service is built without protobuf descriptors, so reflection lists it but could
  // not describe it (grpcurl: "Symbol not found"). Naming a message of our compiled health.proto
  // links its descriptor into the binary and registers it in the pool reflection reads.
  (void)grpc::health::v1::HealthCheckResponse::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Compressed requests are refused when their headers arrive, before gRPC reads a byte of the
  // message: gRPC 1.51 inflates a whole message before checking its size, so a 1 MB gzip bomb held
  // a GiB. Only identity is accepted (and advertised); a gzip or deflate request gets UNIMPLEMENTED
  // naming its encoding.
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  // Hostile or broken clients: bounded requests, bounded streams per
  // connection, idle connections closed, ping floods answered with GOAWAY (a client may ping at
  // most every 10 s without data, two strikes), and gRPC's own memory capped by a resource quota.
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_request_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             absl::GetFlag(FLAGS_max_concurrent_streams));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             static_cast<int>(std::min(idle_seconds * 1000, 2e9)));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  grpc::ResourceQuota quota("worldgen-server");
  quota.Resize(static_cast<size_t>(absl::GetFlag(FLAGS_grpc_memory_bytes)));
  builder.SetResourceQuota(quota);
  // At shutdown: how long the relay may take to pass the connections' last bytes on.
  absl::Duration relay_drain = absl::ZeroDuration();
  if (absl::GetFlag(FLAGS_http2_guard)) {
    ConnectionRelay::Options relay;
    relay.threads = std::clamp(cpu_budget.cpus / 4, 1, 2);
    relay.frame_limits.max_resets_per_second = absl::GetFlag(FLAGS_http2_max_resets_per_second);
    relay.frame_limits.max_control_frames_per_second =
        absl::GetFlag(FLAGS_http2_max_control_frames_per_second);
    relay.on_cut = [&metrics](ConnectionRelay::CutReason reason) {
      switch (reason) {
        case ConnectionRelay::CutReason::kResetFlood:
          return metrics.RecordConnectionCut("rst_flood");
        case ConnectionRelay::CutReason::kControlFlood:
          return metrics.RecordConnectionCut("control_flood");
        case ConnectionRelay::CutReason::kNotHttp2:
          return metrics.RecordConnectionCut("not_http2");
      }
    };
    // gRPC closes its ends of the connections when Server::Wait() returns (a second at most); each
    // connection then takes at most the relay's linger.
    relay_drain = absl::Seconds(1) + relay.linger;
    (*listener)->GuardHttp2(std::move(relay));
  }
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    Die(kExitBindFailure, absl::StrCat("cannot serve gRPC on ", HostPort(listen_address, port)));
  }
  (*listener)->Start(
      [grpc_server = server.get()](int fd) { grpc::AddInsecureChannelFromFd(grpc_server, fd); });
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  const std::string service_name = v1::WorldGen::service_full_name();
  health->SetServingStatus(true);
  health->SetServingStatus(service_name, true);

  std::printf(
      "worldgen-server listening on %s metrics %s worlds=[%s] blend_threads=%d (%s) "
      "cache_bytes=%llu simd=[%s]\n",
      HostPort(listen_address, bound_port).c_str(),
      HostPort(listen_address, bound_metrics_port).c_str(),
      absl::StrJoin((*worlds)->names(), ",").c_str(), blend_threads,
      blend_threads_from_budget ? absl::StrCat("CPU budget: ", cpu_budget.why).c_str()
                                : "--blend_threads",
      static_cast<unsigned long long>(cache_bytes), SimdVariantsInUse().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0) {
  }

  // Drain: health turns NOT_SERVING first while calls are still accepted, so a load balancer sees
  // it and stops sending; then new calls are refused and those in flight get the grace to finish.
  health->SetServingStatus(service_name, false);
  health->SetServingStatus(false);
  std::printf("worldgen-server: %s: draining (NOT_SERVING; accepting for %gs, then grace %gs)\n",
              strsignal(signal_number), drain_seconds, grace_seconds);
  std::fflush(stdout);
  // A second signal exits at once (an operator who means it, or an orchestrator out of patience).
  std::thread([stop_signals] {
    int second = 0;
    while (sigwait(&stop_signals, &second) != 0) {
    }
    std::printf("worldgen-server: %s again: exiting now\n", strsignal(second));
    std::fflush(stdout);
    _exit(128 + second);
  }).detach();
  std::this_thread::sleep_for(ToChrono(drain_seconds));
  (*listener)->Stop();
  // gRPC closes each connection as soon as its calls are done, which resets it if the client is
  // still reading the last chunks: hold the sockets open past that, and close them gracefully after
  // (within the grace, at most kShutdownLinger: connections still open then are idle ones).
  (*listener)->HoldDirectConnections();
  const absl::Time grace_end = absl::Now() + absl::Seconds(grace_seconds);
  server->Shutdown(std::chrono::system_clock::now() + ToChrono(grace_seconds));
  server->Wait();
  const int cut = (*listener)->ReleaseHeldConnections(
      std::max(absl::ZeroDuration(), std::min(kShutdownLinger, grace_end - absl::Now())));
  if (cut > 0) std::printf("worldgen-server: closed %d connection(s) clients kept open\n", cut);
  // The relayed connections pass their last bytes (a stream's final chunks and status) on.
  (*listener)->CloseRelayedConnections(relay_drain);
  pool.Shutdown();
  std::printf("worldgen-server: stopped\n");
  std::fflush(stdout);
  std::fflush(stderr);
  // Every call is finished and every blend task has run. Skip the destructors: stopping the metrics
  // exposer (civetweb) alone takes about two seconds, which would only delay a rolling restart.
  _exit(0);
}

}  // namespace
}  // namespace worldgen

int main(int argc, char** argv) { return worldgen::Run(argc, argv); }
