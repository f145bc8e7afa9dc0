// The `worldgen` CLI's subcommands. Each reads its flags (Abseil flags, already parsed by main.cc)
// and its positional arguments, prints results on stdout and errors on stderr, and returns an exit
// code: kExitOk, kExitError (an RPC failed, the server is not SERVING, a file could not be
// written), or kExitUsage (bad arguments).
#ifndef WORLDGEN_CLIENT_CLI_COMMANDS_H_
#define WORLDGEN_CLIENT_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace worldgen::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct Subcommand {
  const char* name;
  const char* synopsis;            // Positional arguments, e.g. "X Z".
  const char* description;         // One paragraph for --help.
  std::vector<std::string> flags;  // Flags it reads besides the global ones.
  int (*run)(const std::vector<std::string>& args);
};

// Flags every subcommand reads (--target, --deadline_ms, --retries, --world).
const std::vector<std::string>& GlobalFlags();
const std::vector<Subcommand>& Subcommands();

}  // namespace worldgen::cli

#endif  // WORLDGEN_CLIENT_CLI_COMMANDS_H_
