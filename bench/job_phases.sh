#!/usr/bin/env bash
# Where a job's time goes (issue 15): runs each job once on a running
# cluster and prints, from its record (`mrctl job run --wait --json`), the
# job's timeline and its tasks' phases (docs/jobs.md, "Task timestamps");
# with --perf, also a `perf record -g` of every worker during the job and
# its top symbols (`perf report --no-children --sort sym`).
#
#   bench/job_phases.sh --config CLUSTER.toml --job NAME --input DFS_PATH
#       [--reducers N] [--param K=V]... [--perf OUT_DIR] [--repeat N]
#
# Prints one tab-separated line per run:
#   job jtt_s maps first_map_s last_map_s last_reduce_s tail_s
#   map_read_s map_map_s map_sort_s map_setup_s red_fetch_s red_fetch_after_maps_s red_reduce_s red_write_s
# where *_s of phases are sums over the job's tasks (task-seconds),
# first_map_s / last_map_s / last_reduce_s are times since submission of the
# first map's start, the last map's end and the last reduce's end, tail_s
# is the job's end after the last task's end (the commit), and
# red_fetch_after_maps_s sums, over reduces, the part of `fetch` after the
# last map ended (the shuffle proper, not the wait for maps).
#
# The workers' PIDs come from the cluster directory's pids/ (as
# deploy/local-cluster.sh writes them). MR_BUILD_DIR picks mrctl (default
# build/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
config="" job="" input="" reducers=1 perf_dir="" repeat=1 params=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    --input) input="$2"; shift 2 ;;
    --reducers) reducers="$2"; shift 2 ;;
    --param) params+=(-p "$2"); shift 2 ;;
    --perf) perf_dir="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "job_phases: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$config" && -n "$job" && -n "$input" ]] || { echo "job_phases: --config, --job and --input are required" >&2; exit 2; }
M=("$BUILD/tools/mrctl" --config "$config")
pids=$(cat "$(dirname "$config")"/pids/w*.pid | paste -sd,)

for i in $(seq "$repeat"); do
  out="/phases/$job-$$-$i"
  json=$(mktemp)
  perf_pid=""
  if [[ -n "$perf_dir" ]]; then
    mkdir -p "$perf_dir"
    perf record -g -F 499 -p "$pids" -o "$perf_dir/$job.data" >/dev/null 2>&1 &
    perf_pid=$!
    sleep 0.5
  fi
  "${M[@]}" --quiet job run "$job" -i "$input" -o "$out" -r "$reducers" "${params[@]}" --wait --json >"$json"
  if [[ -n "$perf_pid" ]]; then
    kill -INT "$perf_pid"; wait "$perf_pid" || true
    perf report -i "$perf_dir/$job.data" --no-children --sort sym --stdio 2>/dev/null |
      grep -v '^$' | grep -E '^ +[0-9]' | head -40 >"$perf_dir/$job.top.txt" || true
    perf report -i "$perf_dir/$job.data" --no-children --sort dso --stdio 2>/dev/null |
      grep -E '^ +[0-9]' | head -15 >"$perf_dir/$job.dso.txt" || true
  fi
  jq -r '
    def s: . / 1000 * 100 | round / 100;
    def sum(f): (map(f // 0) | add // 0);
    .submit_ms as $t0 | .map_tasks as $m | .reduce_tasks as $r |
    ($m | map(.end_ms) | max) as $maps_end |
    ([$m[].end_ms, $r[].end_ms] | max) as $tasks_end |
    [.job, (.jtt_ms | s), ($m | length),
     (($m | map(.start_ms) | min) - $t0 | s), ($maps_end - $t0 | s),
     (if ($r | length) > 0 then (($r | map(.end_ms) | max) - $t0 | s) else "-" end),
     (.end_ms - $tasks_end | s),
     ($m | sum(.phase_ms.read) | s), ($m | sum(.phase_ms.map) | s), ($m | sum(.phase_ms.sort) | s),
     ($m | sum(.phase_ms.setup) | s),
     ($r | sum(.phase_ms.fetch) | s),
     ($r | map([.start_ms + (.phase_ms.fetch // 0) - ([.start_ms, $maps_end] | max), 0] | max) | add // 0 | s),
     ($r | sum(.phase_ms.reduce) | s), ([$r[].phase_ms.write, $m[].phase_ms.write] | map(. // 0) | add // 0 | s)]
    | @tsv' "$json"
  rm -f "$json"
  "${M[@]}" --quiet dfs rm -r "$out" >/dev/null 2>&1 || true
done
