#!/bin/sh
# Renders worldgen.conf.template to stdout.
# Usage: render-config.sh LISTEN UPSTREAM [UPSTREAM...]
#   render-config.sh 50051 worldgen-1:50051 worldgen-2:50051 > /etc/nginx/conf.d/worldgen.conf
#   render-config.sh 127.0.0.1:38211 127.0.0.1:40001 127.0.0.1:40002 > worldgen.conf
# Environment: WORLDGEN_MAX_FAILS (default 1), WORLDGEN_FAIL_TIMEOUT (default 10s),
#   WORLDGEN_BALANCE: hash (default: consistent hash of the worldgen-route key), least_conn, or
#   round_robin.
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
servers=""
for upstream in "$@"; do
  servers="${servers}    server ${upstream} max_fails=${WORLDGEN_MAX_FAILS:-1} fail_timeout=${WORLDGEN_FAIL_TIMEOUT:-10s};
"
done
# awk, not sed: the server list spans lines.
awk -v listen="$listen" -v servers="$servers" -v balance="$balance" '
  /^@UPSTREAM_SERVERS@$/ { printf "%s", servers; next }
  { gsub(/@LISTEN@/, listen); gsub(/@BALANCE@/, balance); print }
' "$here/worldgen.conf.template"
