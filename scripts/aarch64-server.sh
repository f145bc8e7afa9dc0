#!/usr/bin/env bash
# Builds worldgen-server for 64-bit ARM and checks that, run under qemu, it answers bit for bit as
# the x86-64 build in build/ does: every example world's fingerprint (`worldgen check --live`), and
# the JSON of 2D chunks with heights and raw biomes, points, 3D chunks and 3D points of every
# example world. Not part of CI (about 5 minutes on 2 cores, most of it compiling); CI runs the
# engine's tests on ARM (scripts/aarch64.sh).
#
# The arm64 libraries come from the package list's group aarch64-sysroot, downloaded with what they
# depend on and unpacked into build-aarch64-server/sysroot rather than installed.
# Usage: scripts/build.sh first (for build/), then scripts/aarch64-server.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/install-deps.sh" build aarch64
[[ -x build/server/worldgen-server && -x build/client/worldgen ]] ||
  { echo "aarch64-server: build/ has no worldgen-server or worldgen (run scripts/build.sh)" >&2; exit 2; }
out=$root/build-aarch64-server
sysroot=$out/sysroot
if [[ ! -f $sysroot/.complete ]]; then
  rm -rf "$sysroot" "$out/debs"
  mkdir -p "$sysroot" "$out/debs"
  mapfile -t wanted < <("$root/scripts/install-deps.sh" --print aarch64-sysroot)
  # The closure, whatever is installed already; virtual packages (<...>) have no file of their own.
  mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances "${wanted[@]}" | awk '/^[a-z0-9]/ && /:arm64$/' | sort -u)
  (cd "$out/debs" && apt-get download "${closure[@]}" >/dev/null)
  for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$sysroot"; done
  # gRPC's CMake package names its code generators; the host's generate the same code.
  mkdir -p "$sysroot/usr/bin"
  for plugin in /usr/bin/grpc_*_plugin; do ln -sf "$plugin" "$sysroot/usr/bin/"; done
  touch "$sysroot/.complete"
fi
cat >"$out/toolchain.cmake" <<TOOLCHAIN
include($root/scripts/aarch64-toolchain.cmake)
set(CMAKE_SYSROOT $sysroot)
set(CMAKE_FIND_ROOT_PATH $sysroot)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc)
TOOLCHAIN
cmake -S "$root" -B "$out/build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$out/toolchain.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DWORLDGEN_BUILD_TESTS=OFF -DWORLDGEN_BUILD_BENCH=OFF \
  -DWORLDGEN_BUILD_LAB=OFF -DWORLDGEN_LEAFLET_DIR=/usr/share/javascript/leaflet >/dev/null
cmake --build "$out/build" -j "${WORLDGEN_JOBS:-2}" --target worldgen-server

# Both servers on free loopback ports, stopped on exit.
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
start() {  # LOG COMMAND...: starts a server, prints its gRPC port
  local log=$1
  shift
  "$@" --listen_address=127.0.0.1 --port=0 --metrics_port=0 --world_config=docker/worlds \
    >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1200); do
    if grep -q 'listening on' "$log"; then
      sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -n 1
      return
    fi
    sleep 0.1
  done
  echo "aarch64-server: server did not start: $(cat "$log")" >&2
  exit 1
}
x86=$(start "$out/x86.log" build/server/worldgen-server)
arm=$(start "$out/arm.log" qemu-aarch64 -E LD_LIBRARY_PATH="$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu" \
  "$out/build/server/worldgen-server")
echo "aarch64-server: x86-64 on :$x86, aarch64 on :$arm ($(grep -o 'simd=.*' "$out/arm.log"))"

cli=build/client/worldgen
# Fingerprints: the CLI's own (x86-64) engine against the ARM server's.
"$cli" --target=127.0.0.1:"$arm" --deadline_ms=120000 check docker/worlds --live
compared=0
differ=0
same() {  # ARGS...: the same CLI call against both servers gives the same bytes
  local a b
  a=$("$cli" --target=127.0.0.1:"$x86" --deadline_ms=120000 "$@" | sha256sum)
  b=$("$cli" --target=127.0.0.1:"$arm" --deadline_ms=120000 "$@" | sha256sum)
  compared=$((compared + 1))
  [[ $a == "$b" ]] || { differ=$((differ + 1)); echo "aarch64-server: differs: $*"; }
}
for world in $(ls docker/worlds | sed -n 's/\.json$//p') default; do
  for xz in "20 -3" "-1000 777" "5 5"; do
    same --world="$world" chunk $xz --size=32 --json --source_biome
  done
  same --world="$world" sample 100.5 -7.25 -3000.125 4567.75 0.001 0 --json
done
for xz in "0 0" "125 125" "-40 7"; do
  same --world=caves chunk $xz --y=-64:320 --cell=4 --json
done
same --world=caves sample --xyz 10 -40 10 -100.5 -20.25 33.75 --json
echo "aarch64-server: $compared answers compared, $differ differ"
[[ $differ -eq 0 ]]
echo "aarch64-server: PASSED"
