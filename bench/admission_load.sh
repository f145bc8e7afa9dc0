#!/usr/bin/env bash
# Admission under player bursts (issue 20): chunks/s, latency and refusals at concurrency 8, 64, 200
# and 1,000, each worker a player loading its surroundings (spiral pattern: 16 chunks of 16^2 per
# request, closed loop, no client retries, so every refusal is counted). Needs a build tree with
# worldgen-server and the worldgen CLI (scripts/build.sh builds them).
#
#   bash bench/admission_load.sh [BUILD_DIR] [SECONDS] [SERVER_BINARY]   (defaults: build, 5, the tree's)
#
# SERVER_BINARY runs the same table against another build of the server (e.g. an older commit's),
# with the same CLI. WORLDGEN_SERVER_FLAGS (space-separated) are added to the server's flags.
# The server listens on 127.0.0.1 only and is stopped at the end; each run is bounded in time.
set -euo pipefail
build=${1:-build}
seconds=${2:-5}
cli="$build/client/worldgen"
server_bin=${3:-$build/server/worldgen-server}
for b in "$cli" "$server_bin"; do
  [[ -x $b ]] || { echo "admission_load: $b is missing (build first)" >&2; exit 2; }
done
script=admission_load
source "$(dirname "$0")/loopback.sh"
source "$(dirname "$0")/machine.sh"
read -r -a extra <<<"${WORLDGEN_SERVER_FLAGS:-}"
start "$server_bin" "${worldgen_flags[@]}" "${extra[@]}"; port=$started_port

echo "admission_load: $(machine);" \
     "server $server_bin ${extra[*]}"
printf '%-12s %10s %9s %9s %9s %9s %10s %8s\n' concurrency chunks/s p50_ms p99_ms max_ms requests refused other
for concurrency in 8 64 200 1000; do
  report=$(load "$port" --pattern=spiral --chunks_per_request=16 --retries=0 \
                --concurrency="$concurrency" --duration="${seconds}s" || true)  # Exit 1 on errors.
  python3 - "$concurrency" "$report" <<'PY'
import json, sys
c, d = sys.argv[1], json.loads(sys.argv[2])
errors = d.get("errors", {})
refused = errors.get("RESOURCE_EXHAUSTED", 0)
other = sum(errors.values()) - refused
print("%-12s %10.0f %9.2f %9.2f %9.2f %9d %10d %8d" % (
    c, d["chunks_per_second"], d["latency_ms"]["p50"], d["latency_ms"]["p99"], d["latency_ms"]["max"],
    d["requests"], refused, other))
PY
done
