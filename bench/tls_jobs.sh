#!/usr/bin/env bash
# TLS cost on jobs: the demo workload (deploy/demo.sh: 6 workers in 2
# datacenters, 8 MiB blocks, replication 2; WordCount, Grep, Sort and Permu on
# generated text, web and DNA) with tls = "inter-dc" against tls = "off", both
# in this one invocation. Each mode gets its own local cluster whose
# datacenters listen on different loopback addresses (local-cluster.sh
# --dc-addresses), so under inter-dc exactly the links between dc1 and dc2
# (and mrctl's, whose datacenter is unknown) are encrypted. The same inputs
# (seed 42) are put in both; runs alternate between the modes, so a noisy
# neighbour hits both alike.
#
#   bench/tls_jobs.sh [--size 24M] [--runs 3]
#
# Prints a Markdown table of median job turnaround times (JTT, the master's
# end − submit, `job run --json`'s jtt_ms) per job and mode, the ratio
# inter-dc / off, and the sum over the four jobs; also writes it to
# bench/out/tls_jobs.md. Target (issue 11): the sum's ratio ≤ 1.10.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$BUILD/tools/mrctl"
size=24M runs=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tls_jobs: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "tls_jobs: --runs must be a positive number" >&2; exit 2; }
[[ -x "$MRCTL" ]] || { echo "tls_jobs: build first (ninja -C $BUILD mr-master mr-worker mrctl)" >&2; exit 2; }
OUT="$ROOT/bench/out"; mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/mr-bench-tls-jobs-XXXXXX)"
MODES=(off inter-dc)
cleanup() {
  for m in "${MODES[@]}"; do "$ROOT/deploy/local-cluster.sh" down --dir "$WORK/$m" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for kind in text web dna; do "$MRCTL" gen "$kind" "$WORK/in.$kind" --size "$size" --seed 42 >/dev/null; done
for m in "${MODES[@]}"; do
  MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" up --workers 6 --datacenters 2 --dc-addresses \
    --tls "$m" --block-size $((8 << 20)) --replication 2 --dir "$WORK/$m" >/dev/null
  for kind in text web dna; do
    "$MRCTL" --config "$WORK/$m/cluster.toml" dfs put "$WORK/in.$kind" "/in/$kind"
  done
done

# job NAME KIND REDUCERS [ARGS...]: one run of the demo's job; prints its JTT in seconds.
job() {
  local m="$1" r="$2" name="$3" kind="$4" reducers="$5"
  shift 5
  "$MRCTL" --config "$WORK/$m/cluster.toml" job run "$name" -i "/in/$kind" -o "/out/$name.$r" \
    -r "$reducers" "$@" --wait --json >"$WORK/job.json" ||
    { echo "tls_jobs: $name failed under tls = $m: $(cat "$WORK/job.json")" >&2; exit 1; }
  jq -r '.jtt_ms / 1000' "$WORK/job.json"
}
JOBS=(wordcount grep sort permu)
declare -A jtt
for r in $(seq "$runs"); do
  for m in "${MODES[@]}"; do
    jtt[wordcount,$m]+="$(job "$m" "$r" wordcount text 2) "
    jtt[grep,$m]+="$(job "$m" "$r" grep web 1 -p 'pattern=</?[a-z]+>') "
    jtt[sort,$m]+="$(job "$m" "$r" sort text 3) "
    jtt[permu,$m]+="$(job "$m" "$r" permu dna 2) "
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
{
  echo "| job (demo workload, $size inputs, 6 workers, 2 datacenters) | JTT tls = off (s) | JTT tls = inter-dc (s) | inter-dc / off |"
  echo "|---|---|---|---|"
  sum_off=0 sum_tls=0
  for j in "${JOBS[@]}"; do
    off=$(tr ' ' '\n' <<<"${jtt[$j,off]}" | grep . | median)
    tls=$(tr ' ' '\n' <<<"${jtt[$j,inter-dc]}" | grep . | median)
    sum_off=$(awk -v a="$sum_off" -v b="$off" 'BEGIN {print a + b}')
    sum_tls=$(awk -v a="$sum_tls" -v b="$tls" 'BEGIN {print a + b}')
    echo "| $j | $off | $tls | $(ratio "$tls" "$off") |"
    echo "runs $j: off ${jtt[$j,off]}; inter-dc ${jtt[$j,inter-dc]}" >&2
  done
  echo "| all four (sum of medians) | $sum_off | $sum_tls | $(ratio "$sum_tls" "$sum_off") |"
  echo
  echo "medians of $runs runs; $(nproc) cores; load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/tls_jobs.md"
