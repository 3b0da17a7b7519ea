#!/usr/bin/env bash
# Reads from other datacenters go to the one with the faster measured link
# (ctest testbed_link_rate, docs/dfs.md "Where reads come from"): builds 3
# datacenters x 1 worker with deploy/testbed.sh, dc2->dc1 at 200mbit and
# dc3->dc1 at 10mbit, the client in dc1. A 16 MiB file of 16 blocks of
# 1 MiB is put with replication 2, replica 1 pinned to dc2 (--datacenter)
# and w1 (dc1's only worker) decommissioned first, so hdfs placement puts
# replica 2 of every block in dc3: every block then has one replica in dc2,
# one in dc3 and none in dc1 (checked with dfs stat). The master lists the
# two in an order it rotates by block id; `dfs cat` from the client must
# learn within the run that dc2 is faster: of the kernel's client bytes
# into dc1, those from dc3 must be at most two blocks' share (the first
# block may be read from dc3 before anything is measured), the rest must
# come from dc2 (shares, since the blocks cross datacenters compressed,
# cluster.inter_dc_zstd_level, and a block's wire size is not known), and
# the bytes must equal the original's (sha256). Then `down` must leave no
# namespace of the run, also when the test fails (trap).
#
#   tests/testbed/link_rate.sh [--build DIR] [--keep]
#
# Needs root; exits 77 (ctest: skipped) with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
# shellcheck source=tests/lib/testbed_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testbed_test.sh"
root_test_begin testbed_link_rate "network namespaces, tc, nft" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
require_tools tc nft jq ethtool ip awk sha256sum
require_built master/mr-master worker/mr-worker tools/mrctl

started=$SECONDS
T="$(mktemp -d /tmp/testbed-link-rate.XXXXXX)"
TB="$T/tb"
testbed() { "$ROOT/deploy/testbed.sh" "$1" --dir "$TB" "${@:2}"; }
client() { testbed exec client -- mrctl "$@"; }

testbed_cleanup_on_exit "$T" "$TB"

block=1048576
blocks=16
testbed up --datacenters 3 --workers 1 --pair-rate dc2:dc1=200mbit --pair-rate dc3:dc1=10mbit \
  --block-size "$block" --replication 2 --scheduler fifo --build "$BUILD" >"$T/up.log" 2>&1 ||
  fail "testbed.sh up failed: $(tail -n 3 "$T/up.log")"
prefix="$(testbed_prefix "$TB")"
TESTBED_PREFIX=$prefix
say "$(head -n 1 "$T/up.log")"

# No new replica in dc1: w1 (its only worker) takes no new blocks.
client cluster decommission w1 >/dev/null || fail "cluster decommission w1 failed"
"$BUILD/tools/mrctl" gen text "$T/f.txt" --size $((blocks * block)) --seed 21 >/dev/null
client dfs put --replication 2 --datacenter dc2 "$T/f.txt" /data/f.txt >/dev/null ||
  fail "dfs put --datacenter dc2 from the client failed"
client dfs stat --json /data/f.txt >"$T/stat.json" || fail "dfs stat /data/f.txt failed"
n="$(jq '.blocks | length' "$T/stat.json")"
[[ "$n" -eq "$blocks" ]] || fail "/data/f.txt has $n blocks, want $blocks"
placed="$(jq '[.blocks[] | select((.datacenters | sort) == ["dc2", "dc3"])] | length' "$T/stat.json")"
[[ "$placed" -eq "$blocks" ]] ||
  fail "only $placed of $blocks blocks have exactly one replica in dc2 and one in dc3: $(jq -c '[.blocks[].datacenters]' "$T/stat.json")"
dc3_first="$(jq '[.blocks[] | select(.datacenters[0] == "dc3")] | length' "$T/stat.json")"
say "$blocks blocks, each with replicas in dc2 and dc3; the master lists dc3 first for $dc3_first"

testbed counters --reset >/dev/null
client dfs cat --stats /data/f.txt >"$T/f.out" 2>"$T/cat.err" || fail "dfs cat failed: $(tail -n 2 "$T/cat.err")"
testbed counters >"$T/counters.json"
grep '^mrctl: read stats: ' "$T/cat.err" | sed 's/^mrctl: /  /' || true
[[ "$(sha256sum <"$T/f.out" | cut -d' ' -f1)" == "$(sha256sum <"$T/f.txt" | cut -d' ' -f1)" ]] ||
  fail "dfs cat's bytes differ from the file put (sha256)"

pair() { jq --arg f "$1" --arg t "$2" '.pairs[] | select(.from == $f and .to == $t) | .client_bytes' "$T/counters.json"; }
from2="$(pair dc2 dc1)" from3="$(pair dc3 dc1)"
total=$((from2 + from3))
say "client bytes of the cat: dc2->dc1 $from2, dc3->dc1 $from3 (a block is $block B of payload, $((total / blocks)) B on the wire on average)"
# Blocks of one generated text compress alike; 10 % margin.
max3=$((2 * total * 11 / 10 / blocks))
min2=$(((blocks - 2) * total / blocks))
(( from3 <= max3 )) ||
  fail "dc3->dc1 (10mbit) carried $from3 B, more than two blocks' share ($max3 B of $total); dc2->dc1 (200mbit) $from2 B"
(( from2 >= min2 )) || fail "dc2->dc1 carried $from2 B, less than $((blocks - 2)) blocks' share ($min2 B of $total)"

testbed down >"$T/down.log" 2>&1 || fail "testbed.sh down failed: $(tail -n 2 "$T/down.log")"
left="$(namespaces_left "$prefix")"
[[ "$left" -eq 0 ]] || fail "$left namespaces named $prefix* left after down"
say "PASS in $((SECONDS - started)) s (down left no namespace $prefix*)"
