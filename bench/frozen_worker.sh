#!/usr/bin/env bash
# Job turnaround with one worker frozen (issue 26, item 1): a WordCount of
# 40 maps on 4 workers, healthy and with the worker that first holds a
# finished map SIGSTOPped mid-job for --freeze-s seconds (SIGCONTed then, or
# as soon as the job has ended), in the same invocation. The cluster is the tenant's: heartbeats every
# 300 ms, declared dead after 10 missed (3 s), rpc_timeout_ms 30000.
#
#   bench/frozen_worker.sh [--runs 3] [--size 320M] [--block-size 8388608] [--freeze-s 60]
#                          [--label NAME] [--compare DIR --compare-label NAME]
#
# MR_BUILD_DIR picks the binaries (default build/); --compare DIR runs the
# same jobs with the binaries of another build directory too (say, the code
# before a change), each run alternating between the two so both see the
# same machine load. Prints one line per job and a Markdown row per build:
# medians of the job turnaround time (jtt_ms, submission to end, from the
# job's record) and their ratio. Every output is compared with mr-local's.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$BUILD/tools/mrctl"
runs=3 size=320M block_size=8388608 freeze_s=60 label="$BUILD" compare="" compare_label=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --freeze-s) freeze_s="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --compare) compare="$2"; shift 2 ;;
    --compare-label) compare_label="$2"; shift 2 ;;
    *) echo "frozen_worker: unknown option $1" >&2; exit 2 ;;
  esac
done
builds=("$BUILD") labels=("$label")
[[ -n "$compare" ]] && builds+=("$compare") labels+=("${compare_label:-$compare}")
for dir in "${builds[@]}"; do
  for b in master/mr-master worker/mr-worker tools/mrctl jobs/mr-local; do
    [[ -x "$dir/$b" ]] || { echo "frozen_worker: $dir/$b is missing: build first" >&2; exit 2; }
  done
done

WORK="$(mktemp -d /tmp/mr-bench-frozen-XXXXXX)"
CLUSTER="$WORK/cluster"
THAW_PID=""
cleanup() {
  [[ -n "$THAW_PID" ]] && kill "$THAW_PID" 2>/dev/null || true
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
cluster() { MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" "$@" --dir "$CLUSTER"; }
mr() { "$MRCTL" --config "$CLUSTER/cluster.toml" "$@"; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

"$MRCTL" gen text "$WORK/text" --size "$size" --seed 26 >/dev/null
"$BUILD/jobs/mr-local" wordcount --input "$WORK/text" --output "$WORK/oracle" --reducers 4 \
  --split-bytes "$block_size" >/dev/null
oracle="$(cat "$WORK"/oracle/* | sha256sum)"

# one_run KIND N: a fresh cluster, one job; prints its jtt_ms.
one_run() {
  local kind="$1" n="$2" id victim="" state jtt
  cluster up --workers 4 --datacenters 2 --block-size "$block_size" --replication 2 \
    --heartbeat-ms 300 >/dev/null
  mr dfs put "$WORK/text" /in/text.txt >/dev/null
  id="$(mr job run wordcount -i /in/text.txt -o /out/wc -r 4 --json | field "['id']")"
  if [[ "$kind" == frozen ]]; then
    for _ in $(seq 1 600); do
      victim="$(mr job show --json "$id" | python3 -c '
import json, sys
j = json.load(sys.stdin)
done = [m["node"] for m in j["map_tasks"] if m["end_ms"] > 0 and m["node"]]
print(done[0] if j["state"] == "running" and done else "")')"
      [[ -n "$victim" ]] && break
      sleep 0.1
    done
    [[ -n "$victim" ]] && cluster freeze "$victim"
    ( sleep "$freeze_s"; cluster thaw "$victim" ) >/dev/null 2>&1 &
    THAW_PID=$!
  fi
  while [[ "$(mr job show --json "$id" | field "['state']")" == running ]]; do sleep 0.2; done
  state="$(mr job show --json "$id" | field "['state']")"
  jtt="$(mr job show --json "$id" | field "['jtt_ms']")"
  local exact=no
  [[ "$(mr dfs cat /out/wc | sha256sum)" == "$oracle" ]] && exact=yes
  echo "  $kind run $n: job $state in ${jtt} ms, exact=$exact${victim:+, froze $victim}" >&2
  # The job is over: thaw now rather than at freeze_s (the turnaround is measured).
  if [[ -n "$THAW_PID" ]]; then
    kill "$THAW_PID" 2>/dev/null || true
    wait "$THAW_PID" 2>/dev/null || true
    THAW_PID=""
    cluster thaw "$victim" >/dev/null 2>&1 || true
  fi
  cluster down >/dev/null
  echo "$jtt"
}

declare -A healthy frozen  # build index → jtt_ms values, one a line
for i in $(seq 1 "$runs"); do
  for k in "${!builds[@]}"; do
    BUILD="${builds[$k]}" MRCTL="${builds[$k]}/tools/mrctl"
    echo "${labels[$k]}:" >&2
    healthy[$k]+="$(one_run healthy "$i")"$'\n'
    frozen[$k]+="$(one_run frozen "$i")"$'\n'
  done
done
echo "| binaries | healthy JTT (median of $runs) | one worker frozen ${freeze_s} s (median) | ratio |"
echo "|---|---:|---:|---:|"
for k in "${!builds[@]}"; do
  h="$(printf '%s' "${healthy[$k]}" | median)"
  f="$(printf '%s' "${frozen[$k]}" | median)"
  printf '| %s | %.1f s | %.1f s | %.2f |\n' "${labels[$k]}" "$(echo "$h / 1000" | bc -l)" \
    "$(echo "$f / 1000" | bc -l)" "$(echo "$f / $h" | bc -l)"
done
