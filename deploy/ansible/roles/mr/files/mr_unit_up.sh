#!/bin/sh
# Run by tasks/service.yml on the host of a unit it has just started: did the
# daemon come up? Waits at most SECONDS until the journal of the unit's
# current run (its InvocationID) has READY (ok), or the unit stopped running:
# then fails, on this host, with the daemon's own last error line. Still
# running without READY at the end is ok here (the wait step on the master
# decides).
#   mr_unit_up.sh UNIT READY SECONDS
unit=$1 ready=$2 seconds=$3
show() { systemctl show -p "$1" --value "$unit"; }
journal() { journalctl "_SYSTEMD_INVOCATION_ID=$(show InvocationID)" -o cat --no-pager "$@" 2>/dev/null; }
i=0
while [ "$i" -lt $((seconds * 5)) ]; do
  if [ "$(show SubState)" != running ]; then
    line=
    for _ in 1 2 3 4 5 6 7 8 9 10; do  # the journal may lag the exit a little
      line=$(journal -p err | tail -n 1)
      [ -n "$line" ] && break
      sleep 0.2
    done
    [ -n "$line" ] || line=$(journal | tail -n 1)
    echo "$unit exited (status $(show ExecMainStatus), $(show ActiveState)): $line" >&2
    exit 1
  fi
  if journal | grep -qF "$ready"; then
    echo "$unit: $ready"
    exit 0
  fi
  sleep 0.2
  i=$((i + 1))
done
echo "$unit running; no '$ready' in its journal after $seconds s"
