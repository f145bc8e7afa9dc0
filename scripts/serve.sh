#!/usr/bin/env bash
# README command 1: install what is needed, build, and start worldgen-server on the embedded default
# world (gRPC on :50051, Prometheus metrics on :9464/metrics). Extra arguments go to the server, e.g.
#   scripts/serve.sh --port=50052 --world_config=worlds/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
exec "$root/build/server/worldgen-server" "$@"
