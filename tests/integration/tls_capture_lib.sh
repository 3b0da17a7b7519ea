# Packet capture helpers for the "no plaintext between datacenters" test
# (tls_capture_test.sh). Sourced; reusable over any interface and filter
# (a later test runs them on the link between two network namespaces).
#
#   capture_start IFACE FILTER OUT.pcap [NETNS]
#                      starts tcpdump on IFACE (inside network namespace NETNS
#                      when given), bounded: 300 s, 2M packets; returns when
#                      it listens
#   capture_stop       stops it by PID, waits for it, and fails when the
#                      kernel dropped packets (the capture would be incomplete)
#   marker_count OUT.pcap MARKER   how many times MARKER occurs in the capture
#   capture_bytes OUT.pcap         size of the capture file
# One capture at a time (CAPTURE_PID, CAPTURE_ERR). Needs root.

CAPTURE_PID="" CAPTURE_ERR=""

capture_start() {
  local iface="$1" filter="$2" out="$3" netns="${4:-}"
  command -v tcpdump >/dev/null || { echo "tcpdump is not installed (deploy/install-deps.sh)" >&2; return 1; }
  local run=()
  [[ -z "$netns" ]] || run=(ip netns exec "$netns")
  rm -f "$out" "$out.err"
  # -U: write each packet at once; -s 0: whole packets; -B: a 32 MiB kernel
  # buffer so that bulk transfers are not dropped; -Z root: keep writing
  # where only root may; -c and timeout bound it.
  "${run[@]}" timeout 300 tcpdump -i "$iface" -U -s 0 -B 32768 -Z root -c 2000000 -w "$out" \
    "$filter" 2>"$out.err" &
  CAPTURE_PID=$! CAPTURE_ERR="$out.err"
  local i
  for i in $(seq 1 200); do
    grep -q 'listening on' "$out.err" 2>/dev/null && return 0
    kill -0 "$CAPTURE_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "tcpdump did not start: $(cat "$out.err" 2>/dev/null)" >&2
  return 1
}

capture_stop() {
  [[ -n "$CAPTURE_PID" ]] || return 0
  sleep 0.5  # the last packets of the operation just finished
  kill -INT "$CAPTURE_PID" 2>/dev/null || true
  wait "$CAPTURE_PID" 2>/dev/null || true
  CAPTURE_PID=""
  local dropped
  dropped="$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$CAPTURE_ERR")"
  if [[ -n "$dropped" && "$dropped" != 0 ]]; then
    echo "tcpdump: $dropped packets dropped by the kernel ($CAPTURE_ERR)" >&2
    return 1
  fi
}

marker_count() { { grep -a -o -F -- "$2" "$1" || true; } | wc -l; }
capture_bytes() { stat -c %s "$1"; }
