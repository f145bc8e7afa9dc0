// Where the end-to-end tests find the programs and files they drive.
#ifndef WORLDGEN_TESTS_E2E_E2E_PATHS_H_
#define WORLDGEN_TESTS_E2E_E2E_PATHS_H_

namespace worldgen::testing {

// apt's tools (apt-packages.txt, group test; nginx's path is in tests/support/nginx_process.h).
// /usr/bin/python3, not the first python3 on PATH: only the system interpreter sees apt's grpc and
// protobuf modules.
inline constexpr char kPromtool[] = "/usr/bin/promtool";
inline constexpr char kPython[] = "/usr/bin/python3";

inline constexpr char kCli[] = WORLDGEN_CLI_BINARY;
inline constexpr char kSourceDir[] = WORLDGEN_SOURCE_DIR;

}  // namespace worldgen::testing

#endif  // WORLDGEN_TESTS_E2E_E2E_PATHS_H_
