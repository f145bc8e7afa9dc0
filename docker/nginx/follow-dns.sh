#!/bin/sh
# Runs nginx for the replicas a DNS name resolves to, and keeps it that way: every
# WORLDGEN_DNS_INTERVAL seconds the name is resolved again, and when its set of addresses changed
# the config is rendered anew (render-config.sh) and nginx reloaded (open calls finish on the old
# workers). For a Kubernetes headless Service, whose A records are its ready pods: pods that come,
# go or restart with a new address are followed; with the consistent hash only their regions move.
# An empty answer keeps the last known replicas (nginx marks unreachable ones down by itself).
# nginx is also reloaded when a file it reads changes: with TLS (render-config.sh's WORLDGEN_TLS_*)
# the certificate, key or client CA (a Kubernetes Secret updated in place, e.g. by cert-manager's
# renewal), and with API keys (WORLDGEN_API_KEYS) the keys file, so a key taken out of its Secret
# is refused within a minute or two (the kubelet's sync of Secret volumes) without a restart.
#
# Usage: follow-dns.sh LISTEN NAME:PORT
# Environment: WORLDGEN_DNS_INTERVAL (default 2), WORLDGEN_RESOLVE (command printing the name's
# addresses in its first column; default `getent ahostsv4`), WORLDGEN_NGINX (default `nginx`),
# WORLDGEN_NGINX_CONF (default /etc/nginx/conf.d/worldgen.conf), WORLDGEN_NGINX_WORKERS (nginx's
# worker_processes, default auto; the main config must not set it), and render-config.sh's.
# SIGTERM or SIGQUIT: nginx stops gracefully (SIGQUIT), then this exits with its status.
set -eu
if [ "$#" -ne 2 ]; then
  echo "usage: $0 LISTEN NAME:PORT" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
listen=$1
name=${2%:*}
port=${2##*:}
interval=${WORLDGEN_DNS_INTERVAL:-2}
resolve_cmd=${WORLDGEN_RESOLVE:-getent ahostsv4}
nginx_cmd=${WORLDGEN_NGINX:-nginx}
conf=${WORLDGEN_NGINX_CONF:-/etc/nginx/conf.d/worldgen.conf}

# The upstreams, sorted and space-separated ("" when the name does not resolve).
upstreams() {
  $resolve_cmd "$name" 2>/dev/null | awk -v port="$port" 'NF { print $1 ":" port }' | sort -u |
    tr '\n' ' ' | sed 's/ $//'
}
# A checksum of the contents of the files nginx reads besides its config ("" without any).
watched_files() {
  files=""
  for f in "${WORLDGEN_TLS_CERT:-}" "${WORLDGEN_TLS_KEY:-}" "${WORLDGEN_TLS_CLIENT_CA:-}" \
    "${WORLDGEN_API_KEYS:-}"; do
    [ -n "$f" ] && files="$files $f"
  done
  [ -z "$files" ] && return 0
  # shellcheck disable=SC2086  # One argument per file.
  cat $files 2>/dev/null | cksum
}
render() {
  # shellcheck disable=SC2086  # One argument per upstream.
  "$here/render-config.sh" "$listen" $1 >"$conf.new" && mv "$conf.new" "$conf"
}

# Until nginx runs, a stop signal ends the wait at once (as PID 1, a shell ignores the signals it
# has no handler for: the pod would wait out its whole grace period).
trap 'exit 143' TERM QUIT INT
current=$(upstreams)
while [ -z "$current" ]; do
  echo "follow-dns: $name has no addresses yet" >&2
  sleep "$interval" &
  wait $! || true
  current=$(upstreams)
done
render "$current"
echo "follow-dns: upstreams $current" >&2
watched=$(watched_files)
$nginx_cmd -g "daemon off; worker_processes ${WORLDGEN_NGINX_WORKERS:-auto};" &
nginx_pid=$!
trap 'kill -QUIT "$nginx_pid" 2>/dev/null || true' TERM QUIT INT
while kill -0 "$nginx_pid" 2>/dev/null; do
  sleep "$interval" &
  wait $! || true
  next=$(upstreams)
  if [ -n "$next" ] && [ "$next" != "$current" ] && kill -0 "$nginx_pid" 2>/dev/null; then
    if render "$next" && $nginx_cmd -s reload; then
      current=$next
      echo "follow-dns: upstreams $current" >&2
    else
      echo "follow-dns: reload for $next failed; still $current" >&2
    fi
  fi
  now=$(watched_files)
  if [ "$now" != "$watched" ] && kill -0 "$nginx_pid" 2>/dev/null; then
    # `nginx -s reload` loads the config and its files before it signals, and fails without
    # signalling when they do not load (say, a key that does not match its certificate, or a
    # keys file that is not nginx syntax): nginx keeps serving the old ones.
    if $nginx_cmd -s reload; then
      echo "follow-dns: TLS or API key files changed; reloaded" >&2
    else
      echo "follow-dns: TLS or API key files changed but the reload failed; still the old ones" >&2
    fi
    watched=$now
  fi
done
status=0
wait "$nginx_pid" || status=$?
exit "$status"
