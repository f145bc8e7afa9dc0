#!/usr/bin/env bash
# docker/e2e.sh: proves the Docker deployment on this machine, end to end, with a real Docker engine.
#
#   docker/e2e.sh [--client=PATH] [--server=PATH]
#
# 1. Installs `scripts/install-deps.sh docker` if missing and starts a private dockerd (own socket, exec root
#    and pid; no docker0 bridge, no iptables or sysctl changes on the host).
# 2. Makes debian:bookworm and debian:bookworm-slim from a debootstrap of bookworm (+ updates, security).
# 3. Builds the server image from the root Dockerfile and the nginx/Prometheus/blackbox images from docker/.
# 4. Brings up docker/compose.yaml under a unique project, waits for every HEALTHCHECK, then through nginx on
#    127.0.0.1 with the project's own CLI: describe, chunks and samples bit-identical to a local
#    worldgen-server; every replica took traffic; Prometheus reports every replica up; a replica stopped under
#    load exits 0 within its grace period and the retrying client loses no request; servers run as non-root;
#    the blackbox exporter's health check of nginx succeeds in Prometheus.
# The last line is `docker-e2e: PASSED (...)`, `docker-e2e: FAILED: why` (exit 1) or `docker-e2e: SKIPPED: why`
# (exit 0: no root, no apt, or dockerd cannot start). Everything it started is torn down on exit, on failure
# too: compose project, containers, networks, volumes, the local server, dockerd.
#
# Cache (WORLDGEN_DOCKER_CACHE, default /var/cache/worldgen-docker): the debootstrap tarballs (refreshed
# after 7 days) and dockerd's data root, so later runs reuse the base images and the Dockerfile's
# dependency layers. Runs on one machine take turns through a lock there. Point WORLDGEN_DOCKER_CACHE at an
# empty directory for a cold run. WORLDGEN_E2E_TIMEOUT bounds the whole run (seconds, default 900).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
limit=${WORLDGEN_E2E_TIMEOUT:-900}

# The whole run is bounded: this outer layer re-runs the script under `timeout` and reports a timeout.
if [[ -z ${_WORLDGEN_E2E_INNER:-} ]]; then
  rc=1
  _WORLDGEN_E2E_INNER=1 timeout -k 60 "$limit" bash "$0" "$@" &
  timeout_pid=$!
  trap 'kill -TERM $timeout_pid 2>/dev/null' INT TERM HUP   # Ctrl-C: the inner run tears down and reports
  while kill -0 "$timeout_pid" 2>/dev/null; do wait "$timeout_pid"; rc=$?; done
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "docker-e2e: FAILED: timed out after ${limit}s (WORLDGEN_E2E_TIMEOUT)"
    exit 1
  fi
  exit "$rc"
fi

cache=${WORLDGEN_DOCKER_CACHE:-/var/cache/worldgen-docker}
compose_file=$root/docker/compose.yaml
client=""
server=""
for arg in "$@"; do
  case $arg in
    --client=*) client=${arg#--client=} ;;
    --server=*) server=${arg#--server=} ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "docker-e2e: FAILED: unknown argument $arg"; exit 2 ;;
  esac
done

started=$SECONDS
logs=$(mktemp -d /tmp/worldgen-e2e.XXXXXX)
# Messages go to fd 7, the script's own stdout: a trap can run while a command's output is redirected
# (a signal during `docker build ... >log` runs the trap with stdout still pointing at that log).
exec 7>&1
log() { printf '[docker-e2e %4ds] %s\n' $((SECONDS - started)) "$*" >&7; }
fail() { echo "docker-e2e: FAILED: $*" >&7; exit 1; }
skip() { echo "docker-e2e: SKIPPED: $*" >&7; exit 0; }
tail_of() { tail -n "${2:-15}" "$1" | sed 's/^/    | /'; }
# Under pipefail, `producer | grep -q` can fail on a match: grep -q exits at the first matching
# line and the producer, still writing, dies of SIGPIPE (status 141). Pipelines here end in
# `grep ... >/dev/null`, which reads everything (inside `sh -c`, without pipefail, grep -q is fine).
# Bounded wait: until SECONDS COMMAND... succeeds (checked once a second).
until_ok() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# ---- teardown: runs on every exit ------------------------------------------------------------------
passed=""; dockerd_pid=""; exec_root=""; project=""; local_pid=""; rootfs_dir=""; throwaway_data=""
teardown() {
  local rc=$?
  set +e
  if [[ -n $project ]]; then
    docker-compose -p "$project" -f "$compose_file" logs --no-color --timestamps >"$logs/compose.log" 2>&1
    docker-compose -p "$project" -f "$compose_file" down -v --remove-orphans -t 15 >>"$logs/teardown.log" 2>&1
  fi
  if [[ -n $dockerd_pid ]]; then
    # The daemon is private to this script: whatever container or network is left in it is ours.
    local left; left=$(/usr/bin/docker ps -aq 2>/dev/null)
    [[ -n $left ]] && /usr/bin/docker rm -f $left >>"$logs/teardown.log" 2>&1
    /usr/bin/docker network prune -f >>"$logs/teardown.log" 2>&1
    # Superseded builds (a GB each with their build trees). Only after a pass: a failed build's dangling
    # layers include the cached dependency layer that the next run wants.
    [[ -n $passed ]] && /usr/bin/docker image prune -f >>"$logs/teardown.log" 2>&1
    kill -TERM "$dockerd_pid" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
    kill -KILL "$dockerd_pid" 2>/dev/null
    wait "$dockerd_pid" 2>/dev/null
    rm -f "$cache/dockerd.pid"
  fi
  if [[ -n $local_pid ]]; then kill -TERM "$local_pid" 2>/dev/null; wait "$local_pid" 2>/dev/null; fi
  if [[ -n $exec_root ]]; then
    # dockerd leaves its network namespace mounted under the exec root.
    awk -v d="$exec_root/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r umount -l
    rm -rf "$exec_root"
  fi
  [[ -n $throwaway_data ]] && rm -rf "$throwaway_data"
  [[ -n $rootfs_dir ]] && rm -rf "$rootfs_dir"
  log "torn down (logs in $logs)"
  exit "$rc"
}
trap teardown EXIT
trap 'trap "" INT TERM HUP; fail "interrupted"' INT TERM HUP

# ---- 1. tools and a private dockerd ------------------------------------------------------------------
[[ $(id -u) -eq 0 ]] || skip "needs root to run dockerd (uid $(id -u))"
command -v python3 >/dev/null || skip "needs python3 to read JSON"
if ! [[ -x /usr/bin/docker && -x /usr/sbin/dockerd && -x /usr/bin/docker-compose && -x /usr/sbin/debootstrap ]]; then
  log "installing the docker package group"
  "$root/scripts/install-deps.sh" docker >"$logs/install.log" 2>&1 ||
    skip "could not install the docker package group: $(tail -n 1 "$logs/install.log")"
fi
# The `docker` first on PATH may be a different client without compose support; always use the apt one.
docker() { /usr/bin/docker "$@"; }

mkdir -p "$cache"
exec 9>"$cache/lock"
if ! flock -n 9; then
  log "another docker/e2e.sh run holds $cache/lock; waiting"
  flock -w 600 9 || fail "$cache/lock still held after 600s"
fi
# A dockerd that an earlier, killed run of this script left on the shared data root.
if [[ -f $cache/dockerd.pid ]]; then
  stale=$(cat "$cache/dockerd.pid")
  if [[ -r /proc/$stale/cmdline ]] && tr '\0' ' ' <"/proc/$stale/cmdline" | grep -- "--data-root $cache/data-root" >/dev/null; then
    log "stopping dockerd $stale left by an earlier run"
    kill -TERM "$stale"; for _ in $(seq 20); do kill -0 "$stale" 2>/dev/null || break; sleep 1; done
  fi
  rm -f "$cache/dockerd.pid"
fi

data_root=$cache/data-root
exec_root=$(mktemp -d /tmp/wgd.XXXXXX)   # short: containerd's socket paths live under it
export DOCKER_HOST=unix://$exec_root/docker.sock
log "starting dockerd (data root $data_root)"
# Own session: a timeout's or Ctrl-C's signal to this script's process group must not stop dockerd
# under the teardown, which needs it to take the compose project down.
setsid dockerd --data-root "$data_root" --exec-root "$exec_root/exec" --pidfile "$exec_root/dockerd.pid" \
  -H "$DOCKER_HOST" --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
  >"$logs/dockerd.log" 2>&1 7>&- 9>&- &
dockerd_pid=$!
echo "$dockerd_pid" >"$cache/dockerd.pid"
if ! until_ok 60 docker info; then
  if ! kill -0 "$dockerd_pid" 2>/dev/null; then
    dockerd_pid=""
    skip "dockerd could not start: $(grep -v '^$' "$logs/dockerd.log" | tail -n 1)"
  fi
  fail "dockerd did not answer within 60s: $(tail -n 1 "$logs/dockerd.log")"
fi
# Containers and networks an earlier, killed run left in the shared data root.
stale=$(docker ps -aq); [[ -n $stale ]] && docker rm -f $stale >/dev/null
docker network prune -f >/dev/null
log "dockerd $dockerd_pid ready: $(docker version -f 'engine {{.Server.Version}}'), $(docker-compose version --short 2>/dev/null | sed 's/^/compose /')"

# ---- 2. base images from debootstrap -----------------------------------------------------------------
# The first URI apt's own sources give for SUITE (deb822 .sources or one-line .list entries).
apt_uri() {
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v suite="$1" '
      /^deb / { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { uri = $i; s = $(i + 1); break }
                if (s == suite) { print uri; exit } next }
      /^URIs:/ { uris = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = 1 }
      /^$/ { if (found && uris) { print uris; exit } found = 0; uris = "" }
      END { if (found && uris) print uris }' | head -n 1
}

make_rootfs_tarballs() {
  local mirror security
  mirror=$(apt_uri bookworm); mirror=${mirror:-http://deb.debian.org/debian}
  security=$(apt_uri bookworm-security); security=${security:-http://deb.debian.org/debian-security}
  rootfs_dir=$(mktemp -d "$cache/rootfs.XXXXXX")
  log "debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$rootfs_dir" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
    return 1
  cat >"$rootfs_dir/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  chroot "$rootfs_dir" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get -y -qq upgrade &&
    apt-get clean && rm -rf /var/lib/apt/lists/*' >>"$logs/debootstrap.log" 2>&1 || return 1
  : >"$rootfs_dir/etc/resolv.conf"; echo localhost >"$rootfs_dir/etc/hostname"
  tar -C "$rootfs_dir" --numeric-owner -cf "$cache/bookworm.tar.tmp" . || return 1
  # slim: what Debian's own -slim images leave out (documentation, manuals, translations), now and later.
  cat >"$rootfs_dir/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
  find "$rootfs_dir/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
  rm -rf "$rootfs_dir"/usr/share/{man,groff,info,lintian,linda,locale}/*
  tar -C "$rootfs_dir" --numeric-owner -cf "$cache/bookworm-slim.tar.tmp" . || return 1
  mv "$cache/bookworm.tar.tmp" "$cache/bookworm.tar"
  mv "$cache/bookworm-slim.tar.tmp" "$cache/bookworm-slim.tar"
  rm -rf "$rootfs_dir"; rootfs_dir=""
}

t=$SECONDS
if [[ ! -f $cache/bookworm.tar || ! -f $cache/bookworm-slim.tar ]] ||
   [[ -n $(find "$cache/bookworm.tar" -mtime +7) ]]; then
  make_rootfs_tarballs || fail "debootstrap of bookworm failed:
$(tail_of "$logs/debootstrap.log")"
fi
stamp=$(stat -c %Y "$cache/bookworm.tar")
for variant in bookworm bookworm-slim; do
  have=$(docker image inspect -f '{{index .Config.Labels "org.worldgen.rootfs"}}' "debian:$variant" 2>/dev/null)
  if [[ $have != "$stamp" ]]; then
    docker import --change "LABEL org.worldgen.rootfs=$stamp" --change 'CMD ["bash"]' \
      "$cache/$variant.tar" "debian:$variant" >/dev/null || fail "docker import of debian:$variant failed"
  fi
done
base_secs=$((SECONDS - t))
log "base images debian:bookworm, debian:bookworm-slim ready in ${base_secs}s (rootfs of $(date -d "@$stamp" -u +%F))"

# ---- 3. images ---------------------------------------------------------------------------------------
# Builds run on the host network: this private daemon has no default bridge.
t=$SECONDS
log "building worldgen-server from Dockerfile (log: $logs/build-server.log)"
# The build stage, tagged, keeps its cached layers (dependencies, compiled tree) through the image prune
# at teardown; the runtime image build right after reuses it.
docker build --network host --build-arg JOBS="$(nproc)" --target build -t worldgen-build \
  -f "$root/Dockerfile" "$root" >"$logs/build-server.log" 2>&1 &&
docker build --network host --build-arg JOBS="$(nproc)" -t worldgen-server -f "$root/Dockerfile" "$root" \
  >>"$logs/build-server.log" 2>&1 || fail "server image build failed:
$(tail_of "$logs/build-server.log" 25)"
build_secs=$((SECONDS - t))
image_mb=$(( $(docker image inspect -f '{{.Size}}' worldgen-server) / 1000000 ))
log "worldgen-server built in ${build_secs}s; runtime image ${image_mb} MB"
for part in nginx prometheus blackbox; do
  docker build --network host -t "worldgen-$part" -f "$root/docker/$part.Dockerfile" "$root/docker" \
    >"$logs/build-$part.log" 2>&1 || fail "$part image build failed:
$(tail_of "$logs/build-$part.log" 25)"
done
log "worldgen-nginx, worldgen-prometheus, worldgen-blackbox built; images total $((SECONDS - t))s"

# ---- host binaries: the CLI that drives the test, the local server that gives the reference answers ----
client=${client:-$root/build/client/worldgen}
server=${server:-$root/build/server/worldgen-server}
if [[ ! -x $client || ! -x $server ]]; then
  log "building worldgen and worldgen-server on the host (build/)"
  { [[ -f $root/build/CMakeCache.txt ]] || cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
    >"$logs/host-build.log" 2>&1 &&
    cmake --build "$root/build" -j "$(nproc)" --target worldgen worldgen-server >>"$logs/host-build.log" 2>&1 ||
    fail "host build of the CLI and server failed:
$(tail_of "$logs/host-build.log")"
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
local_port=$(free_port); local_metrics=$(free_port)
setsid "$server" --listen_address=127.0.0.1 --port="$local_port" --metrics_port="$local_metrics" \
  --world_config="$root/docker/worlds" \
  >"$logs/local-server.log" 2>&1 7>&- 9>&- &
local_pid=$!
until_ok 30 "$client" --target="127.0.0.1:$local_port" health || fail "local worldgen-server did not turn SERVING:
$(tail_of "$logs/local-server.log")"

# ---- 4. compose up ---------------------------------------------------------------------------------
project=wge2e$$
# Host ports: 0 lets the engine pick free ones (this machine may already serve 50051/9090); read back below.
export WORLDGEN_GRPC_PORT=0 WORLDGEN_PROMETHEUS_PORT=0 WORLDGEN_1_METRICS_PORT=0 WORLDGEN_2_METRICS_PORT=0 \
  WORLDGEN_VIEWER_PORT=0
compose() { docker-compose -p "$project" -f "$compose_file" "$@"; }
t=$SECONDS
log "docker-compose -p $project up -d"
compose up -d --no-build >"$logs/compose-up.log" 2>&1 || fail "compose up failed:
$(tail_of "$logs/compose-up.log")"
services=$(compose config --services)
declare -A cid   # service -> container id
while read -r id s; do cid[$s]=$id; done < <(docker ps -a --filter "label=com.docker.compose.project=$project" \
  --format '{{.ID}} {{.Label "com.docker.compose.service"}}')
for s in $services; do [[ -n ${cid[$s]:-} ]] || fail "compose started no container for $s"; done
all_healthy() {
  [[ -z $(docker inspect -f '{{.State.Health.Status}}' "${cid[@]}" | grep -v '^healthy$') ]]
}
until_ok 120 all_healthy || fail "not every container turned healthy within 120s:
$(docker ps -a --filter "label=com.docker.compose.project=$project" --format '    | {{.Names}}: {{.Status}}')"
up_secs=$((SECONDS - t))
log "all healthy (${services//$'\n'/, }) in ${up_secs}s"

host_port() { docker port "${cid[$1]}" "$2/tcp" | head -n 1 | sed 's/.*://'; }
lb=127.0.0.1:$(host_port nginx 50051)
prom=127.0.0.1:$(host_port prometheus 9090)
replicas=$(grep -E '^worldgen-[0-9]+$' <<<"$services")
wg() { "$client" "$@"; }
log "nginx on $lb, Prometheus on $prom, replicas: ${replicas//$'\n'/ }"

# Server processes run as a non-root user (checked on the host, from the container's main process).
for s in $replicas; do
  pid=$(docker inspect -f '{{.State.Pid}}' "${cid[$s]}")
  uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
  comm=$(cat "/proc/$pid/comm")
  [[ $comm == worldgen-server* && $uid != 0 ]] || fail "$s's main process is $comm with uid $uid (want worldgen-server, non-root)"
done
log "server processes run as uid $uid"

# A container limited to one CPU (CFS quota, as a Kubernetes CPU limit sets) sizes its blend pool
# by that limit, not by the host's cores.
cpus_name=wge2e-cpus$$
# --read-only as Kubernetes' readOnlyRootFilesystem: the server writes nothing.
docker run -d --name "$cpus_name" --cpus=1 --read-only --network none worldgen-server \
  >"$logs/cpus-run.log" 2>&1 || fail "docker run --cpus=1 failed: $(tail_of "$logs/cpus-run.log")"
until_ok 30 sh -c "docker logs $cpus_name 2>&1 | grep -q 'listening on'" ||
  fail "the --cpus=1 container printed no start line: $(docker logs "$cpus_name" 2>&1 | tail -n 5)"
cpus_line=$(docker logs "$cpus_name" 2>&1 | grep -m1 'listening on')
docker rm -f "$cpus_name" >/dev/null 2>&1
[[ $cpus_line == *"blend_threads=1 (CPU budget: cgroup"* ]] ||
  fail "with --cpus=1 on $(nproc) host CPUs the server did not size its pool by the quota: $cpus_line"
log "docker run --cpus=1: ${cpus_line#*blend_threads=}"

# ---- 5. through nginx: bit-identical to a local server ------------------------------------------------
same() {  # same NAME ARGS...: the CLI's output through nginx equals the local server's
  local name=$1; shift
  wg --target="$lb" "$@" >"$logs/lb-$name.out" 2>"$logs/lb-$name.err" || fail "through nginx: worldgen $* failed: $(tail -n 3 "$logs/lb-$name.err")"
  wg --target="127.0.0.1:$local_port" "$@" >"$logs/local-$name.out" 2>"$logs/local-$name.err" ||
    fail "local: worldgen $* failed: $(tail -n 3 "$logs/local-$name.err")"
  [[ -s $logs/lb-$name.out ]] || fail "worldgen $* printed nothing"
  cmp -s "$logs/lb-$name.out" "$logs/local-$name.out" || fail "worldgen $* differs through nginx from a local server:
$(diff "$logs/local-$name.out" "$logs/lb-$name.out" | head -n 8)"
}
same describe describe
chunks=0
for x in -2 -1 0 1; do
  for z in -2 -1 0 1; do
    same "chunk_${x}_${z}" chunk "$x" "$z" --json; chunks=$((chunks + 1))
  done
done
# The worlds compose mounts from docker/worlds are served too, identically.
same describe_archipelago describe --world=archipelago
for c in "0 0" "-3 5"; do
  same "archipelago_chunk_${c/ /_}" chunk $c --world=archipelago --json; chunks=$((chunks + 1))
done
# Coastal heights (the raw map's column tiles, the distance transform) agree across replicas too.
same coast_chunk chunk -7 -9 --world=coast --json; chunks=$((chunks + 1))
# 3D: a chunk's sections and points of the example cave world, in its cave-rich stretch near x, z = 2000.
same caves_chunk_3d chunk 62 62 --world=caves --y=-64:32 --cell=4 --json; chunks=$((chunks + 1))
same caves_points_3d sample --xyz --world=caves 1990.5 -40 2001.25  2010 -60 1999  1985 -20.5 2014 --json
points=(0 0  1 1  -17 33  1000 -1000  123456 -654321  -5 7  31 -31  4096 4095  -100000 100000  2 -3)
same samples sample "${points[@]}" --json
log "describe, $chunks chunks (one 3D) and $(( ${#points[@]} / 2 )) + 3 (3D) sample points through nginx are bit-identical to a local server"

# The map viewer service: its tiles are `worldgen render`'s images of the local server, byte for byte.
viewer=127.0.0.1:$(host_port viewer 8080)
curl -fsS "http://$viewer/tiles/archipelago/blend/0/-1/0.png" -o "$logs/viewer-tile.png" ||
  fail "the viewer at $viewer served no tile"
wg --target="127.0.0.1:$local_port" render --world=archipelago --layer=blend --region=-256,0,-1,255 \
  --out="$logs/local-render.png" 2>/dev/null || fail "local render failed"
cmp -s "$logs/viewer-tile.png" "$logs/local-render.png" ||
  fail "the viewer's tile differs from worldgen render of the same region"
curl -fsS "http://$viewer/" | grep '/leaflet/leaflet.js' >/dev/null || fail "the viewer's page does not load Leaflet"
log "viewer on $viewer: page served, a tile equals worldgen render of its region"

# The logs: a failed call, found in nginx's JSON line (stdout) and by its request id in the call log
# (stderr) of the replica that refused it, with the reason.
wg --target="$lb" --world=unserved describe >"$logs/unserved.out" 2>&1 &&
  fail "describe of a world nobody serves succeeded through nginx"
failed_call_id() {  # nginx's request id of the newest DescribeWorld it logged as NOT_FOUND (gRPC 5)
  compose logs --no-color nginx 2>/dev/null | sed -n 's/^[^|]*| //p' | python3 -c '
import json, sys
ids = []
for line in sys.stdin:
    try:
        call = json.loads(line)
    except ValueError:
        continue
    if call.get("path") == "/worldgen.v1.WorldGen/DescribeWorld" and call.get("grpc_status") == "5":
        ids.append(call["request_id"])
print(ids[-1] if ids else "")'
}
has_failed_call() { [[ -n $(failed_call_id) ]]; }
until_ok 30 has_failed_call || fail "nginx logged no NOT_FOUND DescribeWorld line: $(compose logs --no-color nginx 2>&1 | tail -n 3)"
call_id=$(failed_call_id)
replica_line() {  # the replicas' call-log line with nginx's request id
  compose logs --no-color $replicas 2>/dev/null | grep -F "\"request_id\":\"$call_id\""
}
until_ok 30 replica_line || fail "no replica's call log has nginx's request id $call_id: $(compose logs --no-color $replicas 2>&1 | grep -F '"method"' | tail -n 2)"
replica_line | grep -F '"reason":"not_found"' | grep -F '"world":"unserved"' >/dev/null ||
  fail "the replica's line for $call_id lacks its reason or world: $(replica_line)"
log "logs: nginx's line for a failed call and the replica's call log share request id $call_id (reason not_found)"

# ---- 6. every replica took traffic; Prometheus sees every replica up ------------------------------------
chunks_generated() {  # chunks_generated SERVICE: its worldgen_chunks_generated_total, from its published /metrics
  curl -fsS "http://127.0.0.1:$(host_port "$1" 9464)/metrics" |
    awk '/^worldgen_chunks_generated_total/ { sum += $NF } END { printf "%d", sum }'
}
# nginx routes by region (consistent hash of worldgen-route): calls over many regions reach every replica.
wg --target="$lb" load --pattern=random --requests=64 --concurrency=4 --duration=0 --json \
  >"$logs/spread.json" 2>&1 || fail "64 requests over random regions through nginx failed: $(tail -c 300 "$logs/spread.json")"
# 3D load through nginx: players loading whole columns of sections of the cave world, none refused.
wg --target="$lb" --world=caves load --pattern=spiral --y=-64:320 --cell=4 --size=16 --requests=16 \
  --concurrency=2 --chunks_per_request=4 --duration=0 --progress=false --json >"$logs/load3d.json" 2>"$logs/load3d.err" ||
  fail "16 requests of 3D chunks through nginx failed: $(tail -c 300 "$logs/load3d.json") $(tail -n 3 "$logs/load3d.err")"
python3 "$root/tests/e2e/check_load_report.py" 16 <"$logs/load3d.json" >"$logs/load3d.check" ||
  fail "the 3D load's report: $(cat "$logs/load3d.check")"
log "3D load through nginx: $(cat "$logs/load3d.check")"
for s in $replicas; do
  n=$(chunks_generated "$s") || fail "$s: /metrics not reachable"
  [[ $n -gt 0 ]] || fail "$s generated no chunk: nginx did not spread the calls"
  log "$s: worldgen_chunks_generated_total = $n"
done
# Every replica serves every world with the same fingerprint (its config and the engine's answers):
# what the alert WorldgenWorldFingerprintsDiffer watches in production.
world_info() {  # world_info SERVICE: its worldgen_world_info series, sorted
  curl -fsS "http://127.0.0.1:$(host_port "$1" 9464)/metrics" | awk '/^worldgen_world_info\{/' | sort
}
first_info=""
for s in $replicas; do
  info=$(world_info "$s") || fail "$s: /metrics not reachable"
  [[ -n $info ]] || fail "$s exports no worldgen_world_info"
  if [[ -z $first_info ]]; then
    first_info=$info
  elif [[ $info != "$first_info" ]]; then
    fail "replicas disagree on their worlds' fingerprints: $(diff <(echo "$first_info") <(echo "$info") | head -n 6)"
  fi
done
log "every replica serves the same $(wc -l <<<"$first_info") world fingerprints"
# Before a rollout: the image's own CLI checks world files against the live service through nginx.
# The files the replicas loaded are all "same"; one of them reseeded is "changed" and fails.
check_worlds() {  # check_worlds DIR [FLAGS...]: `worldgen check DIR --live` in a container
  local dir=$1
  shift
  docker run --rm --network "${project}_default" --read-only -v "$dir:/worlds:ro" \
    --entrypoint /usr/local/bin/worldgen worldgen-server --target=nginx:50051 check /worlds --live "$@"
}
check_out=$(check_worlds "$root/docker/worlds" 2>&1) ||
  fail "worldgen check of the deployed worlds failed: $(tail -n 5 <<<"$check_out")"
n_worlds=$(grep -c . <<<"$first_info")
[[ $(tail -n 1 <<<"$check_out") == "$n_worlds same" ]] ||
  fail "worldgen check: want all $n_worlds worlds same, got: $(tail -n 3 <<<"$check_out")"
next_worlds="$logs/next-worlds"
mkdir -p "$next_worlds"
cp "$root"/docker/worlds/*.json "$next_worlds/"
sed -i -E 's/"seed": *"[0-9]+"/"seed": "424242"/' "$next_worlds/steppe.json"
chmod -R a+rX "$next_worlds"
# Its file still pins the old fingerprint, so the check refuses the file itself, as a replica would.
if check_out=$(check_worlds "$next_worlds" 2>&1); then
  fail "worldgen check passed a reseeded world under its old pin: $(tail -n 3 <<<"$check_out")"
fi
grep -q 'steppe.json: world "steppe" has fingerprint .*not its expected_fingerprint' <<<"$check_out" ||
  fail "worldgen check did not name the broken pin: $(tail -n 3 <<<"$check_out")"
# The operator means the change: the pin goes (a new one would come from this check's output).
sed -i '/"expectedFingerprint"/d' "$next_worlds/steppe.json"
if check_out=$(check_worlds "$next_worlds" 2>&1); then
  fail "worldgen check passed a reseeded world: $(tail -n 3 <<<"$check_out")"
fi
grep -qE '^steppe .* changed$' <<<"$check_out" ||
  fail "worldgen check did not name the reseeded world: $(tail -n 4 <<<"$check_out")"
check_worlds "$next_worlds" --allow_changed=steppe >"$logs/check-allowed.txt" 2>&1 ||
  fail "worldgen check --allow_changed=steppe failed: $(tail_of "$logs/check-allowed.txt")"
log "worldgen check through nginx: $n_worlds worlds same; a reseeded one refused by its pin, then changed, refused until allowed"
prom_all_up() {
  curl -fsS "http://$prom/api/v1/targets" | python3 -c '
import json, sys
want = set(sys.argv[1:])
targets = json.load(sys.stdin)["data"]["activeTargets"]
up = {t["labels"]["instance"].split(":")[0] for t in targets if t["health"] == "up"}
sys.exit(0 if want <= up else 1)' $replicas
}
until_ok 60 prom_all_up || fail "Prometheus does not report every replica up: $(curl -s "http://$prom/api/v1/targets" | head -c 600)"
log "Prometheus targets: every replica up"
# The blackbox exporter's health check through nginx (job worldgen_endpoint), as Prometheus stores it.
endpoint_probed() {
  curl -fsS "http://$prom/api/v1/query" --data-urlencode 'query=probe_success{job="worldgen_endpoint"}' |
    python3 -c '
import json, sys
result = json.load(sys.stdin)["data"]["result"]
sys.exit(0 if [r["metric"]["instance"] for r in result if r["value"][1] == "1"] == ["nginx:50051"] else 1)'
}
until_ok 60 endpoint_probed || fail "Prometheus has no successful probe of nginx:50051: $(curl -s "http://$prom/api/v1/query" \
  --data-urlencode 'query={job="worldgen_endpoint"}' | head -c 600)"
log "Prometheus: the blackbox probe of nginx:50051 succeeds"

# ---- 6b. the balancer as Kubernetes runs it: following a DNS name, non-root, read-only root ----------
# As docker/kubernetes/base/balancer.yaml: uid 33, read-only root filesystem, writable config, pid and
# temporary folders (tmpfs owned by uid 33, as the pod's emptyDirs with fsGroup 33; this Docker ignores
# a tmpfs mode), replicas found through WORLDGEN_UPSTREAM_DNS (here compose's name worldgen-1).
k8s_lb_name=wge2e-k8slb$$
docker run -d --name "$k8s_lb_name" --network "${project}_default" --user 33:33 --read-only \
  --tmpfs /run:uid=33,gid=33 --tmpfs /var/lib/nginx:uid=33,gid=33 \
  --tmpfs /etc/nginx/conf.d:uid=33,gid=33 \
  -e WORLDGEN_UPSTREAM_DNS=worldgen-1:50051 -p 127.0.0.1::50051 worldgen-nginx \
  >"$logs/k8s-lb-run.log" 2>&1 || fail "docker run of the balancer in its Kubernetes mode failed: $(tail_of "$logs/k8s-lb-run.log")"
k8s_lb=127.0.0.1:$(docker port "$k8s_lb_name" 50051/tcp | head -n 1 | sed 's/.*://')
until_ok 30 wg --target="$k8s_lb" --deadline_ms=2000 health >/dev/null 2>&1 ||
  fail "the balancer following worldgen-1 by DNS (uid 33, read-only) does not answer: $(docker logs "$k8s_lb_name" 2>&1 | tail -n 8)"
lb=$k8s_lb same k8s_lb_chunk chunk 5 -7 --json  # `same`, through this balancer instead of compose's
docker logs "$k8s_lb_name" 2>&1 | grep 'follow-dns: upstreams [0-9.]*:50051' >/dev/null ||
  fail "the balancer did not report following worldgen-1's address: $(docker logs "$k8s_lb_name" 2>&1 | tail -n 5)"
docker rm -f "$k8s_lb_name" >/dev/null 2>&1
log "balancer in its Kubernetes mode (uid 33, read-only root, upstreams by DNS): bit-identical answers"

# ---- 6c. the balancer with mutual TLS, configured as compose's comments say -----------------------------
# The nginx image with WORLDGEN_TLS_CERT, WORLDGEN_TLS_KEY and WORLDGEN_TLS_CLIENT_CA naming PEM files
# mounted read-only (the key mode 600, as openssl writes it), in front of compose's replicas: a game
# server with a client certificate gets the same bytes as through plaintext nginx; one without is refused.
tls_dir="$logs/tls"
mkdir -p "$tls_dir"
certs="$root/tests/support/make_certificates.sh"
{ bash "$certs" authority "$tls_dir/ca" &&
  bash "$certs" issue "$tls_dir/ca" "$tls_dir/balancer" "DNS:nginx,IP:127.0.0.1" &&
  bash "$certs" issue "$tls_dir/ca" "$tls_dir/game-server" "DNS:game-server"; } >"$logs/tls-certs.log" 2>&1 ||
  fail "could not make the TLS test certificates: $(tail_of "$logs/tls-certs.log")"
tls_lb_name=wge2e-tlslb$$
docker run -d --name "$tls_lb_name" --network "${project}_default" -v "$tls_dir:/etc/worldgen-tls:ro" \
  -e WORLDGEN_UPSTREAMS="$(tr '\n' ' ' <<<"$replicas" | sed 's/ /:50051 /g')" \
  -e WORLDGEN_TLS_CERT=/etc/worldgen-tls/balancer.pem -e WORLDGEN_TLS_KEY=/etc/worldgen-tls/balancer.key \
  -e WORLDGEN_TLS_CLIENT_CA=/etc/worldgen-tls/ca.pem -p 127.0.0.1::50051 worldgen-nginx \
  >"$logs/tls-lb-run.log" 2>&1 || fail "docker run of the TLS balancer failed: $(tail_of "$logs/tls-lb-run.log")"
tls_lb=127.0.0.1:$(docker port "$tls_lb_name" 50051/tcp | head -n 1 | sed 's/.*://')
tls_flags=(--tls_ca_file="$tls_dir/ca.pem" --tls_cert_file="$tls_dir/game-server.pem"
  --tls_key_file="$tls_dir/game-server.key")
until_ok 30 wg --target="$tls_lb" "${tls_flags[@]}" --deadline_ms=2000 health ||
  fail "the TLS balancer does not answer a client with a certificate: $(docker logs "$tls_lb_name" 2>&1 | tail -n 8)"
wg --target="$tls_lb" "${tls_flags[@]}" chunk 5 -7 --json >"$logs/tls-lb-chunk.out" 2>"$logs/tls-lb-chunk.err" ||
  fail "through the TLS balancer: worldgen chunk 5 -7 failed: $(tail -n 3 "$logs/tls-lb-chunk.err")"
cmp -s "$logs/tls-lb-chunk.out" "$logs/local-k8s_lb_chunk.out" ||
  fail "chunk 5 -7 differs through the TLS balancer from a local server"
if wg --target="$tls_lb" --tls_ca_file="$tls_dir/ca.pem" --deadline_ms=3000 --retries=0 health >"$logs/tls-nocert.out" 2>&1; then
  fail "the TLS balancer served a client without a certificate"
fi
# nginx answers it with HTTP 400, which gRPC reports as INTERNAL (docs/operations.md, TLS).
grep -q 'INTERNAL: .*status: 400' "$logs/tls-nocert.out" ||
  fail "a client without a certificate failed, but not with nginx's refusal: $(tail_of "$logs/tls-nocert.out" 3)"
docker rm -f "$tls_lb_name" >/dev/null 2>&1
log "balancer with mutual TLS (compose's settings, files mounted read-only): bit-identical answers; a client without a certificate refused"

# ---- 7. stop a replica under load: no request lost, exit 0 within the grace period ----------------------
victim=$(tail -n 1 <<<"$replicas")
victim_id=${cid[$victim]}
grace=$(compose config | awk -v s="  $victim:" '$0 == s { f = 1; next } f && /^  [^ ]/ { f = 0 }
  f && /stop_grace_period:/ { print $2; exit }')
wg --target="$lb" load --concurrency=4 --duration=10s --json >"$logs/load.json" 2>"$logs/load.err" &
load_pid=$!
before=$(chunks_generated "$victim")
sleep 3
during=$(chunks_generated "$victim")
[[ $during -gt $before ]] || fail "$victim took no load before it was stopped ($before -> $during chunks)"
t=$SECONDS
compose stop "$victim" >"$logs/stop.log" 2>&1; stop_rc=$?
stop_secs=$((SECONDS - t))
wait "$load_pid"; load_rc=$?
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$victim_id")
log "$victim stopped in ${stop_secs}s (grace period $grace), exit code $exit_code"
[[ $stop_rc -eq 0 ]] || fail "docker-compose stop $victim failed: $(tail -n 2 "$logs/stop.log")"
[[ $exit_code -eq 0 ]] || fail "$victim exited with $exit_code on SIGTERM (137: killed when its grace period, $grace, ran out)"
load_summary=$(python3 - "$logs/load.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
errors = ",".join(f"{code}={n}" for code, n in r["errors"].items()) or "none"
print(r["requests"], r["ok_requests"], r["error_count"], r["retries"], errors)
EOF
) || fail "cannot read the load run's JSON: $(head -c 300 "$logs/load.json")"
read -r load_requests load_ok load_lost load_retries load_errors <<<"$load_summary"
[[ $load_requests -gt 0 ]] || fail "the load run made no request"
[[ $load_lost -eq 0 && $load_ok -eq $load_requests ]] ||
  fail "the load run lost $load_lost of $load_requests requests while $victim stopped: $load_errors"
[[ $load_rc -eq 0 ]] || fail "worldgen load exited $load_rc: $(tail -n 3 "$logs/load.err")"
wg --target="$lb" health >/dev/null || fail "nginx does not answer SERVING after $victim stopped"
log "load through nginx: $load_requests requests ($victim had served $((during - before)) chunks of it when stopped), $load_retries retried, none lost"

passed=1
echo "docker-e2e: PASSED ($((SECONDS - started))s total: base images ${base_secs}s, server image build ${build_secs}s," \
  "runtime image ${image_mb} MB, compose up to healthy ${up_secs}s, $victim stopped in ${stop_secs}s with exit 0," \
  "$load_requests load requests, 0 lost)"
