#!/usr/bin/env bash
# deploy/local-cluster.sh down (and kill) return only once the processes
# they signalled have exited (gone, or a zombie): a script that brings a
# cluster down and at once reuses its directory, ports or data must not race
# the old daemons (issue 16, item 5). A SIGSTOPped master forces the KILL
# path (SIGTERM waits until SIGCONT), which once returned right after
# sending the KILL, before the kernel had taken the process down.
# Usage: local_cluster_down_test.sh BUILD_DIR
set -u
build=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/mr-down-test.XXXXXX")"
lc() { MR_BUILD_DIR="$build" "$root/deploy/local-cluster.sh" "$@" --dir "$dir/c"; }
cleanup() { lc down >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT
failed=0
# running PID: true while PID exists and is not a zombie.
running() { [[ -r /proc/$1/stat ]] && [[ "$(sed 's/^.*) //' /proc/$1/stat | cut -d' ' -f1)" != Z ]]; }

for round in 1; do
  lc up --workers 2 --datacenters 1 --heartbeat-ms 100 >/dev/null || { echo "FAIL: up"; exit 1; }
  pids=()
  for f in "$dir"/c/pids/*.pid; do pids+=("$(cat "$f")"); done
  (( ${#pids[@]} == 3 )) || { echo "FAIL: expected 3 pid files, got ${#pids[@]}"; exit 1; }
  # `kill w1` returns once w1 has exited.
  w1="$(cat "$dir/c/pids/w1.pid")"
  lc kill w1
  if running "$w1"; then echo "FAIL: round $round: kill w1 returned with pid $w1 running"; failed=1; fi
  lc start w1
  sleep 0.3
  # A stopped master (signalled last): TERM waits, then KILL; down returns
  # once all have exited, not as soon as it has sent the KILL.
  kill -STOP "$(cat "$dir/c/pids/master.pid")"
  pids=()
  for f in "$dir"/c/pids/*.pid; do pids+=("$(cat "$f")"); done
  lc down >/dev/null
  for p in "${pids[@]}"; do
    if running "$p"; then echo "FAIL: round $round: down returned with pid $p running"; failed=1; fi
  done
  ls "$dir"/c/pids/*.pid >/dev/null 2>&1 && { echo "FAIL: pid files left"; failed=1; }
done
(( failed == 0 )) && echo "PASS: down and kill return after their processes exit"
exit "$failed"
