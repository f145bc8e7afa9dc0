# gRPC load balancer for docker/compose.yaml: Debian's nginx-light with docker/nginx/worldgen.conf.template,
# rendered at container start for the replicas named in WORLDGEN_UPSTREAMS (host:port, space-separated).
# Build context: docker/.  An operator who can pull images may use the official nginx image instead with
# the same rendered file mounted into /etc/nginx/conf.d/ (see README, Deploy).
FROM debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log \
 && sed -i -e '/^worker_processes/d' -e 's/worker_connections [0-9]*;/worker_connections 16384;/' \
           -e '1i worker_rlimit_nofile 65536;' /etc/nginx/nginx.conf \
 && grep -q 'worker_connections 16384;' /etc/nginx/nginx.conf
# Debian's nginx.conf allows 768 connections per worker; nginx holds one upstream connection per
# gRPC call, so a few hundred players' calls ran out of them (HTTP 500, gRPC UNKNOWN, not retried).
# Workers: WORLDGEN_NGINX_WORKERS (nginx's "auto" is the host's cores, not a container's CPU limit:
# Kubernetes sets it to the pod's).
ENV WORLDGEN_NGINX_WORKERS=auto
COPY nginx/render-config.sh nginx/follow-dns.sh nginx/worldgen.conf.template /etc/worldgen-nginx/

ENV WORLDGEN_UPSTREAMS="worldgen-1:50051 worldgen-2:50051"
# hash (consistent hash of the worldgen-route key: a region stays in one replica's cache), least_conn, round_robin.
ENV WORLDGEN_BALANCE=hash
# TLS for clients: WORLDGEN_TLS_CERT, WORLDGEN_TLS_KEY (and WORLDGEN_TLS_CLIENT_CA for mutual TLS),
# paths of mounted PEM files (render-config.sh). Unset: plaintext.
EXPOSE 50051
STOPSIGNAL SIGQUIT
# The gRPC port accepts connections (replica health is nginx's business: max_fails/grpc_next_upstream).
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/50051"]
# WORLDGEN_UPSTREAM_DNS=name:port (Kubernetes: the headless Service) follows what the name resolves
# to (follow-dns.sh); otherwise the fixed WORLDGEN_UPSTREAMS.
ENV WORLDGEN_UPSTREAM_DNS=""
ENTRYPOINT ["/bin/sh", "-c", "if [ -n \"$WORLDGEN_UPSTREAM_DNS\" ]; then exec /etc/worldgen-nginx/follow-dns.sh 0.0.0.0:50051 \"$WORLDGEN_UPSTREAM_DNS\"; fi; /etc/worldgen-nginx/render-config.sh 0.0.0.0:50051 $WORLDGEN_UPSTREAMS > /etc/nginx/conf.d/worldgen.conf && exec nginx -g \"daemon off; worker_processes $WORLDGEN_NGINX_WORKERS;\""]
