// TLS where the deployment ends it: a real nginx rendered from docker/nginx/ with
// WORLDGEN_TLS_* in front of a worldgen-server replica, and the C++ client, the CLI, the map
// viewer and an independent Python client (grpcio's TLS) talking to it; render-config.sh's
// refusals; the client's checks of its PEM options and files, and client certificates renewed in
// their files. Certificates are made per test by openssl
// (tests/support/test_certificates.h). A renewed certificate served after a reload is
// follow_dns_test.sh's (the Kubernetes balancer reloads when its TLS files change).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/viewer/map_viewer.h"
#include "client/worldgen_client.h"
#include "tests/client/subprocess.h"
#include "tests/e2e/e2e_paths.h"
#include "tests/support/call_log_lines.h"
#include "tests/support/nginx_process.h"
#include "tests/support/server_process.h"
#include "tests/support/test_certificates.h"

namespace worldgen::testing {
namespace {

// The balancer's certificate names: the name clients use and loopback's address.
constexpr char kServerNames[] = "DNS:worldgen.test,IP:127.0.0.1";

ClientOptions::Tls TlsTrusting(const CertificateFiles& authority,
                               const std::optional<CertificateFiles>& client = std::nullopt) {
  ClientOptions::Tls tls;
  tls.root_certs_pem = *ReadFile(authority.cert);
  if (client.has_value()) {
    tls.cert_chain_pem = *ReadFile(client->cert);
    tls.private_key_pem = *ReadFile(client->key);
  }
  return tls;
}

// One call's status through a new client, no retries: what a handshake decides.
absl::Status DescribeThrough(const std::string& target, std::optional<ClientOptions::Tls> tls) {
  ClientOptions options;
  options.tls = std::move(tls);
  options.max_retries = 0;
  options.deadline = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(target, options);
  if (!client.ok()) return client.status();
  return (*client)->DescribeWorld().status();
}

// A scratch directory and an authority in it, "ca".
class AuthorityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("worldgen-tls");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = *std::move(dir);
    auto ca = MakeAuthority(dir_->path(), "ca");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
  }

  std::unique_ptr<TempDir> dir_;
  CertificateFiles ca_;
};

class TlsBalancerTest : public AuthorityTest {
 protected:
  void SetUp() override {
    AuthorityTest::SetUp();
    if (HasFatalFailure()) return;
    auto server_cert = IssueCertificate(dir_->path(), "balancer", ca_, kServerNames);
    ASSERT_TRUE(server_cert.ok()) << server_cert.status();
    balancer_cert_ = *server_cert;
    auto clients = MakeAuthority(dir_->path(), "clients");
    ASSERT_TRUE(clients.ok()) << clients.status();
    clients_ca_ = *clients;
    auto client = IssueCertificate(dir_->path(), "game-server", clients_ca_, "DNS:game-server");
    ASSERT_TRUE(client.ok()) << client.status();
    client_cert_ = *client;
    // As the deployment runs the replicas (docker/compose.yaml, docker/kubernetes/base).
    auto replica = ServerProcess::Start({"--fair_share=client_header"});
    ASSERT_TRUE(replica.ok()) << replica.status();
    replica_ = *std::move(replica);
  }

  void StartNginx(bool mutual) {
    NginxTls tls{balancer_cert_.cert, balancer_cert_.key, mutual ? clients_ca_.cert : ""};
    auto nginx = NginxProcess::Start({replica_->target()}, tls);
    ASSERT_TRUE(nginx.ok()) << nginx.status();
    nginx_ = *std::move(nginx);
  }

  void TearDown() override {
    if (HasFailure() && nginx_) std::cerr << "nginx error log:\n" << nginx_->error_log();
  }

  CertificateFiles balancer_cert_, clients_ca_, client_cert_;
  std::unique_ptr<ServerProcess> replica_;
  std::unique_ptr<NginxProcess> nginx_;
};

TEST_F(TlsBalancerTest, ServesTheReplicasChunksOverTls) {
  StartNginx(/*mutual=*/false);
  ClientOptions options;
  options.tls = TlsTrusting(ca_);
  auto secure = Client::Connect(nginx_->target(), options);
  ASSERT_TRUE(secure.ok()) << secure.status();
  auto direct = Client::Connect(replica_->target());
  ASSERT_TRUE(direct.ok()) << direct.status();
  // The bytes through TLS and the balancer are the replica's own.
  for (auto [x, z] : {std::pair{0, 0}, std::pair{-7, 12}}) {
    absl::StatusOr<ChunkView> through = (*secure)->GenerateChunk(x, z, {.heights = true});
    ASSERT_TRUE(through.ok()) << through.status();
    absl::StatusOr<ChunkView> own = (*direct)->GenerateChunk(x, z, {.heights = true});
    ASSERT_TRUE(own.ok()) << own.status();
    EXPECT_EQ(through->proto().SerializeAsString(), own->proto().SerializeAsString());
  }
  // The certificate is for 127.0.0.1 and worldgen.test: either name passes, another does not.
  ClientOptions::Tls named = TlsTrusting(ca_);
  named.server_name = "worldgen.test";
  EXPECT_TRUE(DescribeThrough(nginx_->target(), named).ok());
  named.server_name = "elsewhere.test";
  EXPECT_EQ(DescribeThrough(nginx_->target(), named).code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsBalancerTest, RefusesPlaintextAndUntrustedCertificates) {
  StartNginx(/*mutual=*/false);
  EXPECT_EQ(DescribeThrough(nginx_->target(), std::nullopt).code(), absl::StatusCode::kUnavailable);
  // The clients' authority did not sign the balancer's certificate.
  EXPECT_EQ(DescribeThrough(nginx_->target(), TlsTrusting(clients_ca_)).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(DescribeThrough(nginx_->target(), TlsTrusting(ca_)).ok());
}

TEST_F(TlsBalancerTest, MutualTlsAdmitsOnlyClientsOfItsAuthority) {
  StartNginx(/*mutual=*/true);
  EXPECT_TRUE(DescribeThrough(nginx_->target(), TlsTrusting(ca_, client_cert_)).ok());
  // No certificate: nginx completes the handshake and answers every call with HTTP 400, which
  // gRPC reports as INTERNAL (not retried: it would not help).
  const absl::Status anonymous = DescribeThrough(nginx_->target(), TlsTrusting(ca_));
  EXPECT_EQ(anonymous.code(), absl::StatusCode::kInternal) << anonymous;
  EXPECT_TRUE(absl::StrContains(anonymous.message(), "400")) << anonymous;
  // A certificate the clients' authority did not sign: the same.
  auto stranger_ca = MakeAuthority(dir_->path(), "stranger-ca");
  ASSERT_TRUE(stranger_ca.ok()) << stranger_ca.status();
  auto stranger = IssueCertificate(dir_->path(), "stranger", *stranger_ca, "DNS:stranger");
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  const absl::Status refused = DescribeThrough(nginx_->target(), TlsTrusting(ca_, *stranger));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInternal) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "400")) << refused;
}

// Game servers on one host (one address) that hold certificates of their own are clients of their
// own for the replicas' fair share: nginx names each by its address and its verified certificate's
// subject (x-worldgen-client), which the replica's call log shows as the call's client.
TEST_F(TlsBalancerTest, GameServersWithCertificatesOfTheirOwnAreToldApart) {
  StartNginx(/*mutual=*/true);
  auto second = IssueCertificate(dir_->path(), "game-server-2", clients_ca_, "DNS:game-server-2");
  ASSERT_TRUE(second.ok()) << second.status();
  for (const auto& [world, certificate] :
       {std::pair{"fair-1", client_cert_}, std::pair{"fair-2", *second}}) {
    ClientOptions options;
    options.tls = TlsTrusting(ca_, certificate);
    options.world = world;
    options.max_retries = 0;
    auto client = Client::Connect(nginx_->target(), options);
    ASSERT_TRUE(client.ok()) << client.status();
    EXPECT_EQ((*client)->GenerateChunk(1, 1).status().code(), absl::StatusCode::kNotFound);
  }
  for (const auto& [world, client] : {std::pair{"fair-1", "127.0.0.1 CN=game-server"},
                                      std::pair{"fair-2", "127.0.0.1 CN=game-server-2"}}) {
    const std::vector<v1::CallLogLine> lines = AwaitCallLogLinesOfWorld({replica_.get()}, world, 1);
    ASSERT_EQ(lines.size(), 1u) << world << "\n" << replica_->output();
    EXPECT_EQ(lines[0].client(), client);
    EXPECT_EQ(lines[0].forwarded_for(), "127.0.0.1");
  }
}

// A client certificate renewed in its files (as cert-manager renews a mounted Secret) is used
// without a new Client: the client starts with a certificate the balancer does not trust, then its
// files get one it does. A pair that does not match is not taken.
TEST_F(TlsBalancerTest, ClientCertificateFilesAreReadAgainWithoutANewClient) {
  StartNginx(/*mutual=*/true);
  auto stranger_ca = MakeAuthority(dir_->path(), "stranger-ca");
  ASSERT_TRUE(stranger_ca.ok()) << stranger_ca.status();
  auto stranger = IssueCertificate(dir_->path(), "stranger", *stranger_ca, "DNS:game-server");
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  const std::string chain_file = dir_->File("mounted-tls.crt");
  const std::string key_file = dir_->File("mounted-tls.key");
  ASSERT_TRUE(WriteFile(chain_file, *ReadFile(stranger->cert)).ok());
  ASSERT_TRUE(WriteFile(key_file, *ReadFile(stranger->key)).ok());
  ClientOptions options;
  options.tls.emplace();
  options.tls->root_certs_file = ca_.cert;
  options.tls->cert_chain_file = chain_file;
  options.tls->private_key_file = key_file;
  options.tls->reload_interval = absl::Seconds(1);
  options.max_retries = 0;
  options.deadline = absl::Seconds(5);
  auto client = Client::Connect(nginx_->target(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Status refused = (*client)->DescribeWorld().status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInternal) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "400")) << refused;

  // Writes the files (each path empty: kept), waits past the interval, and makes a call.
  auto renew_and_call = [&](const std::string& cert, const std::string& key) {
    if (!cert.empty()) {
      EXPECT_TRUE(WriteFile(chain_file, *ReadFile(cert)).ok());
    }
    if (!key.empty()) {
      EXPECT_TRUE(WriteFile(key_file, *ReadFile(key)).ok());
    }
    absl::SleepFor(absl::Milliseconds(1100));
    return (*client)->DescribeWorld().status();
  };
  // The renewal: the first call after the interval goes over a new connection with it.
  absl::Status status = renew_and_call(client_cert_.cert, client_cert_.key);
  EXPECT_TRUE(status.ok()) << "the renewed certificate was not used: " << status;
  EXPECT_EQ((*client)->stats().tls_reloads, 1);
  EXPECT_EQ((*client)->stats().tls_refusals, 0);
  // A renewal caught half-written (the stranger's key beside the trusted certificate) is not
  // taken: the client keeps the pair it has, and takes the files once they match again.
  status = renew_and_call("", stranger->key);
  EXPECT_TRUE(status.ok()) << "a key that is not its certificate's was taken: " << status;
  EXPECT_EQ((*client)->stats().tls_reloads, 1);
  EXPECT_EQ((*client)->stats().tls_refusals, 1);
  status = renew_and_call(stranger->cert, "");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << "the stranger's pair was not taken";
  EXPECT_EQ((*client)->stats().tls_reloads, 2);
  ASSERT_TRUE(renew_and_call(client_cert_.cert, client_cert_.key).ok());

  // The file-based credentials check the server's name as the PEM ones do.
  ClientOptions::Tls named = *options.tls;
  named.server_name = "worldgen.test";
  EXPECT_TRUE(DescribeThrough(nginx_->target(), named).ok());
  named.server_name = "elsewhere.test";
  EXPECT_EQ(DescribeThrough(nginx_->target(), named).code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsBalancerTest, TheCliConnectsWithItsTlsFlags) {
  StartNginx(/*mutual=*/true);
  const std::string target = "--target=" + nginx_->target();
  const std::vector<std::string> mutual = {"--tls_ca_file=" + ca_.cert,
                                           "--tls_cert_file=" + client_cert_.cert,
                                           "--tls_key_file=" + client_cert_.key};
  auto run = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {kCli, target, "--retries=0", "--deadline_ms=10000"});
    flags.push_back("describe");
    absl::StatusOr<CommandResult> result = RunCommand(flags);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.value_or(CommandResult{});
  };
  CommandResult ok = run(mutual);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(absl::StrContains(ok.out, "fingerprint")) << ok.out;
  // Without a client certificate the balancer serves nothing: an RPC error.
  EXPECT_EQ(run({"--tls_ca_file=" + ca_.cert}).exit_code, 1);
  // Plaintext to a TLS port: an RPC error.
  EXPECT_EQ(run({}).exit_code, 1);
  // The system's roots do not know the test authority.
  EXPECT_EQ(run({"--tls"}).exit_code, 1);
  // The name checked: one the certificate holds, then one it does not.
  std::vector<std::string> named = mutual;
  named.push_back("--tls_server_name=worldgen.test");
  EXPECT_EQ(run(named).exit_code, 0);
  named.back() = "--tls_server_name=elsewhere.test";
  EXPECT_EQ(run(named).exit_code, 1);
  // Flags that cannot make a client: usage errors naming the flag.
  CommandResult half = run({"--tls_ca_file=" + ca_.cert, "--tls_cert_file=" + client_cert_.cert});
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(half.err, "--tls_cert_file and --tls_key_file go together"))
      << half.err;
  CommandResult missing = run({"--tls_ca_file=" + dir_->File("absent.pem")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(
      missing.err, absl::StrCat("root_certs_file: cannot read ", dir_->File("absent.pem"),
                                " (No such file or directory)")))
      << missing.err;
  CommandResult swapped = run({"--tls_ca_file=" + ca_.cert, "--tls_cert_file=" + client_cert_.cert,
                               "--tls_key_file=" + ca_.key});
  EXPECT_EQ(swapped.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(swapped.err, "is not the key of")) << swapped.err;
}

TEST_F(TlsBalancerTest, TheMapViewerRendersTilesOverMutualTls) {
  StartNginx(/*mutual=*/true);
  viewer::ViewerOptions options;
  options.target = nginx_->target();
  options.listen = "127.0.0.1:0";
  options.max_retries = 0;
  options.tls = TlsTrusting(ca_, client_cert_);
  absl::StatusOr<std::unique_ptr<viewer::MapViewer>> view = viewer::MapViewer::Start(options);
  ASSERT_TRUE(view.ok()) << view.status();
  const viewer::HttpResponse worlds = (*view)->Get("/api/worlds", "", "");
  EXPECT_EQ(worlds.status, 200) << worlds.body;
  EXPECT_TRUE(absl::StrContains(worlds.body, "\"default\"")) << worlds.body;
  const viewer::HttpResponse tile = (*view)->Get("/tiles/default/dominant/0/0/0.png", "", "");
  EXPECT_EQ(tile.status, 200) << tile.body;
  EXPECT_EQ(tile.content_type, "image/png");
}

TEST_F(TlsBalancerTest, PythonsTlsAgreesWithTheCppClientBitForBit) {
  StartNginx(/*mutual=*/true);
  absl::StatusOr<CommandResult> run =
      RunCommand({kPython, absl::StrCat(kSourceDir, "/tests/e2e/python_client.py"),
                  absl::StrCat("--target=", nginx_->target()), absl::StrCat("--cli=", kCli),
                  absl::StrCat("--proto_dir=", kSourceDir, "/proto"), "--tls_ca=" + ca_.cert,
                  "--tls_cert=" + client_cert_.cert, "--tls_key=" + client_cert_.key},
                 absl::Seconds(120));
  ASSERT_TRUE(run.ok()) << run.status();
  std::cerr << run->out;
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_TRUE(absl::StrContains(run->out, "python-client: OK")) << run->out << run->err;
  EXPECT_TRUE(absl::StrContains(run->out, "(TLS)")) << run->out;
}

// render-config.sh refuses TLS, access-log and API-key settings nginx could not start with, naming
// the variable.
TEST(RenderConfigTest, RefusesTlsSettingsItCannotRender) {
  auto render = [](std::vector<std::string> env) {
    env.insert(env.begin(), "/usr/bin/env");
    env.insert(env.end(), {"/bin/sh", absl::StrCat(kSourceDir, "/docker/nginx/render-config.sh"),
                           "127.0.0.1:1", "127.0.0.1:2"});
    absl::StatusOr<CommandResult> run = RunCommand(env);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.value_or(CommandResult{});
  };
  const CommandResult plain = render({});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(absl::StrContains(plain.out, "listen 127.0.0.1:1 http2;")) << plain.out;
  EXPECT_FALSE(absl::StrContains(plain.out, "ssl_certificate")) << plain.out;
  EXPECT_TRUE(absl::StrContains(plain.out, "access_log /dev/stdout worldgen_calls;")) << plain.out;
  EXPECT_TRUE(absl::StrContains(render({"WORLDGEN_ACCESS_LOG=off"}).out, "access_log off;"));
  EXPECT_TRUE(absl::StrContains(render({"WORLDGEN_ACCESS_LOG=/logs/calls.json"}).out,
                                "access_log /logs/calls.json worldgen_calls;"));
  const CommandResult tls = render({"WORLDGEN_TLS_CERT=/tls/c.pem", "WORLDGEN_TLS_KEY=/tls/k.pem"});
  EXPECT_EQ(tls.exit_code, 0) << tls.err;
  EXPECT_TRUE(absl::StrContains(tls.out, "listen 127.0.0.1:1 ssl http2;")) << tls.out;
  EXPECT_TRUE(absl::StrContains(tls.out, "ssl_certificate_key /tls/k.pem;")) << tls.out;
  EXPECT_FALSE(absl::StrContains(tls.out, "ssl_verify_client")) << tls.out;
  EXPECT_FALSE(absl::StrContains(plain.out, "return 401")) << plain.out;
  const CommandResult keys = render({"WORLDGEN_API_KEYS=/keys/api-keys.map"});
  EXPECT_EQ(keys.exit_code, 0) << keys.err;
  EXPECT_TRUE(absl::StrContains(keys.out, "include /keys/api-keys.map;")) << keys.out;
  EXPECT_TRUE(absl::StrContains(keys.out, "return 401")) << keys.out;
  struct Case {
    std::vector<std::string> env;
    std::string error;
  };
  for (const Case& c : {
           Case{{"WORLDGEN_TLS_CERT=/tls/c.pem"},
                "WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY go together"},
           Case{{"WORLDGEN_TLS_KEY=/tls/k.pem"},
                "WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY go together"},
           Case{{"WORLDGEN_TLS_CLIENT_CA=/tls/ca.pem"}, "WORLDGEN_TLS_CLIENT_CA needs"},
           Case{{"WORLDGEN_TLS_CERT=/tls/my cert.pem", "WORLDGEN_TLS_KEY=/tls/k.pem"},
                "WORLDGEN_TLS_CERT=/tls/my cert.pem: a path with whitespace"},
           Case{{"WORLDGEN_TLS_CERT=/tls/c.pem", "WORLDGEN_TLS_KEY=/tls/k.pem;evil on",
                 "WORLDGEN_TLS_CLIENT_CA=/tls/ca.pem"},
                "WORLDGEN_TLS_KEY=/tls/k.pem;evil on: a path with"},
           Case{{"WORLDGEN_ACCESS_LOG=calls.json"},
                "WORLDGEN_ACCESS_LOG must be stdout, off or an absolute path"},
           Case{{"WORLDGEN_ACCESS_LOG=/logs/x;access_log /etc/passwd"},
                "WORLDGEN_ACCESS_LOG=/logs/x;access_log /etc/passwd: a path with"},
           Case{{"WORLDGEN_API_KEYS=keys.map"}, "WORLDGEN_API_KEYS must be an absolute path"},
           Case{{"WORLDGEN_API_KEYS=/keys/a.map;return 200"},
                "WORLDGEN_API_KEYS=/keys/a.map;return 200: a path with"},
       }) {
    const CommandResult refused = render(c.env);
    EXPECT_EQ(refused.exit_code, 2) << c.error;
    EXPECT_TRUE(absl::StrContains(refused.err, c.error)) << refused.err;
    EXPECT_EQ(refused.out, "");
  }
}

// ClientOptions::tls is checked when the client is made, with the field and what is wrong.
class ClientTlsOptionsTest : public AuthorityTest {
 protected:
  void SetUp() override {
    AuthorityTest::SetUp();
    if (HasFatalFailure()) return;
    auto leaf = IssueCertificate(dir_->path(), "leaf", ca_, "DNS:leaf");
    ASSERT_TRUE(leaf.ok()) << leaf.status();
    leaf_ = *leaf;
  }

  // Connect's verdict on `tls`: "accepted", or its INVALID_ARGUMENT message.
  static std::string Reason(const ClientOptions::Tls& tls) {
    ClientOptions options;
    options.tls = tls;
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect("127.0.0.1:1", options);
    if (client.ok()) return "accepted";
    EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument) << client.status();
    return std::string(client.status().message());
  }

  CertificateFiles leaf_;
};

TEST_F(ClientTlsOptionsTest, ConnectRejectsWhatCannotMakeAHandshake) {
  // Connect's verdict on the PEM roots, certificate chain and key given.
  auto reason = [](const std::string& roots, const std::string& chain, const std::string& key) {
    ClientOptions::Tls tls;
    tls.root_certs_pem = roots;
    tls.cert_chain_pem = chain;
    tls.private_key_pem = key;
    return Reason(tls);
  };
  const std::string ca_pem = *ReadFile(ca_.cert), leaf_pem = *ReadFile(leaf_.cert),
                    leaf_key = *ReadFile(leaf_.key), ca_key = *ReadFile(ca_.key);
  EXPECT_EQ(reason(ca_pem, "", ""), "accepted");
  EXPECT_EQ(reason("", "", ""), "accepted");  // The system's roots.
  EXPECT_EQ(reason(ca_pem + leaf_pem, "", ""), "accepted");
  EXPECT_EQ(reason(ca_pem, leaf_pem + ca_pem, leaf_key), "accepted");
  EXPECT_EQ(reason("not a certificate", "", ""),
            "ClientOptions.tls.root_certs_pem: holds no PEM certificate");
  // A damaged second certificate: its base64 cut short.
  const std::string damaged = ca_pem + leaf_pem.substr(0, 100) + "\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(reason(damaged, "", ""),
            "ClientOptions.tls.root_certs_pem: certificate 2 is not a PEM certificate");
  EXPECT_TRUE(absl::StrContains(reason("", leaf_pem, ""), "go together"));
  EXPECT_TRUE(absl::StrContains(reason("", "", leaf_key), "go together"));
  EXPECT_EQ(reason("", leaf_pem, ca_pem),
            "ClientOptions.tls.private_key_pem: not an unencrypted PEM private key");
  // A key under a passphrase: gRPC could not use it (and the client must not ask for one).
  ASSERT_EQ(RunCommand({"/usr/bin/openssl", "pkey", "-in", leaf_.key, "-aes256", "-passout",
                        "pass:secret", "-out", dir_->File("encrypted.key")})
                ->exit_code,
            0);
  EXPECT_EQ(reason("", leaf_pem, *ReadFile(dir_->File("encrypted.key"))),
            "ClientOptions.tls.private_key_pem: not an unencrypted PEM private key");
  EXPECT_EQ(reason("", leaf_pem, ca_key),
            "ClientOptions.tls: private_key_pem is not the key of cert_chain_pem's first "
            "certificate");
}

// The *_file fields are checked like the PEM ones, naming the field and its file.
TEST_F(ClientTlsOptionsTest, ConnectChecksTlsFilesLikeTheirPem) {
  const std::string empty = dir_->File("empty.pem");
  ASSERT_TRUE(WriteFile(empty, "").ok());
  const std::string missing = dir_->File("missing.pem");
  auto files = [](const std::string& roots, const std::string& chain, const std::string& key) {
    ClientOptions::Tls tls;
    tls.root_certs_file = roots;
    tls.cert_chain_file = chain;
    tls.private_key_file = key;
    return tls;
  };
  EXPECT_EQ(Reason(files(ca_.cert, leaf_.cert, leaf_.key)), "accepted");
  EXPECT_EQ(Reason(files("", leaf_.cert, leaf_.key)), "accepted");  // The system's roots.
  EXPECT_EQ(Reason(files(ca_.cert, "", "")), "accepted");
  EXPECT_EQ(Reason(files(missing, "", "")),
            absl::StrCat("ClientOptions.tls.root_certs_file: cannot read ", missing,
                         " (No such file or directory)"));
  EXPECT_EQ(Reason(files(empty, "", "")), absl::StrCat("ClientOptions.tls.root_certs_file (", empty,
                                                       "): holds no PEM certificate"));
  EXPECT_EQ(Reason(files("", leaf_.cert, "")),
            "ClientOptions.tls: cert_chain_file and private_key_file go together (mutual TLS), "
            "one is empty");
  EXPECT_EQ(Reason(files("", leaf_.key, leaf_.key)),
            absl::StrCat("ClientOptions.tls.cert_chain_file (", leaf_.key,
                         "): holds no PEM certificate"));
  EXPECT_EQ(Reason(files("", leaf_.cert, leaf_.cert)),
            absl::StrCat("ClientOptions.tls.private_key_file (", leaf_.cert,
                         "): not an unencrypted PEM private key"));
  EXPECT_EQ(Reason(files("", leaf_.cert, ca_.key)),
            "ClientOptions.tls: private_key_file is not the key of cert_chain_file's first "
            "certificate");
  ClientOptions::Tls mixed = files(ca_.cert, "", "");
  mixed.cert_chain_pem = *ReadFile(leaf_.cert);
  mixed.private_key_pem = *ReadFile(leaf_.key);
  EXPECT_EQ(
      Reason(mixed),
      "ClientOptions.tls: the *_file fields replace the *_pem fields; set one kind, not both");
  ClientOptions::Tls fast = files(ca_.cert, "", "");
  fast.reload_interval = absl::Milliseconds(500);
  EXPECT_EQ(Reason(fast), "ClientOptions.tls.reload_interval = 500ms: must be between 1s and 24h");
  fast.reload_interval = absl::InfiniteDuration();
  EXPECT_EQ(Reason(fast), "ClientOptions.tls.reload_interval = inf: must be between 1s and 24h");
}

}  // namespace
}  // namespace worldgen::testing
