# shellcheck shell=bash
# Slow VPSs: a CPU cap per process with a cgroup v1 `cpu` group each, and
# noisy-neighbour episodes that lower a cap for a while (sourced by
# deploy/testbed.sh and deploy/local-cluster.sh; docs/testbed.md, "CPU shares").
#
#   cpushare_pct_ok PCT             # 1..400, "25%" or "25" (100 = one full core)
#   cpushare_secs_ok S              # 0..86400 seconds, decimals allowed
#   cpushare_mount                  # the cpu hierarchy's mount point, or one line + 1
#   cpushare_init STATE_DIR GROUP   # MOUNT/GROUP, recorded first; idempotent (keeps the recorded one)
#   cpushare_load STATE_DIR         # the recorded group, for a later command; 1 if none
#   cpushare_set NAME PCT|off       # GROUP/NAME made if needed, its cap, and NAME's base share
#   cpushare_join NAME PID          # PID, every thread, into GROUP/NAME
#   cpushare_procs NAME             # GROUP/NAME/cgroup.procs if NAME has a group, else nothing
#   cpushare_show                   # "NAME PCT|off cfs_quota_us cfs_period_us throttled_periods" per group
#   cpushare_episode NAME PCT AT FOR LOG   # background: PCT from now+AT for FOR s, then the base share
#   cpushare_episodes_stop [NAME]   # ends pending episodes (of NAME), by pid
#   cpushare_episodes_show          # "NAME PCT at+FOR pid" per pending episode
#   cpushare_teardown               # episodes, then every recorded group (children first); idempotent
#
# The cap. cpu.cfs_period_us = 100000 and cpu.cfs_quota_us = PCT x 1000: the
# group's threads together run at most PCT % of one core per 100 ms period,
# then wait for the next (a hard cap, not a weight; 200 = two cores). "off"
# writes quota -1: no cap, the group stays. A process's children (mr-task)
# inherit its group.
#
# State, in STATE_DIR: cgroups.objects (every group, written before it is
# made, so a failed run removes what it made), cpu/NAME.base (the share
# `up --cpu` or `cpu` set, which an episode restores), cpu/episodes/*.pid.
# An episode is deploy/lib/cpu-episode.sh run in the background; its command
# line names its pid file, so only that process is ever signalled.
#
# Only cgroup v1's cpu controller is supported (cgroup v2's cpu.max is not
# yet). $MR_CPU_CGROUP names the hierarchy instead of /proc/mounts (the
# tests point it at a directory that is none, to see the refusal).

CPUSHARE_STATE=""
CPUSHARE_GROUP=""
CPUSHARE_PERIOD_US=100000

cpushare_log() { echo "cpushare: $*" >&2; }

cpushare_pct_ok() { [[ "$1" =~ ^[0-9]{1,3}%?$ ]] && (( 10#${1%\%} >= 1 && 10#${1%\%} <= 400 )); }
cpushare_secs_ok() {
  [[ "$1" =~ ^[0-9]{1,5}(\.[0-9]{1,3})?$ ]] && awk -v s="$1" 'BEGIN { exit !(s <= 86400) }'
}

# cpushare_mount: where the v1 cpu controller is mounted (cpu alone or with
# cpuacct), checked to have cfs_quota_us. One line and status 1 if none.
cpushare_mount() {
  local m="${MR_CPU_CGROUP:-}"
  if [[ -z "$m" ]]; then
    m="$(awk '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == "cpu") { print $2; exit } }' /proc/mounts)"
  fi
  if [[ -z "$m" || ! -f "$m/cpu.cfs_quota_us" ]]; then
    cpushare_log "no cgroup v1 cpu controller${m:+ at $m} (cpu.cfs_quota_us); mount one: mkdir -p /sys/fs/cgroup/cpu && mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu (cgroup v2 cpu.max is not supported)"
    return 1
  fi
  echo "$m"
}

# cpushare_init STATE_DIR GROUP: the run's group, MOUNT/GROUP. Keeps the one
# already recorded in STATE_DIR (a later `cpu` command adds to it).
cpushare_init() {
  local mount
  CPUSHARE_STATE="$1"
  mkdir -p "$CPUSHARE_STATE/cpu/episodes"
  cpushare_load "$CPUSHARE_STATE" 2>/dev/null && return 0
  mount="$(cpushare_mount)" || return 1
  CPUSHARE_GROUP="$mount/$2"
  echo "cgroup $CPUSHARE_GROUP" >>"$CPUSHARE_STATE/cgroups.objects"
  mkdir -p "$CPUSHARE_GROUP"
}

cpushare_load() {
  CPUSHARE_STATE="$1"
  CPUSHARE_GROUP="$(awk '$1 == "cgroup" { print $2; exit }' "$1/cgroups.objects" 2>/dev/null)"
  [[ -n "$CPUSHARE_GROUP" && -d "$CPUSHARE_GROUP" ]] || { cpushare_log "no cpu group recorded in $1"; return 1; }
}

# _cpushare_cap NAME PCT|off: the cap alone (an episode's change).
_cpushare_cap() {
  local g="$CPUSHARE_GROUP/$1" q=-1
  [[ "$2" == off ]] || q=$(( 10#${2%\%} * CPUSHARE_PERIOD_US / 100 ))
  echo "$CPUSHARE_PERIOD_US" >"$g/cpu.cfs_period_us"
  echo "$q" >"$g/cpu.cfs_quota_us"
}

cpushare_set() {
  local g="$CPUSHARE_GROUP/$1"
  if [[ ! -d "$g" ]]; then
    echo "cgroup $g" >>"$CPUSHARE_STATE/cgroups.objects"
    mkdir "$g"
  fi
  _cpushare_cap "$1" "$2"
  echo "${2%\%}" >"$CPUSHARE_STATE/cpu/$1.base"
}

cpushare_join() { echo "$2" >"$CPUSHARE_GROUP/$1/cgroup.procs"; }

cpushare_procs() {
  [[ -n "$CPUSHARE_GROUP" && -f "$CPUSHARE_GROUP/$1/cgroup.procs" ]] && echo "$CPUSHARE_GROUP/$1/cgroup.procs"
  return 0
}

cpushare_show() {
  local g n q p t
  [[ -n "$CPUSHARE_GROUP" && -d "$CPUSHARE_GROUP" ]] || return 0
  for g in "$CPUSHARE_GROUP"/*/; do
    [[ -f "$g/cpu.cfs_quota_us" ]] || continue
    n="$(basename "$g")" q="$(cat "$g/cpu.cfs_quota_us")" p="$(cat "$g/cpu.cfs_period_us")"
    t="$(awk '$1 == "nr_throttled" { print $2 }' "$g/cpu.stat")"
    if (( q < 0 )); then echo "$n off $q $p $t"; else echo "$n $(( q * 100 / p ))% $q $p $t"; fi
  done | sort -V
}

# cpushare_episode NAME PCT AT FOR LOG: starts deploy/lib/cpu-episode.sh in
# the background (called by the scripts' `episode` command, which has made
# NAME's group). Prints its pid.
cpushare_episode() {
  local n="$1" pct="$2" at="$3" for="$4" log="$5" pidf
  pidf="$CPUSHARE_STATE/cpu/episodes/$n.$(date +%s%N).pid"
  bash "$(dirname "${BASH_SOURCE[0]}")/cpu-episode.sh" "$CPUSHARE_STATE" "$n" "${pct%\%}" "$at" "$for" "$pidf" \
    >>"$log" 2>&1 </dev/null &
  echo $! >"$pidf"
  echo $!
}

# _cpushare_episode_pid PIDFILE: its pid if that process still runs and
# names PIDFILE on its command line, else nothing.
_cpushare_episode_pid() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 0
  [[ "$pid" =~ ^[0-9]+$ ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$1" && echo "$pid"
  return 0
}

cpushare_episodes_stop() {
  local f pid glob
  glob="*.pid"
  [[ -n "${1:-}" ]] && glob="$1.*.pid"
  for f in "$CPUSHARE_STATE"/cpu/episodes/$glob; do
    [[ -e "$f" ]] || continue
    pid="$(_cpushare_episode_pid "$f")"
    if [[ -n "$pid" ]]; then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 1 50); do [[ -d "/proc/$pid" ]] || break; sleep 0.05; done
    fi
    rm -f "$f"
  done
  return 0
}

cpushare_episodes_show() {
  local f pid
  for f in "$CPUSHARE_STATE"/cpu/episodes/*.pid; do
    [[ -e "$f" ]] || continue
    pid="$(_cpushare_episode_pid "$f")"
    # cpu-episode.sh STATE NAME PCT AT FOR PIDFILE
    [[ -n "$pid" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" |
      awk -v p="$pid" '{ print $4, $5 "%", "at+" $6 "s", "for " $7 "s", "pid " p }'
  done
  return 0
}

# cpushare_teardown: ends the episodes, then removes every recorded group,
# children first. A group still holding a process (a daemon that would not
# die) is named and left. Needs only STATE_DIR's record; never fails.
cpushare_teardown() { ( set +e; _cpushare_teardown "$@" ); return 0; }
_cpushare_teardown() {
  local f="$1/cgroups.objects" g
  CPUSHARE_STATE="$1"
  cpushare_episodes_stop ""
  [[ -f "$f" ]] || return 0
  awk '$1 == "cgroup" { print $2 }' "$f" | tac | while read -r g; do
    [[ -d "$g" ]] || continue
    for _ in $(seq 1 40); do rmdir "$g" 2>/dev/null && break; sleep 0.05; done
    [[ -d "$g" ]] && cpushare_log "could not remove $g (still holds: $(tr '\n' ' ' <"$g/cgroup.procs"))"
  done
  : >"$f"
  rm -rf "$1/cpu"
}

# cpushare_specs_ok N wI=PCT...: each names one of the workers w1..wN that
# `up` will start, once, with a share of 1..400 %. Calls the sourcing
# script's die (one line, exit 2) if not.
cpushare_specs_ok() {
  local count="$1" c n v named=" "
  shift
  for c in "$@"; do
    [[ "$c" =~ ^(w[0-9]+)=(.*)$ ]] || die "bad --cpu '$c' (want wI=PCT, e.g. w3=25%)"
    n="${BASH_REMATCH[1]}" v="${BASH_REMATCH[2]}"
    (( 10#${n#w} >= 1 && 10#${n#w} <= count )) || die "--cpu '$c': no worker $n (have w1..w$count)"
    cpushare_pct_ok "$v" || die "--cpu '$c': bad share '$v' (want 1..400%, 100% = one core)"
    [[ "$named" == *" $n "* ]] && die "--cpu gives $n twice"
    named+="$n "
  done
}
