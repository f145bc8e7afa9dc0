#!/usr/bin/python3
"""Reads `worldgen load --json` output on stdin and checks that its numbers are sane.

usage: worldgen load --json ... | check_load_report.py EXPECTED_REQUESTS
Checks consistency only (no timing thresholds): every request finished without error, the chunk
count matches, throughput is positive and the latency percentiles are ordered.
"""
import json
import sys


def main():
    expected = int(sys.argv[1])
    report = json.load(sys.stdin)
    problems = []

    def check(ok, what):
        if not ok:
            problems.append(what)

    check(report["requests"] == expected, "requests %r != %d" % (report["requests"], expected))
    check(report["ok_requests"] == report["requests"], "not every request succeeded")
    check(report["error_count"] == 0 and report["errors"] == {}, "errors: %r" % report["errors"])
    check(report["chunks"] == report["requests"] * report["chunks_per_request"],
          "chunks %r != requests x chunks_per_request" % report["chunks"])
    check(report["bytes"] > 0, "no bytes")
    check(report["seconds"] > 0, "no duration")
    check(report["chunks_per_second"] > 0 and report["mb_per_second"] > 0, "no throughput")
    lat = report["latency_ms"]
    order = [lat["p50"], lat["p90"], lat["p99"], lat["p99.9"], lat["max"]]
    check(order[0] > 0 and order == sorted(order), "latency percentiles out of order: %r" % order)
    check(0 < lat["mean"] <= lat["max"], "mean latency %r not in (0, max]" % lat["mean"])
    for problem in problems:
        print("load-report: FAIL " + problem)
    if problems:
        print(json.dumps(report))
        return 1
    print("load-report: OK %d requests, %d chunks, p50 %.3f ms <= p99 %.3f ms"
          % (report["requests"], report["chunks"], lat["p50"], lat["p99"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
