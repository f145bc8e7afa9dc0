# Prometheus for docker/compose.yaml: Debian's prometheus package with docker/prometheus.yml (scrapes every
# replica's :9464/metrics). Build context: docker/.  An operator who can pull images may use the official
# prom/prometheus image with the same prometheus.yml mounted instead (see README, Deploy).
FROM debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY prometheus.yml alerts.yml /etc/prometheus/

USER prometheus
EXPOSE 9090
VOLUME /var/lib/prometheus
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9090 && printf 'GET /-/ready HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '^HTTP/1.. 200' <&3"]
ENTRYPOINT ["/usr/bin/prometheus", "--config.file=/etc/prometheus/prometheus.yml", \
            "--storage.tsdb.path=/var/lib/prometheus/metrics2", "--web.listen-address=0.0.0.0:9090"]
