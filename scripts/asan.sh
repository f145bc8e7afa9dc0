#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and runs the
# whole test suite with it. Benchmarks are left out (nothing runs them here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build test
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWORLDGEN_ASAN=ON -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-asan" -j "${WORLDGEN_JOBS:-2}"
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
cd "$root/build-asan"
ctest --output-on-failure -j "${WORLDGEN_JOBS:-2}" --timeout 900
