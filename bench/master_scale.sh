#!/usr/bin/env bash
# One master, thousands of workers (issue 29): bench/master_scale runs an
# emulated fleet (bench/master_scale/fleet.h says what is emulated) against
# a real mr-master it starts, per point of the sweep, with a fresh data
# directory each time.
#
#   bench/master_scale.sh [--workers "500 1000 2000 4000 8000"] [--policies "fifo fair joss-t"]
#                         [--maps 100000] [--jobs 50] [--reducers 5] [--heartbeat-ms 3000]
#                         [--window-s 60] [--warmup-s 10] [--map-ms 20000] [--perf]
#                         [--baseline-master OTHER/mr-master]
#   bench/master_scale.sh --namespace [--files 1000000] [--blocks-per-file 10]
#                         [--ns-workers 200] [--ops 20000] [--build-clients N]
#   bench/master_scale.sh --join [--workers "500 1000"] [--heartbeat-ms 3000]
#                         [--baseline-master OTHER/mr-master]
#
# Jobs sweep: per point one JSON line (heartbeat latency p50/p99, decisions/s,
# master CPU and RSS, submit latency, time to notice 3 stopped workers, ...)
# in bench/out/master_scale.jsonl, with the load average before the point,
# and where the beats' latency went (the master's /metrics scraped before and
# after the window: its handler time, its loop's lag, its housekeeping
# passes; the fleet's own loop lag); with --baseline-master, each point runs
# against that master first, then this build's;
# --perf adds `perf report` of the master over the window
# (bench/out/master_scale-perf-POLICY-N-WHICH.txt; perf from
# bench/install-bench-deps.sh). --namespace: the namespace run instead
# (bench/out/master_scale_ns.jsonl). --join: per size, the fleet joins a
# fresh master: seconds to register, seconds until every worker's view of
# the members is the master's list, the members' entries the replies
# carried (bench/out/master_scale_join.jsonl); with --baseline-master, each
# size runs against that master first (e.g. one built from an older
# commit), then this build's, and the table gives this/baseline ratios.
# Prints a Markdown table at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
workers="500 1000 2000 4000 8000" policies="fifo fair joss-t"
maps=100000 jobs=50 reducers=5 hb=3000 window=60 warmup=10 map_ms=20000 perf=0
namespace=0 files=1000000 bpf=10 ns_workers=200 ops=20000 join=0 baseline= build_clients=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --policies) policies="$2"; shift 2 ;;
    --maps) maps="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --reducers) reducers="$2"; shift 2 ;;
    --heartbeat-ms) hb="$2"; shift 2 ;;
    --window-s) window="$2"; shift 2 ;;
    --warmup-s) warmup="$2"; shift 2 ;;
    --map-ms) map_ms="$2"; shift 2 ;;
    --perf) perf=1; shift ;;
    --namespace) namespace=1; shift ;;
    --join) join=1; shift ;;
    --baseline-master) baseline="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --blocks-per-file) bpf="$2"; shift 2 ;;
    --ns-workers) ns_workers="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --build-clients) build_clients="$2"; shift 2 ;;
    *) echo "master_scale: unknown option $1" >&2; exit 2 ;;
  esac
done
for b in "$BUILD/bench/master_scale" "$BUILD/master/mr-master"; do
  [[ -x "$b" ]] || { echo "master_scale: $b is missing: ninja -C $BUILD master_scale mr-master" >&2; exit 2; }
done
if [[ -n "$baseline" && ! -x "$baseline" ]]; then
  echo "master_scale: --baseline-master $baseline is not an executable" >&2; exit 2
fi
if (( perf )) && ! command -v perf >/dev/null; then
  echo "master_scale: perf is missing: run bench/install-bench-deps.sh" >&2; exit 2
fi
OUT="$ROOT/bench/out"; mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/mr-bench-scale-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The default: a worker's block report past a frame goes in parts
# (dfs/block_report.h; the 1,000,000-file namespace puts ~300,000 blocks on
# each of 100 workers, ~4 MiB).
max_frame=4194304

# write_config POLICY: a fresh cluster file and data directory in $WORK.
write_config() {
  rm -rf "$WORK/data"; mkdir -p "$WORK/data"
  cat >"$WORK/cluster.toml" <<EOF
[cluster]
name = "scale"
secret = "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
heartbeat_interval_ms = $hb
dead_after_missed_heartbeats = 10
max_frame_bytes = $max_frame

[master]
address = "127.0.0.1:$(free_port)"
http_address = "127.0.0.1:$(free_port)"
data_dir = "$WORK/data/master"

[dfs]
block_size = 134217728
replication = 3

[scheduler]
name = "$1"
seed = 1

[speculation]
name = "none"
EOF
}

if (( namespace )); then
  write_config fifo
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  if ! line="$("$BUILD/bench/master_scale" namespace --config "$WORK/cluster.toml" \
    --master "$BUILD/master/mr-master" --log "$WORK/master.log" --workers "$ns_workers" \
    --files "$files" --blocks-per-file "$bpf" --ops "$ops" ${build_clients:+--build-clients "$build_clients"})"; then
    cp "$WORK/master.log" "$OUT/master_scale_ns_failed.log" 2>/dev/null || true
    echo "master_scale: the namespace run failed; the master's log: $OUT/master_scale_ns_failed.log" >&2
    [[ -n "${line:-}" ]] && echo "master_scale: its figures so far: $line" >&2
    exit 1
  fi
  echo "$line" | jq -c --arg load "$load" --arg cores "$(nproc)" '. + {load_before: $load, cores: $cores}' |
    tee -a "$OUT/master_scale_ns.jsonl"
  exit 0
fi

if (( join )); then
  : >"$WORK/join.jsonl"
  for n in $workers; do
    for which in ${baseline:+baseline} this; do
      master="$BUILD/master/mr-master"
      [[ "$which" == baseline ]] && master="$baseline"
      write_config fifo
      load="$(cut -d' ' -f1-3 /proc/loadavg)"
      echo "master_scale: join, $n workers, $which master (load before: $load)" >&2
      line="$("$BUILD/bench/master_scale" join --config "$WORK/cluster.toml" --master "$master" \
        --log "$WORK/master.log" --workers "$n")" ||
        echo "master_scale: the join of $n workers ($which master) failed; master log: $WORK/master.log" >&2
      [[ -n "${line:-}" ]] || continue
      echo "$line" | jq -c --arg m "$which" --arg load "$load" --arg hb "$hb" \
        '. + {master: $m, load_before: $load, heartbeat_ms: ($hb | tonumber)}' |
        tee -a "$OUT/master_scale_join.jsonl" >>"$WORK/join.jsonl"
    done
  done
  echo "| workers | master | load before | register s | views agree s | master CPU s | beat entries | per worker | deltas of lists | register entries |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  jq -r '"| \(.workers) | \(.master) | \(.load_before) | \(.register_s) | \(.views_agree_s) | \(.master_cpu_s) | \(.member_entries) | \(.member_entries_per_worker) | \(.member_deltas) of \(.member_lists) | \(.register_member_entries) |"' "$WORK/join.jsonl"
  if [[ -n "$baseline" ]]; then
    echo
    echo "| workers | register s this/baseline | views agree s this/baseline | beat entries this/baseline |"
    echo "|---|---|---|---|"
    jq -rs 'group_by(.workers)[] | (map(select(.master == "baseline"))[0]) as $b |
      (map(select(.master == "this"))[0]) as $t | select($b and $t) |
      "| \($t.workers) | \($t.register_s / $b.register_s * 1000 | round / 1000) | \($t.views_agree_s / $b.views_agree_s * 1000 | round / 1000) | \($t.member_entries / $b.member_entries * 10000 | round / 10000) |"' "$WORK/join.jsonl"
  fi
  exit 0
fi

: >"$WORK/points.jsonl"
for policy in $policies; do
  for n in $workers; do
    for which in ${baseline:+baseline} this; do
      master="$BUILD/master/mr-master"
      [[ "$which" == baseline ]] && master="$baseline"
      write_config "$policy"
      load="$(cut -d' ' -f1-3 /proc/loadavg)"
      perf_args=()
      if (( perf )); then perf_args=(--perf-out "$WORK/perf.data"); fi
      echo "master_scale: $policy, $n workers, $which master (load before: $load)" >&2
      if ! line="$("$BUILD/bench/master_scale" jobs --config "$WORK/cluster.toml" \
          --master "$master" --log "$WORK/master.log" --workers "$n" \
          --maps "$maps" --jobs "$jobs" --reducers "$reducers" --map-ms "$map_ms" \
          --window-s "$window" --warmup-s "$warmup" "${perf_args[@]}")"; then
        echo "master_scale: the $policy/$n point failed (its checks or the run); master log: $WORK/master.log" >&2
        cp "$WORK/master.log" "$OUT/master_scale-failed-$policy-$n.log" 2>/dev/null || true
      fi
      [[ -n "${line:-}" ]] || continue
      echo "$line" | jq -c --arg p "$policy" --arg m "$which" --arg load "$load" --arg hb "$hb" \
        '. + {policy: $p, master: $m, load_before: $load, heartbeat_ms: ($hb | tonumber)}' |
        tee -a "$OUT/master_scale.jsonl" >>"$WORK/points.jsonl"
      if (( perf )) && [[ -f "$WORK/perf.data" ]]; then
        perf report -i "$WORK/perf.data" --no-children -g none --percent-limit 0.3 --sort symbol --stdio 2>/dev/null |
          cut -c1-200 |
          grep -v '^#' | grep -v '^$' | head -40 >"$OUT/master_scale-perf-$policy-$n-$which.txt" || true
        rm -f "$WORK/perf.data"
      fi
    done
  done
done
echo "| policy | workers | master | load before | beat p50 ms | beat p99 ms | decisions/s | master cores | RSS MiB | submit p50 ms | dead noticed s | dup launches | beat errors |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
jq -r '"| \(.policy) | \(.workers) | \(.master) | \(.load_before) | \(.beat_ms_p50) | \(.beat_ms_p99) | \(.decisions_per_s) | \(.master_cpu_cores) | \(.master_rss_mib) | \(.submit_ms_p50) | \(.dead_noticed_s) | \(.duplicate_launches) | \(.beat_errors) |"' "$WORK/points.jsonl"
# Where the beats' latency went (the master's /metrics over the window; its
# histograms have buckets, so "<=").
echo
echo "| policy | workers | master | beats > 25.6 ms % | master-side > 25.6 ms % | master loop lag p99 <= ms | lag > 20 ms % | housekeeping mean ms | housekeeping p50 / max <= ms | cluster.Status mean ms | fleet lag p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
jq -r 'select(.master_lag_ms_p99_at_most != null) | "| \(.policy) | \(.workers) | \(.master) | \(.beats_over_25ms_pct) | \(.master_beats_over_25ms_pct) | \(.master_lag_ms_p99_at_most) | \(.master_lag_over_20ms_pct) | \(.housekeeping_ms_mean) | \(.housekeeping_ms_p50_at_most) / \(.housekeeping_ms_max_at_most) | \(.status_ms_mean) | \(.fleet_lag_ms_p99) |"' "$WORK/points.jsonl"
# The pass's steps (a master without mr_master_housekeeping_step_seconds
# shows zeros).
echo
echo "| policy | workers | master | housekeeping steps: mean ms (p50 <=, max <=) |"
echo "|---|---|---|---|"
jq -r 'select(.housekeeping_steps_ms != null) | "| \(.policy) | \(.workers) | \(.master) | \(.housekeeping_steps_ms) |"' "$WORK/points.jsonl"
