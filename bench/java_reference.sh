#!/bin/bash
# The published Java scattered blender, timed in the same session as blend_bench (README,
# "Performance"). The library is not part of this repository: pass a checkout of
# https://github.com/KdotJPG/Scattered-Biome-Blender. Needs a JDK (`scripts/install-deps.sh
# reference`).
#
# Usage: bash bench/java_reference.sh <checkout> [rounds]
# Prints every round of each anchor, then the best round's ns per column per anchor (the JIT has
# warmed up by then; the first rounds are slower).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
checkout="${1:?usage: java_reference.sh <Scattered-Biome-Blender checkout> [rounds]}"
rounds="${2:-8}"
for f in ScatteredBiomeBlender.java OpenSimplex2S.java LinkedBiomeWeightMap.java; do
  [[ -f "$checkout/$f" ]] || { echo "java_reference: $checkout has no $f" >&2; exit 2; }
done
command -v javac > /dev/null || { echo "java_reference: no javac (scripts/install-deps.sh reference)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -nowarn -d "$out" "$checkout"/*.java "$here/java/ReferenceBench.java" 2> "$out/javac.log" ||
  { cat "$out/javac.log" >&2; exit 1; }
for anchor in "8 24" "4 48"; do
  # shellcheck disable=SC2086
  java -cp "$out" ReferenceBench $anchor "$rounds" | tee "$out/run.txt"
  awk -v a="$anchor" '{ v = $6 + 0; if (best == "" || v < best) best = v } END { printf "java best (gi, r) = (%s): %.1f ns/column\n", a, best }' "$out/run.txt"
done
