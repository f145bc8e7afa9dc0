#!/usr/bin/env bash
# Builds the engine and its tests with clang-14 (Release, build-clang/) and runs them: the golden
# hashes, pinned by GCC's build, must hold under a second compiler too (CMakeLists.txt forbids
# fused multiply-add contraction and fast math for both), with the dispatched SIMD variants and with
# the baseline ones. A replica built with either compiler then serves the same bits.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build fuzz  # clang-14 is in the fuzz group.
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$root/build-clang" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DWORLDGEN_BUILD_SERVICE=OFF -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-clang" -j "${WORLDGEN_JOBS:-2}" --target engine_tests
"$root/build-clang/tests/engine_tests" --gtest_brief=1
WORLDGEN_SIMD_VARIANT=baseline "$root/build-clang/tests/engine_tests" --gtest_filter='*Golden*' \
  --gtest_brief=1
echo "clang: PASSED"
