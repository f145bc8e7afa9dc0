// worldgen: command-line client for the worldgen service.
//
//   worldgen [--target=host:port] [--deadline_ms=N] [--retries=N] [--world=NAME] SUBCOMMAND [ARGS]
//
// Exit codes: 0 success; 1 an RPC failed (message on stderr), the server is not SERVING (`health`),
// a load run had failed requests, or the output file could not be written; 2 usage error.
//
// Flags are Abseil flags, but parsed here rather than by absl::ParseCommandLine so that each
// subcommand accepts only its own flags, usage errors exit with 2, and negative numbers can be
// positional arguments (`worldgen chunk -3 -2`). Flags may come before or after the subcommand;
// dashes in flag names are underscores (--splat-png is --splat_png).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "client/cli/commands.h"

namespace worldgen::cli {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void PrintFlags(std::ostream& out, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    out << "  --" << name << "  " << flag->Help()
        << " (default: " << (flag->DefaultValue().empty() ? "\"\"" : flag->DefaultValue()) << ")\n";
  }
}

void PrintMainUsage(std::ostream& out) {
  out << "usage: worldgen [global flags] SUBCOMMAND [args] [flags]\n\nsubcommands:\n";
  for (const Subcommand& c : Subcommands()) {
    out << "  " << c.name << (*c.synopsis ? " " : "") << c.synopsis << "\n";
  }
  out << "\nglobal flags:\n";
  PrintFlags(out, GlobalFlags());
  out << "\n`worldgen SUBCOMMAND --help` describes a subcommand and its flags.\n"
         "Exit codes: 0 ok, 1 RPC error (or not SERVING, or failed load requests), 2 usage "
         "error.\n";
}

void PrintSubcommandUsage(std::ostream& out, const Subcommand& c) {
  out << "usage: worldgen " << c.name << (*c.synopsis ? " " : "") << c.synopsis << " [flags]\n\n"
      << c.description << "\n";
  if (!c.flags.empty()) {
    out << "\nflags:\n";
    PrintFlags(out, c.flags);
  }
  out << "\nglobal flags:\n";
  PrintFlags(out, GlobalFlags());
}

// A negative number is a positional argument, not a flag.
bool IsNumber(const std::string& arg) {
  double unused;
  return absl::SimpleAtod(arg, &unused);
}

int Main(int argc, char** argv) {
  // As worldgen-server (server/main.cc says why): `load` runs many threads over gRPC's locks.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::vector<std::string> args(argv + 1, argv + argc);
  const Subcommand* command = nullptr;
  std::vector<std::string> positional;
  bool help = false;
  // Pairs (flag name, value) applied once the subcommand is known.
  std::vector<std::pair<std::string, std::string>> settings;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull") {
      help = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && !IsNumber(arg)) {
      std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
      std::string name = body, value;
      bool has_value = false;
      if (size_t eq = body.find('='); eq != std::string::npos) {
        name = body.substr(0, eq);
        value = body.substr(eq + 1);
        has_value = true;
      }
      // --splat-png and --splat_png name the same flag.
      std::replace(name.begin(), name.end(), '-', '_');
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
        // --noflag (or --no-flag, --no_flag) for a boolean flag.
        const std::string base = name.substr(absl::StartsWith(name, "no_") ? 3 : 2);
        const absl::CommandLineFlag* negated = absl::FindCommandLineFlag(base);
        if (negated != nullptr && negated->IsOfType<bool>()) {
          settings.emplace_back(base, "false");
          continue;
        }
      }
      if (flag == nullptr) {
        std::cerr << "worldgen: unknown flag " << arg << " (try --help)\n";
        return kExitUsage;
      }
      if (!has_value) {
        if (flag->IsOfType<bool>()) {
          value = "true";
        } else if (i + 1 < args.size()) {
          value = args[++i];
        } else {
          std::cerr << "worldgen: flag --" << name << " needs a value\n";
          return kExitUsage;
        }
      }
      settings.emplace_back(name, value);
      continue;
    }
    if (command == nullptr && positional.empty()) {
      for (const Subcommand& c : Subcommands()) {
        if (arg == c.name) command = &c;
      }
      if (command == nullptr) {
        std::cerr << "worldgen: unknown subcommand \"" << arg << "\"\n\n";
        PrintMainUsage(std::cerr);
        return kExitUsage;
      }
      continue;
    }
    positional.push_back(arg);
  }

  if (command == nullptr) {
    PrintMainUsage(help ? std::cout : std::cerr);
    return help ? kExitOk : kExitUsage;
  }
  if (help) {
    PrintSubcommandUsage(std::cout, *command);
    return kExitOk;
  }
  for (const auto& [name, value] : settings) {
    if (!Contains(GlobalFlags(), name) && !Contains(command->flags, name)) {
      std::cerr << "worldgen: " << command->name << " does not take --" << name << " (worldgen "
                << command->name << " --help lists its flags)\n";
      return kExitUsage;
    }
    std::string error;
    if (!absl::FindCommandLineFlag(name)->ParseFrom(value, &error)) {
      std::cerr << "worldgen: --" << name << "=" << value << ": " << error << "\n";
      return kExitUsage;
    }
  }
  const int code = command->run(positional);
  // What the command printed must have reached stdout (a full disk, a closed pipe).
  std::cout.flush();
  if ((!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) && code == kExitOk) {
    std::cerr << "worldgen: could not write to stdout\n";
    return kExitError;
  }
  return code;
}

}  // namespace
}  // namespace worldgen::cli

int main(int argc, char** argv) { return worldgen::cli::Main(argc, argv); }
