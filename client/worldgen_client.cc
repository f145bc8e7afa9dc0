#include "client/worldgen_client.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "google/protobuf/stubs/common.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/x509.h"
#include "proto/call_headers.h"
#include "proto/request_defaults.h"

namespace worldgen {
namespace {

// The longest keepalive or reconnect duration gRPC's int milliseconds hold.
constexpr absl::Duration kMaxChannelDuration = absl::Milliseconds(std::numeric_limits<int>::max());

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// Where AttemptStatus keeps the server's grpc-retry-pushback-ms on the absl::Status it returns.
constexpr absl::string_view kPushbackPayload = "worldgen/client/retry_pushback_ms";

// An attempt's outcome, with the server's pushback (a non-negative whole number of milliseconds in
// the trailer; anything else means "do not retry", as gRPC's own retry policy reads it).
absl::Status WithPushback(const grpc::Status& status, const grpc::ClientContext& context) {
  absl::Status result = FromGrpc(status);
  if (result.ok()) return result;
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("grpc-retry-pushback-ms");
  int64_t millis = -1;
  if (it != trailers.end() &&
      absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &millis) &&
      millis >= 0) {
    result.SetPayload(kPushbackPayload, absl::Cord(absl::StrCat(millis)));
  }
  return result;
}

// The pushback WithPushback kept, if any.
std::optional<absl::Duration> Pushback(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPushbackPayload);
  int64_t millis = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &millis))
    return std::nullopt;
  return absl::Milliseconds(millis);
}

void SetDeadline(grpc::ClientContext& context, absl::Time deadline) {
  if (deadline != absl::InfiniteFuture()) context.set_deadline(absl::ToChronoTime(deadline));
}

// PEM text in an OpenSSL memory BIO (read-only, no copy).
std::unique_ptr<BIO, decltype(&BIO_free)> PemBio(const std::string& pem) {
  return {BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free};
}

// The certificates of `pem` (at least one, all of the text), or an error naming `field`.
absl::StatusOr<std::vector<std::unique_ptr<X509, decltype(&X509_free)>>> ParseCertificates(
    absl::string_view field, const std::string& pem) {
  std::vector<std::unique_ptr<X509, decltype(&X509_free)>> certificates;
  auto bio = PemBio(pem);
  ERR_clear_error();
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certificates.emplace_back(certificate, &X509_free);
  }
  // The loop ends at the first thing that is not a certificate: the text's end is the only
  // good reason.
  const unsigned long error = ERR_peek_last_error();
  ERR_clear_error();
  const bool at_end = ERR_GET_LIB(error) == ERR_LIB_PEM &&
                      ERR_GET_REASON(error) == PEM_R_NO_START_LINE && BIO_eof(bio.get()) == 1;
  if (certificates.empty() || !at_end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClientOptions.tls.", field, ": ",
        certificates.empty()
            ? "holds no PEM certificate"
            : absl::StrCat("certificate ", certificates.size() + 1, " is not a PEM certificate")));
  }
  return certificates;
}

// One PEM input of ClientOptions::tls: its field, the file it was read from (empty for a *_pem
// field) and its text (unset: not given).
struct PemInput {
  std::string field;
  std::string path;
  std::optional<std::string> pem;

  std::string Label() const { return path.empty() ? field : absl::StrCat(field, " (", path, ")"); }
};

// What gRPC's TLS needs of roots and a client certificate and key, checked here: gRPC itself would
// only fail every call's handshake until its deadline.
absl::Status ValidatePems(const PemInput& roots, const PemInput& chain, const PemInput& key) {
  if (roots.pem.has_value()) {
    if (auto parsed = ParseCertificates(roots.Label(), *roots.pem); !parsed.ok()) {
      return parsed.status();
    }
  }
  if (chain.pem.has_value() != key.pem.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("ClientOptions.tls: ", chain.field, " and ",
                                                   key.field,
                                                   " go together (mutual TLS), one is empty"));
  }
  if (!chain.pem.has_value()) return absl::OkStatus();
  auto certificates = ParseCertificates(chain.Label(), *chain.pem);
  if (!certificates.ok()) return certificates.status();
  auto bio = PemBio(*key.pem);
  // No passphrase: OpenSSL's default callback would ask for one on the terminal.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> private_key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr), &EVP_PKEY_free);
  ERR_clear_error();
  if (private_key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClientOptions.tls.", key.Label(), ": not an unencrypted PEM private key"));
  }
  if (X509_check_private_key(certificates->front().get(), private_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("ClientOptions.tls: ", key.field,
                                                   " is not the key of ", chain.field,
                                                   "'s first certificate"));
  }
  return absl::OkStatus();
}

bool TlsFromFiles(const ClientOptions::Tls& tls) {
  return !tls.root_certs_file.empty() || !tls.cert_chain_file.empty() ||
         !tls.private_key_file.empty();
}

// A *_file field's input: unset for an empty path, else the file's text.
absl::StatusOr<PemInput> ReadPemInput(const std::string& field, const std::string& path) {
  PemInput input{field, path, std::nullopt};
  if (path.empty()) return input;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.is_open() || in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat("ClientOptions.tls.", field, ": cannot read ",
                                                   path, " (", std::strerror(errno), ")"));
  }
  input.pem = text.str();
  return input;
}

// `tls` with its PEM text checked, read from its files if it names files (the *_file fields
// then empty): what SslCredentials takes.
absl::StatusOr<ClientOptions::Tls> LoadTls(const ClientOptions::Tls& tls) {
  const auto given = [](const std::string& pem) {
    return pem.empty() ? std::nullopt : std::optional<std::string>(pem);
  };
  if (!TlsFromFiles(tls)) {
    absl::Status valid = ValidatePems({"root_certs_pem", "", given(tls.root_certs_pem)},
                                      {"cert_chain_pem", "", given(tls.cert_chain_pem)},
                                      {"private_key_pem", "", given(tls.private_key_pem)});
    if (!valid.ok()) return valid;
    return tls;
  }
  if (!tls.root_certs_pem.empty() || !tls.cert_chain_pem.empty() || !tls.private_key_pem.empty()) {
    return absl::InvalidArgumentError(
        "ClientOptions.tls: the *_file fields replace the *_pem fields; set one kind, not both");
  }
  if (tls.reload_interval < absl::Seconds(1) || tls.reload_interval > absl::Hours(24)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClientOptions.tls.reload_interval = ", absl::FormatDuration(tls.reload_interval),
        ": must be between 1s and 24h"));
  }
  std::vector<PemInput> inputs;
  for (const auto& [field, path] : {std::pair{"root_certs_file", tls.root_certs_file},
                                    std::pair{"cert_chain_file", tls.cert_chain_file},
                                    std::pair{"private_key_file", tls.private_key_file}}) {
    absl::StatusOr<PemInput> input = ReadPemInput(field, path);
    if (!input.ok()) return input.status();
    inputs.push_back(*std::move(input));
  }
  if (absl::Status valid = ValidatePems(inputs[0], inputs[1], inputs[2]); !valid.ok()) {
    return valid;
  }
  ClientOptions::Tls pem;
  pem.root_certs_pem = inputs[0].pem.value_or("");
  pem.cert_chain_pem = inputs[1].pem.value_or("");
  pem.private_key_pem = inputs[2].pem.value_or("");
  pem.server_name = tls.server_name;
  return pem;
}

// Protobuf will not send a string field that is not UTF-8 (the server could not parse it) and
// only logs that it is not: such a field is refused here, saying which.
absl::Status CheckUtf8(absl::string_view field, absl::string_view value) {
  if (value.size() <= std::numeric_limits<int>::max() &&
      google::protobuf::internal::IsStructurallyValidUTF8(value.data(),
                                                          static_cast<int>(value.size()))) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, " \"", absl::CHexEscape(value.substr(0, 64)),
                   "\" is not valid UTF-8, which a proto string must be"));
}

// A request's world fields, as they will be sent.
template <typename Request>
absl::Status CheckWorldFields(const Request& request) {
  if (absl::Status s = CheckUtf8("world", request.world()); !s.ok()) return s;
  return CheckUtf8("world_fingerprint", request.world_fingerprint());
}

absl::Status ValidateOptions(const ClientOptions& options) {
  if (absl::Status s = CheckUtf8("ClientOptions.world", options.world); !s.ok()) return s;
  if (absl::Status s = CheckUtf8("ClientOptions.world_fingerprint", options.world_fingerprint);
      !s.ok()) {
    return s;
  }
  if (options.deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("ClientOptions.deadline must be positive");
  }
  if (options.max_retries < 0) return absl::InvalidArgumentError("ClientOptions.max_retries < 0");
  if (options.bulk_columns < 1) return absl::InvalidArgumentError("ClientOptions.bulk_columns < 1");
  if (options.initial_backoff < absl::ZeroDuration() ||
      options.max_backoff < absl::ZeroDuration() || !(options.backoff_multiplier >= 1.0)) {
    return absl::InvalidArgumentError(
        "ClientOptions backoff: need initial_backoff, max_backoff >= 0 and backoff_multiplier >= "
        "1");
  }
  if (options.user_agent.size() > kMaxUserAgentBytes ||
      !absl::c_all_of(options.user_agent, [](char c) { return c >= ' ' && c <= '~'; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClientOptions.user_agent must be at most ", kMaxUserAgentBytes,
                     " printable ASCII characters (it goes in an HTTP header), not \"",
                     absl::CHexEscape(options.user_agent.substr(0, kMaxUserAgentBytes)), "\""));
  }
  // The key is a secret: the messages say where it is wrong, not what it is.
  if (options.api_key.size() > kMaxApiKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("ClientOptions.api_key has ",
                                                   options.api_key.size(), " bytes; at most ",
                                                   kMaxApiKeyBytes, " go in an HTTP header"));
  }
  if (const auto bad = absl::c_find_if(options.api_key, [](char c) { return c <= ' ' || c > '~'; });
      bad != options.api_key.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClientOptions.api_key has a space or a byte that is not printable ASCII at "
                     "offset ",
                     bad - options.api_key.begin(), " (the key goes in an HTTP header)"));
  }
  // gRPC takes these as int milliseconds: a longer one would wrap around.
  for (const auto& [name, value] :
       {std::pair<const char*, absl::Duration>{"keepalive_time", options.keepalive_time},
        {"keepalive_timeout", options.keepalive_timeout},
        {"max_reconnect_backoff", options.max_reconnect_backoff}}) {
    if (value < absl::ZeroDuration() || value > kMaxChannelDuration) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ClientOptions.", name, " = ", absl::FormatDuration(value), " is not in [0, ",
          absl::FormatDuration(kMaxChannelDuration), "] (gRPC takes int milliseconds)"));
    }
  }
  return absl::OkStatus();
}

struct CoordHash {
  size_t operator()(const ChunkCoord& c) const {
    return absl::Hash<std::pair<int64_t, int64_t>>()({c.x, c.z});
  }
};

// A request's world, where it names none, from `options`, and the pinned fingerprint
// (ClientOptions::world_fingerprint) where it pins none and asks for the options' world.
template <typename Request>
void SetWorld(const ClientOptions& options, Request& request) {
  if (request.world().empty()) request.set_world(options.world);
  if (request.world_fingerprint().empty() && request.world() == options.world) {
    request.set_world_fingerprint(options.world_fingerprint);
  }
}

int64_t CellSize(const v1::VerticalRange& range) {
  return range.cell_size() == 0 ? kDefaultVolumeCellSize : range.cell_size();
}

// What `view` lacks of what `request` asked for (empty if nothing): the accessors a caller uses
// because it asked ("if the request asked for it") must have something to read, whatever a
// replica or proxy sent.
std::string MissingFromReply(const v1::GenerateChunkRequest& request, const ChunkView& view) {
  if (request.chunk_size() != 0 && view.size() != static_cast<int64_t>(request.chunk_size())) {
    return absl::StrFormat("chunk_size %d, not the %d asked for", view.size(),
                           request.chunk_size());
  }
  if (request.has_vertical()) {
    const v1::VerticalRange& range = request.vertical();
    if (!view.is_volume()) return "columns, where cells of a vertical range were asked for";
    if (view.cell_size() != CellSize(range)) {
      return absl::StrFormat("cells of %d blocks, not the %d asked for", view.cell_size(),
                             CellSize(range));
    }
    if (view.min_y() != range.min_y() || view.max_y() != range.max_y()) {
      return absl::StrFormat("sections over y [%d, %d), not the [%d, %d) asked for", view.min_y(),
                             view.max_y(), range.min_y(), range.max_y());
    }
    if (request.include_source_biome() && !view.has_cell_source_biome()) {
      return "no source biomes, which were asked for";
    }
    return "";
  }
  if (view.is_volume()) return "sections, where columns were asked for";
  if (request.include_heights() && !view.has_heights()) return "no heights, which were asked for";
  if (request.include_source_biome() && !view.has_source_biome()) {
    return "no source biomes, which were asked for";
  }
  if (request.include_splat() && view.splat_texture_count() == 0) {
    return "no splat textures, which were asked for";
  }
  return "";
}

// A GenerateChunkRequest without its selection. The wire's sizes are unsigned: a negative one
// is refused here, where it would otherwise reach the server as a number near 2^32.
absl::StatusOr<v1::GenerateChunkRequest> ChunkRequestMessage(const ClientOptions& options,
                                                             const ChunkRequestOptions& request) {
  if (request.chunk_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ChunkRequestOptions.chunk_size = ", request.chunk_size, " is negative"));
  }
  if (request.vertical && request.vertical->cell_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ChunkRequestOptions.vertical.cell_size = ", request.vertical->cell_size, " is negative"));
  }
  v1::GenerateChunkRequest message;
  SetWorld(options, message);
  message.set_chunk_size(static_cast<uint32_t>(request.chunk_size));
  message.set_include_heights(request.heights);
  message.set_include_dominant_biome(request.dominant_biome);
  message.set_include_source_biome(request.source_biome);
  message.set_include_splat(request.splat);
  if (request.vertical) {
    message.mutable_vertical()->set_min_y(request.vertical->min_y);
    message.mutable_vertical()->set_max_y(request.vertical->max_y);
    message.mutable_vertical()->set_cell_size(static_cast<uint32_t>(request.vertical->cell_size));
  }
  return message;
}

}  // namespace

absl::Duration RetryBackoff(const ClientOptions& options, int retry) {
  absl::Duration wait = options.initial_backoff;
  for (int k = 1; k < retry && wait < options.max_backoff; ++k) wait *= options.backoff_multiplier;
  return std::min(wait, options.max_backoff);
}

// The channels of a client whose TLS identity and roots come from files: read again when due,
// remade when they changed and pass the checks.
struct Client::TlsReload {
  using MakeChannels =
      std::function<std::shared_ptr<const Channels>(const ClientOptions::Tls& pem)>;

  TlsReload(MakeChannels make, ClientOptions::Tls files, const ClientOptions::Tls& pem)
      : make_channels(std::move(make)), files(std::move(files)) {
    next_read = absl::Now() + this->files.reload_interval;
    in_use = absl::StrCat(pem.root_certs_pem, pem.cert_chain_pem, pem.private_key_pem);
    channels = make_channels(pem);
  }

  std::shared_ptr<const Channels> Current() {
    absl::MutexLock lock(&mu);
    const absl::Time now = absl::Now();
    if (now < next_read) return channels;
    next_read = now + files.reload_interval;
    absl::StatusOr<ClientOptions::Tls> pem = LoadTls(files);
    if (!pem.ok()) {
      refusals.fetch_add(1, std::memory_order_relaxed);
      return channels;
    }
    std::string text = absl::StrCat(pem->root_certs_pem, pem->cert_chain_pem, pem->private_key_pem);
    if (text != in_use) {
      channels = make_channels(*pem);
      in_use = std::move(text);
      reloads.fetch_add(1, std::memory_order_relaxed);
    }
    return channels;
  }

  const MakeChannels make_channels;
  const ClientOptions::Tls files;
  std::atomic<int64_t> reloads{0};
  std::atomic<int64_t> refusals{0};
  absl::Mutex mu;
  absl::Time next_read ABSL_GUARDED_BY(mu);
  // The PEM text of `channels`.
  std::string in_use ABSL_GUARDED_BY(mu);
  std::shared_ptr<const Channels> channels ABSL_GUARDED_BY(mu);
};

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& target,
                                                        ClientOptions options) {
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) return valid;
  if (target.empty()) return absl::InvalidArgumentError("empty target");
  std::optional<ClientOptions::Tls> pem;
  if (options.tls.has_value()) {
    absl::StatusOr<ClientOptions::Tls> loaded = LoadTls(*options.tls);
    if (!loaded.ok()) return loaded.status();
    pem = *std::move(loaded);
  }
  grpc::ChannelArguments args;
  args.SetUserAgentPrefix(options.user_agent.empty()
                              ? std::string("worldgen-client")
                              : absl::StrCat(options.user_agent, " worldgen-client"));
  if (options.keepalive_time > absl::ZeroDuration()) {
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_time)));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_timeout)));
  }
  const int max_reconnect_ms =
      std::max<int>(1, static_cast<int>(absl::ToInt64Milliseconds(options.max_reconnect_backoff)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_reconnect_ms);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(100, max_reconnect_ms));
  // Connections (and their reconnect backoff) belong to this client, not to a process-wide pool
  // shared with other channels to the same address.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Chunks of 256^2 columns with many biomes exceed gRPC's default 4 MB receive limit.
  args.SetMaxReceiveMessageSize(-1);
  if (pem.has_value() && !pem->server_name.empty()) args.SetSslTargetNameOverride(pem->server_name);
  auto make_channels = [target, args](const std::optional<ClientOptions::Tls>& tls) {
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (tls.has_value()) {
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = tls->root_certs_pem;
      ssl.pem_cert_chain = tls->cert_chain_pem;
      ssl.pem_private_key = tls->private_key_pem;
      credentials = grpc::SslCredentials(ssl);
    }
    // Each channel with a local pool makes its own connection: bulk calls get one of their own.
    auto channels = std::make_shared<Channels>();
    channels->channel = grpc::CreateCustomChannel(target, credentials, args);
    channels->stub = v1::WorldGen::NewStub(channels->channel);
    channels->bulk_stub =
        v1::WorldGen::NewStub(grpc::CreateCustomChannel(target, credentials, args));
    return std::shared_ptr<const Channels>(std::move(channels));
  };
  if (options.tls.has_value() && TlsFromFiles(*options.tls)) {
    auto reload = std::make_unique<TlsReload>(make_channels, *options.tls, *pem);
    return std::unique_ptr<Client>(new Client(nullptr, std::move(options), std::move(reload)));
  }
  return std::unique_ptr<Client>(new Client(make_channels(pem), std::move(options), nullptr));
}

std::unique_ptr<Client> Client::FromChannel(std::shared_ptr<grpc::Channel> channel,
                                            ClientOptions options) {
  auto channels = std::make_shared<Channels>();
  channels->channel = channel;
  channels->stub = v1::WorldGen::NewStub(channel);
  channels->bulk_stub = v1::WorldGen::NewStub(channel);
  return std::unique_ptr<Client>(new Client(std::move(channels), std::move(options), nullptr));
}

Client::Client(std::shared_ptr<const Channels> channels, ClientOptions options,
               std::unique_ptr<TlsReload> reload)
    : options_(std::move(options)), channels_(std::move(channels)), reload_(std::move(reload)) {}

Client::~Client() = default;

std::shared_ptr<const Client::Channels> Client::CurrentChannels() {
  return reload_ == nullptr ? channels_ : reload_->Current();
}

std::string RouteKey(const std::string& world, double x, double z) {
  const auto region = [](double v) {
    // The server refuses coordinates this far out (or not finite); any key will do for them.
    if (!(std::fabs(v) < 1e15)) return int64_t{0};
    return static_cast<int64_t>(std::floor(v / kRouteRegionBlocks));
  };
  // A header value is printable ASCII (gRPC aborts the call on anything else); the names the
  // server accepts are, and pass unchanged.
  return absl::StrCat(absl::CHexEscape(world), "/", region(x), "/", region(z));
}

void Client::AddRouteKey(grpc::ClientContext& context, const std::string& world, double x,
                         double z) const {
  if (options_.send_route_key) context.AddMetadata(kRouteKeyHeader, RouteKey(world, x, z));
}

v1::WorldGen::Stub& Client::StubFor(const Channels& channels, int64_t columns) const {
  return columns > options_.bulk_columns ? *channels.bulk_stub : *channels.stub;
}

ClientStats Client::stats() const {
  return ClientStats{calls_.load(std::memory_order_relaxed),
                     attempts_.load(std::memory_order_relaxed),
                     retries_.load(std::memory_order_relaxed),
                     reload_ ? reload_->reloads.load(std::memory_order_relaxed) : 0,
                     reload_ ? reload_->refusals.load(std::memory_order_relaxed) : 0,
                     absl::Nanoseconds(server_queued_ns_.load(std::memory_order_relaxed)),
                     absl::Nanoseconds(server_blend_ns_.load(std::memory_order_relaxed))};
}

absl::Status Client::StartAttempt(grpc::ClientContext& context, absl::Time deadline) const {
  SetDeadline(context, deadline);
  if (!options_.api_key.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.api_key));
  }
  if (!options_.traceparent) return absl::OkStatus();
  std::string traceparent = options_.traceparent();
  if (traceparent.empty()) return absl::OkStatus();
  if (!ParseTraceparent(traceparent).has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClientOptions.traceparent gave \"",
        absl::CHexEscape(absl::string_view(traceparent).substr(0, 64)),
        "\", which is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>, lowercase)"));
  }
  context.AddMetadata(kTraceparentHeader, std::move(traceparent));
  return absl::OkStatus();
}

absl::Status Client::AttemptStatus(const grpc::Status& status, const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  if (auto it = trailers.find(kServerTimingTrailer); it != trailers.end()) {
    const ServerTiming timing =
        ParseServerTiming(absl::string_view(it->second.data(), it->second.size()));
    server_queued_ns_.fetch_add(absl::ToInt64Nanoseconds(timing.queued), std::memory_order_relaxed);
    server_blend_ns_.fetch_add(absl::ToInt64Nanoseconds(timing.blend), std::memory_order_relaxed);
  }
  return WithPushback(status, context);
}

bool Client::IsRetryable(const absl::Status& status) const {
  if (options_.honor_pushback && status.code() == absl::StatusCode::kResourceExhausted &&
      Pushback(status).has_value()) {
    return true;
  }
  if (std::find(options_.retry_codes.begin(), options_.retry_codes.end(), status.code()) !=
      options_.retry_codes.end()) {
    return true;
  }
  if (options_.retry_server_cancellations && status.code() == absl::StatusCode::kCancelled) {
    return true;
  }
  return options_.retry_stream_resets && status.code() == absl::StatusCode::kInternal &&
         absl::StrContains(status.message(), "RST_STREAM");
}

absl::Status Client::WithRetries(const std::function<absl::Status(absl::Time)>& attempt) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  const absl::Time deadline = options_.deadline == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + options_.deadline;
  for (int retry = 0;; ++retry) {
    attempts_.fetch_add(1, std::memory_order_relaxed);
    if (retry > 0) retries_.fetch_add(1, std::memory_order_relaxed);
    absl::Status status = attempt(deadline);
    if (status.ok() || !IsRetryable(status)) return status;
    if (retry >= options_.max_retries) {
      if (retry == 0) return status;
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (after ", retry + 1, " attempts)"));
    }
    const std::optional<absl::Duration> pushback =
        options_.honor_pushback && status.code() == absl::StatusCode::kResourceExhausted
            ? Pushback(status)
            : std::nullopt;
    const absl::Duration wait = pushback.value_or(RetryBackoff(options_, retry + 1));
    if (pushback.has_value() && absl::Now() + wait >= deadline) {
      // The server will not have room before the deadline: say so, keeping its code.
      return absl::ResourceExhaustedError(
          absl::StrCat(status.message(), " (server asked to retry in ", absl::FormatDuration(wait),
                       ", after the call's deadline; ", retry + 1, " attempts)"));
    }
    if (absl::Now() + wait >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("deadline reached while retrying after ", retry + 1,
                       " attempts; last error: ", status.ToString()));
    }
    BackOff(absl::Now() + wait);
  }
}

void Client::BackOff(absl::Time until) {
  // Sleeping would leave nobody polling the channel's sockets: gRPC's synchronous API only polls
  // inside a call, so a reconnect started now would be noticed by its 5 s backup poller at the
  // earliest. Watching the channel's state polls it, and asks an idle channel to connect.
  while (absl::Now() < until) {
    const std::shared_ptr<grpc::Channel> channel = CurrentChannels()->channel;
    const grpc_connectivity_state state = channel->GetState(/*try_to_connect=*/true);
    channel->WaitForStateChange(state, absl::ToChronoTime(until));
  }
}

absl::StatusOr<v1::WorldDescription> Client::DescribeWorld() {
  return DescribeWorld(options_.world);
}

absl::StatusOr<v1::WorldDescription> Client::DescribeWorld(absl::string_view world) {
  if (absl::Status s = CheckUtf8("world", world); !s.ok()) return s;
  v1::DescribeWorldRequest request;
  request.set_world(std::string(world));
  v1::WorldDescription response;
  absl::Status status = WithRetries([&](absl::Time deadline) {
    grpc::ClientContext context;
    if (absl::Status s = StartAttempt(context, deadline); !s.ok()) return s;
    response.Clear();
    return AttemptStatus(CurrentChannels()->stub->DescribeWorld(&context, request, &response),
                         context);
  });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<ChunkView> Client::GenerateChunk(int64_t chunk_x, int64_t chunk_z,
                                                const ChunkRequestOptions& request) {
  std::optional<ChunkView> result;
  const ChunkCoord coord{chunk_x, chunk_z};
  absl::Status status = GenerateChunks(absl::MakeConstSpan(&coord, 1), request,
                                       [&](ChunkView view) { result.emplace(std::move(view)); });
  if (!status.ok()) return status;
  return *std::move(result);
}

absl::Status Client::GenerateChunks(absl::Span<const ChunkCoord> chunks,
                                    const ChunkRequestOptions& request,
                                    const std::function<void(ChunkView)>& on_chunk) {
  if (static_cast<int64_t>(chunks.size()) > kMaxChunksPerCall) {
    return absl::InvalidArgumentError(absl::StrCat(chunks.size(), " chunks in one call"));
  }
  absl::StatusOr<v1::GenerateChunkRequest> message = ChunkRequestMessage(options_, request);
  if (!message.ok()) return message.status();
  v1::ChunkList* list = message->mutable_chunks();
  absl::flat_hash_set<ChunkCoord, CoordHash> seen;
  for (const ChunkCoord& c : chunks) {
    if (!seen.insert(c).second) continue;  // Each distinct chunk is asked for (and delivered) once.
    v1::ChunkCoord* coord = list->add_coords();
    coord->set_x(c.x);
    coord->set_z(c.z);
  }
  return StreamChunks(*std::move(message), seen.size(), on_chunk);
}

absl::Status Client::GenerateRegion(const ChunkRegion& region, const ChunkRequestOptions& request,
                                    const std::function<void(ChunkView)>& on_chunk) {
  if (region.min_x > region.max_x || region.min_z > region.max_z) {
    return absl::InvalidArgumentError(absl::StrFormat("empty region [%d, %d] x [%d, %d]",
                                                      region.min_x, region.max_x, region.min_z,
                                                      region.max_z));
  }
  // Sides less one, exact for any bounds (max >= min) in unsigned arithmetic.
  const uint64_t width = static_cast<uint64_t>(region.max_x) - static_cast<uint64_t>(region.min_x);
  const uint64_t depth = static_cast<uint64_t>(region.max_z) - static_cast<uint64_t>(region.min_z);
  const uint64_t limit = kMaxChunksPerCall;
  if (width >= limit || depth >= limit || (width + 1) * (depth + 1) > limit) {
    return absl::InvalidArgumentError(
        absl::StrFormat("region [%d, %d] x [%d, %d] has more than %d chunks", region.min_x,
                        region.max_x, region.min_z, region.max_z, kMaxChunksPerCall));
  }
  const size_t count = static_cast<size_t>((width + 1) * (depth + 1));
  absl::StatusOr<v1::GenerateChunkRequest> message = ChunkRequestMessage(options_, request);
  if (!message.ok()) return message.status();
  v1::ChunkRegion* r = message->mutable_region();
  r->set_min_x(region.min_x);
  r->set_min_z(region.min_z);
  r->set_max_x(region.max_x);
  r->set_max_z(region.max_z);
  return StreamChunks(*std::move(message), count, on_chunk);
}

absl::Status Client::StreamChunks(v1::GenerateChunkRequest request, size_t expected,
                                  const std::function<void(ChunkView)>& on_chunk) {
  absl::flat_hash_set<ChunkCoord, CoordHash> pending;
  pending.reserve(expected);
  if (request.has_region()) {
    // By offsets from the minimum (GenerateRegion bounds them): a loop up to a maximum of
    // INT64_MAX would never end.
    const v1::ChunkRegion& r = request.region();
    const uint64_t x0 = static_cast<uint64_t>(r.min_x()), z0 = static_cast<uint64_t>(r.min_z());
    for (uint64_t dz = 0; dz <= static_cast<uint64_t>(r.max_z()) - z0; ++dz) {
      for (uint64_t dx = 0; dx <= static_cast<uint64_t>(r.max_x()) - x0; ++dx) {
        pending.insert({static_cast<int64_t>(x0 + dx), static_cast<int64_t>(z0 + dz)});
      }
    }
  } else {
    for (const v1::ChunkCoord& c : request.chunks().coords()) pending.insert({c.x(), c.z()});
  }
  // The routing key's chunk, the same for every attempt.
  const ChunkCoord first =
      request.has_region() ? ChunkCoord{request.region().min_x(), request.region().min_z()}
      : request.chunks().coords().empty()
          ? ChunkCoord{}
          : ChunkCoord{request.chunks().coords(0).x(), request.chunks().coords(0).z()};
  bool first_attempt = true;
  return WithRetries([&](absl::Time deadline) -> absl::Status {
    if (!first_attempt) {
      // Ask again for exactly the chunks not delivered yet, as an explicit list.
      v1::ChunkList* list = request.mutable_chunks();  // Clears the region (oneof).
      list->Clear();
      for (const ChunkCoord& c : pending) {
        v1::ChunkCoord* coord = list->add_coords();
        coord->set_x(c.x);
        coord->set_z(c.z);
      }
    }
    first_attempt = false;
    if (pending.empty()) return absl::OkStatus();
    grpc::ClientContext context;
    if (absl::Status s = StartAttempt(context, deadline); !s.ok()) return s;
    const int64_t side =
        request.chunk_size() != 0 ? request.chunk_size() : world_chunk_size_.load();
    AddRouteKey(context, request.world(), static_cast<double>(first.x) * side,
                static_cast<double>(first.z) * side);
    // A 3D chunk counts its cells (the server's admission does too). In double: the range is
    // the caller's, which the server validates, and only the connection depends on it.
    double per_chunk = static_cast<double>(side) * side;
    if (request.has_vertical()) {
      const double cell = static_cast<double>(CellSize(request.vertical()));
      const double rows = (static_cast<double>(request.vertical().max_y()) -
                           static_cast<double>(request.vertical().min_y())) /
                          cell;
      per_chunk = per_chunk / (cell * cell) * std::max(1.0, rows);
    }
    const double columns = std::min(static_cast<double>(pending.size()) * per_chunk, 0x1p62);
    // Held until the stream ends.
    const std::shared_ptr<const Channels> channels = CurrentChannels();
    std::unique_ptr<grpc::ClientReader<v1::ChunkData>> reader =
        StubFor(*channels, static_cast<int64_t>(columns)).GenerateChunk(&context, request);
    v1::ChunkData data;
    absl::Status failure;
    while (reader->Read(&data)) {
      auto it = pending.find(ChunkCoord{data.coord().x(), data.coord().z()});
      if (it == pending.end()) {
        failure = absl::DataLossError(absl::StrFormat(
            "server sent chunk (%d, %d), which was not requested or was already sent",
            data.coord().x(), data.coord().z()));
        break;
      }
      absl::StatusOr<ChunkView> view = ChunkView::Decode(std::move(data));
      if (!view.ok()) {
        failure = view.status();
        break;
      }
      if (const std::string missing = MissingFromReply(request, *view); !missing.empty()) {
        failure = absl::DataLossError(
            absl::StrFormat("chunk (%d, %d): %s", view->chunk_x(), view->chunk_z(), missing));
        break;
      }
      pending.erase(it);
      if (request.chunk_size() == 0) world_chunk_size_.store(view->size());
      on_chunk(*std::move(view));
      data = v1::ChunkData();
    }
    if (!failure.ok()) {
      context.TryCancel();
      reader->Finish();
      return failure;
    }
    absl::Status status = AttemptStatus(reader->Finish(), context);
    // Every chunk was delivered: the call is done, however the stream ended after them (a
    // replica or proxy dying after its last write must not make the caller ask again).
    if (pending.empty()) return absl::OkStatus();
    if (status.ok()) {
      return absl::DataLossError(
          absl::StrCat("stream ended OK with ", pending.size(), " requested chunks missing"));
    }
    return status;
  });
}

absl::StatusOr<v1::SampleWeightsResponse> Client::SampleWeights(v1::SampleWeightsRequest request) {
  SetWorld(options_, request);
  if (absl::Status s = CheckWorldFields(request); !s.ok()) return s;
  v1::SampleWeightsResponse response;
  absl::Status status = WithRetries([&](absl::Time deadline) {
    grpc::ClientContext context;
    if (absl::Status s = StartAttempt(context, deadline); !s.ok()) return s;
    if (request.points_size() > 0) {
      AddRouteKey(context, request.world(), request.points(0).x(), request.points(0).z());
    }
    response.Clear();
    return AttemptStatus(StubFor(*CurrentChannels(), request.points_size())
                             .SampleWeights(&context, request, &response),
                         context);
  });
  if (!status.ok()) return status;
  if (response.samples_size() != request.points_size()) {
    return absl::DataLossError(absl::StrCat("server returned ", response.samples_size(),
                                            " samples for ", request.points_size(), " points"));
  }
  return response;
}

absl::StatusOr<v1::ListSamplingPointsResponse> Client::ListSamplingPoints(
    v1::ListSamplingPointsRequest request) {
  SetWorld(options_, request);
  if (absl::Status s = CheckWorldFields(request); !s.ok()) return s;
  // The box's columns pick the channel, as a chunk call's would (NaN and huge boxes count as bulk;
  // the server says what is wrong with them).
  const double area = (request.max_x() - request.min_x()) * (request.max_z() - request.min_z());
  const int64_t columns =
      area < 1e15 ? static_cast<int64_t>(std::max(area, 0.0)) : std::numeric_limits<int64_t>::max();
  v1::ListSamplingPointsResponse response;
  absl::Status status = WithRetries([&](absl::Time deadline) {
    grpc::ClientContext context;
    if (absl::Status s = StartAttempt(context, deadline); !s.ok()) return s;
    AddRouteKey(context, request.world(), request.min_x(), request.min_z());
    response.Clear();
    return AttemptStatus(
        StubFor(*CurrentChannels(), columns).ListSamplingPoints(&context, request, &response),
        context);
  });
  if (!status.ok()) return status;
  return response;
}

namespace {

std::vector<PointSample> PointSamples(const v1::SampleWeightsResponse& response) {
  std::vector<PointSample> samples;
  samples.reserve(response.samples_size());
  for (const v1::PointWeights& in : response.samples()) {
    PointSample& out = samples.emplace_back();
    out.weights.reserve(in.weights_size());
    for (const v1::BiomeWeight& w : in.weights()) out.weights.push_back({w.biome_id(), w.weight()});
    out.height = in.height();
    out.dominant_biome = in.dominant_biome();
    out.source_biome = in.source_biome();
  }
  return samples;
}

}  // namespace

absl::StatusOr<std::vector<PointSample>> Client::SamplePoints3D(
    absl::Span<const Point3> points, const PointRequestOptions& options) {
  v1::SampleWeightsRequest request;
  for (const Point3& p : points) {
    v1::Point* point = request.add_points();
    point->set_x(p.x);
    point->set_y(p.y);
    point->set_z(p.z);
  }
  request.set_include_heights(options.heights);
  request.set_include_source_biome(options.source_biome);
  absl::StatusOr<v1::SampleWeightsResponse> response = SampleWeights(std::move(request));
  if (!response.ok()) return response.status();
  return PointSamples(*response);
}

absl::StatusOr<std::vector<PointSample>> Client::SamplePoints(
    absl::Span<const std::pair<double, double>> points, const PointRequestOptions& options) {
  v1::SampleWeightsRequest request;
  for (const auto& [x, z] : points) {
    v1::Point* point = request.add_points();
    point->set_x(x);
    point->set_z(z);
  }
  request.set_include_heights(options.heights);
  request.set_include_source_biome(options.source_biome);
  absl::StatusOr<v1::SampleWeightsResponse> response = SampleWeights(std::move(request));
  if (!response.ok()) return response.status();
  return PointSamples(*response);
}

absl::StatusOr<std::string> Client::CheckHealth(const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(CurrentChannels()->channel);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + options_.deadline);
  calls_.fetch_add(1, std::memory_order_relaxed);
  attempts_.fetch_add(1, std::memory_order_relaxed);
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return FromGrpc(status);
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

}  // namespace worldgen
