// ServerProcess: a real worldgen-server running as a child process on 127.0.0.1, for tests.
//
//   auto server = ServerProcess::Start({"--cache_bytes=0"});
//   ASSERT_TRUE(server.ok()) << server.status();
//   auto channel = grpc::CreateChannel((*server)->target(), grpc::InsecureChannelCredentials());
//   ...
//   EXPECT_EQ(*(*server)->Stop(), 0);
//
// Start() always adds --listen_address=127.0.0.1 --port=0 --metrics_port=0
// --shutdown_drain_delay_seconds=0 (later flags in `extra_flags` override them) and reads the ports
// the server actually bound from its start line:
//   worldgen-server listening on <address>:<port> metrics <address>:<port> worlds=[...] ...
// The child's stdout and stderr are merged; every line is copied to this process's stderr prefixed
// with
// "[worldgen-server <pid>] " and kept for output().
//
// The child is killed (SIGKILL) if the thread that called Start() exits (PR_SET_PDEATHSIG), so a
// crashing test never leaves a server behind; call Start() from a thread that outlives the object
// (a test body is fine).
//
// Thread safety: const methods and output() are safe for concurrent use; Stop(), Kill() and the
// destructor must not race with each other.
#ifndef WORLDGEN_TESTS_SUPPORT_SERVER_PROCESS_H_
#define WORLDGEN_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace worldgen::testing {

// Path of the worldgen-server binary this build produced.
const char* ServerBinaryPath();

class ServerProcess {
 public:
  // Starts the server and waits (at most `timeout`) for its start line. On failure (the server
  // exited, or printed no start line in time) the child is killed and the error carries its exit
  // status and everything it printed. The child's environment is this process's, plus `env`
  // ("NAME=value", replacing a variable of the same name).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      std::vector<std::string> extra_flags = {}, absl::Duration timeout = absl::Seconds(30),
      std::vector<std::string> env = {});

  ~ServerProcess();  // SIGKILL if still running, then reaps the child.
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  std::string target() const;  // "127.0.0.1:<grpc port>"
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }

  // The server's peak resident set size so far (VmHWM of /proc/<pid>/status), in bytes.
  absl::StatusOr<int64_t> PeakRssBytes() const;

  // Everything the server printed so far (stdout and stderr interleaved).
  std::string output() const;

  // SIGTERM, then waits up to `grace` for the exit (then SIGKILL). Returns the exit code, or
  // 128 + signal number if the server died from a signal. Error if already stopped.
  absl::StatusOr<int> Stop(absl::Duration grace = absl::Seconds(10));

  // Waits up to `timeout` for an exit the test caused itself (a signal it sent); returns the exit
  // code as Stop() does. DEADLINE_EXCEEDED (and the server keeps running) if it did not exit in
  // time.
  absl::StatusOr<int> Wait(absl::Duration timeout = absl::Seconds(20));

  // SIGKILL now and reap.
  void Kill();

 private:
  ServerProcess() = default;
  void ReadOutput(int fd);                                  // Reader thread body.
  absl::StatusOr<int> WaitForExit(absl::Duration timeout);  // Reaps; -1 if still running.

  pid_t pid_ = -1;
  bool reaped_ = false;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  std::thread reader_;

  mutable absl::Mutex mu_;
  std::string output_ ABSL_GUARDED_BY(mu_);
  bool saw_start_line_ ABSL_GUARDED_BY(mu_) = false;
  bool output_closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Result of running the server to completion (e.g. --help, or a config it must reject).
struct ServerExit {
  int exit_code = 0;  // 128 + signal number if killed by a signal.
  std::string output;
};

// Runs worldgen-server with exactly `flags` and waits for it to exit; kills it and returns
// DEADLINE_EXCEEDED if it is still running after `timeout`.
absl::StatusOr<ServerExit> RunServerToExit(const std::vector<std::string>& flags,
                                           absl::Duration timeout = absl::Seconds(30));

// A tiny HTTP/1.0 GET for loopback scrapes (/metrics). Returns the body of a 200 response; any
// other status, a connection failure or `timeout` is an error.
absl::StatusOr<std::string> HttpGet(const std::string& host, int port, const std::string& path,
                                    absl::Duration timeout = absl::Seconds(10));

// A blocking TCP connection to 127.0.0.1:`port` (close-on-exec); -1 on failure.
int ConnectLoopback(int port);

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_SUPPORT_SERVER_PROCESS_H_
