#!/usr/bin/python3
"""docs/service_config.json in a gRPC client that is not ours: Python's grpcio, whose own retry code
(gRFC A6) must retry a worldgen refusal after the server's grpc-retry-pushback-ms, not its backoff.

The server must refuse every attempt of the call below for queued work (run it with
--max_queue_seconds=0.2: 64 chunks of 256^2 are 0.84 s at a fresh server's estimate). The script
checks that the call ends RESOURCE_EXHAUSTED, that the server saw maxAttempts refusals (its
worldgen_rejected_calls_total{reason="queue_full"}), and that the attempts were spaced by at least
the pushback each time: longer than the config's randomized backoff could ever make them.

usage: retry_policy_client.py --target=HOST:PORT --metrics=HOST:PORT --proto_dir=PATH/proto
       --service_config=PATH/docs/service_config.json
Exit 0 and a final "retry-policy: OK ..." line on success, 1 otherwise.
"""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_client import generate_stubs  # noqa: E402 (one home for the stubs)


def queue_full_refusals(metrics):
    text = urllib.request.urlopen("http://%s/metrics" % metrics, timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith('worldgen_rejected_calls_total{reason="queue_full"}'):
            return float(line.split()[-1])
    return 0.0


def call_refused(args, config_text):
    """The refused call through grpcio with the service config: (code, details, seconds, refusals)."""
    import grpc
    from worldgen.v1 import worldgen_pb2, worldgen_pb2_grpc

    channel = grpc.insecure_channel(args.target, options=[
        ("grpc.service_config", config_text), ("grpc.enable_retries", 1)])
    stub = worldgen_pb2_grpc.WorldGenStub(channel)
    request = worldgen_pb2.GenerateChunkRequest(chunk_size=256)
    request.region.min_x, request.region.min_z, request.region.max_x, request.region.max_z = 0, 0, 7, 7
    before = queue_full_refusals(args.metrics)
    start = time.monotonic()
    code, details = None, ""
    try:
        for _ in stub.GenerateChunk(request, timeout=30):
            pass
    except grpc.RpcError as error:
        code, details = error.code(), error.details()
    elapsed = time.monotonic() - start
    channel.close()
    return code, details, elapsed, queue_full_refusals(args.metrics) - before


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--proto_dir", required=True)
    parser.add_argument("--service_config", required=True)
    args = parser.parse_args()
    with open(args.service_config) as f:
        config_text = f.read()
    config = json.loads(config_text)
    policy = config["methodConfig"][0]["retryPolicy"]
    attempts = policy["maxAttempts"]

    with tempfile.TemporaryDirectory(prefix="retry-policy-stubs-") as out:
        generate_stubs(args.proto_dir, out)
        code, details, elapsed, refusals = call_refused(args, config_text)
    failures = []
    if code is None or code.name != "RESOURCE_EXHAUSTED":
        failures.append("status %s (%s), expected RESOURCE_EXHAUSTED" % (code, details))
    if refusals != attempts:
        failures.append("server refused %d attempts, expected maxAttempts = %d" % (refusals, attempts))
    pushback_ms = int(details.split("retry in ")[-1].split(" ms")[0]) if "retry in " in details else 0
    # Without the pushback, retry k waits a random time below initialBackoff * multiplier^(k-1).
    backoff_bound = sum(float(policy["initialBackoff"].rstrip("s")) * policy["backoffMultiplier"] ** k
                        for k in range(attempts - 1))
    need = (attempts - 1) * pushback_ms / 1000.0
    if pushback_ms <= 0 or elapsed < need or need <= backoff_bound:
        failures.append("%d attempts took %.2f s: pushback %d ms each needs >= %.2f s (backoff alone "
                        "< %.2f s)" % (attempts, elapsed, pushback_ms, need, backoff_bound))
    for failure in failures:
        print("retry-policy: FAIL " + failure)
    if failures:
        return 1
    print("retry-policy: OK %d attempts in %.2f s, each after the server's %d ms pushback (%s)"
          % (attempts, elapsed, pushback_ms, details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
