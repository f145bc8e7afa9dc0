# Sourced (not run) by the bench scripts that put a server under the CLI's load on loopback
# (service_load.sh, server_cpu.sh), and by the script tests that start servers, nginx or the
# blackbox exporter (tests/e2e/*.sh, tests/grafana/dashboard_test.sh). Expects `script`
# (the caller's name, for messages) and, for `load`, `cli` (the worldgen CLI) to be set. Provides:
#   work            a scratch directory, removed on exit with every server started here (killed)
#   start BIN ARGS  starts a server listening on a free 127.0.0.1 port; sets started_pid, started_port
#                   and started_metrics_port
#   load PORT ARGS  one `worldgen load --json` run against 127.0.0.1:PORT
#   worldgen_flags  worldgen-server's flags for these runs (loopback, free ports, no drain delay)
#   free_port       prints a TCP port on 127.0.0.1 that was free a moment ago
#   nginx_at DIR PORT UPSTREAM...
#                   starts nginx on 127.0.0.1:PORT in front of the UPSTREAMs (host:port) with the
#                   deployment's config (docker/nginx/render-config.sh, which reads WORLDGEN_BALANCE
#                   and WORLDGEN_TLS_* from the environment, and WORLDGEN_ACCESS_LOG: off here
#                   unless set, so benchmarks time no log writes), its files in DIR; sets nginx_pid
#                   (the master's)
#   blackbox_at DIR CA CERT KEY
#                   starts the blackbox exporter (apt's) on a free 127.0.0.1 port with the deployment's
#                   modules (docker/blackbox.yml), worldgen_mtls reading its files from DIR (copies of
#                   CA, CERT and KEY as ca.crt, tls.crt, tls.key) instead of /etc/worldgen-probe/;
#                   sets blackbox_port
#   eventually SECONDS COMMAND...
#                   runs COMMAND every 0.2 s until it succeeds (status 0) or SECONDS have passed
#                   (status 1)
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
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
nginx_at() {
  local dir=$1 port=$2
  shift 2
  mkdir -p "$dir/conf.d"
  cat >"$dir/nginx.conf" <<CONF
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/client_body;
  proxy_temp_path $dir/proxy;
  include $dir/conf.d/*.conf;
}
CONF
  WORLDGEN_ACCESS_LOG=${WORLDGEN_ACCESS_LOG:-off} \
    "$(dirname "${BASH_SOURCE[0]}")/../docker/nginx/render-config.sh" "127.0.0.1:$port" "$@" \
    >"$dir/conf.d/worldgen.conf"
  /usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' &
  nginx_pid=$!
  pids+=("$nginx_pid")
}
blackbox_at() {
  local dir=$1 config
  config="$(dirname "${BASH_SOURCE[0]}")/../docker/blackbox.yml"
  grep -q '/etc/worldgen-probe/' "$config" || { echo "$script: $config names no /etc/worldgen-probe/" >&2; exit 1; }
  mkdir -p "$dir"
  cp "$2" "$dir/ca.crt"
  cp "$3" "$dir/tls.crt"
  cp "$4" "$dir/tls.key"
  sed "s|/etc/worldgen-probe/|$dir/|g" "$config" >"$dir/blackbox.yml"
  blackbox_port=$(free_port)
  /usr/bin/prometheus-blackbox-exporter --config.file="$dir/blackbox.yml" \
    --web.listen-address="127.0.0.1:$blackbox_port" >"$dir/blackbox.log" 2>&1 &
  pids+=($!)
}
eventually() {
  local tries=$(($1 * 5))
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.2; done
  return 1
}
worldgen_flags=(--listen_address=127.0.0.1 --port=0 --metrics_port=0 --shutdown_drain_delay_seconds=0)
hot=(--pattern=hot --hot_set=256 --chunks_per_request=16 --concurrency=4)
