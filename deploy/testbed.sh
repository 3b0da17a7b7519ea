#!/usr/bin/env bash
# The live multi-datacenter testbed: a cluster whose every process runs in
# its own network namespace, datacenters joined by a router over htb-shaped
# links, the kernel counting the bytes between datacenters (docs/testbed.md).
# Needs root.
#
#   deploy/testbed.sh up --dir DIR [--datacenters K=2] [--workers N=2 (per dc)]
#        [--racks R=0 (per dc)] [--rate RATE=1gbit] [--pair-rate dcA:dcB=RATE]...
#        [--rtt RTT=0ms] [--pair-rtt dcA:dcB=RTT]... [--cpu wI=PCT]...
#        [--scheduler NAME=fifo] [--speculation NAME=late] [--speculation-param 'K = V']...
#        [--build DIR] [--master-dc D=1] [--client-dc D=1]
#        [--block-size BYTES=67108864] [--replication N=2] [--heartbeat-ms MS=500]
#   deploy/testbed.sh down --dir DIR          # ends its processes, deletes its namespaces and cgroups
#   deploy/testbed.sh rate --dir DIR RATE [--pair dcA:dcB=RATE]...  # new rates, live
#   deploy/testbed.sh status --dir DIR        # namespaces, addresses, pids, rates, round trips, cpu shares
#   deploy/testbed.sh exec --dir DIR NAME -- CMD...   # NAME: client, master, w1, ..., router
#   deploy/testbed.sh counters --dir DIR [--reset]    # bytes per ordered dc pair, JSON
#   deploy/testbed.sh restart-master --dir DIR [--scheduler NAME] [--speculation NAME [--speculation-param 'K = V']...]
#        # keeps DFS and history
#   deploy/testbed.sh restart-workers --dir DIR   # every worker, keeping its blocks (after an edit of cluster.toml)
#   deploy/testbed.sh cpu --dir DIR wI PCT|off    # a worker's cpu share, now (ends its pending episodes)
#   deploy/testbed.sh episode --dir DIR wI PCT --at SECONDS --for SECONDS  # noisy neighbour, in the background
#
# Workers are w1..w(K*N), dc-major (w1..wN in dc1). RATE is a tc rate (20mbit,
# 1gbit) for each direction of every datacenter uplink; --pair-rate A:B caps
# traffic from A to B (ordered: give B:A too for both ways). `rate` replaces
# the whole setting. RTT (0..2000ms with a unit: 40ms, 0.5s) is the round
# trip added between every two datacenters by mr-delayline in the router
# (half each way); --pair-rtt A:B sets the round trip between A and B (both
# ways). --speculation NAME is the speculator ([speculation] name: none,
# hadoop, late; `mrctl schedulers` lists them), --speculation-param one line
# of [speculation.params]; restart-master --speculation replaces both.
# --cpu wI=PCT caps worker wI at PCT % of one core (1..400, repeatable;
# a cgroup v1 cpu group per worker); `episode` caps it at PCT from now+AT for
# FOR seconds, then restores its share. `exec` runs CMD with
# MR_CONFIG=DIR/cluster.toml and the build's tools first on PATH, so `exec
# client -- mrctl job list` just works. `counters` prints the kernel's counts
# since `up` (or the last --reset, which prints the counts it zeroes). `down`
# is idempotent and also undoes a failed `up`; it leaves DIR's logs and data
# to read (the next `up` replaces them).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
umask 077
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/netns.sh
source "$ROOT/deploy/lib/netns.sh"
# shellcheck source=lib/shaping.sh
source "$ROOT/deploy/lib/shaping.sh"
# shellcheck source=lib/delay.sh
source "$ROOT/deploy/lib/delay.sh"
# shellcheck source=lib/cpushare.sh
source "$ROOT/deploy/lib/cpushare.sh"
# shellcheck source=lib/speculation.sh
source "$ROOT/deploy/lib/speculation.sh"

die() { echo "testbed: $*" >&2; exit 2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

cmd="${1:-}"
[[ "$cmd" == -h || "$cmd" == --help || "$cmd" == help ]] && { usage; exit 0; }
[[ -n "$cmd" ]] || { usage >&2; exit 2; }
shift
DIR="" BUILD="${MR_BUILD_DIR:-$ROOT/build}" dcs=2 per_dc=2 racks=0 rate=1gbit scheduler=fifo
master_dc=1 client_dc=1 block_size=$((64 << 20)) replication=2 hb_ms=500 reset=0 scheduler_set=0
pairs=() args=() run=() rtt=0ms pair_rtts=() cpus=() at="" for=""
speculation=late speculation_params=() speculation_set=0
while [[ $# -gt 0 ]]; do
  case "$1" in --reset|--) ;; --*) [[ $# -ge 2 ]] || die "$1 needs a value" ;; esac
  case "$1" in
    --dir) DIR="$2"; shift 2 ;;
    --datacenters) dcs="$2"; shift 2 ;;
    --workers) per_dc="$2"; shift 2 ;;
    --racks) racks="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --pair-rate|--pair) pairs+=("$2"); shift 2 ;;
    --rtt) rtt="$2"; shift 2 ;;
    --pair-rtt) pair_rtts+=("$2"); shift 2 ;;
    --cpu) cpus+=("$2"); shift 2 ;;
    --at) at="$2"; shift 2 ;;
    --for) for="$2"; shift 2 ;;
    --scheduler) scheduler="$2"; scheduler_set=1; shift 2 ;;
    --speculation) speculation="$2"; speculation_set=1; shift 2 ;;
    --speculation-param) speculation_params+=("$2"); shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --master-dc) master_dc="$2"; shift 2 ;;
    --client-dc) client_dc="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --replication) replication="$2"; shift 2 ;;
    --heartbeat-ms) hb_ms="$2"; shift 2 ;;
    --reset) reset=1; shift ;;
    --) shift; run=("$@"); break ;;
    -*) die "unknown option '$1'" ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ -n "$DIR" ]] || die "$cmd needs --dir DIR"
DIR="$(realpath -m "$DIR")"
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, tc, nft)"

conf_get() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$DIR/testbed.conf"; }
load() {  # the layout and settings `up` recorded
  [[ -f "$DIR/testbed.conf" && -f "$DIR/netns.state" ]] || die "no testbed in $DIR (run: $0 up --dir $DIR)"
  netns_load "$DIR" || die "cannot read the layout in $DIR"
  dcs="$(conf_get dcs)" BUILD="$(conf_get build)" rtt="$(conf_get rtt)"
  read -r -a pair_rtts <<<"$(conf_get pair_rtts)"
  CPUSHARE_STATE="$DIR"
  cpushare_load "$DIR" 2>/dev/null || true  # a worker with a cpu group restarts in it
}
workers() { netns_hosts | grep -E '^w[0-9]+$' | sort -V; }

# ours PID [MARK]: a live process (not a zombie) started by this testbed: its
# command line names MARK (default DIR/cluster.toml, which the daemons name;
# the delay line names its pid file), so a recycled PID is never signalled.
ours() {
  local pid="$1" state mark="${2:-$DIR/cluster.toml}"
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/stat" ]] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)"
  [[ -n "$state" && "$state" != Z ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$mark"
}
pid_of() { cat "$DIR/pids/$1.pid" 2>/dev/null || true; }
mark_of() { if [[ "$1" == delayline ]]; then echo "$DIR/pids/delayline.pid"; else echo "$DIR/cluster.toml"; fi; }
alive() { ours "$(pid_of "$1")" "$(mark_of "$1")"; }

# start_daemon NAME: mr-master or mr-worker in NAME's namespace, and in its
# cpu group when it has one (joined before exec, so no thread runs uncapped).
start_daemon() {
  local n="$1" bin=worker/mr-worker extra=(--id "$1") procs
  [[ "$n" == master ]] && bin=master/mr-master extra=()
  procs="$(cpushare_procs "$n")"
  (
    if [[ -n "$procs" ]]; then echo "$BASHPID" >"$procs"; fi
    exec ip netns exec "$(netns_ns "$n")" "$BUILD/$bin" --config "$DIR/cluster.toml" "${extra[@]}" \
      --log-file "$DIR/logs/$n.log"
  ) >>"$DIR/logs/$n.out" 2>&1 </dev/null &
  echo $! >"$DIR/pids/$n.pid"  # the subshell execs ip netns exec, which execs the daemon: same pid
}
stop_daemon() {  # stop_daemon NAME: TERM, 10 s, KILL; only a pid that is ours
  local n="$1" pid mark
  pid="$(pid_of "$n")" mark="$(mark_of "$n")"
  if ours "$pid" "$mark"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do ours "$pid" "$mark" || break; sleep 0.1; done
    if ours "$pid" "$mark"; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$DIR/pids/$n.pid"
}

mrctl_client() { ip netns exec "$(netns_ns client)" "$BUILD/tools/mrctl" --config "$DIR/cluster.toml" "$@"; }

wait_workers() {  # until every worker is live at the master, at most 60 s
  local want deadline=$((SECONDS + 60)) live=0 n
  want="$(workers | wc -l)"
  while (( SECONDS < deadline )); do
    live="$(mrctl_client cluster status --json 2>/dev/null | jq '[.workers[] | select(.live)] | length' 2>/dev/null || echo 0)"
    [[ "$live" == "$want" ]] && return 0
    for n in master $(workers); do
      alive "$n" || { echo "testbed: $n exited: $(tail -n 1 "$DIR/logs/$n.out" 2>/dev/null)" >&2; return 1; }
    done
    sleep 0.2
  done
  echo "testbed: only $live of $want workers registered in 60 s; logs in $DIR/logs" >&2
  return 1
}

# teardown: the episodes, every recorded daemon and the delay line (by pid),
# every recorded namespace, then every recorded cpu group. Called by down and
# when up fails.
teardown() {
  local f
  CPUSHARE_STATE="$DIR"
  cpushare_episodes_stop ""
  for f in "$DIR"/pids/*.pid; do [[ -e "$f" ]] && stop_daemon "$(basename "$f" .pid)"; done
  NETNS_STATE="$DIR"  # netns_teardown needs only the record, even when up failed early
  export NETNS_STATE
  netns_load "$DIR" 2>/dev/null || true
  netns_teardown
  cpushare_teardown "$DIR"
  rm -f "$DIR/netns.state" "$DIR/counters.base"
}

write_cluster_file() {
  local secret n
  secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  {
    echo "# Written by deploy/testbed.sh up (replaced by the next up)."
    echo "[cluster]"
    echo "name = \"testbed\""
    echo "secret = \"$secret\""
    echo "tls = \"off\""
    echo "heartbeat_interval_ms = $hb_ms"
    echo "dead_after_missed_heartbeats = 10"
    echo
    echo "[master]"
    echo "address = \"$(netns_addr master):7000\""
    echo "data_dir = \"$DIR/data/master\""
    echo "datacenter = \"dc$(netns_dc_of master)\""
    echo
    echo "[dfs]"
    echo "block_size = $block_size"
    echo "replication = $replication"
    echo
    echo "[scheduler]"
    echo "name = \"$scheduler\""
    echo
    speculation_tables
    for n in $(workers); do
      echo
      echo "[[worker]]"
      echo "id = \"$n\""
      echo "address = \"$(netns_addr "$n"):7100\""
      echo "datacenter = \"dc$(netns_dc_of "$n")\""
      [[ -n "${rack_of[$n]:-}" ]] && echo "rack = \"${rack_of[$n]}\""
      echo "data_dir = \"$DIR/data/$n\""
    done
  } >"$DIR/cluster.toml"
}

set_scheduler() {  # set_scheduler NAME: the name in the cluster file's [scheduler]
  awk -v s="$1" '/^\[/ { sect = $0 } sect == "[scheduler]" && /^name = / { $0 = "name = \"" s "\"" } { print }' \
    "$DIR/cluster.toml" >"$DIR/cluster.toml.new"
  mv "$DIR/cluster.toml.new" "$DIR/cluster.toml"
}

# speculation_ok: the name and parameter lines look right (the master checks
# the rest, and refuses an unknown name or parameter at start-up).
speculation_ok() {
  local o
  [[ "$speculation" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad --speculation '$speculation'"
  for o in "${speculation_params[@]}"; do
    [[ "$o" =~ ^[[:space:]]*[A-Za-z0-9_]+[[:space:]]*=[[:space:]]*[^[:space:]] ]] ||
      die "bad --speculation-param '$o' (want 'KEY = VALUE', e.g. 'lag_ms = 10000')"
  done
  ((${#speculation_params[@]} == 0 || speculation_set)) || die "--speculation-param needs --speculation NAME"
}
set_speculation() {  # the [speculation] tables of the cluster file replaced (moved to its end)
  awk '/^\[/ { skip = ($0 == "[speculation]" || $0 == "[speculation.params]") } !skip { print }' \
    "$DIR/cluster.toml" >"$DIR/cluster.toml.new"
  { echo; speculation_tables; } >>"$DIR/cluster.toml.new"
  mv "$DIR/cluster.toml.new" "$DIR/cluster.toml"
}

# delay_wanted: some pair has a round trip above 0 (up needs mr-delayline).
delay_wanted() {
  local a b
  for ((a = 1; a <= dcs; a++)); do for ((b = a + 1; b <= dcs; b++)); do
    (( $(delay_pair_us "$dcs" "$rtt" "$a" "$b" "${pair_rtts[@]}") > 0 )) && return 0
  done; done
  return 1
}

# worker_ok NAME: NAME is a worker of the running testbed, with a live process.
worker_ok() {
  workers | grep -qxF "$1" || die "no worker '$1' (have: $(workers | tr '\n' ' '))"
  alive "$1" || die "worker $1 is not running (pid $(pid_of "$1"))"
}

# cpu_group_for NAME: NAME's cpu group, made (share off) and joined by its
# process when it has none yet (the testbed was up without --cpu NAME=...).
cpu_group_for() {
  cpushare_init "$DIR" "${NETNS_PREFIX%-}" || exit 1
  if [[ -z "$(cpushare_procs "$1")" ]]; then
    cpushare_set "$1" off
    cpushare_join "$1" "$(pid_of "$1")"
  fi
}

# delay_status: the round trip of each pair, the delay line's process and
# its kernel queues (status).
delay_status() {
  local a b q st us
  if [[ -f "$DIR/pids/delayline.pid" ]]; then
    echo "delay line: pid $(pid_of delayline) $(alive delayline && echo running || echo 'NOT running: no delay (queue bypass)')"
  else
    echo "delay line: none (no round trip set)"
  fi
  echo "round trips (pair rtt one-way queue held dropped user_dropped):"
  for ((a = 1; a <= dcs; a++)); do for ((b = 1; b <= dcs; b++)); do
    (( a == b )) && continue
    q="$(delay_queue "$a" "$b")"
    st="$(delay_show | awk -v q="$q" '$1 == q { print $3, $4, $5 }')"
    us="$(delay_pair_us "$dcs" "${rtt:-0ms}" "$a" "$b" "${pair_rtts[@]}")"
    awk -v a="$a" -v b="$b" -v us="$us" -v q="$q" -v st="${st:-- - -}" \
      'BEGIN { printf "  dc%s->dc%s %gms %gms %s %s\n", a, b, 2 * us / 1000, us / 1000, (us > 0 ? q : "-"), st }'
  done; done
}

# cpu_status: each cpu group's share and throttling, and pending episodes (status).
cpu_status() {
  [[ -n "$CPUSHARE_GROUP" ]] || { echo "cpu shares: none"; return 0; }
  echo "cpu shares in $CPUSHARE_GROUP (name share cfs_quota_us cfs_period_us throttled_periods):"
  cpushare_show | sed 's/^/  /'
  echo "pending episodes (name share start duration pid):"
  cpushare_episodes_show | sed 's/^/  /'
}

summary() {
  local d n
  echo "datacenters: $dcs; uplink rate $(conf_get rate) each way; pair rates: $(conf_get pairs | sed 's/^$/none/')"
  echo "round trip between datacenters: ${rtt:-0ms}; pair round trips: ${pair_rtts[*]:-none}; cpu shares: $(conf_get cpus | sed 's/^$/none/')"
  for ((d = 1; d <= dcs; d++)); do
    printf '  dc%s %s:' "$d" "$(netns_subnet "$d")"
    for n in master client $(workers); do
      [[ "$(netns_dc_of "$n")" == "$d" ]] && printf ' %s=%s' "$n" "$(netns_addr "$n")"
    done
    echo
  done
  echo "cluster file: $DIR/cluster.toml (master $(netns_addr master):7000, workers :7100)"
}

case "$cmd" in
  up)
    for v in dcs per_dc racks master_dc client_dc block_size replication hb_ms; do
      [[ "${!v}" =~ ^[0-9]+$ ]] || die "--${v//_/-} must be a number, got '${!v}'"
    done
    (( dcs >= 1 && dcs <= 250 && per_dc >= 1 && per_dc <= 200 )) || die "--datacenters 1..250 and --workers 1..200"
    (( master_dc >= 1 && master_dc <= dcs && client_dc >= 1 && client_dc <= dcs )) ||
      die "--master-dc and --client-dc must be in 1..$dcs"
    shaping_rate_ok "$rate" || die "bad --rate '$rate' (a tc rate: 20mbit, 1gbit)"
    shaping_pairs_ok "$dcs" "${pairs[@]}" || exit 2
    delay_pairs_ok "$dcs" "$rtt" "${pair_rtts[@]}" || exit 2
    cpushare_specs_ok $((dcs * per_dc)) "${cpus[@]}"
    [[ "$scheduler" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad --scheduler '$scheduler'"
    speculation_set=1 speculation_ok
    for b in master/mr-master worker/mr-worker tools/mrctl; do
      [[ -x "$BUILD/$b" ]] || die "$BUILD/$b is missing: build first, or pass --build DIR"
    done
    for t in tc nft jq ethtool; do command -v "$t" >/dev/null || die "$t is missing (deploy/install-deps.sh)"; done
    if delay_wanted; then
      [[ -x "$BUILD/tools/mr-delayline" ]] || die "$BUILD/tools/mr-delayline is missing (--rtt): build it (ninja -C $BUILD mr-delayline)"
      command -v iptables-restore >/dev/null || die "iptables is missing (--rtt; deploy/install-deps.sh)"
    fi
    if (( ${#cpus[@]} )); then cpushare_mount >/dev/null || exit 1; fi
    BUILD="$(realpath "$BUILD")"
    if [[ -d "$DIR" && -n "$(ls -A "$DIR")" ]]; then  # only ever replace a testbed's directory
      [[ -f "$DIR/testbed.conf" ]] || die "$DIR exists and is not a testbed directory; choose another --dir"
      [[ -s "$DIR/netns.objects" ]] && die "a testbed is up in $DIR (run: $0 down --dir $DIR)"
      cpushare_teardown "$DIR"  # groups an earlier run left (killed before its down)
      rm -rf "${DIR:?}"/*
    fi
    mkdir -p "$DIR/pids" "$DIR/logs" "$DIR/data"
    {
      echo "dcs $dcs"; echo "workers $per_dc"; echo "racks $racks"; echo "build $BUILD"
      echo "rate $rate"; echo "pairs ${pairs[*]}"
      echo "rtt $rtt"; echo "pair_rtts ${pair_rtts[*]}"; echo "cpus ${cpus[*]}"
    } >"$DIR/testbed.conf"
    started=$SECONDS
    up_exit() {
      local rc=$?
      if [[ $rc -ne 0 ]]; then echo "testbed: up failed; tearing down what it made" >&2; teardown; fi
    }
    trap up_exit EXIT
    netns_init "$DIR" mrtb
    netns_fabric "$dcs"
    netns_add_host "$master_dc" master
    netns_add_host "$client_dc" client
    declare -A rack_of=()
    for ((d = 1; d <= dcs; d++)); do
      for ((j = 1; j <= per_dc; j++)); do
        n="w$(( (d - 1) * per_dc + j ))"
        netns_add_host "$d" "$n"
        (( racks > 0 )) && rack_of[$n]="r$(( (j - 1) % racks + 1 ))"
      done
    done
    netns_save
    shaping_htb_up "$dcs" "$rate" "${pairs[@]}"
    shaping_nft_up "$dcs" "$(netns_addr master)" "$(netns_addr client)"
    delay_up "$dcs" "$rtt" "$rate" "$BUILD/tools/mr-delayline" "$DIR/pids/delayline.pid" "$DIR/logs/delayline.log" \
      "${pair_rtts[@]}"
    if (( ${#cpus[@]} )); then
      cpushare_init "$DIR" "${NETNS_PREFIX%-}"
      for c in "${cpus[@]}"; do cpushare_set "${c%%=*}" "${c#*=}"; done
    fi
    write_cluster_file
    start_daemon master
    for n in $(workers); do start_daemon "$n"; done
    wait_workers
    echo "testbed up in $((SECONDS - started)) s: $dcs datacenters x $per_dc workers, scheduler $scheduler, speculation $speculation"
    summary
    echo "try: $0 exec --dir $DIR client -- mrctl cluster status"
    ;;
  down)
    if [[ ! -f "$DIR/testbed.conf" ]]; then echo "testbed: nothing recorded in $DIR"; exit 0; fi
    teardown
    echo "testbed down: $DIR (logs kept in $DIR/logs)"
    ;;
  rate)
    load
    [[ ${#args[@]} -eq 1 ]] || die "rate needs one RATE (e.g. 20mbit)"
    rate="${args[0]}"
    shaping_rate_ok "$rate" || die "bad rate '$rate' (a tc rate: 20mbit, 1gbit)"
    shaping_pairs_ok "$dcs" "${pairs[@]}" || exit 2
    shaping_htb_rate "$dcs" "$rate" "${pairs[@]}"
    sed -i -e "s/^rate .*/rate $rate/" -e "s/^pairs.*/pairs ${pairs[*]}/" "$DIR/testbed.conf"
    echo "testbed: uplinks $rate each way; pair rates: ${pairs[*]:-none}"
    ;;
  status)
    load
    echo "testbed in $DIR: prefix $NETNS_PREFIX"
    summary
    printf '%-8s %-4s %-14s %-24s %s\n' NAME DC ADDRESS NAMESPACE PROCESS
    for n in master client $(workers); do
      p="-"
      if [[ -f "$DIR/pids/$n.pid" ]]; then
        p="pid $(pid_of "$n") $(alive "$n" && echo running || echo 'not running')"
      fi
      ns="$(netns_ns "$n")"
      ip netns list | awk '{ print $1 }' | grep -qxF "$ns" || ns="$ns (missing)"
      printf '%-8s dc%-2s %-14s %-24s %s\n' "$n" "$(netns_dc_of "$n")" "$(netns_addr "$n")" "$ns" "$p"
    done
    echo "htb classes (dir dc from rate ceil bytes packets dropped):"
    shaping_htb_show "$dcs" | sed 's/^/  /'
    delay_status
    cpu_status
    ;;
  exec)
    load
    [[ ${#args[@]} -eq 1 && ${#run[@]} -ge 1 ]] || die "usage: exec --dir DIR NAME -- CMD..."
    case "${args[0]}" in
      router) ns="$(netns_router_ns)" ;;
      switch) ns="$(netns_switch_ns)" ;;
      *) netns_hosts | grep -qxF "${args[0]}" || die "no node '${args[0]}' (have: $(netns_hosts | tr '\n' ' ')router switch)"
         ns="$(netns_ns "${args[0]}")" ;;
    esac
    # The client is in no worker's address, so mrctl cannot infer its
    # datacenter: say it (its sample reads are counted against it).
    where=()
    [[ "${args[0]}" == client ]] && where=(MR_DATACENTER="dc$client_dc")
    exec ip netns exec "$ns" env MR_CONFIG="$DIR/cluster.toml" "${where[@]}" \
      PATH="$BUILD/tools:$BUILD/master:$BUILD/worker:$PATH" "${run[@]}"
    ;;
  counters)
    load
    raw="$(shaping_counters_json "$dcs")" || die "cannot read the counters"
    now="$raw"
    if [[ -f "$DIR/counters.base" ]]; then
      now="$(jq --slurpfile b "$DIR/counters.base" '
        ($b[0].pairs | map({key: "\(.from)>\(.to)", value: .}) | from_entries) as $base
        | .pairs |= map(. as $p | ($base["\($p.from)>\($p.to)"] // {}) as $o
            | with_entries(if (.value | type) == "number" then .value -= ($o[.key] // 0) else . end))' <<<"$raw")"
    fi
    echo "$now"
    if (( reset )); then echo "$raw" >"$DIR/counters.base"; fi
    ;;
  restart-master)
    load
    [[ -z "${args[*]}" ]] || die "restart-master takes no argument '${args[*]}'"
    if (( scheduler_set )); then
      [[ "$scheduler" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad --scheduler '$scheduler'"
    fi
    speculation_ok
    stop_daemon master
    (( scheduler_set )) && set_scheduler "$scheduler"
    (( speculation_set )) && set_speculation
    started=$SECONDS
    start_daemon master
    wait_workers || exit 1
    echo "testbed: master restarted in $((SECONDS - started)) s with scheduler" \
      "$(awk '/^\[/ { s = $0 } s == "[scheduler]" && /^name = / { print $3 }' "$DIR/cluster.toml"), speculation" \
      "$(awk '/^\[/ { s = $0 } s == "[speculation]" && /^name = / { print $3 }' "$DIR/cluster.toml")"
    ;;
  cpu)
    [[ ${#args[@]} -eq 2 ]] || die "usage: cpu --dir DIR wI PCT|off"
    [[ "${args[1]}" == off ]] || cpushare_pct_ok "${args[1]}" || die "bad share '${args[1]}' (want 1..400% or off)"
    load
    worker_ok "${args[0]}"
    cpu_group_for "${args[0]}"
    cpushare_episodes_stop "${args[0]}"
    cpushare_set "${args[0]}" "${args[1]}"
    echo "testbed: ${args[0]} cpu share ${args[1]}"
    ;;
  episode)
    [[ ${#args[@]} -eq 2 && -n "$at" && -n "$for" ]] || die "usage: episode --dir DIR wI PCT --at SECONDS --for SECONDS"
    cpushare_pct_ok "${args[1]}" || die "bad share '${args[1]}' (want 1..400%)"
    cpushare_secs_ok "$at" || die "bad --at '$at' (want 0..86400 seconds)"
    if ! cpushare_secs_ok "$for" || [[ ! "$for" =~ [1-9] ]]; then die "bad --for '$for' (want 0.001..86400 seconds)"; fi
    load
    worker_ok "${args[0]}"
    cpu_group_for "${args[0]}"
    pid="$(cpushare_episode "${args[0]}" "${args[1]}" "$at" "$for" "$DIR/logs/episodes.log")"
    echo "testbed: ${args[0]} at ${args[1]} from +${at}s for ${for}s (episode pid $pid)"
    ;;
  restart-workers)
    load
    [[ -z "${args[*]}" ]] || die "restart-workers takes no argument '${args[*]}'"
    started=$SECONDS
    for n in $(workers); do stop_daemon "$n"; start_daemon "$n"; done
    wait_workers || exit 1
    echo "testbed: $(workers | wc -l) workers restarted in $((SECONDS - started)) s"
    ;;
  *) die "unknown command '$cmd'" ;;
esac
