#!/usr/bin/env bash
# Users' own jobs against the built-in WordCount (issue 14 targets): the
# same text, the same local cluster, the same invocation.
#
#   bench/user_jobs.sh [--size 1G] [--runs 3] [--workers 2] [--reducers 2]
#
#   builtin         mrctl job run wordcount
#   streaming_awk   mrctl job run streaming, examples/streaming/wc_*.awk (mawk)
#   streaming_py    mrctl job run streaming, examples/streaming/wc_*.py (python3)
#   plugin          mrctl job run libplugin_wordcount.so (examples/plugin-wordcount)
#
# Uses the binaries in $MR_BUILD_DIR (default build/; build mrctl, mr-master,
# mr-worker, mr-task and plugin_wordcount first). Starts a local cluster (deploy/local-cluster.sh, one
# datacenter, 64 MiB blocks, replication 1) in a temporary directory,
# generates the text with `mrctl gen text --size SIZE --seed 1` and puts it,
# then runs each job --runs times, interleaved (builtin, plugin, awk, py,
# builtin, ...), timing `job run --wait` on the wall clock; checks every streaming
# output equals the built-in one's (sha256 of `dfs cat`); prints the medians,
# MB/s and each job's ratio of medians to builtin's, and the load average
# before each run (other work on the machine skews the ratios).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MR_BUILD_DIR="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$MR_BUILD_DIR/tools/mrctl"
size=1G runs=3 workers=2 reducers=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --reducers) reducers="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "user_jobs: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "user_jobs: --runs must be a positive number" >&2; exit 2; }
SO="$MR_BUILD_DIR/tests/plugins/libplugin_wordcount.so"
for b in tools/mrctl master/mr-master worker/mr-worker worker/mr-task tests/plugins/libplugin_wordcount.so; do
  [[ -x "$MR_BUILD_DIR/$b" ]] || { echo "user_jobs: $MR_BUILD_DIR/$b is missing: build it first" >&2; exit 2; }
done

WORK="$(mktemp -d /tmp/mr-user-jobs-XXXXXX)"
CLUSTER="$WORK/cluster"
cleanup() {
  "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$ROOT/deploy/local-cluster.sh" up --workers "$workers" --datacenters 1 --block-size 67108864 \
  --replication 1 --heartbeat-ms 100 --dir "$CLUSTER" >/dev/null
mr() { "$MRCTL" --config "$CLUSTER/cluster.toml" "$@"; }
"$MRCTL" gen text "$WORK/text.txt" --size "$size" --seed 1 >/dev/null
bytes=$(stat -c %s "$WORK/text.txt")
mr dfs put "$WORK/text.txt" /in/text.txt >/dev/null
rm -f "$WORK/text.txt"

E="$ROOT/examples/streaming"
declare -A FLAGS=(
  [builtin]="wordcount"
  [streaming_awk]="streaming --mapper 'LC_ALL=C awk -f wc_mapper.awk' --reducer 'LC_ALL=C awk -f wc_reducer.awk' --file $E/wc_mapper.awk --file $E/wc_reducer.awk"
  [streaming_py]="streaming --mapper '/usr/bin/python3 wc_mapper.py' --reducer '/usr/bin/python3 wc_reducer.py' --file $E/wc_mapper.py --file $E/wc_reducer.py"
  [plugin]="$SO"
)
NAMES=(builtin plugin streaming_awk streaming_py)
declare -A TIMES SHA
n=0
for ((run = 1; run <= runs; run++)); do
  for name in "${NAMES[@]}"; do
    out="/out/$name-$run"
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    eval "mr job run ${FLAGS[$name]} -i /in/text.txt -o $out -r $reducers --wait" >/dev/null
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    TIMES[$name]+="$secs "
    sha=$(mr dfs cat "$out" | sha256sum | cut -d' ' -f1)
    if [[ -n "${SHA[builtin]:-}" && "$sha" != "${SHA[builtin]}" ]]; then
      echo "user_jobs: $name's output differs from builtin's" >&2; exit 1
    fi
    SHA[$name]=$sha
    mr dfs rm -r "$out" >/dev/null
    printf '%-14s run %d: %7.2f s  (load before %s)\n' "$name" "$run" "$secs" "$load"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
base=$(echo "${TIMES[builtin]}" | median)
echo
echo "input $bytes bytes, $workers workers, $reducers reducers, $runs runs; outputs identical"
printf '| %-14s | %9s | %7s | %s |\n' job "median s" "MB/s" "throughput vs builtin"
printf '| %-14s | %9s | %7s | %s |\n' --- --- --- ---
for name in "${NAMES[@]}"; do
  m=$(echo "${TIMES[$name]}" | median)
  printf '| %-14s | %9.2f | %7.1f | %.3f |\n' "$name" "$m" "$(echo "$bytes / 1000000 / $m" | bc -l)" \
    "$(echo "$base / $m" | bc -l)"
done
