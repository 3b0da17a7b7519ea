#!/usr/bin/env bash
# What counters cost (issue 27, item 2): WordCount and Sort as
# bench/jobs_baselines.sh runs them (a local cluster of 2 workers, 1
# datacenter, replication 1, `mrctl job run ... --wait`), timed on two
# builds in the same invocation: this tree (counters) and a base revision
# without them (default: main's merge base with HEAD).
#
#   bench/counters_overhead.sh [--size 128M] [--runs 5] [--base REV | --base-build DIR]
#                              [--build DIR [--prebuilt]]
#
# Steps: builds mr-master, mr-worker, mr-task and mrctl of this tree in
# --build (default build-bench/) and of `git archive REV` in
# build-bench-base/ — or, with --base-build, copies those four binaries
# of an existing build directory of the base (e.g. main's build/, when it
# is current) so that a rebuild there cannot change them mid-run
# (--prebuilt: --build DIR is used as it is, not built); generates
# FILE with `mrctl gen text --size SIZE --seed 1`; starts one cluster per
# build (both up for the whole run, each idle while the other works); then
# RUNS rounds, each running WordCount and Sort once on each build,
# interleaved, the order of the builds alternating from round to round;
# checks that both builds wrote the same bytes; prints the median seconds
# of each (job, build), the ratio new / base, and the load average before
# and after. Bounded: RUNS × 4 jobs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
size=128M runs=5 base="" base_build="" NEW="$ROOT/build-bench" prebuilt=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --base) base="$2"; shift 2 ;;
    --base-build) base_build="$2"; shift 2 ;;
    --build) NEW="$2"; shift 2 ;;
    --prebuilt) prebuilt=1; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "counters_overhead: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "counters_overhead: --runs must be a positive number" >&2; exit 2; }
[[ -n "$base" ]] || base=$(git -C "$ROOT" merge-base HEAD main)
git -C "$ROOT" rev-parse --verify -q "$base^{commit}" >/dev/null ||
  { echo "counters_overhead: no revision '$base'" >&2; exit 2; }

WORK="$(mktemp -d /tmp/mr-counters-bench-XXXXXX)"
OLD="$ROOT/build-bench-base"
declare -A CLUSTER=()
cleanup() {
  for b in "${!CLUSTER[@]}"; do
    MR_BUILD_DIR="${b}" "$ROOT/deploy/local-cluster.sh" down --dir "${CLUSTER[$b]}" >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

targets=(mr-master mr-worker mr-task mrctl)
build() {  # SRC BUILD_DIR
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)" >/dev/null
  ninja -C "$2" -j "$(nproc)" "${targets[@]}" >/dev/null
}
(( prebuilt )) || build "$ROOT" "$NEW"
if [[ -n "$base_build" ]]; then
  OLD="$WORK/base-build"
  mkdir -p "$OLD/master" "$OLD/worker" "$OLD/tools"
  for f in master/mr-master worker/mr-worker worker/mr-task tools/mrctl; do
    cp "$base_build/$f" "$OLD/$f" || { echo "counters_overhead: no $base_build/$f" >&2; exit 2; }
  done
  base="$base_build"
else
  mkdir -p "$WORK/base-src"
  git -C "$ROOT" archive "$base" | tar -x -C "$WORK/base-src"
  build "$WORK/base-src" "$OLD"
fi

"$NEW/tools/mrctl" gen text "$WORK/in.txt" --size "$size" --seed 1 >/dev/null
bytes=$(stat -c %s "$WORK/in.txt")
for b in "$NEW" "$OLD"; do
  dir="$WORK/cluster-$(basename "$b")"
  CLUSTER[$b]="$dir"
  MR_BUILD_DIR="$b" "$ROOT/deploy/local-cluster.sh" up --workers 2 --datacenters 1 --replication 1 \
    --dir "$dir" >/dev/null
  "$b/tools/mrctl" --config "$dir/cluster.toml" dfs put "$WORK/in.txt" /bench/in >/dev/null
done

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A secs=()
run() {  # BUILD JOB ROUND
  local b="$1" job="$2" i="$3" t0 t1
  t0=$(now)
  "$b/tools/mrctl" --config "${CLUSTER[$b]}/cluster.toml" job run "$job" -i /bench/in \
    -o "/bench/$job-$i" -r 2 --wait >/dev/null
  t1=$(now)
  secs["$job $b"]+="$(echo "$t1 - $t0" | bc -l) "
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq "$runs"); do
  order=("$NEW" "$OLD")
  (( i % 2 == 0 )) && order=("$OLD" "$NEW")
  for job in wordcount sort; do
    for b in "${order[@]}"; do run "$b" "$job" "$i"; done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

for job in wordcount sort; do
  a=$("$NEW/tools/mrctl" --config "${CLUSTER[$NEW]}/cluster.toml" dfs cat "/bench/$job-1" | sha256sum)
  b=$("$OLD/tools/mrctl" --config "${CLUSTER[$OLD]}/cluster.toml" dfs cat "/bench/$job-1" | sha256sum)
  [[ "$a" == "$b" ]] || { echo "counters_overhead: $job output differs between the builds" >&2; exit 1; }
done

echo "counters_overhead: $bytes bytes, $runs rounds, base $base," \
  "load average before: $load_before, after: $load_after"
printf '| job | base median s | counters median s | counters / base |\n|---|---|---|---|\n'
for job in wordcount sort; do
  new=$(tr ' ' '\n' <<<"${secs["$job $NEW"]}" | grep . | median)
  old=$(tr ' ' '\n' <<<"${secs["$job $OLD"]}" | grep . | median)
  printf '| %s | %.2f | %.2f | %.3f |\n' "$job" "$old" "$new" "$(echo "$new / $old" | bc -l)"
  echo "counters_overhead: $job runs, base: ${secs["$job $OLD"]}; counters: ${secs["$job $NEW"]}" >&2
done
