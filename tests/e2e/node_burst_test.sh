#!/usr/bin/env bash
# Issue 20's burst from an independent HTTP/2 stack: node/burst_client.mjs (Node's @grpc/grpc-js,
# installed by `npm ci` from node/package-lock.json into NODE_DIR) opens 200 streams of 16 chunks at
# once on one channel, without retries, against a worldgen-server on loopback with default flags.
# Usage: node_burst_test.sh WORLDGEN_SERVER NODE_DIR REPO_ROOT
set -euo pipefail
server=$1
node_dir=$2
root=$3
script=node_burst_test
# start (a free loopback port, read off the server's start line) and the cleanup on exit.
source "$root/bench/loopback.sh"
start "$server" --listen_address=127.0.0.1 --port=0 --metrics_port=0
cd "$node_dir"
timeout 60 node burst_client.mjs "127.0.0.1:$started_port" "$root/proto" 200
