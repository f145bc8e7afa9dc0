#!/usr/bin/env bash
# docker/blackbox.yml, the deployment's probe of worldgen from the outside, run by Debian's
# prometheus-blackbox-exporter against a replica behind two nginx balancers rendered from
# docker/nginx (plaintext, and mutual TLS with certificates from tests/support/make_certificates.sh).
# Each module must pass where a game server would get through and fail where it would not:
#   worldgen       plaintext: SERVING through nginx; fails against the TLS port
#   worldgen_mtls  the probe's CA and client certificate (the module's paths, moved into a scratch
#                  directory): SERVING, and probe_ssl_earliest_cert_expiry is the chain's first
#                  notAfter; fails with a client certificate of another authority
#   worldgen_tls   the system's authorities: fails on the private authority's certificate
# and every probe fails once the replica drains (SIGTERM: NOT_SERVING) and once it is gone.
# Usage: blackbox_probe_test.sh WORLDGEN_SERVER REPO_ROOT
set -euo pipefail
server=$1
root=$2
script=blackbox_probe_test
# start, nginx_at, blackbox_at, free_port, eventually, and the cleanup of everything started
# here on exit.
source "$root/bench/loopback.sh"
fail() {
  echo "FAIL: $*" >&2
  echo "--- last probe's log" >&2
  curl -s "$(probe_url "$last_module" "$last_target")&debug=true" | sed -n '/^Logs/,/^Metrics/p' >&2 || true
  exit 1
}
certificates() { bash "$root/tests/support/make_certificates.sh" "$@"; }

# Certificates: the balancer's (authority ca), the probe's client certificate (authority clients,
# which the TLS balancer requires), and a client certificate of an authority it does not trust.
certificates authority "$work/ca"
certificates issue "$work/ca" "$work/balancer" IP:127.0.0.1
certificates authority "$work/clients"
certificates issue "$work/clients" "$work/probe" DNS:prober
certificates authority "$work/stranger-ca"
certificates issue "$work/stranger-ca" "$work/stranger" DNS:prober

# The replica drains for 60 s on SIGTERM (health NOT_SERVING, still answering).
start "$server" "${worldgen_flags[@]}" --blend_threads=1 --shutdown_drain_delay_seconds=60
replica_pid=$started_pid
replica=127.0.0.1:$started_port
plain_port=$(free_port)
nginx_at "$work/plain" "$plain_port" "$replica"
tls_port=$(free_port)
WORLDGEN_TLS_CERT="$work/balancer.pem" WORLDGEN_TLS_KEY="$work/balancer.key" \
  WORLDGEN_TLS_CLIENT_CA="$work/clients.pem" nginx_at "$work/tls" "$tls_port" "$replica"

# The shipped modules, with worldgen_mtls' files (the probe's client certificate) in probe_dir.
probe_dir=$work/probe-files
blackbox_at "$probe_dir" "$work/ca.pem" "$work/probe.pem" "$work/probe.key"

probe_url() { echo "http://127.0.0.1:$blackbox_port/probe?module=$1&target=$2"; }
# probe MODULE TARGET: the probe's metrics in $work/probe.txt.
probe() {
  last_module=$1 last_target=$2
  curl -sf --max-time 10 "$(probe_url "$1" "$2")" >"$work/probe.txt" ||
    fail "the exporter did not answer a probe of $2 with $1: $(tail -n 5 "$probe_dir/blackbox.log")"
}
# value METRIC: its value in the last probe (the whole series name, labels included).
value() { awk -v name="$1" '$1 == name { print $2 }' "$work/probe.txt"; }
expect() {  # expect MODULE TARGET SUCCESS WHAT
  probe "$1" "$2"
  [[ $(value probe_success) == "$3" ]] || fail "$4: probe_success $(value probe_success), want $3"
}
serving() { probe worldgen "127.0.0.1:$plain_port" && [[ $(value probe_success) == 1 ]]; }
last_module=worldgen last_target=127.0.0.1:$plain_port
eventually 10 curl -sf "http://127.0.0.1:$blackbox_port/-/healthy" -o /dev/null ||
  fail "blackbox exporter did not start: $(cat "$probe_dir/blackbox.log")"
eventually 10 serving || fail "no SERVING probe through the plaintext balancer"
[[ $(value 'probe_grpc_healthcheck_response{serving_status="SERVING"}') == 1 ]] ||
  fail "plaintext: no SERVING health response"
echo "worldgen through plaintext nginx: SERVING"

expect worldgen "127.0.0.1:$tls_port" 0 "plaintext module against the TLS balancer"
expect worldgen_mtls "127.0.0.1:$tls_port" 1 "mutual TLS through the TLS balancer"
[[ $(value 'probe_grpc_healthcheck_response{serving_status="SERVING"}') == 1 ]] ||
  fail "mutual TLS: no SERVING health response"
# The earliest notAfter of the chain the balancer sends (its certificate; the authority's is not
# sent), in seconds since the epoch.
not_after=$(date -d "$(openssl x509 -noout -enddate -in "$work/balancer.pem" | cut -d= -f2)" +%s)
expiry=$(value probe_ssl_earliest_cert_expiry)
[[ $(printf '%.0f' "$expiry") == "$not_after" ]] ||
  fail "probe_ssl_earliest_cert_expiry $expiry, want the balancer certificate's notAfter $not_after"
echo "worldgen_mtls through TLS nginx: SERVING, certificate expiry $not_after"
expect worldgen_tls "127.0.0.1:$tls_port" 0 "system roots against a private authority"

cp "$work/stranger.pem" "$probe_dir/tls.crt"
cp "$work/stranger.key" "$probe_dir/tls.key"
expect worldgen_mtls "127.0.0.1:$tls_port" 0 "a client certificate the balancer does not trust"
cp "$work/probe.pem" "$probe_dir/tls.crt"
cp "$work/probe.key" "$probe_dir/tls.key"
expect worldgen_mtls "127.0.0.1:$tls_port" 1 "the trusted client certificate again"
echo "refused: plaintext at the TLS port, system roots, another authority's client certificate"

kill -TERM "$replica_pid"
not_serving() {
  probe worldgen "127.0.0.1:$plain_port" &&
    [[ $(value 'probe_grpc_healthcheck_response{serving_status="NOT_SERVING"}') == 1 ]]
}
eventually 10 not_serving || fail "no NOT_SERVING probe while the replica drains"
expect worldgen "127.0.0.1:$plain_port" 0 "plaintext through a draining replica"
expect worldgen_mtls "127.0.0.1:$tls_port" 0 "mutual TLS through a draining replica"
{ kill -KILL "$replica_pid"; wait "$replica_pid"; } 2>/dev/null || true
expect worldgen "127.0.0.1:$plain_port" 0 "plaintext with no replica behind nginx"
expect worldgen_mtls "127.0.0.1:$tls_port" 0 "mutual TLS with no replica behind nginx"
echo "draining and gone: every probe fails"
echo "blackbox_probe_test: PASSED"
