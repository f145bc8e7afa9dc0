// Running other programs from tests: the worldgen CLI, nginx, promtool, python3.
//
// RunCommand runs a program to completion and captures its output; ChildProcess keeps one running
// (nginx) until Stop(). Children get SIGKILL if the thread that started them exits, so a crashing
// test leaves nothing behind.
//
// Thread safety: none; use each ChildProcess from one thread.
#ifndef WORLDGEN_TESTS_CLIENT_SUBPROCESS_H_
#define WORLDGEN_TESTS_CLIENT_SUBPROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace worldgen::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number if killed by a signal.
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] (a path) with `argv`; kills it and returns DEADLINE_EXCEEDED after `timeout`.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout = absl::Seconds(60),
                                         const std::string& stdin_text = "");

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by the destructor.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Create(const std::string& prefix);
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFile(const std::string& path, const std::string& contents);

// A long-running child; its stdout and stderr go to `log_path`.
class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                             const std::string& log_path);
  ~ChildProcess();  // SIGKILL if still running.
  pid_t pid() const { return pid_; }
  bool Running();
  // Sends `signal` and waits up to `grace` for the exit (then SIGKILL). Returns the exit code.
  int Stop(int signal, absl::Duration grace = absl::Seconds(10));

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  bool reaped_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
absl::StatusOr<int> PickFreePort();

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_CLIENT_SUBPROCESS_H_
