// NginxProcess: a real nginx (apt's /usr/sbin/nginx) as a child process on a free loopback port,
// with its own prefix, pid file and logs in a temporary directory, balancing gRPC over the given
// upstreams with the deployment's own config: docker/nginx/worldgen.conf.template rendered by
// docker/nginx/render-config.sh. One process (no master/worker split), so the child's parent-death
// signal covers all of nginx if the test dies.
#ifndef WORLDGEN_TESTS_SUPPORT_NGINX_PROCESS_H_
#define WORLDGEN_TESTS_SUPPORT_NGINX_PROCESS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/client/subprocess.h"

namespace worldgen::testing {

inline constexpr char kNginx[] = "/usr/sbin/nginx";

// TLS for the clients, as render-config.sh's WORLDGEN_TLS_* (PEM file paths; client_ca may be
// empty).
struct NginxTls {
  std::string cert;
  std::string key;
  std::string client_ca;
};

class NginxProcess {
 public:
  // `upstreams`: the replicas' "host:port"; `api_keys`: the path of a keys file
  // (WORLDGEN_API_KEYS), or empty. Returns once nginx accepted its config and listens.
  static absl::StatusOr<std::unique_ptr<NginxProcess>> Start(
      const std::vector<std::string>& upstreams, const std::optional<NginxTls>& tls = std::nullopt,
      const std::string& api_keys = "");
  ~NginxProcess();  // Graceful stop (SIGQUIT: finish requests, then exit).

  int port() const { return port_; }
  std::string target() const;
  int pid() const;
  std::string error_log() const;
  // What nginx wrote to stdout: the template's worldgen_calls lines, one JSON object per call.
  std::string access_log() const;

 private:
  NginxProcess() = default;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<ChildProcess> child_;
  int port_ = 0;
};

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_NGINX_PROCESS_H_
