#!/usr/bin/env bash
# Map viewer figures (issue 23): tile latency p50/p99 per zoom level, cold (blocks nobody asked for
# yet) and warm (the same tiles again: the worldgen server's caches hold their chunks), fetched one
# at a time through `worldgen view`; then the time from navigation to a full screen of tiles
# (1200x800) in headless chromium, cold and warm (browser cache). Everything on loopback.
#   bash bench/viewer_bench.sh [BUILD_DIR]      (needs the build's npm fixture: ctest -R viewer_npm_ci)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
npm_dir=$build/tests/viewer/npm
[[ -d $npm_dir/node_modules/puppeteer-core ]] ||
  (cd "$build" && ctest -R viewer_npm_ci >/dev/null) || { echo "npm ci for tests/viewer failed" >&2; exit 1; }
cd "$npm_dir"
node viewer_test.mjs "$build/server/worldgen-server" "$build/client/worldgen" "$root" "$build" --bench |
  grep -E '^(figure|FAIL)'
