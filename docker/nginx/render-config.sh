#!/bin/sh
# Renders worldgen.conf.template to stdout.
# Usage: render-config.sh LISTEN UPSTREAM [UPSTREAM...]
#   render-config.sh 50051 worldgen-1:50051 worldgen-2:50051 > /etc/nginx/conf.d/worldgen.conf
#   render-config.sh 127.0.0.1:38211 127.0.0.1:40001 127.0.0.1:40002 > worldgen.conf
# Environment: WORLDGEN_MAX_FAILS (default 1), WORLDGEN_FAIL_TIMEOUT (default 10s),
#   WORLDGEN_BALANCE: hash (default: consistent hash of the worldgen-route key), least_conn, or
#   round_robin.
#   TLS for clients (the replicas behind stay plaintext): WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY,
#   PEM files of the balancer's certificate chain and key (both or neither); WORLDGEN_TLS_CLIENT_CA,
#   PEM file of the authorities client certificates must chain to (mutual TLS: a client without
#   one is refused). nginx reads the files when it starts or reloads (SIGHUP, `nginx -s reload`).
#   WORLDGEN_ACCESS_LOG: where the balancer's JSON line per call goes: stdout (default), off, or
#   a file path.
#   WORLDGEN_API_KEYS: a file of API keys (lines `"Bearer KEY" NAME;`, docs/operations.md): calls
#   without one of them are refused (UNAUTHENTICATED), health checks excepted. nginx reads the
#   file when it starts or reloads.
set -eu
if [ "$#" -lt 2 ]; then
  echo "usage: $0 LISTEN UPSTREAM [UPSTREAM...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
case "${WORLDGEN_BALANCE:-hash}" in
  hash) balance='hash $worldgen_route_key consistent;' ;;
  least_conn) balance='least_conn;' ;;
  round_robin) balance='# round robin (nginx default)' ;;
  *) echo "$0: WORLDGEN_BALANCE must be hash, least_conn or round_robin" >&2; exit 2 ;;
esac
listen=$1
shift
tls_cert=${WORLDGEN_TLS_CERT:-}
tls_key=${WORLDGEN_TLS_KEY:-}
tls_client_ca=${WORLDGEN_TLS_CLIENT_CA:-}
if { [ -n "$tls_cert" ] && [ -z "$tls_key" ]; } || { [ -z "$tls_cert" ] && [ -n "$tls_key" ]; }; then
  echo "$0: WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY go together (one is empty)" >&2
  exit 2
fi
if [ -n "$tls_client_ca" ] && [ -z "$tls_cert" ]; then
  echo "$0: WORLDGEN_TLS_CLIENT_CA needs WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY" >&2
  exit 2
fi
case "${WORLDGEN_ACCESS_LOG:-stdout}" in
  stdout) access_log='/dev/stdout worldgen_calls' ;;
  off) access_log='off' ;;
  /*) access_log="${WORLDGEN_ACCESS_LOG} worldgen_calls" ;;
  *) echo "$0: WORLDGEN_ACCESS_LOG must be stdout, off or an absolute path" >&2; exit 2 ;;
esac
# The paths go into nginx's config as bare words: nothing that would end or escape one.
for variable in WORLDGEN_TLS_CERT WORLDGEN_TLS_KEY WORLDGEN_TLS_CLIENT_CA WORLDGEN_ACCESS_LOG \
    WORLDGEN_API_KEYS; do
  eval "value=\${$variable:-}"
  case "$value" in
    *[[:space:]\;\{\}\'\"\\\$]*)
      printf '%s: %s=%s: a path with whitespace, quotes, \\, $, ;, { or } cannot go into nginx'"'"'s config\n' \
        "$0" "$variable" "$value" >&2
      exit 2
      ;;
  esac
done
listen_tls=""
tls=""
if [ -n "$tls_cert" ]; then
  listen_tls="ssl "
  tls="    ssl_certificate ${tls_cert};
    ssl_certificate_key ${tls_key};
    ssl_protocols TLSv1.2 TLSv1.3;
    # Resumed sessions skip the key exchange when a game server reconnects.
    ssl_session_cache shared:worldgen_tls:10m;
    ssl_session_timeout 1h;
"
  if [ -n "$tls_client_ca" ]; then
    tls="${tls}    ssl_client_certificate ${tls_client_ca};
    ssl_verify_client on;
    ssl_verify_depth 3;
"
  fi
fi
api_keys=""
api_key_check=""
api_key_refusal=""
if [ -n "${WORLDGEN_API_KEYS:-}" ]; then
  case "$WORLDGEN_API_KEYS" in
    /*) ;;
    *) echo "$0: WORLDGEN_API_KEYS must be an absolute path" >&2; exit 2 ;;
  esac
  api_keys="    include ${WORLDGEN_API_KEYS};"
  # As a gRPC answer (UNAUTHENTICATED, a Trailers-Only response), not an HTML page.
  api_key_check="        if (\$worldgen_api_client = \"\") {
            return 401;
        }
        error_page 401 = @worldgen_unauthenticated;"
  api_key_refusal="    location @worldgen_unauthenticated {
        default_type application/grpc;
        add_header grpc-status 16 always;
        add_header grpc-message \"no API key, or one the balancer does not know\" always;
        return 204;
    }"
fi
servers=""
for upstream in "$@"; do
  servers="${servers}    server ${upstream} max_fails=${WORLDGEN_MAX_FAILS:-1} fail_timeout=${WORLDGEN_FAIL_TIMEOUT:-10s};
"
done
# awk, not sed: the server list spans lines.
awk -v listen="$listen" -v servers="$servers" -v balance="$balance" -v listen_tls="$listen_tls" \
  -v tls="$tls" -v access_log="$access_log" -v api_keys="$api_keys" \
  -v api_key_check="$api_key_check" -v api_key_refusal="$api_key_refusal" '
  /^@UPSTREAM_SERVERS@$/ { printf "%s", servers; next }
  /^@TLS@$/ { printf "%s", tls; next }
  /^@API_KEYS@$/ { if (api_keys != "") print api_keys; next }
  /^@API_KEY_CHECK@$/ { if (api_key_check != "") print api_key_check; next }
  /^@API_KEY_REFUSAL@$/ { if (api_key_refusal != "") print api_key_refusal; next }
  { gsub(/@LISTEN@/, listen); gsub(/@LISTEN_TLS@/, listen_tls); gsub(/@BALANCE@/, balance);
    gsub(/@ACCESS_LOG@/, access_log); print }
' "$here/worldgen.conf.template"
