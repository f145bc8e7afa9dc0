#!/usr/bin/env bash
# docker/grafana/worldgen.json against live data, as the deployment produces it: apt's Prometheus
# runs docker/prometheus.yml (its targets moved to loopback, scraping every second) over a replica's
# /metrics and the blackbox probe (docker/blackbox.yml, module worldgen_mtls) of a TLS nginx in
# front of it, while the CLI loads the replica through nginx, samples points and makes one call
# the server refuses. Then check_dashboard.mjs type-checks the dashboard, checks its rules and
# evaluates every panel's query there (each must return series), with its self-test.
# Usage: dashboard_test.sh WORLDGEN_SERVER WORLDGEN_CLI REPO_ROOT NPM_DIR
set -euo pipefail
server=$1
cli=$2
root=$3
npm_dir=$4
script=dashboard_test
# start, nginx_at, blackbox_at, free_port, eventually, and the cleanup of everything started
# here on exit.
source "$root/bench/loopback.sh"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

bash "$root/tests/support/make_certificates.sh" authority "$work/ca"
bash "$root/tests/support/make_certificates.sh" issue "$work/ca" "$work/balancer" IP:127.0.0.1
start "$server" "${worldgen_flags[@]}" --blend_threads=1
replica=127.0.0.1:$started_port
metrics=127.0.0.1:$started_metrics_port
lb_port=$(free_port)
WORLDGEN_TLS_CERT="$work/balancer.pem" WORLDGEN_TLS_KEY="$work/balancer.key" \
  nginx_at "$work/nginx" "$lb_port" "$replica"
# This nginx asks for no client certificate, so the probe's (the balancer's own pair) goes unused.
blackbox_at "$work/probe" "$work/ca.pem" "$work/balancer.pem" "$work/balancer.key"

# The deployment's Prometheus config, its compose targets replaced by these.
prometheus_port=$(free_port)
mkdir -p "$work/prometheus"
cp "$root/docker/alerts.yml" "$work/prometheus/"
sed -e "s/worldgen-1:9464/$metrics/" -e '/worldgen-2:9464/d' \
  -e "s/nginx:50051/127.0.0.1:$lb_port/" -e "s/blackbox:9115/127.0.0.1:$blackbox_port/" \
  -e 's/module: \[worldgen\]/module: [worldgen_mtls]/' \
  -e 's/scrape_interval: 5s/scrape_interval: 1s/' -e 's/scrape_timeout: 4s/scrape_timeout: 1s/' \
  "$root/docker/prometheus.yml" >"$work/prometheus/prometheus.yml"
for moved in "$metrics" "127.0.0.1:$lb_port" "127.0.0.1:$blackbox_port" worldgen_mtls "interval: 1s"; do
  grep -q "$moved" "$work/prometheus/prometheus.yml" ||
    fail "docker/prometheus.yml changed: could not set $moved in it"
done
/usr/bin/prometheus --config.file="$work/prometheus/prometheus.yml" \
  --storage.tsdb.path="$work/prometheus/data" --web.listen-address="127.0.0.1:$prometheus_port" \
  >"$work/prometheus/log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$prometheus_port
eventually 30 curl -sf -o /dev/null "$prom/-/ready" || fail "Prometheus did not start: $(tail -n 5 "$work/prometheus/log")"

through_lb=(--target="127.0.0.1:$lb_port" --tls_ca_file="$work/ca.pem")
eventually 10 "$cli" "${through_lb[@]}" health >/dev/null 2>&1 || fail "no SERVING through the TLS nginx"
"$cli" "${through_lb[@]}" load --duration=4s --concurrency=2 --progress=false >/dev/null ||
  fail "the load through nginx failed"
"$cli" "${through_lb[@]}" sample 1 2 300 -40 >/dev/null || fail "sample failed"
if "$cli" "${through_lb[@]}" --retries=0 chunk 0 0 --size=512 >/dev/null 2>&1; then
  fail "a chunk of size 512 was not refused"
fi
# Every series has a second sample after the load (one scrape a second).
sleep 3
probed() {
  curl -sf "$prom/api/v1/query" --data-urlencode 'query=probe_success{job="worldgen_endpoint"} == 1' |
    grep -q '"result":\[{'
}
eventually 10 probed || fail "Prometheus has no successful probe of the TLS nginx: $(
  curl -s "$prom/api/v1/targets" | head -c 800)"

cd "$npm_dir"
node check_dashboard.mjs "$root" --prometheus="$prom" --self-test
