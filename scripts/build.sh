#!/usr/bin/env bash
# Installs the build dependencies (plus any extra groups named) and builds everything into build/.
# Usage: scripts/build.sh [GROUP...]     e.g. scripts/build.sh test
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build "$@"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j "${WORLDGEN_JOBS:-2}"
