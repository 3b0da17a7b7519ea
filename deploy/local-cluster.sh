#!/usr/bin/env bash
# A local cluster on 127.0.0.1: one mr-master and N mr-workers with
# datacenter (and optionally rack) labels. See docs/dfs.md and docs/development.md.
#
#   deploy/local-cluster.sh up --workers N --datacenters K [--racks R]
#        [--scheduler NAME] [--scheduler-seed N] [--block-size BYTES] [--replication N]
#        [--placement POLICY] [--heartbeat-ms MS] [--dfs-option 'KEY = VALUE']... [--join] [--dir DIR]
#        [--tls off|inter-dc|all] [--dc-addresses] [--no-http] [--master-option 'KEY = VALUE']...
#        [--cluster-option 'KEY = VALUE']... [--jobs-option 'KEY = VALUE']... [--cpu wI=PCT]...
#        [--speculation NAME] [--speculation-param 'KEY = VALUE']...
#      --speculation: the speculator ([speculation] name: none, hadoop, late;
#        `mrctl schedulers` lists them; default late); --speculation-param one
#        line of [speculation.params]
#      --tls: a cluster CA and a certificate per process in DIR/tls (mrctl cert);
#      --dc-addresses: datacenter k listens on 127.0.0.k (the master on 127.0.0.1, in dc1)
#      the master's status pages and every worker's /metrics are on a free loopback port
#        each (master.http_address, worker http_address; docs/status-page.md); `up` prints
#        the status page's address. --no-http: none. (--http, the old opt-in, is accepted.)
#      --cpu wI=PCT: worker wI capped at PCT % of one core (1..400; repeatable), a
#        cgroup v1 cpu group per worker, removed by down (docs/testbed.md, "CPU shares")
#   deploy/local-cluster.sh add-worker NAME --datacenter DC [--rack R] [--worker-flag FLAG]... [--dir DIR]
#   deploy/local-cluster.sh down [--dir DIR]
#   deploy/local-cluster.sh kill|stop|start NAME [--dir DIR]   NAME = master | w1 | w2 ...
#   deploy/local-cluster.sh freeze|thaw NAME [--dir DIR]   SIGSTOP / SIGCONT (a hung process)
#   deploy/local-cluster.sh status [--dir DIR]
#   deploy/local-cluster.sh cpu NAME PCT|off [--dir DIR]   a running worker's cpu share, now
#        (1..400 %, or off; ends its pending episodes)
#   deploy/local-cluster.sh episode NAME PCT --at SECONDS --for SECONDS [--dir DIR]
#        a noisy neighbour: NAME capped at PCT from now+AT for FOR seconds, then its
#        share restored; runs in the background, ended by down
#
# --join writes no [[worker]] entries: the workers start with their identity
# on the command line (--id --datacenter [--rack] --advertise --data-dir) and
# join, as add-worker starts one more into a running cluster (which must have
# no [[worker]] entries, or one for NAME). add-worker waits until the worker
# is live, or fails with the line its process printed.
# State lives in DIR (default: <checkout>/.mr, or $MR_CLUSTER_DIR), private
# to the user (umask 077): cluster.toml (with a fresh random secret), data/,
# logs/ and pids/. `mrctl` run anywhere in the checkout finds DIR/cluster.toml
# when DIR is the default. `down` and `kill` signal only the PIDs this script
# recorded.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# Everything the cluster writes (cluster file, data, logs) is private to the
# user: the data is readable without the secret otherwise (docs/dfs.md).
umask 077

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/cpushare.sh
source "$ROOT/deploy/lib/cpushare.sh"
# shellcheck source=lib/speculation.sh
source "$ROOT/deploy/lib/speculation.sh"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
DIR="${MR_CLUSTER_DIR:-$ROOT/.mr}"

die() { echo "local-cluster: $*" >&2; exit 2; }

# The usage text is the comment at the top of this file.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
cmd="${1:-}"
[[ "$cmd" == -h || "$cmd" == --help || "$cmd" == help ]] && { usage; exit 0; }
[[ -n "$cmd" ]] || { usage >&2; exit 2; }
shift
name="" share=""
if [[ "$cmd" == kill || "$cmd" == stop || "$cmd" == start || "$cmd" == add-worker || "$cmd" == cpu ||
      "$cmd" == episode || "$cmd" == freeze || "$cmd" == thaw ]]; then
  name="${1:-}"; [[ -n "$name" && "$name" != -* ]] || die "$cmd needs a process name (master, w1, ...)"; shift
fi
if [[ "$cmd" == cpu || "$cmd" == episode ]]; then
  share="${1:-}"; [[ -n "$share" && "$share" != -* ]] || die "$cmd needs a share (PCT, 1..400%)"; shift
fi

workers=3 dcs=2 racks=0 scheduler=fifo scheduler_seed=1 block_size=$((64 << 20)) replication=2 placement=hdfs hb_ms=300
dfs_options=() join=0 label_dc="" label_rack="" worker_flags=()
tls="" dc_addresses=0 http=1 master_options=() cluster_options=() jobs_options=() cpus=() at="" for=""
speculation=late speculation_params=()
while [[ $# -gt 0 ]]; do
  case "$1" in --join|--dc-addresses|--http|--no-http) ;; --*) [[ $# -ge 2 ]] || die "$1 needs a value" ;; esac
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --datacenters) dcs="$2"; shift 2 ;;
    --racks) racks="$2"; shift 2 ;;
    --scheduler) scheduler="$2"; shift 2 ;;
    --scheduler-seed) scheduler_seed="$2"; shift 2 ;;  # [scheduler] seed: the policy's RNG
    --speculation) speculation="$2"; shift 2 ;;
    --speculation-param) speculation_params+=("$2"); shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --replication) replication="$2"; shift 2 ;;
    --placement) placement="$2"; shift 2 ;;
    --heartbeat-ms) hb_ms="$2"; shift 2 ;;
    --dfs-option) dfs_options+=("$2"); shift 2 ;;   # one more line in [dfs], e.g. 'scrub_interval_s = 2'
    --join) join=1; shift ;;
    --datacenter) label_dc="$2"; shift 2 ;;         # add-worker: its datacenter label
    --rack) label_rack="$2"; shift 2 ;;             # add-worker: its rack label
    --worker-flag) worker_flags+=("$2"); shift 2 ;; # add-worker: one more mr-worker argument
    --dir) DIR="$2"; shift 2 ;;
    --tls) tls="$2"; shift 2 ;;
    --dc-addresses) dc_addresses=1; shift ;;
    --http) http=1; shift ;;
    --no-http) http=0; shift ;;
    --master-option) master_options+=("$2"); shift 2 ;;  # one more line in [master]
    --cluster-option) cluster_options+=("$2"); shift 2 ;;  # one more line in [cluster]
    --jobs-option) jobs_options+=("$2"); shift 2 ;;  # one more line in [jobs]
    --cpu) cpus+=("$2"); shift 2 ;;                 # up: wI=PCT
    --at) at="$2"; shift 2 ;;                       # episode: seconds from now
    --for) for="$2"; shift 2 ;;                     # episode: seconds
    *) die "unknown option '$1'" ;;
  esac
done
# Absolute, so the command lines recorded at start match later from anywhere.
DIR="$(realpath -m "$DIR")"
for v in workers dcs racks scheduler_seed block_size replication hb_ms; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "--${v//_/-} must be a number, got '${!v}'"
done
CPUSHARE_STATE="$DIR"
cpushare_load "$DIR" 2>/dev/null || true  # the cluster's cpu groups, when it has some

# True while PID runs (not a zombie) and is one of ours: its command line names
# this cluster's file, so a recycled PID is never signalled.
ours() {
  local pid="$1" state
  [[ -r "/proc/$pid/stat" ]] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)"
  [[ "$state" != Z ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR/cluster.toml"
}
alive() { [[ -f "$DIR/pids/$1.pid" ]] && ours "$(cat "$DIR/pids/$1.pid")"; }

# launch NAME CMD...: CMD in the background, its output to logs/NAME.out, in
# NAME's cpu group when it has one (joined before exec: no thread runs
# uncapped); $! is CMD's pid. Called by start_one.
launch() {
  local n="$1" procs
  shift
  procs="$(cpushare_procs "$n")"
  (
    if [[ -n "$procs" ]]; then echo "$BASHPID" >"$procs"; fi
    exec "$@"
  ) >>"$DIR/logs/$n.out" 2>&1 &
}

start_one() {  # start_one NAME
  local n="$1"
  alive "$n" && return 0
  # The daemon logs to logs/NAME.log; logs/NAME.out keeps its stderr, which
  # holds only the one line of a failed start-up (or a crash's last words).
  if [[ "$n" == master ]]; then
    launch master "$BUILD/master/mr-master" --config "$DIR/cluster.toml" --log-file "$DIR/logs/master.log"
  elif [[ -f "$DIR/joined/$n.args" ]]; then  # started by flags (add-worker, up --join)
    local args=()
    mapfile -t args <"$DIR/joined/$n.args"
    launch "$n" "$BUILD/worker/mr-worker" --config "$DIR/cluster.toml" "${args[@]}" --log-file "$DIR/logs/$n.log"
  else
    grep -q "^id = \"$n\"" "$DIR/cluster.toml" || die "no worker '$n' in $DIR/cluster.toml"
    launch "$n" "$BUILD/worker/mr-worker" --config "$DIR/cluster.toml" --id "$n" --log-file "$DIR/logs/$n.log"
  fi
  echo $! >"$DIR/pids/$n.pid"
}

# True once PID has exited (gone, or a zombie). Unlike `ours` it does not
# read the command line, which is empty while an exiting process still holds
# its ports, files and RocksDB locks: waiting on `ours` returned too early.
gone() {
  local pid="$1"
  [[ -r "/proc/$pid/stat" ]] || return 0
  [[ "$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" == Z ]]
}

signal_one() {  # signal_one NAME SIGNAL: signals it and waits until it has exited
  local n="$1" sig="$2" pid
  [[ -f "$DIR/pids/$n.pid" ]] || return 0
  pid="$(cat "$DIR/pids/$n.pid")"
  if ours "$pid"; then
    kill "-$sig" "$pid" 2>/dev/null || true
    kill -CONT "$pid" 2>/dev/null || true  # a frozen process (freeze) acts on it only when thawed
    for _ in $(seq 1 100); do gone "$pid" && break; sleep 0.05; done
    if ! gone "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    for _ in $(seq 1 100); do gone "$pid" && break; sleep 0.05; done
    gone "$pid" || echo "local-cluster: $n (pid $pid) did not exit" >&2
  fi
  rm -f "$DIR/pids/$n.pid"
}

all_names() { [[ -d "$DIR/pids" ]] && ls "$DIR/pids" 2>/dev/null | sed 's/\.pid$//' || true; }

# Ports are claimed machine-wide (mkdir is atomic), so that clusters brought
# up at the same moment (ctest -j) never pick the same port between choosing
# it and binding it. A claim names its cluster directory; it is released by
# `down`, and taken over when that directory no longer uses the port, or when
# the claim is over an hour old and nobody listens on the port (a cluster
# whose test was killed).
PORT_CLAIMS="${TMPDIR:-/tmp}/mr-local-cluster-ports"
claim_port() {
  local p="$1" c="$PORT_CLAIMS/$1" owner
  mkdir -p "$PORT_CLAIMS"
  if ! mkdir "$c" 2>/dev/null; then
    owner="$(cat "$c/owner" 2>/dev/null || true)"
    if [[ "$owner" == "$DIR" ]] || ! grep -qs ":$p\"" "$owner/cluster.toml" ||
       [[ -n "$(find "$c" -maxdepth 0 -mmin +60 2>/dev/null)" ]]; then
      rm -rf "$c"; mkdir "$c" 2>/dev/null || return 1
    else
      return 1
    fi
  fi
  echo "$DIR" >"$c/owner"
}
release_ports() {
  local p
  [[ -f "$DIR/.ports" ]] || return 0
  while read -r p; do
    [[ "$(cat "$PORT_CLAIMS/$p/owner" 2>/dev/null)" == "$DIR" ]] && rm -rf "${PORT_CLAIMS:?}/$p"
  done <"$DIR/.ports"
  return 0
}
free_port() {  # a port nobody listens on, from a range that avoids the ephemeral ports
  local p
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 12000 ))
    if ! grep -qx "$p" "$DIR/.ports" 2>/dev/null && ! ss -Htln "sport = :$p" | grep -q . &&
       claim_port "$p"; then
      echo "$p" >>"$DIR/.ports"; echo "$p"; return
    fi
  done
  die "no free port found"
}

wait_ready() {  # wait until every worker is live
  local deadline=$((SECONDS + 30)) live
  while (( SECONDS < deadline )); do
    live=$("$BUILD/tools/mrctl" --config "$DIR/cluster.toml" cluster status --json 2>/dev/null \
             | grep -c '"live": true' || true)
    [[ "$live" == "$workers" ]] && return 0
    sleep 0.1
  done
  echo "local-cluster: only ${live:-0} of $workers workers came up; logs in $DIR/logs" >&2
  return 1
}

# host_of K: where the processes of datacenter dcK listen (127.0.0.K with
# --dc-addresses, given to up; else 127.0.0.1).
host_of() { if (( dc_addresses )); then echo "127.0.0.$1"; else echo 127.0.0.1; fi; }

joined_args() {  # joined_args NAME DC RACK [FLAG...]: mr-worker's identity flags, one a line
  local n="$1" dc="$2" rack="$3" host=127.0.0.1; shift 3
  if [[ "$dc" =~ ^dc([0-9]+)$ ]]; then host="$(host_of "${BASH_REMATCH[1]}")"; fi
  printf '%s\n' --id "$n" --datacenter "$dc" --advertise "$host:$(free_port)" --data-dir "$DIR/data/$n"
  if [[ -n "$rack" ]]; then printf '%s\n' --rack "$rack"; fi
  for f in "$@"; do printf '%s\n' "$f"; done
}

wait_live() {  # wait_live NAME: until the master shows it live, or its process is gone
  local n="$1" deadline=$((SECONDS + 30))
  while (( SECONDS < deadline )); do
    "$BUILD/tools/mrctl" --config "$DIR/cluster.toml" cluster status 2>/dev/null |
      awk -v n="$n" '$1 == n && $7 == "live" { found = 1 } END { exit !found }' && return 0
    if ! alive "$n"; then
      echo "local-cluster: worker $n exited: $(tail -n 1 "$DIR/logs/$n.out" 2>/dev/null)" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "local-cluster: worker $n did not come up; logs in $DIR/logs" >&2
  return 1
}

# worker_running NAME: a worker (not the master) of this cluster whose process runs.
worker_running() {
  [[ "$1" != master ]] || die "cpu shares are for workers, not the master"
  alive "$1" || die "no running worker '$1' in $DIR (have: $(all_names | grep -vx master | tr '\n' ' '))"
}

# cpu_group_for NAME: NAME's cpu group, made (share off) and joined by its
# process when it has none yet (the cluster was up without --cpu NAME=...).
cpu_group_for() {
  cpushare_init "$DIR" "mrlc$$" || exit 1
  if [[ -z "$(cpushare_procs "$1")" ]]; then
    cpushare_set "$1" off
    cpushare_join "$1" "$(cat "$DIR/pids/$1.pid")"
  fi
}

case "$cmd" in
  add-worker)
    [[ -f "$DIR/cluster.toml" ]] || die "no cluster in $DIR"
    [[ -n "$label_dc" ]] || die "add-worker needs --datacenter"
    [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "bad worker name '$name'"
    alive "$name" && die "worker $name is already running"
    mkdir -p "$DIR/joined"
    joined_args "$name" "$label_dc" "$label_rack" "${worker_flags[@]}" >"$DIR/joined/$name.args"
    if [[ -f "$DIR/tls/ca.key" ]]; then  # a TLS cluster: the newcomer needs its certificate
      "$BUILD/tools/mrctl" cert issue "$name" --dir "$DIR/tls" --address 127.0.0.1 >/dev/null
    fi
    start_one "$name"
    wait_live "$name"
    ;;
  up)
    (( workers >= 1 && dcs >= 1 )) || die "--workers and --datacenters must be at least 1"
    cpushare_specs_ok "$workers" "${cpus[@]}"
    if (( ${#cpus[@]} )); then cpushare_mount >/dev/null || exit 1; fi
    for b in master/mr-master worker/mr-worker tools/mrctl; do
      [[ -x "$BUILD/$b" ]] || die "$BUILD/$b is missing: build first (cmake -S . -B build -G Ninja && ninja -C build)"
    done
    for n in $(all_names); do alive "$n" && die "a cluster is already up in $DIR (run: $0 down)"; done
    # Only ever wipe a directory this script made (or an empty one).
    if [[ -d "$DIR" && -n "$(ls -A "$DIR")" ]] &&
       ! grep -qs '^# Written by deploy/local-cluster.sh' "$DIR/cluster.toml"; then
      die "$DIR exists and is not a local-cluster directory; choose another --dir"
    fi
    release_ports
    cpushare_teardown "$DIR"  # groups an earlier run left (killed before its down)
    rm -rf "$DIR"
    mkdir -p "$DIR/pids" "$DIR/logs" "$DIR/data"
    : >"$DIR/.ports"
    # From here a failed up takes down what it made (processes, ports, cpu groups).
    trap 'rc=$?; if (( rc )); then "$0" down --dir "$DIR" >/dev/null 2>&1 || true; fi' EXIT
    if (( ${#cpus[@]} )); then
      cpushare_init "$DIR" "mrlc$$"
      for c in "${cpus[@]}"; do cpushare_set "${c%%=*}" "${c#*=}"; done
    fi
    secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    master_port="$(free_port)"
    case "$tls" in ""|off|inter-dc|all) ;; *) die "--tls must be off, inter-dc or all, got '$tls'" ;; esac
    if [[ -n "$tls" && "$tls" != off ]]; then
      "$BUILD/tools/mrctl" cert init --dir "$DIR/tls" --cluster-name local >/dev/null
      "$BUILD/tools/mrctl" cert issue master --dir "$DIR/tls" --address 127.0.0.1 >/dev/null
      "$BUILD/tools/mrctl" cert issue mrctl --dir "$DIR/tls" >/dev/null
      for i in $(seq 1 "$workers"); do
        "$BUILD/tools/mrctl" cert issue "w$i" --dir "$DIR/tls" \
          --address "$(host_of $(( (i - 1) % dcs + 1 )))" >/dev/null
      done
    fi
    {
      echo "# Written by deploy/local-cluster.sh up (replaced by the next up)."
      echo "[cluster]"
      echo "name = \"local\""
      echo "secret = \"$secret\""
      echo "heartbeat_interval_ms = $hb_ms"
      echo "dead_after_missed_heartbeats = 10"
      if [[ -n "$tls" ]]; then echo "tls = \"$tls\""; fi
      for o in "${cluster_options[@]}"; do echo "$o"; done
      if [[ -n "$tls" && "$tls" != off ]]; then
        echo "tls_ca = \"$DIR/tls/ca.crt\""
        echo "tls_cert = \"$DIR/tls/{name}.crt\""
        echo "tls_key = \"$DIR/tls/{name}.key\""
      fi
      echo
      echo "[master]"
      echo "address = \"127.0.0.1:$master_port\""
      echo "data_dir = \"$DIR/data/master\""
      if (( dc_addresses )) || [[ -n "$tls" ]]; then echo "datacenter = \"dc1\""; fi
      if (( http )); then echo "http_address = \"127.0.0.1:$(free_port)\""; fi
      for o in "${master_options[@]}"; do echo "$o"; done
      echo
      echo "[dfs]"
      echo "block_size = $block_size"
      echo "replication = $replication"
      echo "placement = \"$placement\""
      for o in "${dfs_options[@]}"; do echo "$o"; done
      if ((${#jobs_options[@]})); then
        echo
        echo "[jobs]"
        for o in "${jobs_options[@]}"; do echo "$o"; done
      fi
      echo
      echo "[scheduler]"
      echo "name = \"$scheduler\""
      echo "seed = $scheduler_seed"
      echo
      speculation_tables
      for i in $(seq 1 "$workers"); do
        (( join )) && break  # the workers join with flags (below)
        dc=$(( (i - 1) % dcs + 1 ))
        echo
        echo "[[worker]]"
        echo "id = \"w$i\""
        echo "address = \"$(host_of "$dc"):$(free_port)\""
        echo "datacenter = \"dc$dc\""
        if (( racks > 0 )); then echo "rack = \"r$(( ((i - 1) / dcs) % racks + 1 ))\""; fi
        echo "data_dir = \"$DIR/data/w$i\""
        if (( http )); then echo "http_address = \"$(host_of "$dc"):$(free_port)\""; fi
      done
    } >"$DIR/cluster.toml"
    if (( join )); then
      mkdir -p "$DIR/joined"
      for i in $(seq 1 "$workers"); do
        rack=""
        if (( racks > 0 )); then rack="r$(( ((i - 1) / dcs) % racks + 1 ))"; fi
        joined_args "w$i" "dc$(( (i - 1) % dcs + 1 ))" "$rack" >"$DIR/joined/w$i.args"
      done
    fi
    start_one master
    for i in $(seq 1 "$workers"); do start_one "w$i"; done
    wait_ready || exit 1  # the trap takes it down
    echo "local cluster up: master 127.0.0.1:$master_port, $workers workers in $dcs datacenters, scheduler $scheduler, speculation $speculation"
    echo "cluster file: $DIR/cluster.toml"
    if (( ${#cpus[@]} )); then echo "cpu shares: ${cpus[*]} (cgroups in $CPUSHARE_GROUP)"; fi
    if (( http )); then
      echo "status page: http://$(grep -m1 '^http_address' "$DIR/cluster.toml" | cut -d'"' -f2)/"
    fi
    ;;
  down)
    cpushare_episodes_stop ""
    for n in $(all_names); do [[ "$n" == master ]] || signal_one "$n" TERM; done
    signal_one master TERM
    cpushare_teardown "$DIR"
    release_ports
    echo "local cluster down"
    ;;
  kill) signal_one "$name" KILL ;;
  stop) signal_one "$name" TERM ;;
  start) [[ -f "$DIR/cluster.toml" ]] || die "no cluster in $DIR"; start_one "$name" ;;
  freeze|thaw)  # only a PID this script recorded, and only while it is ours
    alive "$name" || die "$name is not running"
    kill "-$([[ "$cmd" == freeze ]] && echo STOP || echo CONT)" "$(cat "$DIR/pids/$name.pid")" ;;
  status)
    for n in $(all_names); do
      if alive "$n"; then echo "$n running (pid $(cat "$DIR/pids/$n.pid"))"; else echo "$n not running"; fi
    done
    if [[ -n "$CPUSHARE_GROUP" ]]; then
      echo "cpu shares in $CPUSHARE_GROUP (name share cfs_quota_us cfs_period_us throttled_periods):"
      cpushare_show | sed 's/^/  /'
      cpushare_episodes_show | sed 's/^/  episode: /'
    fi ;;
  cpu)
    [[ "$share" == off ]] || cpushare_pct_ok "$share" || die "bad share '$share' (want 1..400% or off)"
    worker_running "$name"
    cpu_group_for "$name"
    cpushare_episodes_stop "$name"
    cpushare_set "$name" "$share"
    echo "local-cluster: $name cpu share $share"
    ;;
  episode)
    cpushare_pct_ok "$share" || die "bad share '$share' (want 1..400%)"
    [[ -n "$at" && -n "$for" ]] || die "episode needs --at SECONDS and --for SECONDS"
    cpushare_secs_ok "$at" || die "bad --at '$at' (want 0..86400 seconds)"
    if ! cpushare_secs_ok "$for" || [[ ! "$for" =~ [1-9] ]]; then die "bad --for '$for' (want 0.001..86400 seconds)"; fi
    worker_running "$name"
    cpu_group_for "$name"
    pid="$(cpushare_episode "$name" "$share" "$at" "$for" "$DIR/logs/episodes.log")"
    echo "local-cluster: $name at $share from +${at}s for ${for}s (episode pid $pid)"
    ;;
  *) die "unknown command '$cmd'" ;;
esac
