#!/usr/bin/python3
"""ns per column against blend radius for every blender, from compare_bench's JSON output.

  build/bench/compare_bench --benchmark_filter=BM_Radius --benchmark_out=radius.json \
      --benchmark_out_format=json
  /usr/bin/python3 bench/plot_radius.py radius.json bench/perf_radius.png

Needs Debian's python3-matplotlib (apt-packages.txt group `plot`), hence /usr/bin/python3.
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_radius.py BENCH.json OUT.png")
    with open(sys.argv[1]) as f:
        report = json.load(f)
    series = {}
    for run in report["benchmarks"]:
        m = re.match(r"BM_Radius/method:(\d+)/gi:(\d+)/r:(\d+)", run["name"])
        if not m or "per_column" not in run or run.get("error_occurred"):
            continue
        label = run.get("label") or "method " + m.group(1)
        series.setdefault(label, []).append((int(m.group(3)), run["per_column"] * 1e9))
    if not series:
        sys.exit("no BM_Radius results in " + sys.argv[1])
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for label, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("blend radius (blocks), sampling interval 8")
    ax.set_ylabel("ns per column (16x16 chunks, cached samples)")
    ax.set_title("worldgen blenders on the anchor world, one thread")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
