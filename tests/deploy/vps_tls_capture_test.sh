#!/usr/bin/env bash
# No plaintext between datacenters, on emulated VPSs (docs/tls.md, docs/deploy.md).
# Four network-namespace VPSs (deploy/lib/netns.sh): dc1: m1 (master), w1,
# c1 (client); dc2: w2, c2 (client). tcpdump watches the router's veth into
# dc1 - the inter-datacenter link: every packet between dc1 and dc2 crosses
# it - while c2 puts a file full of a marker string with replication 2 (one
# replica per datacenter, so the write crosses), and c1 reads it back with w1
# stopped (so the read crosses from w2). With tls = "off" the marker must be
# on the link (so the test can fail); with tls = "inter-dc" never, while
# the same file is read back intact.
#
# The daemons run from the build directory, started in the namespaces
# directly (no sshd, no package): the cluster file has a [[worker]] entry per
# worker, so every process knows every datacenter and inter-dc leaves links
# within a datacenter plaintext. Certificates: mrctl cert init / issue NAME
# --address ADDR, as site.yml makes them.
#
#   tests/deploy/vps_tls_capture_test.sh [--build DIR] [--keep]
# Needs root (namespaces, tcpdump); exits 77 (ctest: skipped) otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
root_test_begin vps_tls_capture "network namespaces, tcpdump" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
for tool in tcpdump ethtool; do
  command -v "$tool" >/dev/null || fail "$tool is missing (deploy/install-deps.sh installs it)"
done

source "$ROOT/deploy/lib/netns.sh"
source "$ROOT/tests/integration/tls_capture_lib.sh"
T="$(mktemp -d /tmp/vps-tls-capture.XXXXXX)"
cleanup() {
  local rc=$?
  set +e
  capture_stop >/dev/null 2>&1
  netns_teardown
  if [[ -n "$(ip netns list | awk '{ print $1 }' | grep "^$NETNS_PREFIX")" ]]; then
    echo "vps_tls_capture: namespaces left behind" >&2; rc=1
  fi
  if [[ $keep -eq 1 ]]; then echo "vps_tls_capture: kept $T" >&2; else rm -rf "$T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

netns_init "$T" mrtls
netns_fabric 2
for h in m1 w1 c1; do netns_add_host 1 "$h"; done
for h in w2 c2; do netns_add_host 2 "$h"; done
link_ns="$(netns_router_ns)" link_if="$(netns_router_iface 1)"
MRCTL="$BUILD/tools/mrctl"

MARKER="MR-VPS-TLS-MARKER-7d3e"
for i in $(seq 1 60000); do echo "$MARKER line $i"; done >"$T/marker.txt"   # ~2 MB
want="$(sha256sum <"$T/marker.txt" | cut -d' ' -f1)"

"$MRCTL" cert init --dir "$T/ca" >/dev/null
"$MRCTL" cert issue master --dir "$T/ca" --address "$(netns_addr m1)" >/dev/null
for w in w1 w2; do "$MRCTL" cert issue "$w" --dir "$T/ca" --address "$(netns_addr "$w")" >/dev/null; done
"$MRCTL" cert issue mrctl --dir "$T/ca" >/dev/null

write_config() {  # write_config MODE DIR
  local mode="$1" dir="$2"
  {
    echo "[cluster]"
    echo "name = \"vps-tls-$mode\""
    echo "secret = \"$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')\""
    echo "heartbeat_interval_ms = 300"
    echo "tls = \"$mode\""
    echo "inter_dc_zstd_level = 0"  # the marker must cross as it is (no compression between datacenters)
    if [[ "$mode" != off ]]; then
      echo "tls_ca = \"$T/ca/ca.crt\""
      echo "tls_cert = \"$T/ca/{name}.crt\""
      echo "tls_key = \"$T/ca/{name}.key\""
    fi
    echo "[master]"
    echo "address = \"$(netns_addr m1):7000\""
    echo "datacenter = \"dc1\""
    echo "data_dir = \"$dir/master\""
    echo "[dfs]"
    echo "block_size = 1048576"
    echo "replication = 2"
    echo "placement = \"spread\""
    for w in w1 w2; do
      echo "[[worker]]"
      echo "id = \"$w\""
      echo "address = \"$(netns_addr "$w"):7100\""
      echo "datacenter = \"dc$(netns_dc_of "$w")\""
      echo "data_dir = \"$dir/$w\""
    done
  } >"$dir/cluster.toml"
}

# Started with ip netns exec itself (it execs the daemon), so $! is the
# daemon's PID: a shell function run with & would be a subshell.
declare -A pid=()
start() {  # start NAME (in its namespace, from the build directory)
  local n="$1" dir="$2"
  if [[ "$n" == m1 ]]; then
    ip netns exec "$(netns_ns m1)" "$BUILD/master/mr-master" --config "$dir/cluster.toml" --log-file "$dir/m1.log" \
      >"$dir/m1.out" 2>&1 &
  else
    ip netns exec "$(netns_ns "$n")" "$BUILD/worker/mr-worker" --config "$dir/cluster.toml" --id "$n" \
      --log-file "$dir/$n.log" >"$dir/$n.out" 2>&1 &
  fi
  pid[$n]=$!
}
live_workers() {  # how many workers the master has live
  netns_exec c1 "$MRCTL" --config "$1/cluster.toml" cluster status --json 2>/dev/null |
    jq '[.workers[] | select(.live)] | length' 2>/dev/null || echo 0
}

failed=0
for mode in off inter-dc; do
  dir="$T/$mode"
  mkdir -p "$dir"
  write_config "$mode" "$dir"
  start m1 "$dir"; start w1 "$dir"; start w2 "$dir"
  for _ in $(seq 1 150); do [[ "$(live_workers "$dir")" == 2 ]] && break; sleep 0.2; done
  [[ "$(live_workers "$dir")" == 2 ]] ||
    fail "tls=$mode: the workers did not register: $(cat "$dir"/*.out | tail -n 5)"
  capture_start "$link_if" "tcp" "$T/$mode.pcap" "$link_ns"
  netns_exec c2 "$MRCTL" --config "$dir/cluster.toml" --datacenter dc2 dfs put --replication 2 \
    "$T/marker.txt" /marker.txt >/dev/null
  kill -TERM "${pid[w1]}"; wait "${pid[w1]}" 2>/dev/null || true
  got="$(netns_exec c1 "$MRCTL" --config "$dir/cluster.toml" --datacenter dc1 dfs cat /marker.txt | sha256sum | cut -d' ' -f1)"
  capture_stop || failed=1
  [[ "$got" == "$want" ]] || fail "tls=$mode: the file read back in dc1 differs"
  n="$(marker_count "$T/$mode.pcap" "$MARKER")"
  bytes="$(capture_bytes "$T/$mode.pcap")"
  say "tls = $mode: $bytes bytes captured on the router's dc1 link, marker seen $n times"
  # The read alone carries the whole file across: less than that captured
  # means the capture missed the traffic and proves nothing.
  (( bytes >= $(stat -c %s "$T/marker.txt") )) || { say "FAIL $mode: too little traffic on the link"; failed=1; }
  if [[ "$mode" == off ]] && (( n == 0 )); then say "FAIL off: the marker should be on the link"; failed=1; fi
  if [[ "$mode" != off ]] && (( n != 0 )); then say "FAIL $mode: plaintext between datacenters"; failed=1; fi
  for p in m1 w2; do kill -TERM "${pid[$p]}" 2>/dev/null; wait "${pid[$p]}" 2>/dev/null || true; done
done
(( failed == 0 )) || exit 1
say "PASS"
