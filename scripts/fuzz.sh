#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan + coverage, build-fuzz/) and runs each for
# a bounded time over its corpus in tests/fuzz/corpus/<target>/. New inputs go to a scratch directory;
# a crash stops the script with the crashing input saved as build-fuzz/crash-<target>-*: add it to the
# corpus so the ctest replay (<target>_corpus) keeps it as a regression test.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
"$root/scripts/install-deps.sh" build fuzz
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$root/build-fuzz" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWORLDGEN_FUZZ=ON -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
targets=(world_config_fuzz request_fuzz engine_invariants_fuzz http2_frame_guard_fuzz
         client_input_fuzz)
cmake --build "$root/build-fuzz" -j "${WORLDGEN_JOBS:-2}" --target "${targets[@]}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
for target in "${targets[@]}"; do
  scratch=$(mktemp -d)
  log="$root/build-fuzz/$target.log"
  if ! (cd "$root/build-fuzz" && "./tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 \
          -rss_limit_mb=2048 -artifact_prefix="crash-$target-" -print_final_stats=1 \
          "$scratch" "$root/tests/fuzz/corpus/$target" >"$log" 2>&1); then
    tail -n 40 "$log"
    echo "fuzz: $target FAILED (see $log)"
    exit 1
  fi
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  echo "fuzz: $target ${seconds}s ${execs:-?} executions, no crash"
  rm -rf "$scratch"
done
echo "fuzz: PASSED"
