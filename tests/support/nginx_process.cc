#include "tests/support/nginx_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace worldgen::testing {
namespace {

// Whether something accepts TCP connections on 127.0.0.1:port.
bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NginxProcess>> NginxProcess::Start(
    const std::vector<std::string>& upstreams, const std::optional<NginxTls>& tls,
    const std::string& api_keys) {
  std::unique_ptr<NginxProcess> nginx(new NginxProcess());
  auto dir = TempDir::Create("worldgen-nginx");
  if (!dir.ok()) return dir.status();
  nginx->dir_ = *std::move(dir);
  absl::StatusOr<int> port = PickFreePort();
  if (!port.ok()) return port.status();
  nginx->port_ = *port;

  std::vector<std::string> render = {"/usr/bin/env"};
  if (tls.has_value()) {
    render.insert(render.end(), {"WORLDGEN_TLS_CERT=" + tls->cert, "WORLDGEN_TLS_KEY=" + tls->key,
                                 "WORLDGEN_TLS_CLIENT_CA=" + tls->client_ca});
  }
  if (!api_keys.empty()) render.push_back("WORLDGEN_API_KEYS=" + api_keys);
  render.insert(render.end(),
                {"/bin/sh", absl::StrCat(WORLDGEN_SOURCE_DIR, "/docker/nginx/render-config.sh"),
                 absl::StrCat("127.0.0.1:", *port)});
  render.insert(render.end(), upstreams.begin(), upstreams.end());
  absl::StatusOr<CommandResult> rendered = RunCommand(render);
  if (!rendered.ok()) return rendered.status();
  if (rendered->exit_code != 0) return absl::InternalError("render-config.sh: " + rendered->err);
  const std::string d = nginx->dir_->path();
  if (auto s = WriteFile(d + "/worldgen.conf", rendered->out); !s.ok()) return s;
  // The main context differs between a container and a test; the worldgen part is the same file.
  const std::string main_conf = absl::StrCat(
      "daemon off;\nmaster_process off;\npid ", d, "/nginx.pid;\nerror_log ", d,
      "/error.log info;\n", "events { worker_connections 1024; }\nhttp {\n  access_log ", d,
      "/access.log;\n", "  client_body_temp_path ", d, "/client_body;\n  proxy_temp_path ", d,
      "/proxy;\n", "  fastcgi_temp_path ", d, "/fastcgi;\n  uwsgi_temp_path ", d, "/uwsgi;\n",
      "  scgi_temp_path ", d, "/scgi;\n  include ", d, "/worldgen.conf;\n}\n");
  if (auto s = WriteFile(d + "/nginx.conf", main_conf); !s.ok()) return s;

  const std::vector<std::string> argv = {kNginx,          "-p", d, "-c", d + "/nginx.conf", "-e",
                                         d + "/error.log"};
  absl::StatusOr<CommandResult> syntax =
      RunCommand({kNginx, "-t", "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"});
  if (!syntax.ok()) return syntax.status();
  if (syntax->exit_code != 0) return absl::InternalError("nginx -t: " + syntax->err + syntax->out);
  auto child = ChildProcess::Start(argv, d + "/nginx.out");
  if (!child.ok()) return child.status();
  nginx->child_ = *std::move(child);
  // Started means listening: callers connect at once.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (!Accepts(nginx->port_)) {
    if (absl::Now() > give_up || !nginx->child_->Running()) {
      return absl::InternalError("nginx did not start listening: " + nginx->error_log());
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return nginx;
}

NginxProcess::~NginxProcess() {
  if (child_) child_->Stop(SIGQUIT, absl::Seconds(10));
}

std::string NginxProcess::target() const { return absl::StrCat("127.0.0.1:", port_); }

int NginxProcess::pid() const { return child_ ? child_->pid() : -1; }

std::string NginxProcess::error_log() const {
  return ReadFile(dir_->File("error.log")).value_or("");
}

std::string NginxProcess::access_log() const {
  return ReadFile(dir_->File("nginx.out")).value_or("");
}

}  // namespace worldgen::testing
