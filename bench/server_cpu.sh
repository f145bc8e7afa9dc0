#!/usr/bin/env bash
# Where a server's CPU goes per chunk streamed, by thread: a steadier figure than chunks/s on a shared
# host (CPU per chunk moves little with the neighbours' load; throughput moves a lot). Starts the
# server on 127.0.0.1, warms it with the same load, then reads every thread's user and system time
# (/proc/<pid>/task/*/stat) before and after one closed-loop `hot` load run, and prints microseconds
# per chunk by thread name (worldgen-server names its threads blend-N and relay; gRPC's are
# nexting_thread and default-executo) and in all.
#
#   bash bench/server_cpu.sh [BUILD_DIR] [SECONDS] [worldgen|echo] [SERVER FLAGS...]
#        (defaults: build, 5, worldgen)
#
# CHUNKS_PER_REQUEST (16) and CONCURRENCY (4) shape the load, as in bench/service_load.sh.
# Example: bash bench/server_cpu.sh build 5 worldgen --stream_buffer_chunks=8
set -euo pipefail
build=${1:-build}
seconds=${2:-5}
which_server=${3:-worldgen}
shift $(( $# < 3 ? $# : 3 ))
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "server_cpu: SECONDS must be a positive integer, not '$seconds'" >&2; exit 2; }
cli="$build/client/worldgen"
script=server_cpu
source "$(dirname "$0")/loopback.sh"
case $which_server in
  worldgen) server=("$build/server/worldgen-server" "${worldgen_flags[@]}") ;;
  echo) server=("$build/bench/worldgen-echo-server" --port=0) ;;
  *) echo "server_cpu: the server is worldgen or echo, not '$which_server'" >&2; exit 2 ;;
esac
for b in "$cli" "${server[0]}"; do
  [[ -x $b ]] || { echo "server_cpu: $b is missing (build first)" >&2; exit 2; }
done
start "${server[@]}" "$@"
pid=$started_pid
# The last of a repeated flag counts: these override the hot pattern's shape.
shape=(--chunks_per_request="${CHUNKS_PER_REQUEST:-16}" --concurrency="${CONCURRENCY:-4}")
hot_load() { load "$started_port" "${hot[@]}" "${shape[@]}" "$@"; }
# One line per thread: tid, name (spaces made underscores), user and system clock ticks.
snapshot() {
  for task in /proc/"$pid"/task/*; do
    echo "${task##*/} $(tr ' ' '_' <"$task/comm") $(cut -d')' -f2- "$task/stat" | awk '{print $12, $13}')"
  done
}
hot_load --duration=2s >/dev/null  # Warm the sample cache.
snapshot >"$work/before"
hot_load --duration="${seconds}s" >"$work/load.json"
snapshot >"$work/after"
python3 - "$work" "$seconds" "$which_server" <<'EOF'
import collections, json, os, sys
work, seconds, which = sys.argv[1], float(sys.argv[2]), sys.argv[3]
load = json.load(open(os.path.join(work, "load.json")))
chunks = load["chunks"]
if chunks == 0 or load["error_count"]:
    sys.exit("server_cpu: the load run failed: %s" % load.get("first_error", ""))
tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
def read(name):
    return {f[0]: (f[1], int(f[2]), int(f[3]))
            for f in (line.split() for line in open(os.path.join(work, name)))}
before, after = read("before"), read("after")
by_name = collections.defaultdict(lambda: [0.0, 0.0, 0])
for tid, (name, user, system) in after.items():
    if tid not in before:
        continue
    entry = by_name[name]
    entry[0] += (user - before[tid][1]) * tick_us / chunks
    entry[1] += (system - before[tid][2]) * tick_us / chunks
    entry[2] += 1
print("%s: %d chunks in %.0f s (%.0f chunks/s); server CPU per chunk by thread, microseconds:"
      % (which, chunks, seconds, chunks / seconds))
total_user = total_system = 0.0
for name, (user, system, threads) in sorted(by_name.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
    total_user += user
    total_system += system
    if user + system >= 0.05:
        print("  %-16s x%-2d user %6.2f  system %6.2f" % (name, threads, user, system))
print("  %-19s user %6.2f  system %6.2f  total %6.2f" % ("all", total_user, total_system,
                                                        total_user + total_system))
EOF
