#!/usr/bin/env bash
# The engine's benchmarks under every SIMD variant this CPU can run (WORLDGEN_SIMD_VARIANT forces
# the variant of the kernels, the noise and the lattice rows; the results are the same bits
# whichever runs), one table: ns per column (per point for BM_Point, M items/s for BM_SourceTile and
# the lattice rows) by benchmark and variant.
#
#   bash bench/variants.sh [BUILD_DIR] [MIN_TIME] [FILTER]
#   (defaults: build, 0.5, the anchor, chunk-size, point, heights, source-tile and lattice-row
#   benchmarks)
set -euo pipefail
build=${1:-build}
min_time=${2:-0.5}
filter=${3:-'BM_Anchor|BM_ChunkSize/gi:8/r:24/size:32|BM_Point/gi:8/r:24/cached:1|BM_ChunkWithHeights|BM_SourceTile|BM_LatticeRow/row:1|BM_BccRow/row:1'}
bench="$build/bench/blend_bench"
[[ -x $bench ]] || { echo "variants: $bench is missing (build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/machine.sh"
echo "variants: $(machine)"
variants=()
for v in avx512 avx2 baseline; do
  if WORLDGEN_SIMD_VARIANT=$v "$bench" --benchmark_filter=NONE >/dev/null 2>&1; then
    WORLDGEN_SIMD_VARIANT=$v "$bench" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
      --benchmark_format=json >"$work/$v.json" 2>/dev/null
    variants+=("$v")
  else
    echo "variants: $v cannot run here"
  fi
done
python3 - "$work" "${variants[@]}" <<'PY'
import json, os, sys
work, variants = sys.argv[1], sys.argv[2:]
runs = {v: json.load(open(os.path.join(work, v + ".json"))) for v in variants}
names = [b["name"] for b in runs[variants[0]]["benchmarks"]]
def figure(b):
    if "per_column" in b:
        return "%.2f" % (b["per_column"] * 1e9)
    if b["name"].startswith("BM_Point"):
        return "%.0f ns" % b["real_time"]
    if "items_per_second" in b:
        return "%.1f M/s" % (b["items_per_second"] / 1e6)
    return "%.0f ns" % b["real_time"]
print("| benchmark (ns/column unless marked) | " + " | ".join(variants) + " |")
print("|---|" + "---:|" * len(variants))
for name in names:
    row = []
    for v in variants:
        match = [b for b in runs[v]["benchmarks"] if b["name"] == name]
        row.append(figure(match[0]) if match else "")
    print("| `%s` | %s |" % (name, " | ".join(row)))
print("simd context: " + "; ".join("%s: %s" % (v, runs[v]["context"].get("simd", "?")) for v in variants))
PY
