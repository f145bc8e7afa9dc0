#!/usr/bin/env bash
# Builds the engine and its tests for 64-bit ARM (Release, build-aarch64/) with Debian's cross
# compiler and runs them under qemu-user: the golden hashes, pinned by the x86-64 build, must hold
# on ARM too, where the engine runs its portable vector code (NEON) and GCC would otherwise fuse
# multiply-adds (CMakeLists.txt forbids it). A replica on Graviton or Ampere, or in Docker on Apple
# silicon, then serves the same bits as one on x86-64.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" build aarch64
cmake -S "$root" -B "$root/build-aarch64" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$root/scripts/aarch64-toolchain.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DWORLDGEN_BUILD_SERVICE=OFF -DWORLDGEN_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-aarch64" -j "${WORLDGEN_JOBS:-2}" --target engine_tests
# qemu emulates floating point in software, about 100 times slower than native: the whole suite
# takes about 40 minutes. Without arguments (CI) this runs all of it but the tests that each cost
# over 60 ms natively, which repeat checks the others make at larger sizes: the reference blender
# (full_resolution), the chunk == point sweeps of every method but the default one, long property
# sweeps, and the SIMD variants against their scalar references (ARM has only the baseline, which
# the golden hashes pin). Arguments replace that filter: --gtest_filter='*' runs everything.
slow=(
  '*/full_resolution' '*EqualsPointQueryBitForBit/*' 'CoastTest.HeightsFollow*'
  'CoastTest.ChunkHeightsEqualPoint*' 'ChunkInterpolatedHeightsTest.ChunkEqualsPoint*'
  'ChunkInterpolatedHeightsTest.NeighbourJump*' 'JitteredCellsBlenderTest.SearchCovers*'
  'JitteredCellsBlenderTest.WeightsAreContinuous*' 'JitteredCellsBlenderTest.WeightsFollow*'
  'JitteredCellsBlenderTest.InfluenceDoesNot*' 'IsotropyTest.*' 'KernelRowTest.EveryVariant*'
  'VolumeKernelTest.EveryVariant*' 'NoiseTest.*EqualsScalar*' 'ParameterSpaceTest.Culling*'
  'ScatteredBlenderTest.SmoothMesh*' 'LerpedGridBlenderTest.TheBSpline*'
  'ParameterVoronoiBlenderTest.WeightsAreContinuous*' 'PowellSabinTest.IsC1*'
  'VolumeContractTest.CellsEqualPoints*' 'CaveBiomeSourceTest.CaveShares*'
  '*ChunkInPiecesIsTheWholeChunkBitForBit/*' 'WorldTest.ChunkInPieces*'
  'VolumeContractTest.VolumeInPieces*'
)
tests="$root/build-aarch64/tests/engine_tests"
if [[ $# -eq 0 ]]; then
  qemu-aarch64 "$tests" --gtest_brief=1 --gtest_filter="-$(IFS=:; echo "${slow[*]}")"
  qemu-aarch64 "$tests" --gtest_brief=1 --gtest_filter='*EqualsPointQueryBitForBit/scattered'
else
  qemu-aarch64 "$tests" --gtest_brief=1 "$@"
fi
echo "aarch64: PASSED"
