#!/usr/bin/env bash
# Round trips between datacenters (ctest testbed_rtt, docs/testbed.md "Round
# trips"): deploy/testbed.sh up with 3 datacenters x 1 worker, --rtt 40ms and
# --pair-rtt dc1:dc3=80ms. The median of 12 pings (ICMP, 0.2 s apart) must
# be within 10 % of the setting: w1->w2 and w2->w3 40 ms, w1->w3 80 ms; inside
# dc1 (client->w1) no delay is added (median under 4 ms, a tenth of the
# smallest setting). `status` must show the round trips and the delay line
# running. Then the delay line is killed (SIGKILL, by its pid): traffic must
# still flow (queue bypass), undelayed, and `status` must say the delay line
# is not running. `down` must leave no namespace of the run and no process of
# the delay line, also when the test fails (trap). About 10 s.
#
#   tests/testbed/rtt.sh [--build DIR] [--keep]
#
# Needs root; exits 77 (ctest: skipped) with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
# shellcheck source=tests/lib/testbed_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testbed_test.sh"
root_test_begin testbed_rtt "network namespaces, tc, nft, iptables, nfnetlink_queue" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
require_tools tc nft jq ethtool ip awk ping iptables-restore
require_built master/mr-master worker/mr-worker tools/mrctl tools/mr-delayline

started=$SECONDS
T="$(mktemp -d /tmp/testbed-rtt.XXXXXX)"
TB="$T/tb"
testbed() { "$ROOT/deploy/testbed.sh" "$1" --dir "$TB" "${@:2}"; }
testbed_cleanup_on_exit "$T" "$TB"

testbed up --datacenters 3 --workers 1 --rate 100mbit --rtt 40ms --pair-rtt dc1:dc3=80ms \
  --block-size 1048576 --build "$BUILD" >"$T/up.log" 2>&1 || fail "testbed.sh up failed: $(tail -n 3 "$T/up.log")"
TESTBED_PREFIX="$(testbed_prefix "$TB")"
say "$(head -n 1 "$T/up.log")"
delayline="$(cat "$TB/pids/delayline.pid")"

# pings FROM TO COUNT OUT: COUNT pings 0.2 s apart, the round trips in ms, one a line.
pings() {
  testbed exec "$1" -- ping -n -c "$3" -i 0.2 -W 2 "$(awk -v n="$2" '$1 == "host" && $2 == n { print $4 }' "$TB/netns.state")" |
    sed -n 's/.* time=\([0-9.]*\) ms$/\1/p' >"$4" || true
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "none"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# within FILE WANT_MS: the median within 10 % of WANT_MS (and at least 10 replies).
within() {
  local m n
  m="$(median "$1")" n="$(wc -l <"$1")"
  (( n >= 10 )) || fail "$(basename "$1"): $n of 12 pings answered"
  awk -v m="$m" -v w="$2" 'BEGIN { exit !(m >= 0.9 * w && m <= 1.1 * w) }' ||
    fail "$(basename "$1"): median round trip $m ms, want $2 ms +-10 % (all: $(tr '\n' ' ' <"$1"))"
  say "$(basename "$1"): median $m ms of $n (set $2 ms; min $(sort -g "$1" | head -n 1), max $(sort -g "$1" | tail -n 1))"
}

# The three series at once (the delay line serves them together).
pings w1 w2 12 "$T/w1-w2" &
pings w1 w3 12 "$T/w1-w3" &
pings w2 w3 12 "$T/w2-w3" &
pings client w1 12 "$T/client-w1" &
wait
within "$T/w1-w2" 40
within "$T/w1-w3" 80
within "$T/w2-w3" 40
m="$(median "$T/client-w1")"
awk -v m="$m" 'BEGIN { exit !(m != "none" && m < 4) }' || fail "inside dc1 (client->w1) the median round trip is $m ms, want < 4 ms (no delay)"
say "client-w1 (inside dc1): median $m ms"

testbed status >"$T/status.txt" || fail "testbed.sh status failed"
grep -q "^delay line: pid $delayline running" "$T/status.txt" || fail "status does not show the delay line running: $(grep '^delay line' "$T/status.txt")"
grep -qE '^  dc1->dc3 80ms 40ms ' "$T/status.txt" || fail "status does not show dc1->dc3 at 80ms: $(grep -E '^  dc1->dc3' "$T/status.txt")"
grep -qE '^  dc2->dc1 40ms 20ms ' "$T/status.txt" || fail "status does not show dc2->dc1 at 40ms: $(grep -E '^  dc2->dc1' "$T/status.txt")"

# A dead delay line: packets bypass the queue (no black hole, no delay).
# gone PID: exited (no process, or a zombie: nobody here may reap it soon).
gone() { [[ ! -r "/proc/$1/stat" || "$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" == Z ]]; }
kill -KILL "$delayline"
for _ in $(seq 1 50); do gone "$delayline" && break; sleep 0.1; done
pings w1 w2 3 "$T/bypass"
[[ "$(wc -l <"$T/bypass")" -ge 2 ]] || fail "with the delay line killed, w1->w2 answered $(wc -l <"$T/bypass") of 3 pings (black hole?)"
m="$(median "$T/bypass")"
awk -v m="$m" 'BEGIN { exit !(m < 4) }' || fail "with the delay line killed, w1->w2 took $m ms (want undelayed)"
status="$(testbed status)"
grep -q "^delay line: pid $delayline NOT running" <<<"$status" || fail "status does not say the killed delay line is not running"
say "delay line killed: w1->w2 passes undelayed (median $m ms), status says NOT running"

testbed down >"$T/down.log" 2>&1 || fail "testbed.sh down failed: $(tail -n 2 "$T/down.log")"
left="$(namespaces_left "$TESTBED_PREFIX")"
[[ "$left" -eq 0 ]] || fail "$left namespaces named $TESTBED_PREFIX* left after down"
say "PASS in $((SECONDS - started)) s (down left no namespace $TESTBED_PREFIX*)"
