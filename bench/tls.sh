#!/usr/bin/env bash
# TLS cost on the DFS: `dfs put` (replication 1) and `dfs cat` of one file
# between two datacenters, with tls = "all" against tls = "off", both in
# this one invocation. Each mode gets its own local cluster of 2 workers in 2
# datacenters on different loopback addresses (local-cluster.sh
# --dc-addresses; mrctl's datacenter is unknown, so under TLS every link it
# uses is encrypted). Runs alternate between the modes, so a noisy neighbour
# hits both alike.
#
#   bench/tls.sh [--size 256M] [--runs 3] [--block-size 64M]
#
# Prints a Markdown table of medians (MB/s) and ratios TLS / plain; also
# writes it to bench/out/tls.md. Target (issue 11): ratio ≥ 0.60 for both.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$BUILD/tools/mrctl"
size=256M runs=3 block_size=64M
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    *) echo "tls: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$MRCTL" ]] || { echo "tls: build first (ninja -C $BUILD)" >&2; exit 2; }
OUT="$ROOT/bench/out"; mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/mr-bench-tls-XXXXXX)"
cleanup() {
  for m in off all; do "$ROOT/deploy/local-cluster.sh" down --dir "$WORK/$m" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.0f", b / t / 1e6}'; }
bytes_of() { numfmt --from=iec "$1"; }

FILE="$WORK/input.bin"
head -c "$(bytes_of "$size")" /dev/urandom >"$FILE"
BYTES=$(stat -c %s "$FILE")
bs=$(bytes_of "$block_size")
for m in off all; do
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" up --workers 2 --datacenters 2 --dc-addresses \
    --tls "$m" --replication 1 --block-size "$bs" --dir "$WORK/$m" >/dev/null
done
declare -A put cat
for r in $(seq "$runs"); do
  for m in off all; do
    cfg="$WORK/$m/cluster.toml"
    t0=$(now); "$MRCTL" --config "$cfg" dfs put --replication 1 "$FILE" "/f$r"; t1=$(now)
    put[$m]+="$(mbps "$BYTES" "$(echo "$t1 - $t0" | bc -l)") "
    t0=$(now); "$MRCTL" --config "$cfg" dfs cat "/f$r" >/dev/null; t1=$(now)
    cat[$m]+="$(mbps "$BYTES" "$(echo "$t1 - $t0" | bc -l)") "
    "$MRCTL" --config "$cfg" dfs rm "/f$r" >/dev/null
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
{
  echo "| operation ($size, replication 1, 2 datacenters) | tls = off MB/s | tls = all MB/s | TLS / plain |"
  echo "|---|---|---|---|"
  for op in put cat; do
    declare -n runs_of="$op"
    off=$(tr ' ' '\n' <<<"${runs_of[off]}" | grep . | median)
    all=$(tr ' ' '\n' <<<"${runs_of[all]}" | grep . | median)
    echo "| dfs $op | $off | $all | $(ratio "$all" "$off") |"
    echo "runs $op: off ${runs_of[off]}; all ${runs_of[all]}" >&2
  done
  echo
  echo "medians of $runs runs; $(nproc) cores; load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg); AES-NI: $(grep -q -w aes /proc/cpuinfo && echo yes || echo no); $(openssl version 2>/dev/null || echo OpenSSL)"
} | tee "$OUT/tls.md"
