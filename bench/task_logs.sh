#!/usr/bin/env bash
# Task logs (issue 27 targets; docs/logs-and-counters.md):
#   1. `mrctl job logs` of a mapper that writes 2 MiB to stderr returns its
#      head and tail within [task_logs] limit_kb (1024 KiB by default);
#   2. the logs of every attempt of a finished job of --maps maps (1000) are
#      fetched in < 2 s.
#
#   bench/task_logs.sh [--maps 1000] [--workers 3] [--runs 5]
#
# Uses the binaries in $MR_BUILD_DIR (default build/). Starts a local
# cluster (64 KiB blocks, replication 1) in a temporary directory. For 1:
# a one-map streaming job whose mapper writes a first line, 2 MiB of filler
# and a last line on stderr; prints the bytes `job logs JOB m0` returned and
# whether both lines and the "left out" line are in it. For 2: --maps
# blocks of generated text, a streaming job (`cat` as mapper, 3 lines of
# stderr each, one reducer); times `mrctl job logs JOB` (every attempt)
# --runs times against the baseline `mrctl job show JOB --json` (one master
# call returning the job's record) in the same invocation, interleaved;
# prints medians, their ratio, the attempts and bytes fetched, and the load
# average before the runs. KEEP=1 keeps the cluster's directory (logs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MR_BUILD_DIR="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$MR_BUILD_DIR/tools/mrctl"
maps=1000 workers=3 runs=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --maps) maps="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "task_logs: unknown option $1" >&2; exit 2 ;;
  esac
done
for b in tools/mrctl master/mr-master worker/mr-worker; do
  [[ -x "$MR_BUILD_DIR/$b" ]] || { echo "task_logs: $MR_BUILD_DIR/$b is missing: build it first" >&2; exit 2; }
done
WORK="$(mktemp -d /tmp/mr-task-logs-XXXXXX)"
CLUSTER="$WORK/cluster"
cleanup() {
  "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1 || true
  if [[ -n "${KEEP:-}" ]]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
"$ROOT/deploy/local-cluster.sh" up --workers "$workers" --datacenters 1 --block-size 65536 \
  --replication 1 --heartbeat-ms 100 --dir "$CLUSTER" >/dev/null
mr() { "$MRCTL" --config "$CLUSTER/cluster.toml" "$@"; }
job_id() { sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -1; }
now_ms() { date +%s%3N; }

# 1. A 2 MiB-stderr mapper.
"$MRCTL" gen text "$WORK/small.txt" --size 20K --seed 1 >/dev/null
mr dfs put "$WORK/small.txt" /in/small.txt >/dev/null
mapper='echo first-line >&2; yes filler-filler-filler | head -c 2097152 >&2; cat; echo last-line >&2'
id=$(mr job run streaming --mapper "$mapper" -i /in/small.txt -o /out/big -r 1 --wait --json | job_id)
mr job logs "$id" m0 >"$WORK/big.log"
has() { grep -q -- "$1" "$WORK/big.log" && echo yes || echo NO; }
echo "2 MiB stderr: job logs returned $(stat -c %s "$WORK/big.log") bytes (cap 1048576 + the left-out line);" \
     "first line: $(has first-line), last line: $(has last-line), left-out line: $(has 'bytes left out here')"

# 2. The logs of every attempt of a job of $maps maps.
"$MRCTL" gen text "$WORK/text.txt" --size "$((maps * 64 - 32))K" --seed 2 >/dev/null
mr dfs put "$WORK/text.txt" /in/text.txt >/dev/null
mapper='echo "map $mapreduce_task_id starts" >&2; cat; echo "read $mapreduce_map_input_length bytes" >&2; echo done >&2'
start=$(now_ms)
id=$(mr job run streaming --mapper "$mapper" -i /in/text.txt -o /out/many -r 1 --wait --json | job_id)
echo "job $id: $(mr job show "$id" --json | sed -n 's/.*"maps_total": *\([0-9]*\).*/\1/p' | head -1) maps in $(( $(now_ms) - start )) ms"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
logs=() shows=()
for ((r = 0; r < runs; ++r)); do
  t=$(now_ms); mr job show "$id" --json >/dev/null; shows+=($(( $(now_ms) - t )))
  t=$(now_ms); mr job logs "$id" >"$WORK/all.log"; logs+=($(( $(now_ms) - t )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ml=$(median "${logs[@]}") ms=$(median "${shows[@]}")
echo "job logs (every attempt): $(grep -c '^==> ' "$WORK/all.log") attempts, $(stat -c %s "$WORK/all.log") bytes;" \
     "median ${ml} ms over $runs runs (${logs[*]}); baseline job show --json median ${ms} ms (${shows[*]});" \
     "ratio $(awk -v a="$ml" -v b="$ms" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
