#include "tests/support/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

#ifndef WORLDGEN_SERVER_BINARY
#error "WORLDGEN_SERVER_BINARY must name the worldgen-server binary"
#endif

namespace worldgen::testing {
namespace {

constexpr absl::string_view kStartMarker = "worldgen-server listening on ";

struct Child {
  pid_t pid = -1;
  int output_fd = -1;  // Read end of the pipe carrying the child's stdout and stderr.
};

// fork + exec of the server binary with `flags`, in this process's environment plus `env`
// ("NAME=value", replacing a variable of the same name); the child dies with the calling thread.
absl::StatusOr<Child> Spawn(const std::vector<std::string>& flags,
                            const std::vector<std::string>& env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = {ServerBinaryPath()};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars = env;
  for (char** var = environ; *var != nullptr; ++var) {
    const absl::string_view name = absl::string_view(*var).substr(0, std::strcspn(*var, "="));
    const bool replaced = std::any_of(env.begin(), env.end(), [name](const std::string& e) {
      return absl::StartsWith(e, absl::StrCat(name, "="));
    });
    if (!replaced) vars.push_back(*var);
  }
  std::vector<char*> envp;
  for (std::string& var : vars) envp.push_back(var.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  sigset_t none;
  sigemptyset(&none);

  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Waits up to `timeout` for `pid` to exit. Returns the decoded status, or nullopt if still running.
std::optional<int> WaitPid(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return DecodeWaitStatus(status);
    if (r < 0 && errno != EINTR) return -1;  // Not our child any more: treat as gone.
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

// Port at the end of "<host>:<port>" starting at `text` (up to the next space).
std::optional<int> ParsePortAfter(absl::string_view line, absl::string_view marker) {
  size_t at = line.find(marker);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = line.substr(at + marker.size());
  rest = rest.substr(0, rest.find(' '));
  size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos) return std::nullopt;
  int port = 0;
  if (!absl::SimpleAtoi(rest.substr(colon + 1), &port) || port <= 0) return std::nullopt;
  return port;
}

}  // namespace

const char* ServerBinaryPath() { return WORLDGEN_SERVER_BINARY; }

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    std::vector<std::string> extra_flags, absl::Duration timeout, std::vector<std::string> env) {
  std::vector<std::string> flags = {"--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
                                    "--shutdown_drain_delay_seconds=0"};
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  absl::StatusOr<Child> child = Spawn(flags, env);
  if (!child.ok()) return child.status();

  std::unique_ptr<ServerProcess> server(new ServerProcess());
  server->pid_ = child->pid;
  server->reader_ = std::thread([s = server.get(), fd = child->output_fd] { s->ReadOutput(fd); });

  std::string start_line;
  {
    absl::MutexLock lock(&server->mu_);
    // A plain capture: clang's lock annotation cannot name an init-capture.
    ServerProcess* const s = server.get();
    auto started_or_closed = [s]() ABSL_SHARED_LOCKS_REQUIRED(s->mu_) {
      return s->saw_start_line_ || s->output_closed_;
    };
    server->mu_.AwaitWithTimeout(absl::Condition(&started_or_closed), timeout);
    if (server->saw_start_line_) {
      size_t at = server->output_.find(kStartMarker.data(), 0, kStartMarker.size());
      size_t end = server->output_.find('\n', at);
      start_line = server->output_.substr(at, end - at);
    }
  }
  std::optional<int> grpc_port = ParsePortAfter(start_line, kStartMarker);
  std::optional<int> metrics_port = ParsePortAfter(start_line, " metrics ");
  if (!grpc_port || !metrics_port) {
    std::string why =
        start_line.empty() ? "printed no start line" : "printed an unparsable start line";
    std::optional<int> code = WaitPid(server->pid_, absl::Milliseconds(200));
    if (code) {
      server->reaped_ = true;
      why = absl::StrCat("exited with code ", *code, " before serving");
    }
    server->Kill();
    return absl::FailedPreconditionError(absl::StrCat("worldgen-server (",
                                                      absl::StrJoin(flags, " "), ") ", why,
                                                      "; output:\n", server->output()));
  }
  server->grpc_port_ = *grpc_port;
  server->metrics_port_ = *metrics_port;
  return server;
}

void ServerProcess::ReadOutput(int fd) {
  const std::string prefix = absl::StrCat("[worldgen-server ", pid_, "] ");
  std::string pending;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, newline + 1);
      pending.erase(0, newline + 1);
      std::fprintf(stderr, "%s%s", prefix.c_str(), line.c_str());
      absl::MutexLock lock(&mu_);
      output_ += line;
      if (absl::string_view(line).find(kStartMarker) != absl::string_view::npos) {
        saw_start_line_ = true;
      }
    }
  }
  close(fd);
  absl::MutexLock lock(&mu_);
  if (!pending.empty()) {
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), pending.c_str());
    output_ += pending;
  }
  output_closed_ = true;
}

ServerProcess::~ServerProcess() {
  Kill();
  if (reader_.joinable()) reader_.join();
}

std::string ServerProcess::target() const { return absl::StrCat("127.0.0.1:", grpc_port_); }

std::string ServerProcess::output() const {
  absl::MutexLock lock(&mu_);
  return output_;
}

absl::StatusOr<int> ServerProcess::Stop(absl::Duration grace) {
  if (reaped_) return absl::FailedPreconditionError("worldgen-server already stopped");
  kill(pid_, SIGTERM);
  std::optional<int> code = WaitPid(pid_, grace);
  if (!code) {
    kill(pid_, SIGKILL);
    code = WaitPid(pid_, absl::InfiniteDuration());
  }
  reaped_ = true;
  if (reader_.joinable()) reader_.join();
  return *code;
}

absl::StatusOr<int64_t> ServerProcess::PeakRssBytes() const {
  const std::string path = absl::StrCat("/proc/", pid_, "/status");
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return absl::NotFoundError(absl::StrCat(path, ": ", strerror(errno)));
  char line[256];
  std::optional<int64_t> kib;
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    absl::string_view text(line);
    if (!absl::ConsumePrefix(&text, "VmHWM:")) continue;
    int64_t value = 0;
    if (absl::SimpleAtoi(
            absl::StripAsciiWhitespace(absl::StripSuffix(absl::StripAsciiWhitespace(text), "kB")),
            &value)) {
      kib = value;
    }
  }
  std::fclose(file);
  if (!kib) return absl::InternalError(absl::StrCat(path, ": no VmHWM line"));
  return *kib * 1024;
}

absl::StatusOr<int> ServerProcess::Wait(absl::Duration timeout) {
  if (reaped_) return absl::FailedPreconditionError("worldgen-server already stopped");
  std::optional<int> code = WaitPid(pid_, timeout);
  if (!code) {
    return absl::DeadlineExceededError(
        absl::StrCat("worldgen-server still running after ", absl::FormatDuration(timeout)));
  }
  reaped_ = true;
  if (reader_.joinable()) reader_.join();
  return *code;
}

void ServerProcess::Kill() {
  if (reaped_ || pid_ <= 0) return;
  kill(pid_, SIGKILL);
  WaitPid(pid_, absl::InfiniteDuration());
  reaped_ = true;
}

absl::StatusOr<ServerExit> RunServerToExit(const std::vector<std::string>& flags,
                                           absl::Duration timeout) {
  absl::StatusOr<Child> child = Spawn(flags, {});
  if (!child.ok()) return child.status();
  const absl::Time deadline = absl::Now() + timeout;
  ServerExit result;
  char buf[4096];
  bool timed_out = false;
  while (true) {
    int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{child->output_fd, POLLIN, 0};
    int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(child->output_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
  }
  close(child->output_fd);
  std::optional<int> code =
      WaitPid(child->pid, timed_out ? absl::ZeroDuration() : absl::Seconds(5));
  if (!code) {
    kill(child->pid, SIGKILL);
    WaitPid(child->pid, absl::InfiniteDuration());
    return absl::DeadlineExceededError(absl::StrCat("worldgen-server still running after ",
                                                    absl::FormatDuration(timeout), "; output:\n",
                                                    result.output));
  }
  result.exit_code = *code;
  return result;
}

absl::StatusOr<std::string> HttpGet(const std::string& host, int port, const std::string& path,
                                    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("HttpGet: not an IPv4 address: ", host));
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  timeval tv{};
  int64_t timeout_ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout));
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ", strerror(errno)));
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", host, ":", port, "\r\n\r\n");
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("send: ", strerror(errno)));
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buf[8192];
  while (true) {
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("HttpGet: timed out");
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
    if (n == 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::DataLossError("HttpGet: response has no header terminator");
  }
  absl::string_view status_line = absl::string_view(response).substr(0, response.find("\r\n"));
  if (status_line.find(" 200") == absl::string_view::npos) {
    return absl::UnavailableError(absl::StrCat("HttpGet: ", status_line));
  }
  return response.substr(header_end + 4);
}

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace worldgen::testing
