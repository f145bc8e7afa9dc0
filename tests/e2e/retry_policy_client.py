#!/usr/bin/python3
"""docs/service_config.json in a gRPC client that is not ours: Python's grpcio, whose own retry code
(gRFC A6) must retry a worldgen refusal after the server's grpc-retry-pushback-ms, not its backoff.

Run a fresh server with --blend_threads=1 --max_chunks_per_request=32768 (and the default
--max_queue_seconds=30). The script first holds queued work: a stream of 200 chunks of 256^2 with
heights (2.6 s at a fresh server's estimate of 2e-7 s a column) that it never reads stalls once
its buffer and the HTTP/2 window are full, its other chunks admitted and unstarted; nothing else
runs, so the server's estimates stand still. It reads them from /metrics (queued seconds Q,
seconds per column, the bound) and asks, through the service config, for a call that fits the
bound alone and passes it by 0.3 s with Q: every attempt is refused for the queue bound, with a
pushback of about 0.3 s. (The bound is far above Q: a busy host's estimate may be 5 times the
fresh one, and a fast one's a tenth of it.)
The script checks that the call ends RESOURCE_EXHAUSTED, that the server saw maxAttempts refusals
(its worldgen_rejected_calls_total{reason="queue_full"}), and that the attempts were spaced by at
least the pushback each time: longer than the config's randomized backoff could ever make them.

usage: retry_policy_client.py --target=HOST:PORT --metrics=HOST:PORT --proto_dir=PATH/proto
       --service_config=PATH/docs/service_config.json
Exit 0 and a final "retry-policy: OK ..." line on success, 1 otherwise.
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_client import generate_stubs  # noqa: E402 (one home for the stubs)


CHUNK = 256  # Chunk side: 65,536 columns a chunk.
PUSHBACK = 0.3  # Seconds: 4 retries after it outlast the config's backoff (0.75 s at most).


def metric(metrics, name, labels=""):
    text = urllib.request.urlopen("http://%s/metrics" % metrics, timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + labels + " ") or line.startswith(name + labels + "{"):
            return float(line.split()[-1])
    return 0.0


def queue_full_refusals(metrics):
    return metric(metrics, "worldgen_rejected_calls_total", '{reason="queue_full"}')


def hold_queued_work(args, stub, worldgen_pb2):
    """Starts the stream that is never read; returns it once the queued work stands still."""
    # With heights: the blend costs more a column than without, so the estimate the server learns
    # from the first chunks keeps the held work above the pushback on the fastest CPU too.
    request = worldgen_pb2.GenerateChunkRequest(chunk_size=CHUNK, include_heights=True)
    request.region.min_x, request.region.min_z, request.region.max_x, request.region.max_z = \
        0, 0, 19, 9
    held = stub.GenerateChunk(request, timeout=60)
    last, steady = None, 0
    deadline = time.monotonic() + 30
    while steady < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
        queued = metric(args.metrics, "worldgen_queued_work_seconds")
        steady = steady + 1 if queued == last and queued > 0 else 0
        last = queued
    return held, last if steady >= 3 else None


def call_refused(args, config_text):
    """The refused call through grpcio with the service config:
    (code, details, seconds, refusals, setup error or None)."""
    import grpc
    from worldgen.v1 import worldgen_pb2, worldgen_pb2_grpc

    holder = grpc.insecure_channel(args.target)
    held, queued = hold_queued_work(args, worldgen_pb2_grpc.WorldGenStub(holder), worldgen_pb2)
    if queued is None:
        return None, "", 0.0, 0.0, "the held stream's queued work never stood still"
    per_column = metric(args.metrics, "worldgen_estimated_seconds_per_column")
    bound = metric(args.metrics, "worldgen_queued_work_limit_seconds")
    threads = metric(args.metrics, "worldgen_blend_threads")
    chunk_seconds = CHUNK * CHUNK * per_column / threads
    # A call that fits the bound alone and passes it by PUSHBACK with the held work: the server
    # then says to come back in about PUSHBACK (when that much of the held work would have run).
    chunks = math.ceil((bound - queued + PUSHBACK) / chunk_seconds)
    if chunks * chunk_seconds > bound or chunks < 1:
        return None, "", 0.0, 0.0, (
            "queued %.3f s (%.3g s a column) leave no call of whole chunks of %.4f s that fits "
            "%.1f s alone and passes it by %.1f s with them" % (
                queued, per_column, chunk_seconds, bound, PUSHBACK))
    channel = grpc.insecure_channel(args.target, options=[
        ("grpc.service_config", config_text), ("grpc.enable_retries", 1)])
    stub = worldgen_pb2_grpc.WorldGenStub(channel)
    request = worldgen_pb2.GenerateChunkRequest(chunk_size=CHUNK)
    request.chunks.coords.extend(
        worldgen_pb2.ChunkCoord(x=1000 + i % 64, z=1000 + i // 64) for i in range(chunks))
    before = queue_full_refusals(args.metrics)
    start = time.monotonic()
    code, details = None, ""
    try:
        for _ in stub.GenerateChunk(request, timeout=30):
            pass
    except grpc.RpcError as error:
        code, details = error.code(), error.details()
    elapsed = time.monotonic() - start
    refusals = queue_full_refusals(args.metrics) - before
    channel.close()
    held.cancel()
    holder.close()
    return code, details, elapsed, refusals, None


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
        code, details, elapsed, refusals, setup = call_refused(args, config_text)
    if setup is not None:
        print("retry-policy: FAIL setup: " + setup)
        return 1
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
