#!/usr/bin/env bash
# What TLS at the balancer costs: one worldgen-server replica behind two nginx instances rendered
# from docker/nginx/ (the deployment's template), one plaintext and one with WORLDGEN_TLS_* (an
# ECDSA P-256 certificate from tests/support/make_certificates.sh), loaded in alternation with the
# same requests.
# Prints per run chunks/s, latency p50/p99 and nginx's CPU time per chunk (from /proc), then the
# medians of TLS against plaintext: for sizing the balancer, and for the latency a game server pays.
#
#   bash bench/tls_overhead.sh [BUILD_DIR] [SECONDS] [PAIRS]      (defaults: build, 8, 3)
#
# Two loads, each run PAIRS times per nginx: bulk (16 chunks per request from 256, concurrency 4,
# the region loads of joining players) and single (one chunk per request, concurrency 8, the
# interactive calls). The replica's chunk cache is off, so every chunk is blended, as in
# bench/service_load.sh. Everything listens on 127.0.0.1 and shares the machine's cores with the
# load generator: the figures compare the two balancers, not a deployment's capacity.
set -euo pipefail
build=${1:-build}
seconds=${2:-8}
pairs=${3:-3}
cli="$build/client/worldgen"
server_bin="$build/server/worldgen-server"
for b in "$cli" "$server_bin" /usr/sbin/nginx /usr/bin/openssl; do
  [[ -x $b ]] || { echo "tls_overhead: $b is missing (scripts/build.sh test)" >&2; exit 2; }
done
script=tls_overhead
source "$(dirname "$0")/loopback.sh"
source "$(dirname "$0")/machine.sh"
root=$(cd "$(dirname "$0")/.." && pwd)

start "$server_bin" "${worldgen_flags[@]}"
replica=$started_port
until "$cli" --target="127.0.0.1:$replica" --deadline_ms=1000 health >/dev/null 2>&1; do sleep 0.1; done

bash "$root/tests/support/make_certificates.sh" authority "$work/ca"
bash "$root/tests/support/make_certificates.sh" issue "$work/ca" "$work/lb" IP:127.0.0.1

declare -A lb_port lb_pid
for kind in plain tls; do
  lb_port[$kind]=$(free_port)
  if [[ $kind == tls ]]; then
    WORLDGEN_TLS_CERT="$work/lb.pem" WORLDGEN_TLS_KEY="$work/lb.key" \
      nginx_at "$work/nginx-$kind" "${lb_port[$kind]}" "127.0.0.1:$replica"
  else
    nginx_at "$work/nginx-$kind" "${lb_port[$kind]}" "127.0.0.1:$replica"
  fi
  lb_pid[$kind]=$nginx_pid
done
tls_flags() { [[ $1 == tls ]] && echo "--tls_ca_file=$work/ca.pem" || true; }
for kind in plain tls; do
  until "$cli" --target="127.0.0.1:${lb_port[$kind]}" $(tls_flags "$kind") --deadline_ms=1000 \
    health >/dev/null 2>&1; do sleep 0.1; done
done

# nginx's CPU time so far (master and workers), in clock ticks.
nginx_ticks() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1"); do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)
bulk=(--pattern=hot --hot_set=256 --chunks_per_request=16 --concurrency=4)
single=(--pattern=hot --hot_set=256 --chunks_per_request=1 --concurrency=8)

echo "tls_overhead: $(machine); ${seconds}s per run, $pairs pairs per load"
printf '%-7s %-6s %10s %8s %8s %16s\n' load nginx chunks/s p50_ms p99_ms nginx_cpu_us/chunk
for name in bulk single; do
  declare -n args=$name
  for pair in $(seq "$pairs"); do
    for kind in plain tls; do
      before=$(nginx_ticks "${lb_pid[$kind]}")
      "$cli" --target="127.0.0.1:${lb_port[$kind]}" $(tls_flags "$kind") load --json \
        --progress=false --duration="${seconds}s" "${args[@]}" >"$work/$name-$kind-$pair.json"
      after=$(nginx_ticks "${lb_pid[$kind]}")
      python3 - "$work/$name-$kind-$pair.json" "$name" "$kind" "$((after - before))" "$hz" <<'EOF'
import json, sys
path, name, kind, ticks, hz = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
d = json.load(open(path))
errors = d["error_count"]
cpu = ticks / hz * 1e6 / max(1, d["chunks"])
d["nginx_cpu_us_per_chunk"] = cpu
json.dump(d, open(path, "w"))
print("%-7s %-6s %10.0f %8.3f %8.3f %16.2f%s" % (name, kind, d["chunks_per_second"],
      d["latency_ms"]["p50"], d["latency_ms"]["p99"], cpu, "  errors %d" % errors if errors else ""))
EOF
    done
  done
  unset -n args
done
python3 - "$work" "$pairs" <<'EOF'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
def med(name, kind, key):
    values = []
    for pair in range(1, pairs + 1):
        d = json.load(open("%s/%s-%s-%d.json" % (work, name, kind, pair)))
        values.append(d[key] if key != "p50" and key != "p99" else d["latency_ms"][key])
    return statistics.median(values)
for name in ("bulk", "single"):
    print("%s, medians, TLS against plaintext: chunks/s %.0f / %.0f (%.3f), p50 %.3f / %.3f ms, "
          "p99 %.3f / %.3f ms, nginx CPU %.2f / %.2f us per chunk" % (
          name, med(name, "tls", "chunks_per_second"), med(name, "plain", "chunks_per_second"),
          med(name, "tls", "chunks_per_second") / med(name, "plain", "chunks_per_second"),
          med(name, "tls", "p50"), med(name, "plain", "p50"), med(name, "tls", "p99"),
          med(name, "plain", "p99"), med(name, "tls", "nginx_cpu_us_per_chunk"),
          med(name, "plain", "nginx_cpu_us_per_chunk")))
EOF
