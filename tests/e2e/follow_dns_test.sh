#!/usr/bin/env bash
# docker/nginx/follow-dns.sh on loopback (the Kubernetes balancer's way of finding replicas): two
# replicas on 127.0.0.1:P and 127.0.0.2:P stand for two pods of a headless Service, and a fake
# resolver answers from a file. The balancer must serve through the first, switch to the second when
# the answer changes (the first is then killed: only a reloaded nginx still answers), keep the last
# replicas on an empty answer, and stop with nginx on SIGTERM. It serves TLS (WORLDGEN_TLS_*, files
# from tests/support/make_certificates.sh): when the certificate and key files are replaced, as a
# renewed Kubernetes Secret replaces them, it must reload and serve the new certificate; a key that
# does not match its certificate must be refused, the certificate before it still served. It asks
# for API keys (WORLDGEN_API_KEYS): a key taken out of the keys file, as an edited Secret takes it
# out, must be refused after the reload that follows, and the key that replaced it served.
# Usage: follow_dns_test.sh WORLDGEN_SERVER WORLDGEN_CLI REPO_ROOT
set -euo pipefail
server=$1
cli=$2
root=$3
tmp=$(mktemp -d)
pids=()
# The processes whose parent is $1, from /proc (their command names hold no spaces).
children() {
  local stat pid ppid
  for stat in /proc/[0-9]*/stat; do
    read -r pid _ _ ppid _ <"$stat" 2>/dev/null || continue
    [[ $ppid == "$1" ]] && echo "$pid"
  done
  return 0
}
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [[ -f "$tmp/nginx.pid" ]]; then
    # nginx's workers too: killed with their master, they would live on, holding the port. Found
    # before the master goes (they are then init's), killed after (it would start new ones).
    local master workers
    master=$(cat "$tmp/nginx.pid")
    workers=$(children "$master")
    kill -9 "$master" $workers 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- follow-dns log" >&2
  cat "$tmp/follow.log" >&2 || true
  echo "--- nginx error log" >&2
  tail -n 20 "$tmp/error.log" >&2 || true
  exit 1
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# Polls "$@" every 0.2 s for up to 10 s.
eventually() {
  for _ in $(seq 50); do "$@" && return 0; sleep 0.2; done
  return 1
}
# One chunk through the balancer, trusting the authority $1 (default: the first one), with the API
# key in the file $key_file.
key_file=$tmp/key-a
call() {
  "$cli" --target="127.0.0.1:$lb_port" --tls_ca_file="${1:-$tmp/ca.pem}" --retries=0 \
    --api_key_file="$key_file" --deadline_ms=3000 chunk 3 4 >/dev/null 2>&1
}
# An authority $1 and a certificate $2 for 127.0.0.1 that it signs ($tmp/NAME.pem, $tmp/NAME.key).
authority() {
  bash "$root/tests/support/make_certificates.sh" authority "$tmp/$1"
  bash "$root/tests/support/make_certificates.sh" issue "$tmp/$1" "$tmp/$2" IP:127.0.0.1
}
authority ca balancer
authority renewed-ca renewed
# Two game servers' keys; the balancer's keys file starts with the first only.
echo 4c1f0a9e6b7d2e8f53a1c0b9d7e6f5a4 >"$tmp/key-a"
echo 9b2e7d4a1c6f0e3b8a5d2c7f4e1b6a9d >"$tmp/key-b"
echo '"Bearer 4c1f0a9e6b7d2e8f53a1c0b9d7e6f5a4" game-a;' >"$tmp/api-keys.map"

port=$(free_port)
lb_port=$(free_port)
for address in 127.0.0.1 127.0.0.2; do
  "$server" --listen_address="$address" --port="$port" --metrics_port=0 --blend_threads=1 \
    >"$tmp/server-$address.log" 2>&1 &
  pids+=($!)
  eventually "$cli" --target="$address:$port" --deadline_ms=1000 health >/dev/null 2>&1 ||
    fail "replica $address:$port did not start: $(cat "$tmp/server-$address.log")"
done
replica_a=${pids[0]}

mkdir -p "$tmp/conf.d"
cat >"$tmp/nginx.conf" <<CONF
pid $tmp/nginx.pid;
error_log $tmp/error.log info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $tmp/client_body;
  proxy_temp_path $tmp/proxy;
  include $tmp/conf.d/*.conf;
}
CONF
printf '#!/bin/sh\ncat %s/answer\n' "$tmp" >"$tmp/resolve.sh"
chmod +x "$tmp/resolve.sh"
echo "127.0.0.1" >"$tmp/answer"

WORLDGEN_TLS_CERT="$tmp/balancer.pem" WORLDGEN_TLS_KEY="$tmp/balancer.key" \
  WORLDGEN_API_KEYS="$tmp/api-keys.map" \
  WORLDGEN_DNS_INTERVAL=0.3 WORLDGEN_RESOLVE="$tmp/resolve.sh" \
  WORLDGEN_NGINX="/usr/sbin/nginx -p $tmp -c $tmp/nginx.conf" \
  WORLDGEN_NGINX_CONF="$tmp/conf.d/worldgen.conf" \
  "$root/docker/nginx/follow-dns.sh" "127.0.0.1:$lb_port" "replicas.invalid:$port" \
  2>"$tmp/follow.log" &
follow=$!
pids+=("$follow")

# Whether none of the processes $@ is left.
all_gone() {
  local p
  for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done
  return 0
}

eventually call || fail "no call went through the balancer"
key_file=$tmp/key-b call && fail "a key the keys file does not hold was served"
mapfile -t old_workers < <(children "$(cat "$tmp/nginx.pid")")
echo "127.0.0.2" >"$tmp/answer"
eventually grep -q "upstreams 127.0.0.2:$port\$" "$tmp/follow.log" || fail "the new answer was not followed"
# nginx reloads gracefully: its old workers keep accepting connections, for the old replica, until
# they exit. Once they are gone every call meets a worker with the new upstreams (under a
# sanitizer on a busy machine the old worker was still accepting a second after the reload).
eventually all_gone "${old_workers[@]}" || fail "nginx's old workers did not exit after the reload"
kill -9 "$replica_a"
for i in $(seq 10); do call || fail "call $i after the switch failed: nginx still sends to the old replica"; done
: >"$tmp/answer"
sleep 1
call || fail "an empty answer dropped the replicas"
[[ $(grep -c 'upstreams ' "$tmp/follow.log") -eq 2 ]] || fail "an empty answer changed the upstreams"
call "$tmp/renewed-ca.pem" && fail "the renewed certificate was served before it was installed"
mapfile -t old_workers < <(children "$(cat "$tmp/nginx.pid")")
cp "$tmp/renewed.pem" "$tmp/balancer.pem"
cp "$tmp/renewed.key" "$tmp/balancer.key"
reloads() { grep -c "files changed; reloaded" "$tmp/follow.log" || true; }
eventually grep -q "files changed; reloaded" "$tmp/follow.log" || fail "the renewed files were not reloaded"
eventually all_gone "${old_workers[@]}" || fail "nginx's old workers did not exit after the TLS reload"
call "$tmp/renewed-ca.pem" || fail "the renewed certificate is not served after the reload"
call && fail "the old certificate is still served after the reload"
# A key revoked: the keys file now holds the second game server's key instead of the first's.
reloaded=$(reloads)
mapfile -t old_workers < <(children "$(cat "$tmp/nginx.pid")")
# Replaced at once, as the kubelet swaps a Secret volume's files.
echo '"Bearer 9b2e7d4a1c6f0e3b8a5d2c7f4e1b6a9d" game-b;' >"$tmp/api-keys.new"
mv "$tmp/api-keys.new" "$tmp/api-keys.map"
more_reloads() { [[ $(reloads) -gt $reloaded ]]; }
eventually more_reloads || fail "the changed keys file was not reloaded"
eventually all_gone "${old_workers[@]}" || fail "nginx's old workers did not exit after the keys reload"
call "$tmp/renewed-ca.pem" && fail "the revoked key is still served after the reload"
key_file=$tmp/key-b call "$tmp/renewed-ca.pem" || fail "the new key is not served after the reload"
key_file=$tmp/key-b
# A renewal gone wrong: a key that is not the certificate's. The reload is refused, and the
# certificate before it is still served. (A refusal may already be logged: the check above can
# have seen the new certificate before its key was copied.)
refused() { grep -c "files changed but the reload failed" "$tmp/follow.log" || true; }
refusals=$(refused)
cp "$tmp/ca.key" "$tmp/balancer.key"
more_refusals() { [[ $(refused) -gt $refusals ]]; }
eventually more_refusals || fail "a key that does not match its certificate was not refused"
call "$tmp/renewed-ca.pem" || fail "a failed reload stopped the certificate before it"
nginx_pid=$(cat "$tmp/nginx.pid")
kill -TERM "$follow"
status=0
for _ in $(seq 50); do kill -0 "$follow" 2>/dev/null || break; sleep 0.2; done
kill -0 "$follow" 2>/dev/null && fail "follow-dns.sh did not stop within 10 s of SIGTERM"
wait "$follow" || status=$?
[[ $status -eq 0 ]] || fail "follow-dns.sh exited $status"
kill -0 "$nginx_pid" 2>/dev/null && fail "nginx outlived follow-dns.sh"

# Stopped while the name has no address yet, as PID 1 (a pod's balancer started before any replica
# is ready): it must stop at once, not wait out the pod's grace period. PID 1 only where this
# machine lets us make a PID namespace (unshare, as root); else as any process.
: >"$tmp/answer"
pid1=()
# --kill-child: when the cleanup kills unshare (which ignores SIGTERM while it waits), its child
# goes too, even if the script failed to stop.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  pid1=(unshare --pid --fork --mount-proc --kill-child=SIGKILL)
fi
WORLDGEN_DNS_INTERVAL=1 WORLDGEN_RESOLVE="$tmp/resolve.sh" \
  "${pid1[@]}" "$root/docker/nginx/follow-dns.sh" 127.0.0.1:0 replicas:1 >"$tmp/wait.log" 2>&1 &
waiting=$!
pids+=("$waiting")
eventually grep -q "has no addresses yet" "$tmp/wait.log" || fail "follow-dns.sh did not start waiting"
# The script itself: unshare's child (the namespace's PID 1), or the process started.
script=$waiting
if [[ ${#pid1[@]} -gt 0 ]]; then script=$(children "$waiting"); fi
[[ -n $script ]] || fail "no follow-dns.sh process under unshare"
kill -TERM $script
for _ in $(seq 15); do kill -0 "$waiting" 2>/dev/null || break; sleep 0.2; done
kill -0 "$waiting" 2>/dev/null && fail "follow-dns.sh waiting for DNS did not stop within 3 s of SIGTERM"
echo "follow-dns: followed 127.0.0.1 -> 127.0.0.2 with a reload, kept them on an empty answer," \
  "served a renewed TLS certificate, refused a revoked API key, stopped cleanly (also while" \
  "waiting for DNS${pid1[*]:+, as PID 1})"
