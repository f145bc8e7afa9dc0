#!/usr/bin/env bash
# README command 2: install what is needed, build, and run the whole test suite with ctest.
# Tests that need servers start them on 127.0.0.1 themselves (free ports, bounded time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" test
cd "$root/build"
ctest --output-on-failure -j "${WORLDGEN_JOBS:-2}" --timeout 600
