#!/usr/bin/env bash
# Builds our threaded code with ThreadSanitizer and runs its concurrent tests: the engine (shared
# sample cache, concurrent blending), the server's scheduling core (blend pool, call
# scheduler, stream policy) and the gRPC port's connection relay. Scoped to our code: our locks are
# std::mutex (intercepted by TSan); apt's uninstrumented gRPC/Abseil are not built with TSan, so the
# gRPC service binaries are not checked here (they would report false positives).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build
cmake -S "$root" -B "$root/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWORLDGEN_TSAN=ON \
  -DWORLDGEN_BUILD_SERVICE=OFF -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-tsan" -j "${WORLDGEN_JOBS:-2}" --target engine_tests scheduling_tests chunk_flights_tests net_tests
export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
"$root/build-tsan/tests/engine_tests" --gtest_filter='*Thread*:*Concurrent*' --gtest_brief=1
"$root/build-tsan/tests/scheduling_tests" --gtest_repeat=10 --gtest_brief=1
"$root/build-tsan/tests/chunk_flights_tests" --gtest_repeat=5 --gtest_brief=1
"$root/build-tsan/tests/net_tests" --gtest_repeat=3 --gtest_brief=1
echo "tsan: PASSED"
