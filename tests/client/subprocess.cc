#include "tests/client/subprocess.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace worldgen::testing {
namespace {

// fork + exec with stdin/stdout/stderr redirected to the given files (empty: /dev/null).
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& in_path,
                            const std::string& out_path, const std::string& err_path) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  auto open_or_null = [](const std::string& path, int flags) {
    return open(path.empty() ? "/dev/null" : path.c_str(), flags | O_CLOEXEC, 0644);
  };
  const int in = open_or_null(in_path, O_RDONLY);
  const int out = open_or_null(out_path, O_WRONLY | O_CREAT | O_TRUNC);
  const int err =
      err_path == out_path ? dup(out) : open_or_null(err_path, O_WRONLY | O_CREAT | O_TRUNC);
  if (in < 0 || out < 0 || err < 0) {
    return absl::InternalError(absl::StrCat("opening redirections: ", strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  close(in);
  close(out);
  close(err);
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  return pid;
}

int Decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::optional<int> WaitFor(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return Decode(status);
    if (r < 0 && errno != EINTR) return -1;
    if (absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::Create(const std::string& prefix) {
  const char* base = getenv("TMPDIR");
  std::string pattern = absl::StrCat(base && *base ? base : "/tmp", "/", prefix, ".XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, ": ", strerror(errno)));
  }
  return std::unique_ptr<TempDir>(new TempDir(pattern));
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout, const std::string& stdin_text) {
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create("worldgen-cmd");
  if (!dir.ok()) return dir.status();
  const std::string in = (*dir)->File("stdin"), out = (*dir)->File("stdout"),
                    err = (*dir)->File("stderr");
  if (absl::Status s = WriteFile(in, stdin_text); !s.ok()) return s;
  absl::StatusOr<pid_t> pid = Spawn(argv, in, out, err);
  if (!pid.ok()) return pid.status();
  std::optional<int> code = WaitFor(*pid, timeout);
  CommandResult result;
  if (!code) {
    kill(*pid, SIGKILL);
    WaitFor(*pid, absl::InfiniteDuration());
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " still running after ", absl::FormatDuration(timeout)));
  }
  result.exit_code = *code;
  result.out = ReadFile(out).value_or("");
  result.err = ReadFile(err).value_or("");
  if (result.exit_code == 127 && result.out.empty() && result.err.empty()) {
    return absl::NotFoundError(absl::StrCat("could not execute ", argv[0]));
  }
  return result;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& log_path) {
  absl::StatusOr<pid_t> pid = Spawn(argv, "", log_path, log_path);
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<ChildProcess>(new ChildProcess(*pid));
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  std::optional<int> code = WaitFor(pid_, absl::ZeroDuration());
  if (code) reaped_ = true;
  return !reaped_;
}

int ChildProcess::Stop(int signal, absl::Duration grace) {
  if (reaped_) return -1;
  kill(pid_, signal);
  std::optional<int> code = WaitFor(pid_, grace);
  if (!code) {
    kill(pid_, SIGKILL);
    code = WaitFor(pid_, absl::InfiniteDuration());
  }
  reaped_ = true;
  return *code;
}

ChildProcess::~ChildProcess() {
  if (!reaped_) Stop(SIGKILL, absl::Seconds(5));
}

absl::StatusOr<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("bind: ", strerror(errno)));
  }
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace worldgen::testing
