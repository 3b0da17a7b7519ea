#!/usr/bin/env bash
# Bad round trips, cpu shares and episodes are refused before anything is
# made (ctest testbed_args, docs/testbed.md): deploy/testbed.sh and
# deploy/local-cluster.sh, each case must exit non-zero with exactly one
# line on stderr naming the bad value, and leave no directory (so no
# namespace, cgroup or process: `up` checks everything before it makes its
# directory). Also: a machine without a cgroup v1 cpu controller
# (MR_CPU_CGROUP pointed at a plain directory) refuses `--cpu` the same way,
# and mr-delayline refuses bad arguments with one line and exit 2. About 3 s.
#
#   tests/testbed/args.sh [--build DIR]
#
# Needs root (testbed.sh refuses to run without it); exits 77 (ctest:
# skipped) with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
root_test_begin testbed_args "deploy/testbed.sh refuses to run without root" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
[[ -x "$BUILD/tools/mr-delayline" && -x "$BUILD/master/mr-master" ]] || fail "build first ($BUILD)"

T="$(mktemp -d /tmp/testbed-args.XXXXXX)"
trap 'rm -rf "$T"' EXIT
mkdir "$T/not-a-cgroup"
cases=0

# refused WANT CMD...: CMD fails, prints one line on stderr containing WANT,
# and $T/d (the --dir of every case) was not made.
refused() {
  local want="$1" rc=0
  shift
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  (( rc != 0 )) || fail "accepted: ${*:2}"
  [[ "$(wc -l <"$T/err")" -eq 1 ]] || fail "${*:2}: want one line on stderr, got $(wc -l <"$T/err"): $(cat "$T/err")"
  grep -qF -- "$want" "$T/err" || fail "${*:2}: the line does not name '$want': $(cat "$T/err")"
  [[ ! -e "$T/d" ]] || fail "${*:2}: made $T/d"
  cases=$((cases + 1))
}
tb() { "$ROOT/deploy/testbed.sh" "$1" --dir "$T/d" --build "$BUILD" "${@:2}"; }
lc() { MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" "$@" --dir "$T/d"; }

for bad in 40 2001ms 2.5s abc -5ms 40msx; do refused "'$bad'" tb up --rtt "$bad"; done
refused "needs a value" tb up --rtt
refused "dc1:dc3=80ms" tb up --pair-rtt dc1:dc3=80ms             # only 2 datacenters
refused "dc2:dc2=8ms" tb up --datacenters 3 --pair-rtt dc2:dc2=8ms
refused "dc1-dc2=8ms" tb up --pair-rtt dc1-dc2=8ms
refused "dc1:dc2=3000ms" tb up --pair-rtt dc1:dc2=3000ms
refused "dc1:dc2=80" tb up --pair-rtt dc1:dc2=80
refused "dc2:dc1=40ms" tb up --pair-rtt dc1:dc2=80ms --pair-rtt dc2:dc1=40ms
for bad in 0% 401% 25.5% abc ""; do refused "w1=$bad" tb up --cpu "w1=$bad"; done
refused "w5" tb up --cpu w5=50%                                  # 2 x 2 workers
refused "w5" tb up --datacenters 1 --workers 4 --cpu w5=50%
refused "x3=50%" tb up --cpu x3=50%
refused "w1 twice" tb up --cpu w1=50% --cpu w1=20%
refused "not-a-cgroup" env MR_CPU_CGROUP="$T/not-a-cgroup" "$ROOT/deploy/testbed.sh" up --dir "$T/d" --build "$BUILD" --cpu w1=50%
refused "'0'" tb cpu w1 0
refused "'500%'" tb cpu w1 500%
refused "'fast'" tb cpu w1 fast
refused "'x'" tb episode w1 x --at 1 --for 2
refused "--at '-1'" tb episode w1 10 --at -1 --for 2
refused "--at '90000'" tb episode w1 10 --at 90000 --for 2
refused "--for '0'" tb episode w1 10 --at 1 --for 0
refused "--for 'soon'" tb episode w1 10 --at 1 --for soon
refused "--at SECONDS" tb episode w1 10 --for 2
refused "no testbed" tb cpu w1 50%                               # nothing is up in $T/d

refused "w4" lc up --workers 3 --cpu w4=50%
refused "w1=0" lc up --workers 3 --cpu w1=0
refused "w1=abc" lc up --workers 3 --cpu w1=abc
refused "w2 twice" lc up --workers 3 --cpu w2=50 --cpu w2=40
refused "not-a-cgroup" env MR_CPU_CGROUP="$T/not-a-cgroup" MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" up --dir "$T/d" --cpu w1=50
refused "'401'" lc cpu w1 401
refused "'fast'" lc episode w1 fast --at 1 --for 2
refused "--for '0.0'" lc episode w1 10 --at 1 --for 0.0
refused "--at SECONDS" lc episode w1 10
refused "no running worker 'w1'" lc cpu w1 50%                  # no cluster in $T/d

dl="$BUILD/tools/mr-delayline"
refused "no QUEUE=DELAY" "$dl"
refused "'3=abc'" "$dl" 3=abc
refused "'70000=1ms'" "$dl" 70000=1ms
refused "'3=11s'" "$dl" 3=11s
refused "queue 3 given twice" "$dl" 3=1ms 3=2ms
refused "'--frob'" "$dl" --frob 3=1ms
refused "--maxlen '0'" "$dl" --maxlen 0 3=1ms
rc=0; "$dl" 3=1ms --maxlen 2>/dev/null || rc=$?
(( rc == 2 )) || fail "mr-delayline with a bad argument exits $rc, want 2"
grep -q "QUEUE=DELAY" <<<"$("$dl" --help)" || fail "mr-delayline --help does not describe QUEUE=DELAY"
say "PASS: $cases bad inputs refused with one line each, nothing made"
