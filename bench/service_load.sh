#!/usr/bin/env bash
# The service's cost in one load run on loopback (issue 12's service targets). Needs a build tree with
# worldgen-server, worldgen-echo-server and the worldgen CLI (scripts/build.sh builds them).
#
#   bash bench/service_load.sh [BUILD_DIR] [SECONDS] [PAIRS]       (defaults: build, 10, 3)
#
# WORLDGEN_SERVER_FLAGS (space-separated) are added to worldgen-server's flags, e.g.
# WORLDGEN_SERVER_FLAGS=--http2_guard=false to measure the HTTP/2 frame guard's cost.
#
# 1. Throughput: worldgen-server (cached samples: the run is warmed first) and the echo server (the
#    same 16x16 chunks with weights and heights, pre-built, no blending) under the same closed-loop
#    load (`hot` pattern, 16 chunks per request), in PAIRS back-to-back pairs of runs; the ratio
#    worldgen / echo of each pair and their median.
# 2. Latency at half of worldgen's maximum sustained load of single-chunk requests: the maximum
#    measured closed-loop, then an open loop at half that rate; p50 / p99 / p99.9, and the same open
#    loop against the echo server (bare gRPC and the client on these cores, in the same hour).
# 3. Memory: peak RSS (VmHWM) of the server over the runs, and the sample cache's bytes per tile.
# 4. The encoded-chunk cache on a hot pattern: chunks/s with --chunk_cache_bytes=64 MiB against off.
# Every process listens on 127.0.0.1 only and is stopped at the end; each run is bounded in time.
set -euo pipefail
build=${1:-build}
seconds=${2:-10}
pairs=${3:-3}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "service_load: PAIRS must be a positive integer, not '$pairs'" >&2; exit 2; }
cli="$build/client/worldgen"
server_bin="$build/server/worldgen-server"
echo_bin="$build/bench/worldgen-echo-server"
for b in "$cli" "$server_bin" "$echo_bin"; do
  [[ -x $b ]] || { echo "service_load: $b is missing (build first)" >&2; exit 2; }
done
script=service_load
source "$(dirname "$0")/loopback.sh"
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
hwm_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }

common=("${worldgen_flags[@]}")  # default --blend_threads
read -r -a extra <<<"${WORLDGEN_SERVER_FLAGS:-}"
common+=("${extra[@]}")
start "$server_bin" "${common[@]}"; wpid=$started_pid; wport=$started_port
start "$echo_bin" --port=0; eport=$started_port

load "$wport" "${hot[@]}" --duration=3s >/dev/null  # Warm the sample cache.
# Pairs of runs, back to back, the first of each pair alternating between the servers: the host's
# load drifts over a minute, and a ratio of two neighbouring runs cancels most of the drift.
ratios=()
wsum=0; esum=0
for pair in $(seq "$pairs"); do
  if (( pair % 2 == 1 )); then
    w=$(load "$wport" "${hot[@]}" --duration="${seconds}s")
    e=$(load "$eport" "${hot[@]}" --duration="${seconds}s")
  else
    e=$(load "$eport" "${hot[@]}" --duration="${seconds}s")
    w=$(load "$wport" "${hot[@]}" --duration="${seconds}s")
  fi
  wcps=$(echo "$w" | field "d['chunks_per_second']")
  ecps=$(echo "$e" | field "d['chunks_per_second']")
  errors="$(echo "$w" | field "d['error_count']") / $(echo "$e" | field "d['error_count']")"
  ratio=$(python3 -c "print(round($wcps/$ecps, 3))")
  ratios+=("$ratio")
  wsum=$(python3 -c "print($wsum + $wcps)"); esum=$(python3 -c "print($esum + $ecps)")
  echo "throughput pair $pair (hot, 16 chunks/request, concurrency 4, ${seconds}s each):" \
       "worldgen $wcps chunks/s  echo $ecps chunks/s  ratio $ratio  errors $errors"
done
wcps=$(python3 -c "print(round($wsum / $pairs, 1))")
echo "  worldgen / echo over $pairs pairs: median $(python3 -c "import statistics; print(round(statistics.median([$(IFS=,; echo "${ratios[*]}")]), 3))")," \
     "mean chunks/s $wcps / $(python3 -c "print(round($esum / $pairs, 1))")"

single=(--pattern=hot --hot_set=256 --chunks_per_request=1 --concurrency=8)
m=$(load "$wport" "${single[@]}" --duration="${seconds}s")
max=$(echo "$m" | field "d['ok_requests'] / d['seconds']")
half=$(python3 -c "print(round($max / 2, 1))")
l=$(load "$wport" "${single[@]}" --rate="$half" --duration="${seconds}s")
echo "single-chunk requests: maximum sustained $(python3 -c "print(round($max))") requests/s (closed loop," \
     "concurrency 8); latency at half of it ($half requests/s, open loop):"
latency() {
  echo "p50 $(echo "$1" | field "d['latency_ms']['p50']") ms  p99 $(echo "$1" | field "d['latency_ms']['p99']") ms" \
       " p99.9 $(echo "$1" | field "d['latency_ms']['p99.9']") ms  errors $(echo "$1" | field "d['error_count']")" \
       " requests $(echo "$1" | field "d['requests']")"
}
echo "  $(latency "$l")"
# The same open loop against the echo server: what gRPC and the load client alone give this hour.
echo "  echo server at the same rate: $(latency "$(load "$eport" "${single[@]}" --rate="$half" --duration="${seconds}s")")"

r=$(load "$wport" --pattern=random --chunks_per_request=16 --concurrency=4 --duration="${seconds}s")
echo "random pattern (every chunk new, samples mostly uncached): $(echo "$r" | field "d['chunks_per_second']") chunks/s"
echo "memory: worldgen-server peak RSS $(( $(hwm_kib "$wpid") / 1024 )) MiB after these runs" \
     "(default --cache_bytes 64 MiB)"

start "$server_bin" "${common[@]}" --chunk_cache_bytes=67108864; cpid=$started_pid; cport=$started_port
load "$cport" "${hot[@]}" --duration=3s >/dev/null
c=$(load "$cport" "${hot[@]}" --duration="${seconds}s")
ccps=$(echo "$c" | field "d['chunks_per_second']")
echo "encoded-chunk cache, hot pattern: on $ccps chunks/s, off $wcps chunks/s (the pairs' mean)," \
     "gain $(python3 -c "print(round($ccps/$wcps, 2))")x; peak RSS $(( $(hwm_kib "$cpid") / 1024 )) MiB"
