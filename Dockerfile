# worldgen-server image: the gRPC server and the `worldgen` CLI (used by HEALTHCHECK) on debian:bookworm-slim.
#
#   docker build -t worldgen-server .                         (or: docker compose -f docker/compose.yaml build)
#   docker run --rm -p 127.0.0.1:50051:50051 -p 127.0.0.1:9464:9464 worldgen-server [--blend_threads=N ...]
#
# Packages come from the project's one list (apt-packages.txt) through scripts/install-deps.sh: group `build`
# in the build stage, group `runtime` (shared libraries only) in the runtime stage. The dependency layers come
# before any source is copied, so editing code re-runs only the compile step.

FROM debian:bookworm AS build-deps
COPY apt-packages.txt /src/
COPY scripts/install-deps.sh /src/scripts/
RUN /src/scripts/install-deps.sh build && rm -rf /var/lib/apt/lists/*

# Compiling is a stage of its own on top of the dependencies; `docker build --target build` tags it (as
# docker/e2e.sh does) to keep its cache through image prunes.
FROM build-deps AS build
WORKDIR /src
COPY CMakeLists.txt ./
COPY engine engine
COPY proto proto
COPY server server
COPY client client
# Build parallelism; the default suits a 2-core builder.
ARG JOBS=2
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DWORLDGEN_BUILD_TESTS=OFF -DWORLDGEN_BUILD_BENCH=OFF -DWORLDGEN_BUILD_LAB=OFF \
 && cmake --build build -j"${JOBS}" --target worldgen-server worldgen \
 && strip build/server/worldgen-server build/client/worldgen


FROM debian:bookworm-slim
COPY apt-packages.txt /tmp/deps/
COPY scripts/install-deps.sh /tmp/deps/scripts/
RUN /tmp/deps/scripts/install-deps.sh runtime \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /tmp/deps \
 && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin worldgen

COPY --from=build /src/build/server/worldgen-server /src/build/client/worldgen /usr/local/bin/
# Fails the build if a shared library is missing from the `runtime` package group.
RUN ! ldd /usr/local/bin/worldgen-server /usr/local/bin/worldgen | grep 'not found'

USER worldgen
# gRPC, then Prometheus /metrics.
EXPOSE 50051 9464
# SIGTERM: health turns NOT_SERVING while calls are still accepted for
# --shutdown_drain_delay_seconds (default 5), then in-flight calls get up to
# --shutdown_grace_seconds (default 10), exit 0: up to about 15 s. Plain `docker stop` kills at
# 10 s: give `docker stop -t` / compose stop_grace_period more than drain + grace + 1 s (compose's
# 20 s does).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/worldgen", "--target=127.0.0.1:50051", "--deadline_ms=2000", "health"]
ENTRYPOINT ["/usr/local/bin/worldgen-server", "--listen_address=0.0.0.0"]
