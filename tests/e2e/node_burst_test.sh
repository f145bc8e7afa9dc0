#!/usr/bin/env bash
# Issue 20's burst from an independent HTTP/2 stack: node/burst_client.mjs (Node's @grpc/grpc-js,
# installed by `npm ci` from node/package-lock.json into NODE_DIR) opens 200 streams of 16 chunks at
# once on one channel, without retries, against a worldgen-server on loopback with default flags.
# Usage: node_burst_test.sh WORLDGEN_SERVER NODE_DIR REPO_ROOT
set -euo pipefail
server=$1
node_dir=$2
root=$3
log=$(mktemp)
"$server" --listen_address=127.0.0.1 --port=0 --metrics_port=0 >"$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; rm -f "$log"' EXIT
target=""
for _ in $(seq 100); do
  target=$(grep -oE '127\.0\.0\.1:[0-9]+' "$log" | head -n 1 || true)
  [[ -n $target ]] && break
  sleep 0.1
done
[[ -n $target ]] || { echo "FAIL: worldgen-server did not start: $(cat "$log")" >&2; exit 1; }
cd "$node_dir"
timeout 60 node burst_client.mjs "$target" "$root/proto" 200
