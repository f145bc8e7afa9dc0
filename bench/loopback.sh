# Sourced (not run) by the bench scripts that put a server under the CLI's load on loopback
# (service_load.sh, server_cpu.sh), and by tests/e2e/node_burst_test.sh for `start`. Expects `script`
# (the caller's name, for messages) and, for `load`, `cli` (the worldgen CLI) to be set. Provides:
#   work            a scratch directory, removed on exit with every server started here (killed)
#   start BIN ARGS  starts a server listening on a free 127.0.0.1 port; sets started_pid, started_port
#                   and started_metrics_port
#   load PORT ARGS  one `worldgen load --json` run against 127.0.0.1:PORT
#   worldgen_flags  worldgen-server's flags for these runs (loopback, free ports, no drain delay)
#   hot             the hot pattern: 16 chunks per request from 256 chunks, concurrency 4
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start() {
  local log="$work/server.$RANDOM.log"
  "$@" >"$log" 2>&1 &
  started_pid=$!
  pids+=("$started_pid")
  for _ in $(seq 100); do
    started_port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$log" | head -n 1 | cut -d: -f2 || true)
    started_metrics_port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$log" | sed -n 2p | cut -d: -f2 || true)
    [[ -n $started_port ]] && return
    sleep 0.1
  done
  echo "$script: server did not start: $(cat "$log")" >&2
  exit 1
}
load() {
  local port=$1; shift
  "$cli" --target="127.0.0.1:$port" load --json --progress=false "$@"
}
worldgen_flags=(--listen_address=127.0.0.1 --port=0 --metrics_port=0 --shutdown_drain_delay_seconds=0)
hot=(--pattern=hot --hot_set=256 --chunks_per_request=16 --concurrency=4)
