#!/usr/bin/env bash
# The full check of the emulated VPS world (docs/testbed.md, "Round trips"
# and "CPU shares"); not in ctest (about a minute, and its numbers are
# timings). testbed_rtt and testbed_cpu are its reduced, timing-free forms.
#
#   tests/testbed/emulation_check.sh [--build DIR] [--keep] [--rtt 40ms] [--rate 100mbit]
#        [--window 64K] [--seconds 10]
#
# On 3 datacenters x 1 worker at RATE, --rtt RTT and --pair-rtt dc1:dc3=2*RTT:
#  1. ping, 30 each, 0.2 s apart: the median of w1->w2 and w2->w3 within 10 %
#     of RTT, of w1->w3 within 10 % of 2*RTT;
#  2. iperf3 w1->w2 (SECONDS s after 3 omitted for slow start, Linux's
#     autotuned window): at least 85 % of RATE;
#  3. iperf3 w1->w2 and w1->w3 with `-w WINDOW`: window-limited, between
#     0.4x and 2.5x WINDOW/round trip (Linux grants a socket twice the buffer
#     asked for and advertises a share of it, so the bound is generous), and
#     the w1->w3 rate below the w1->w2 one (twice the round trip);
#  4. cpu: a busy loop put in w1's group for 3 s uses at most 110 % of its
#     share at 50 % and 25 % (the cap; less when the machine is busy), and
#     during `episode w1 10 --at 0 --for 4` at most 110 % of 10 %.
# Prints each number; exits 1 if any check fails (after running them all).
#
# Needs root; exits 77 with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
# shellcheck source=tests/lib/testbed_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testbed_test.sh"
root_test_begin emulation_check "network namespaces, tc, nft, iptables, cgroups" "$@"
rtt=40ms rate=100mbit window=64K seconds=10
set -- "${REST[@]}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rtt) rtt="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    *) unknown_option "$1" ;;
  esac
done
require_tools tc nft jq ethtool ip awk ping iperf3 iptables-restore
require_built master/mr-master worker/mr-worker tools/mrctl tools/mr-delayline

T="$(mktemp -d /tmp/emulation-check.XXXXXX)"
TB="$T/tb"
testbed() { "$ROOT/deploy/testbed.sh" "$1" --dir "$TB" "${@:2}"; }
testbed_cleanup_on_exit "$T" "$TB"
failures=0
check() {  # check OK_EXPR WHAT: one line, PASS or FAIL
  if awk "BEGIN { exit !($1) }"; then say "ok   $2"; else say "FAIL $2"; failures=$((failures + 1)); fi
}
ms() { awk -v r="$1" 'BEGIN { n = r + 0; u = r; sub(/^[0-9.]+/, "", u); print n * ((u == "s") ? 1000 : (u == "us") ? 0.001 : 1) }'; }
bits() { awk -v r="$1" 'BEGIN { n = r + 0; u = r; sub(/^[0-9.]+/, "", u); print n * ((u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1) }'; }
rtt_ms="$(ms "$rtt")" rate_bits="$(bits "$rate")"
addr() { awk -v n="$1" '$1 == "host" && $2 == n { print $4 }' "$TB/netns.state"; }

testbed up --datacenters 3 --workers 1 --rate "$rate" --rtt "$rtt" --pair-rtt "dc1:dc3=$(awk -v m="$rtt_ms" 'BEGIN { print 2 * m }')ms" \
  --build "$BUILD" >"$T/up.log" 2>&1 || fail "testbed.sh up failed: $(tail -n 3 "$T/up.log")"
TESTBED_PREFIX="$(testbed_prefix "$TB")"
say "$(head -n 1 "$T/up.log"); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. ping
ping_median() {  # FROM TO -> "median min max n"
  testbed exec "$1" -- ping -n -c 30 -i 0.2 -W 3 "$(addr "$2")" | sed -n 's/.* time=\([0-9.]*\) ms$/\1/p' | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR], NR }' || true
}
for pair in w1:w2:1 w2:w3:1 w1:w3:2; do
  IFS=: read -r a b k <<<"$pair"
  read -r med lo hi n <<<"$(ping_median "$a" "$b")"
  want="$(awk -v m="$rtt_ms" -v k="$k" 'BEGIN { print m * k }')"
  check "$n >= 25 && $med >= 0.9 * $want && $med <= 1.1 * $want" \
    "ping $a->$b: median $med ms (min $lo, max $hi, $n of 30 replies), set $want ms"
done

# 2 and 3. iperf3, the server in the destination's namespace (ended by pid).
iperf() {  # FROM TO [iperf3 options...] -> received bit/s
  local from="$1" to="$2" spid out; shift 2
  testbed exec "$to" -- iperf3 -s -1 -B "$(addr "$to")" >"$T/iperf-s.log" 2>&1 &
  spid=$!
  sleep 0.5
  out="$(testbed exec "$from" -- iperf3 -c "$(addr "$to")" -t "$seconds" -O 3 -J "$@" 2>&1)" || true
  kill "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  jq -r '.end.sum_received.bits_per_second // 0' <<<"$out" 2>/dev/null || echo 0
}
full="$(iperf w1 w2)"
check "$full >= 0.85 * $rate_bits" "iperf3 w1->w2, autotuned window: $(awk -v b="$full" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s of $rate ($(awk -v b="$full" -v r="$rate_bits" 'BEGIN { printf "%.0f", 100 * b / r }') %)"
wbytes="$(awk -v w="$window" 'BEGIN { n = w + 0; u = w; sub(/^[0-9.]+/, "", u); print n * ((u == "K") ? 1024 : (u == "M") ? 1048576 : 1) }')"
small2="$(iperf w1 w2 -w "$window")"
small3="$(iperf w1 w3 -w "$window")"
for x in "w2:$small2:1" "w3:$small3:2"; do
  IFS=: read -r to got k <<<"$x"
  expect="$(awk -v w="$wbytes" -v m="$rtt_ms" -v k="$k" 'BEGIN { print 8 * w / (k * m / 1000) }')"
  check "$got >= 0.4 * $expect && $got <= 2.5 * $expect && $got < 0.85 * $rate_bits" \
    "iperf3 w1->$to -w $window: $(awk -v b="$got" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s; window/RTT = $(awk -v b="$expect" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s (ratio $(awk -v g="$got" -v e="$expect" 'BEGIN { printf "%.2f", g / e }'))"
done
check "$small3 < $small2" "with -w $window, w1->w3 (2x the round trip) is slower than w1->w2"

# 4. cpu: a busy loop in w1's group; its share of one core over 3 s.
cpu_of_burner() {  # -> percent of one core used over 3 s
  local g="$1" b t0 t1 hz
  hz="$(getconf CLK_TCK)"
  bash -c 'while :; do :; done' &
  b=$!
  echo "$b" >"$g/cgroup.procs"
  sleep 0.5
  t0="$(awk '{ print $14 + $15 }' "/proc/$b/stat")"
  sleep 3
  t1="$(awk '{ print $14 + $15 }' "/proc/$b/stat")"
  kill -KILL "$b"; wait "$b" 2>/dev/null || true
  awk -v d="$((t1 - t0))" -v hz="$hz" 'BEGIN { printf "%.1f\n", 100 * d / hz / 3 }'
}
testbed cpu w1 50% >/dev/null
G="$(awk '/^cpu shares in / { print $4 }' <(testbed status))"
for pct in 50 25; do
  testbed cpu w1 "$pct%" >/dev/null
  used="$(cpu_of_burner "$G/w1")"
  check "$used <= 1.1 * $pct" "a busy loop in w1's group at $pct %: used $used % of a core"
done
testbed cpu w1 off >/dev/null
used="$(cpu_of_burner "$G/w1")"
say "     the same busy loop with w1 off (no cap): $used % of a core (load average $(cut -d' ' -f1 /proc/loadavg))"
testbed episode w1 10 --at 0 --for 4 >/dev/null
sleep 0.2
used="$(cpu_of_burner "$G/w1")"
check "$used <= 11" "during episode w1 10 --at 0 --for 4: the busy loop used $used % of a core"

testbed down >/dev/null
(( failures == 0 )) || fail "$failures checks failed"
say "PASS"
