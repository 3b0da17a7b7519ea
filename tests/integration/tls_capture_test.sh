#!/usr/bin/env bash
# No plaintext between datacenters (docs/tls.md). A local cluster whose two
# datacenters listen on different loopback addresses (dc1 on 127.0.0.1,
# dc2 on 127.0.0.2, local-cluster.sh --dc-addresses); tcpdump captures the
# traffic between the two addresses while a file full of a marker string is
# put with replication 2 (the write pipeline crosses datacenters) and read
# back from dc2 alone (w1 stopped). With tls = "off" the marker must be on
# the link (so the test can fail); with tls = "inter-dc" never.
# Needs root (tcpdump; exits 77, a skip in ctest, without it) and
# MR_BUILD_DIR (default: <checkout>/build). KEEP=1 keeps the captures.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
source "$ROOT/tests/integration/tls_capture_lib.sh"
if (( EUID != 0 )); then echo "tls_capture: SKIP (tcpdump needs root)"; exit 77; fi
WORK="$(mktemp -d /tmp/mr-tls-capture.XXXXXX)"
MARKER="MR-TLS-CAPTURE-MARKER-5f1c"
cleanup() {
  capture_stop
  for mode in off inter-dc; do
    [[ -d "$WORK/$mode" ]] && "$ROOT/deploy/local-cluster.sh" down --dir "$WORK/$mode" >/dev/null 2>&1 || true
  done
  [[ -n "${KEEP:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT

for i in $(seq 1 100000); do echo "$MARKER line $i"; done >"$WORK/marker.txt"   # ~3.5 MB
want="$(sha256sum <"$WORK/marker.txt")"
fail=0
for mode in off inter-dc; do
  dir="$WORK/$mode"
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" up --workers 2 --datacenters 2 --dc-addresses \
    --tls "$mode" --replication 2 --block-size 1048576 --dir "$dir" \
    --cluster-option 'inter_dc_zstd_level = 0' >/dev/null  # the marker must cross as it is
  mrctl() { "$BUILD/tools/mrctl" --config "$dir/cluster.toml" "$@"; }
  capture_start lo "host 127.0.0.1 and host 127.0.0.2" "$WORK/$mode.pcap"
  mrctl dfs put "$WORK/marker.txt" /marker.txt
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" stop w1 --dir "$dir" >/dev/null
  got="$(mrctl dfs cat /marker.txt | sha256sum)"
  capture_stop || fail=1
  [[ "$got" == "$want" ]] || { echo "FAIL $mode: the file read back from dc2 differs"; fail=1; }
  n="$(marker_count "$WORK/$mode.pcap" "$MARKER")"
  bytes="$(capture_bytes "$WORK/$mode.pcap")"
  echo "tls = $mode: $bytes bytes captured between 127.0.0.1 and 127.0.0.2, marker seen $n times"
  # The read (from w2 in dc2 to mrctl on 127.0.0.1) carries the whole file
  # across, and so does the put's write or pipeline: at least one copy must
  # be in the capture, else a marker-free capture would prove nothing.
  if (( bytes < $(stat -c %s "$WORK/marker.txt") )); then
    echo "FAIL $mode: too little traffic captured between the datacenters"; fail=1
  fi
  if [[ "$mode" == off ]] && (( n == 0 )); then echo "FAIL off: the marker should be visible"; fail=1; fi
  if [[ "$mode" != off ]] && (( n != 0 )); then echo "FAIL $mode: plaintext between datacenters"; fail=1; fi
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" down --dir "$dir" >/dev/null
done
if (( fail )); then exit 1; fi
echo "tls_capture: PASS"
