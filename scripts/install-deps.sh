#!/usr/bin/env bash
# Installs the Debian packages of the given groups from apt-packages.txt (the project's one package list).
# Usage: scripts/install-deps.sh GROUP [GROUP...]      (groups: build test runtime docker fuzz plot profile reference aarch64)
#        scripts/install-deps.sh --print GROUP...       (print the package names, install nothing;
#                                                         also group aarch64-sysroot, never installed)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
print_only=0
if [[ "${1:-}" == "--print" ]]; then print_only=1; shift; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [--print] GROUP..." >&2; exit 2; }
pkgs=()
declare -A provides=()  # package -> a command that, already on PATH, makes installing it moot
for group in "$@"; do
  if [[ $group == aarch64-sysroot && $print_only -eq 0 ]]; then
    # Installing them would remove the x86-64 prometheus-cpp and civetweb the build needs.
    echo "install-deps: group aarch64-sysroot is unpacked by scripts/aarch64-server.sh, never installed" >&2
    exit 2
  fi
  mapfile -t found < <(awk -v g="$group" '$1 == g { print $2 }' "$here/apt-packages.txt")
  [[ ${#found[@]} -gt 0 ]] || { echo "install-deps: unknown group '$group'" >&2; exit 2; }
  pkgs+=("${found[@]}")
  while read -r pkg cmd; do provides[$pkg]=$cmd; done < <(
    awk -v g="$group" '$1 == g && NF >= 3 && $3 !~ /^#/ { print $2, $3 }' "$here/apt-packages.txt")
done
if [[ $print_only -eq 1 ]]; then printf '%s\n' "${pkgs[@]}" | sort -u; exit 0; fi
missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
  # The same tool installed another way (e.g. Node.js from NodeSource, kubectl from Google's
  # repository) would conflict with Debian's package: use it.
  [[ -n "${provides[$p]:-}" ]] && command -v "${provides[$p]}" >/dev/null && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then echo "install-deps: all ${#pkgs[@]} packages present"; exit 0; fi
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
# A package of another architecture (libabsl-dev:arm64) needs that architecture added to dpkg first.
for arch in $(printf '%s\n' "${missing[@]}" | awk -F: 'NF == 2 { print $2 }' | sort -u); do
  [[ $arch == "$(dpkg --print-architecture)" ]] || dpkg --print-foreign-architectures |
    grep -qx "$arch" || $SUDO dpkg --add-architecture "$arch"
done
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
