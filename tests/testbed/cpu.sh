#!/usr/bin/env bash
# CPU shares and noisy-neighbour episodes (ctest testbed_cpu, docs/testbed.md
# "CPU shares"), on both deploy/testbed.sh and deploy/local-cluster.sh:
#
# testbed (2 datacenters x 1 worker, --cpu w1=25%, and --rtt 10ms so that
# `down` has a delay line to end):
#   - w1's group has cfs_quota_us 25000 of cfs_period_us 100000 and holds
#     w1's pid; a busy loop the test puts in it is throttled (nr_throttled
#     grows: the cap is enforced, not just written);
#   - `cpu w2 50%` makes w2's group at run time and moves w2 into it;
#   - `episode w2 10 --at 0 --for 60` caps w2 at 10 % (waited for), `status`
#     lists it, `cpu w2 60%` ends it (its process is gone) and sets 60 %;
#   - `episode w1 5 --at 0 --for 0.3` runs out and puts back w1's 25 %;
#   - `cpu w9 50%` (no such worker) fails with one line;
#   - a long episode is left pending; `down` must end it, the delay line and
#     the daemons, and remove every cgroup and namespace of the run.
# local cluster (2 workers, --cpu w2=30%): the same group, pid and quota;
# `cpu w1 off` at run time; a pending episode; `down` ends it and removes
# the groups.
#
# Every wait is for an event (a file's content, a process's end) with a
# generous deadline; nothing here measures time. Cleanup runs on failure too
# (traps). About 15 s.
#
#   tests/testbed/cpu.sh [--build DIR] [--keep]
#
# Needs root and a cgroup v1 cpu controller; exits 77 (ctest: skipped) with
# one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
# shellcheck source=tests/lib/testbed_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testbed_test.sh"
root_test_begin testbed_cpu "network namespaces, cgroups" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
# shellcheck source=deploy/lib/cpushare.sh
source "$ROOT/deploy/lib/cpushare.sh"
mount="$(cpushare_mount 2>&1)" || { say "SKIP: $mount"; exit 77; }
require_tools tc nft jq ethtool ip awk iptables-restore
require_built master/mr-master worker/mr-worker tools/mrctl tools/mr-delayline

started=$SECONDS
T="$(mktemp -d /tmp/testbed-cpu.XXXXXX)"
TB="$T/tb" LC="$T/lc"
testbed() { "$ROOT/deploy/testbed.sh" "$1" --dir "$TB" "${@:2}"; }
lc() { MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" "$@" --dir "$LC"; }
burner=""
# The testbed's trap runs `down`; this one first ends the busy loop and the
# local cluster, then fails the test if a cgroup of either is left.
cleanup() {
  local rc=$? g
  set +e
  [[ -n "$burner" ]] && kill -KILL "$burner" 2>/dev/null
  lc down >/dev/null 2>&1
  "$ROOT/deploy/testbed.sh" down --dir "$TB" >/dev/null 2>&1
  for g in "${cgroups_made[@]}"; do [[ -d "$g" ]] && { echo "testbed_cpu: cgroup $g left behind" >&2; rc=1; }; done
  (exit "$rc")
  _testbed_cleanup  # down again (idempotent), namespaces checked, $T removed; exits with rc
}
cgroups_made=()
testbed_cleanup_on_exit "$T" "$TB"
trap cleanup EXIT

# wait_for FILE WANT: until FILE holds WANT (10 s at most).
wait_for() {
  for _ in $(seq 1 200); do [[ "$(cat "$1" 2>/dev/null)" == "$2" ]] && return 0; sleep 0.05; done
  fail "$1 is '$(cat "$1" 2>/dev/null)', want '$2' (waited 10 s)"
}
# gone PID: exited within 5 s (no process, or a zombie: nobody here may reap it soon).
gone() {
  for _ in $(seq 1 100); do
    [[ ! -r "/proc/$1/stat" || "$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" == Z ]] && return 0
    sleep 0.05
  done
  return 1
}
episode_pid() { sed -n 's/.*(episode pid \([0-9]*\))$/\1/p' <<<"$1"; }

# --- an up that fails half way (the master refuses its scheduler) ----------------
# after the delay line and the cpu groups are made: all must go.
if testbed up --datacenters 2 --workers 1 --cpu w1=50% --rtt 10ms --scheduler no-such --build "$BUILD" \
     >"$T/fail.log" 2>&1; then
  fail "up with an unknown scheduler succeeded"
fi
grep -q "up failed; tearing down" "$T/fail.log" || fail "the failed up did not tear down: $(tail -n 2 "$T/fail.log")"
grep -q "^mr-delayline: queue .* packets delayed" "$TB/logs/delayline.log" ||
  fail "the failed up did not end the delay line (TERM): $(cat "$TB/logs/delayline.log")"
[[ -s "$TB/cgroups.objects" || -s "$TB/netns.objects" ]] && fail "the failed up left records: $(cat "$TB/cgroups.objects" "$TB/netns.objects")"
grep -q "could not" "$T/fail.log" && fail "the failed up's teardown: $(grep "could not" "$T/fail.log")"
say "a failed up (unknown scheduler) ended the delay line, removed its cgroups and namespaces"

# --- testbed -----------------------------------------------------------------
testbed up --datacenters 2 --workers 1 --cpu w1=25% --rtt 10ms --build "$BUILD" >"$T/up.log" 2>&1 ||
  fail "testbed.sh up failed: $(tail -n 3 "$T/up.log")"
TESTBED_PREFIX="$(testbed_prefix "$TB")"
G="$mount/${TESTBED_PREFIX%-}"
cgroups_made+=("$G")
say "$(head -n 1 "$T/up.log"); cpu groups in $G"
w1="$(cat "$TB/pids/w1.pid")" w2="$(cat "$TB/pids/w2.pid")"
[[ "$(cat "$G/w1/cpu.cfs_quota_us")/$(cat "$G/w1/cpu.cfs_period_us")" == 25000/100000 ]] ||
  fail "w1's quota/period is $(cat "$G/w1/cpu.cfs_quota_us")/$(cat "$G/w1/cpu.cfs_period_us"), want 25000/100000"
grep -qx "$w1" "$G/w1/cgroup.procs" || fail "w1 (pid $w1) is not in $G/w1"
[[ -d "$G/w2" ]] && fail "w2 has a group without --cpu"

# The cap is enforced: a busy loop in w1's group is throttled.
bash -c 'while :; do :; done' &
burner=$!
echo "$burner" >"$G/w1/cgroup.procs"
before="$(awk '$1 == "nr_throttled" { print $2 }' "$G/w1/cpu.stat")"
for _ in $(seq 1 100); do
  (( $(awk '$1 == "nr_throttled" { print $2 }' "$G/w1/cpu.stat") > before + 2 )) && break
  sleep 0.05
done
after="$(awk '$1 == "nr_throttled" { print $2 }' "$G/w1/cpu.stat")"
kill -KILL "$burner"; wait "$burner" 2>/dev/null || true; burner=""
(( after > before + 2 )) || fail "a busy loop in w1's 25% group was throttled in $((after - before)) periods in 5 s"
say "w1 at 25%: quota 25000/100000, pid $w1 in its group, a busy loop there throttled $((after - before)) periods"

testbed cpu w2 50% >/dev/null || fail "cpu w2 50% failed"
if [[ "$(cat "$G/w2/cpu.cfs_quota_us")" != 50000 ]] || ! grep -qx "$w2" "$G/w2/cgroup.procs"; then
  fail "after cpu w2 50%: quota $(cat "$G/w2/cpu.cfs_quota_us" 2>/dev/null), procs $(tr '\n' ' ' <"$G/w2/cgroup.procs" 2>/dev/null)"
fi
out="$(testbed episode w2 10 --at 0 --for 60)" || fail "episode w2 failed"
ep="$(episode_pid "$out")"
wait_for "$G/w2/cpu.cfs_quota_us" 10000
status="$(testbed status)"
grep -qE "^  w2 10% .*pid $ep$" <<<"$status" || fail "status does not list w2's episode (pid $ep)"
testbed cpu w2 60% >/dev/null || fail "cpu w2 60% failed"
gone "$ep" || fail "cpu w2 60% did not end w2's episode (pid $ep)"
[[ "$(cat "$G/w2/cpu.cfs_quota_us")" == 60000 ]] || fail "after cpu w2 60%: quota $(cat "$G/w2/cpu.cfs_quota_us")"
say "w2: cpu 50% at run time (group made, pid moved), episode at 10% seen, cpu 60% ended it"

out="$(testbed episode w1 5 --at 0 --for 0.3)" || fail "episode w1 failed"
ep="$(episode_pid "$out")"
gone "$ep" || fail "a 0.3 s episode of w1 (pid $ep) still runs after 5 s"
grep -q "w1 capped at 5%" "$TB/logs/episodes.log" || fail "the episode log does not say w1 was capped at 5%"
[[ "$(cat "$G/w1/cpu.cfs_quota_us")" == 25000 ]] || fail "after w1's episode its quota is $(cat "$G/w1/cpu.cfs_quota_us"), want 25000 back"
say "w1: a 0.3 s episode at 5% ran out and put back 25%"

if testbed cpu w9 50% 2>"$T/err"; then fail "cpu w9 (no such worker) succeeded"; fi
if [[ "$(wc -l <"$T/err")" -ne 1 ]] || ! grep -q "w9" "$T/err"; then fail "cpu w9: want one line naming w9, got: $(cat "$T/err")"; fi

out="$(testbed episode w1 10 --at 30 --for 30)" || fail "episode w1 failed"
ep="$(episode_pid "$out")" dl="$(cat "$TB/pids/delayline.pid")"
testbed down >"$T/down.log" 2>&1 || fail "testbed.sh down failed: $(tail -n 2 "$T/down.log")"
gone "$ep" || fail "down left the pending episode (pid $ep) running"
gone "$dl" || fail "down left the delay line (pid $dl) running"
gone "$w1" || fail "down left w1 (pid $w1) running"
[[ -d "$G" ]] && fail "down left the cgroup $G ($(ls "$G"))"
left="$(namespaces_left "$TESTBED_PREFIX")"
[[ "$left" -eq 0 ]] || fail "$left namespaces named $TESTBED_PREFIX* left after down"
say "testbed down: episode, delay line, daemons ended; $G and the namespaces removed"

# --- local cluster -------------------------------------------------------------
lc up --workers 2 --datacenters 1 --cpu w2=30% >"$T/lc-up.log" 2>&1 || fail "local-cluster.sh up failed: $(tail -n 3 "$T/lc-up.log")"
L="$(sed -n 's/^cpu shares: .* (cgroups in \(.*\))$/\1/p' "$T/lc-up.log")"
[[ -n "$L" && -d "$L" ]] || fail "local-cluster.sh up does not name its cgroup: $(cat "$T/lc-up.log")"
cgroups_made+=("$L")
[[ "$(cat "$L/w2/cpu.cfs_quota_us")" == 30000 ]] || fail "local w2's quota is $(cat "$L/w2/cpu.cfs_quota_us"), want 30000"
grep -qx "$(cat "$LC/pids/w2.pid")" "$L/w2/cgroup.procs" || fail "local w2 is not in $L/w2"
lc cpu w1 off >/dev/null || fail "local cpu w1 off failed"
[[ "$(cat "$L/w1/cpu.cfs_quota_us")" == -1 ]] || fail "local w1's quota after off is $(cat "$L/w1/cpu.cfs_quota_us")"
out="$(lc episode w2 20 --at 0 --for 60)" || fail "local episode w2 failed"
ep="$(episode_pid "$out")"
wait_for "$L/w2/cpu.cfs_quota_us" 20000
lc down >/dev/null 2>&1 || fail "local-cluster.sh down failed"
gone "$ep" || fail "local down left the episode (pid $ep) running"
[[ -d "$L" ]] && fail "local down left the cgroup $L"
say "local cluster: w2 at 30% in $L, cpu w1 off, episode at 20% seen, down removed all"
say "PASS in $((SECONDS - started)) s"
