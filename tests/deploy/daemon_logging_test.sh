#!/usr/bin/env bash
# A real mr-master's logging as a packaged daemon needs it:
#  1. logrotate: the log file is moved away, SIGHUP, and the daemon writes on
#     in a new file at the old path (before: SIGHUP killed it);
#  2. systemd: with $JOURNAL_STREAM naming its stderr, every line goes to
#     stderr with a "<N>" syslog level prefix and no timestamp, and no log
#     file is written.
# Usage: daemon_logging_test.sh MR_MASTER
set -u
master_bin=$1
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"
scratch_dir daemon-logging

# Waits (at most 10 s) until file $1 contains $2.
wait_for() {
  for _ in $(seq 1 100); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Starts mr-master on a free loopback port with extra env $@; sets $pid.
start_master() {
  local data=$1
  shift
  for _ in $(seq 1 5); do
    local port=$((20000 + RANDOM % 12000))
    cat >"$tmp/cluster.toml" <<TOML
[master]
address = "127.0.0.1:$port"
data_dir = "$data"
TOML
    env "$@" "$master_bin" --config "$tmp/cluster.toml" ${LOG_FILE:+--log-file "$LOG_FILE"} \
      2>"$tmp/stderr" &
    pid=$!
    for _ in $(seq 1 100); do
      grep -q "listening on" "$tmp/stderr" "${LOG_FILE:-/dev/null}" 2>/dev/null && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
  done
  echo "FAIL: mr-master did not start: $(cat "$tmp/stderr")"
  exit 1
}

stop_master() {
  kill -TERM "$pid"
  wait "$pid"
  local rc=$?
  pid=
  return $rc
}

# 1. SIGHUP after logrotate moved the file.
LOG_FILE=$tmp/logs/master.log start_master "$tmp/data1"
mv "$tmp/logs/master.log" "$tmp/logs/master.log.1"
kill -HUP "$pid"
if wait_for "$tmp/logs/master.log" "SIGHUP: log file reopened"; then
  echo "ok   SIGHUP: a new master.log, with the reopen line"
else
  fail "no new master.log after SIGHUP (master alive: $(kill -0 "$pid" 2>/dev/null && echo yes || echo no))"
fi
grep -q "listening on" "$tmp/logs/master.log.1" || fail "the moved file lost its lines"
grep -q "SIGHUP" "$tmp/logs/master.log.1" && fail "the moved file got lines after SIGHUP"
if [[ -n $pid ]] && stop_master; then
  grep -q "stopped" "$tmp/logs/master.log" && echo "ok   later lines, up to 'stopped', in the new file" ||
    fail "'stopped' is not in the new master.log"
else
  fail "mr-master did not survive SIGHUP or did not stop cleanly"
fi
[[ $(stat -c %a "$tmp/logs/master.log") == 600 ]] || fail "the new master.log is not 0600"

# 2. Under systemd: JOURNAL_STREAM names stderr (device:inode).
: >"$tmp/stderr"
journal="JOURNAL_STREAM=$(stat -c %d:%i "$tmp/stderr")"
LOG_FILE='' start_master "$tmp/data2" "$journal"
stop_master || fail "mr-master did not stop cleanly under JOURNAL_STREAM"
if grep -q "^<6>\[master\] master '.*' listening on" "$tmp/stderr"; then
  echo "ok   JOURNAL_STREAM: '<6>[master] ...' lines on stderr"
else
  fail "no '<6>[master] ... listening' line on stderr: $(head -3 "$tmp/stderr")"
fi
grep -v '^<[0-7]>' "$tmp/stderr" | grep -q . && fail "stderr has lines without a <N> prefix"
grep -qE '^<[0-7]>[0-9]{4}-' "$tmp/stderr" && fail "journal lines carry a timestamp"
[[ -e $tmp/data2/master.log ]] && fail "a log file was written under JOURNAL_STREAM"

finish
