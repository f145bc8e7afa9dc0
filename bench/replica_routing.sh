#!/usr/bin/env bash
# N replicas as one cache (issue 22): three worldgen-server replicas with small caches behind nginx
# rendered from docker/nginx/ (the deployment's own template), players moving through the world
# (spiral pattern: each loads its surroundings ring by ring, then walks on and loads again, so
# chunks repeat), first with round robin, then with the consistent hash of the client's
# worldgen-route key. Prints per replica the share of chunk replies its chunk cache answered and its
# sample cache's hit ratio, and the load's chunks/s and p99. Then, with the hash, one replica is
# stopped (SIGTERM) under load and started again on its address under load: which share of region
# keys moved (only the stopped replica's should), whether they came back, and how many requests
# failed (want 0). Keys are mapped between the load runs (a call's replica is read from the
# replicas' counters, which a concurrent load would blur).
#
#   bash bench/replica_routing.sh [BUILD_DIR] [SECONDS]      (defaults: build, 15)
#
# The world blends at (4, 48), the seed's wide setting (about 85 ns per column cached, 200 uncached
# on these machines), so that blending, which the caches save, outweighs the RPC work they do not.
# Environment: WORLDGEN_CACHE_BYTES (each replica's --cache_bytes, default 1 MiB: less than the
# players' working set, a third of it more),
# WORLDGEN_CHUNK_CACHE_BYTES (each replica's --chunk_cache_bytes, default 8 MiB),
# WORLDGEN_PLAYERS (load concurrency, default 48), WORLDGEN_KEYS (region keys mapped, default 150).
# Everything listens on 127.0.0.1 and is stopped at the end; replicas and nginx share the machine's
# cores with the load generator, so chunks/s compares the two routings, not a deployment's capacity.
set -euo pipefail
build=${1:-build}
seconds=${2:-15}
cli="$build/client/worldgen"
server_bin="$build/server/worldgen-server"
for b in "$cli" "$server_bin" /usr/sbin/nginx; do
  [[ -x $b ]] || { echo "replica_routing: $b is missing (scripts/build.sh test)" >&2; exit 2; }
done
script=replica_routing
source "$(dirname "$0")/loopback.sh"
source "$(dirname "$0")/machine.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
cache_bytes=${WORLDGEN_CACHE_BYTES:-$((1 << 20))}
chunk_cache_bytes=${WORLDGEN_CHUNK_CACHE_BYTES:-$((8 << 20))}
players=${WORLDGEN_PLAYERS:-48}
keys=${WORLDGEN_KEYS:-150}
cat >"$work/wide.json" <<'JSON'
{
  "name": "wide", "seed": "22",
  "biomes": [{"id": 1, "name": "cold", "temperature": -0.5}, {"id": 2, "name": "mild", "temperature": 0},
             {"id": 3, "name": "warm", "temperature": 0.5}],
  "climate": {"temperatureFrequency": 0.02},
  "samplingInterval": 4, "blendRadius": 48
}
JSON
replica_flags=("${worldgen_flags[@]}" --blend_threads=1 --cache_bytes="$cache_bytes"
  --chunk_cache_bytes="$chunk_cache_bytes" --world_config="$work/wide.json")

declare -a port metrics pid
start_replica() {  # start_replica I [PORT METRICS_PORT]: replica I, on free ports or the ones given
  local i=$1
  if [[ $# -eq 3 ]]; then
    start "$server_bin" "${replica_flags[@]}" --port="$2" --metrics_port="$3"
  else
    start "$server_bin" "${replica_flags[@]}"
  fi
  port[i]=$started_port metrics[i]=$started_metrics_port pid[i]=$started_pid
  until "$cli" --target="127.0.0.1:${port[i]}" --deadline_ms=1000 health >/dev/null 2>&1; do sleep 0.1; done
}
stop_replica() { kill -TERM "${pid[$1]}"; wait "${pid[$1]}" 2>/dev/null || true; }
metric() {  # metric I NAME: the sum of NAME's samples on replica I
  curl -fsS "http://127.0.0.1:${metrics[$1]}/metrics" |
    awk -v m="$2" '$1 == m || index($1, m "{") == 1 { s += $NF } END { printf "%d\n", s }'
}

lb_port=$(free_port)
nginx_pid=""
wload() { "$cli" --target="127.0.0.1:$lb_port" --world=wide load --json --progress=false "$@"; }
start_nginx() {  # start_nginx BALANCE: nginx in front of the three replicas
  [[ -n $nginx_pid ]] && { kill -QUIT "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; }
  WORLDGEN_BALANCE=$1 nginx_at "$work/nginx" "$lb_port" \
    "127.0.0.1:${port[1]}" "127.0.0.1:${port[2]}" "127.0.0.1:${port[3]}"
  until "$cli" --target="127.0.0.1:$lb_port" --deadline_ms=1000 health >/dev/null 2>&1; do sleep 0.1; done
}

echo "replica_routing: $(machine);" \
     "3 replicas (--blend_threads=1 --cache_bytes=$cache_bytes --chunk_cache_bytes=$chunk_cache_bytes)," \
     "nginx, $players players (spiral, 16 chunks" \
     "of 16^2 per request), ${seconds}s per routing"
printf '%-12s %10s %8s   %s\n' routing chunks/s p99_ms \
  "per replica: chunks from its chunk cache / sample-cache hit ratio (its share of all chunks)"
for balance in round_robin hash; do
  for i in 1 2 3; do
    [[ -n ${pid[i]:-} ]] && stop_replica "$i"
    start_replica "$i"  # Cold caches for each routing.
  done
  start_nginx "$balance"
  report=$(wload --pattern=spiral --chunks_per_request=16 --concurrency="$players" \
                --duration="${seconds}s" --seed=7 || true)
  line=""
  total=0
  declare -a served
  for i in 1 2 3; do
    served[i]=$(metric "$i" worldgen_chunks_generated_total)
    total=$((total + served[i]))
  done
  for i in 1 2 3; do
    hits=$(metric "$i" worldgen_cache_hits_total)
    misses=$(metric "$i" worldgen_cache_misses_total)
    cached=$(metric "$i" 'worldgen_chunk_replies_total{source="cached"}')
    replies=$(metric "$i" worldgen_chunk_replies_total)
    line+=$(python3 -c "import sys; h, m, c, r, s, t = map(int, sys.argv[1:]); print('%4.1f%% / %.3f (%2.0f%%)  ' % (100 * c / max(r, 1), h / max(h + m, 1), 100 * s / max(t, 1)))" \
      "$hits" "$misses" "$cached" "$replies" "${served[i]}" "$total")
  done
  python3 - "$balance" "$report" "$line" <<'PY'
import json, sys
name, d, line = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
errors = sum(d.get("errors", {}).values())
print("%-12s %10.0f %8.2f   %s%s" % (name, d["chunks_per_second"], d["latency_ms"]["p99"], line,
                                    "  errors %d" % errors if errors else ""))
PY
done

# Which replica serves each of `keys` regions (one chunk per region), through nginx with the hash.
map_keys() {
  local k before after i
  for ((k = 0; k < keys; ++k)); do
    for i in 1 2 3; do before[i]=$( [[ -n ${pid[i]} ]] && metric "$i" worldgen_chunks_generated_total || echo 0); done
    "$cli" --target="127.0.0.1:$lb_port" --world=wide --deadline_ms=5000 chunk $((k * 8)) $(((k * 37 % 101) * 8)) >/dev/null
    local owner=0
    for i in 1 2 3; do
      after=$( [[ -n ${pid[i]} ]] && metric "$i" worldgen_chunks_generated_total || echo 0)
      [[ $after -gt ${before[i]} ]] && owner=$i
    done
    printf '%d ' "$owner"
  done
}
moved() {  # moved "MAP A" "MAP B" [FROM]: keys whose replica differs (of those on FROM in A, if given)
  python3 - "$@" <<'PY'
import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
frm = sys.argv[3] if len(sys.argv) > 3 else None
pairs = [(x, y) for x, y in zip(a, b) if frm is None or x == frm]
print(sum(x != y for x, y in pairs), len(pairs))
PY
}
restart_load() {  # restart_load NAME ACTION...: ACTION runs 3 s into a 10 s load; the load's JSON to NAME
  wload --pattern=spiral --chunks_per_request=16 --concurrency="$players" --duration=10s \
    --seed=8 >"$work/$1.json" || true &
  local load_pid=$!
  sleep 3
  "${@:2}"
  wait "$load_pid" || true
}
m0=$(map_keys)
restart_load stop_load stop_replica 3
pid[3]=""
m1=$(map_keys)
restart_load start_load start_replica 3 "${port[3]}" "${metrics[3]}"
sleep 4  # nginx tries a failed upstream again after fail_timeout (10 s) has passed since its failure.
m2=$(map_keys)
read -r moved_all total_keys < <(moved "$m0" "$m1")
read -r moved_3 on_3 < <(moved "$m0" "$m1" 3)
read -r back _ < <(moved "$m0" "$m2")
python3 - "$work/stop_load.json" "$work/start_load.json" "$moved_all" "$total_keys" "$moved_3" \
  "$on_3" "$back" <<'PY'
import json, sys
stop, start = (json.load(open(f)) for f in sys.argv[1:3])
moved, total, moved3, on3, back = map(int, sys.argv[3:])
def run(d):
    errors = sum(d.get("errors", {}).values())
    return (f"{d['requests']} requests, {d['chunks_per_second']:.0f} chunks/s, p99"
            f" {d['latency_ms']['p99']:.1f} ms, {d['retries']} retried, {errors} failed")
print(f"replica 3 stopped under load: {run(stop)}")
print(f"  region keys moved: {moved} of {total} ({100 * moved / total:.0f}%): {moved3} of replica 3's"
      f" {on3}, {moved - moved3} of the others'")
print(f"replica 3 started again on its address under load: {run(start)}")
print(f"  region keys back where they were: {total - back} of {total}")
PY
