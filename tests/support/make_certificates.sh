#!/usr/bin/env bash
# Certificates for TLS tests and benchmarks, made with apt's openssl (group test): ECDSA P-256, valid
# for two days, so nothing checked into the repository can expire.
#
#   make_certificates.sh authority PREFIX             a self-signed authority: PREFIX.pem, PREFIX.key
#   make_certificates.sh issue AUTHORITY PREFIX SANS  a certificate AUTHORITY (a prefix as above)
#                                                     signs for SANS (openssl's form, e.g.
#                                                     "DNS:localhost,IP:127.0.0.1"), usable by a
#                                                     server and a client: PREFIX.pem, PREFIX.key
# Without a serial file openssl gives each certificate a random serial number. Exits non-zero with
# openssl's message on failure.
set -euo pipefail
key() {  # key PREFIX ARGS...: a new P-256 key PREFIX.key and `openssl req` on it with ARGS
  local prefix=$1
  shift
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$prefix.key" "$@" \
    2>"$prefix.log" || { cat "$prefix.log" >&2; exit 1; }
}
case "${1:-}" in
  authority)
    [[ $# -eq 2 ]] || { echo "usage: $0 authority PREFIX" >&2; exit 2; }
    key "$2" -x509 -days 2 -out "$2.pem" -subj "/CN=worldgen test $(basename "$2")" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    ;;
  issue)
    [[ $# -eq 4 ]] || { echo "usage: $0 issue AUTHORITY PREFIX SANS" >&2; exit 2; }
    authority=$2 prefix=$3
    key "$prefix" -out "$prefix.csr" -subj "/CN=$(basename "$prefix")"
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=critical,CA:FALSE\n' \
      "$4" >"$prefix.ext"
    openssl x509 -req -in "$prefix.csr" -CA "$authority.pem" -CAkey "$authority.key" -days 2 \
      -extfile "$prefix.ext" -out "$prefix.pem" 2>"$prefix.log" || { cat "$prefix.log" >&2; exit 1; }
    ;;
  *)
    echo "usage: $0 authority PREFIX | issue AUTHORITY PREFIX SANS" >&2
    exit 2
    ;;
esac
