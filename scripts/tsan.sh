#!/usr/bin/env bash
# Builds the engine tests with ThreadSanitizer and runs the concurrent ones. Scoped to our code: the
# engine's locks are std::mutex (intercepted by TSan); apt's uninstrumented gRPC/Abseil are not built
# with TSan, so service binaries are not checked here (they would report false positives).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build
cmake -S "$root" -B "$root/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWORLDGEN_TSAN=ON \
  -DWORLDGEN_BUILD_SERVICE=OFF -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-tsan" -j "${WORLDGEN_JOBS:-2}" --target engine_tests
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$root/build-tsan/tests/engine_tests" \
  --gtest_filter='*Thread*:*Concurrent*' --gtest_brief=1
echo "tsan: PASSED"
