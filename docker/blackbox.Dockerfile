# The prober for docker/compose.yaml and docker/kubernetes: Debian's prometheus-blackbox-exporter with
# docker/blackbox.yml, which health-checks worldgen through its balancer as a game server would.
# Build context: docker/.  An operator who can pull images may use the official
# prom/blackbox-exporter image with the same blackbox.yml mounted instead.
FROM debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      prometheus-blackbox-exporter ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY blackbox.yml /etc/prometheus/blackbox.yml

# nobody, by number: Kubernetes checks runAsNonRoot against a numeric user.
USER 65534:65534
EXPOSE 9115
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9115 && printf 'GET /-/healthy HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '^HTTP/1.. 200' <&3"]
ENTRYPOINT ["/usr/bin/prometheus-blackbox-exporter", "--config.file=/etc/prometheus/blackbox.yml", \
            "--web.listen-address=0.0.0.0:9115"]
