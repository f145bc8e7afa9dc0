#!/usr/bin/env bash
# A hot loop's throughput per execution port on CPUs other than this one, by llvm-mca's static
# model (issue 21: the cloud VMs here expose no hardware counters, and the Intel Xeon is not always
# the machine at hand). Finds, in FUNCTION of BINARY, the loop (a backward jump and the instructions
# it closes) densest in instructions named MNEMONIC (their count squared over the loop's length:
# an inner loop rather than the outer one around it), prints its instruction mix and, for each CPU
# model, llvm-mca's cycles per iteration and the busiest ports. LLVM 14 models sapphirerapids with
# Skylake-SP's tables (its ports are named SKXPort*).
#
#   bash bench/mca_loop.sh BINARY FUNCTION MNEMONIC [CPU...]
#        (FUNCTION: the first symbol whose demangled name holds it; CPUs default: icelake-server
#        sapphirerapids, and `llvm-mca-14 -mcpu=help` lists the others)
#
# Example, the 2D kernel's inner loop (one point's terms over 4 rows of 4 vectors of columns):
#   bash bench/mca_loop.sh build/bench/blend_bench KernelAvx512 vmaxpd
# Needs objdump (binutils) and llvm-mca-14 (apt-packages.txt, group `profile`). LLVM 14 has no Zen 4
# model (znver3 predates AVX-512), so AMD's side is counted by hand in docs/performance.md.
set -euo pipefail
if (( $# < 3 )); then
  echo "usage: bash bench/mca_loop.sh BINARY FUNCTION MNEMONIC [CPU...]" >&2
  exit 2
fi
binary=$1 function=$2 mnemonic=$3
shift 3
cpus=("$@")
(( ${#cpus[@]} > 0 )) || cpus=(icelake-server sapphirerapids)
[[ -f $binary ]] || { echo "mca_loop: no binary $binary" >&2; exit 2; }
command -v llvm-mca-14 >/dev/null || { echo "mca_loop: no llvm-mca-14 (scripts/install-deps.sh profile)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objdump -d -C --no-show-raw-insn "$binary" >"$work/all.s"
python3 - "$work/all.s" "$function" "$mnemonic" "$work/loop.s" <<'EOF'
import collections, re, sys
path, function, mnemonic, out = sys.argv[1:]
insns, inside, name = [], False, None
for line in open(path):
    header = re.match(r'^[0-9a-f]+ <(.*)>:$', line)
    if header:
        if inside:
            break  # The function's body ended at the next symbol.
        inside = function in header.group(1)
        name = header.group(1)
        continue
    m = re.match(r'^\s+([0-9a-f]+):\s+(\S.*)$', line)
    if inside and m:
        insns.append((int(m.group(1), 16), m.group(2).strip()))
if not insns:
    print(f"mca_loop: no function whose name holds '{function}'", file=sys.stderr)
    sys.exit(2)
loops = []
for k, (address, text) in enumerate(insns):
    jump = re.match(r'^j\w+\s+([0-9a-f]+)\b', text)
    if jump and int(jump.group(1), 16) < address:
        target = int(jump.group(1), 16)
        body = [t for a, t in insns[:k + 1] if a >= target]
        count = sum(1 for t in body if t.split()[0] == mnemonic)
        # count^2 / length: many of the instructions, and densely (an inner loop over an outer one
        # that holds the same instructions and more besides).
        loops.append((count * count / len(body), count, target, address, body))
_, count, start, end, body = max(loops, key=lambda loop: loop[:2], default=(0, 0, 0, 0, []))
if count == 0:
    print(f"mca_loop: no loop of {name} holds {mnemonic}", file=sys.stderr)
    sys.exit(2)
# llvm-mca models straight-line code: the loop's jumps go, and objdump's symbol and comment
# annotations with them.
code = [re.sub(r'\s+(#|<).*$', '', t) for t in body if not t.startswith('j')]
with open(out, 'w') as f:
    f.write('\n'.join(code) + '\n')
mix = collections.Counter(t.split()[0] for t in code)
print(f"{name}: loop {start:#x}..{end:#x}, {len(code)} instructions without its jumps, "
      f"{count} {mnemonic}")
print("  mix: " + ", ".join(f"{n} {op}" for op, n in mix.most_common()))
EOF
for cpu in "${cpus[@]}"; do
  llvm-mca-14 -mcpu="$cpu" -iterations=200 "$work/loop.s" >"$work/report.txt" 2>&1 ||
    { echo "$cpu: llvm-mca cannot model this loop: $(head -n 1 "$work/report.txt")"; continue; }
  python3 - "$cpu" "$work/report.txt" <<'EOF'
import re, sys
cpu, path = sys.argv[1:]
report = open(path).read()
cycles = int(re.search(r'Total Cycles:\s+(\d+)', report).group(1))
rthroughput = re.search(r'Block RThroughput:\s+([\d.]+)', report).group(1)
# The resource table: names, then the pressure per iteration under their indices.
names = dict(re.findall(r'^\[(\d+)\]\s+-\s+(\S+)', report, re.M))
lines = report.split('Resource pressure per iteration:')[1].strip().split('\n')
values = lines[1].split()
busiest = sorted(((float(v), names.get(str(i), str(i))) for i, v in enumerate(values) if v != '-'),
                 reverse=True)[:4]
print(f"{cpu}: {cycles / 200:.1f} cycles per iteration (block reciprocal throughput {rthroughput});"
      " busiest: " + ", ".join(f"{n} {v:.1f}" for v, n in busiest))
EOF
done
