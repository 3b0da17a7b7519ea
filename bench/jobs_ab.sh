#!/usr/bin/env bash
# Engine jobs, builds side by side against their single-machine baseline
# (issue 29): interleaved rounds of the baseline program and
#   mrctl job run JOB -i /bench/in -o OUT -r R --wait
# on clusters that are already up, one per build, each with FILE at
# /bench/in (deploy/local-cluster.sh up --workers 2 --datacenters 1
# --replication 1 --block-size 67108864 --dir DIR, with MR_BUILD_DIR set to
# the build, then `mrctl dfs put FILE /bench/in`), as bench/jobs_baselines.sh
# runs them.
#
#   bench/jobs_ab.sh --job wordcount|grep|sort --input FILE [--runs N] [--grep-word the]
#                    NAME:BUILD_DIR:CLUSTER_DIR [NAME:BUILD_DIR:CLUSTER_DIR ...]
#
# Baselines (the programs jobs_baselines.sh compares with): wordcount
# `wc_tight FILE --threads 2 --sse2` (from the first build's bench/), grep
# `LC_ALL=C grep -c WORD FILE`, sort `LC_ALL=C sort --parallel=2 -S 4G FILE`.
# Each round runs the baseline, then every build's job, in turn, so load
# from other work on the machine hits them alike. Per run: wall seconds,
# CPU seconds (the baseline's own; for a job, what its two workers used:
# /proc/PID/stat of pids/w1.pid and w2.pid), the load average before it. At the end, per build: median wall,
# the ratio to the baseline's median (wordcount and grep: baseline / build,
# throughput; sort: build / baseline, time) and whether every run's output
# was byte-identical to the first build's first output (sha256 of
# `mrctl dfs cat OUT`). Outputs are removed from the DFS afterwards.
set -euo pipefail
job="" input="" runs=5 word=the
while [[ $# -gt 0 && "$1" == --* ]]; do
  case "$1" in
    --job) job="$2"; shift 2 ;;
    --input) input="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --grep-word) word="$2"; shift 2 ;;
    *) echo "jobs_ab: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$job" && -f "$input" && $# -ge 1 ]] ||
  { echo "usage: jobs_ab.sh --job wordcount|grep|sort --input FILE [--runs N] NAME:BUILD:CLUSTER..." >&2; exit 2; }
IFS=: read -r _ first_build _ <<<"$1"
tmp=$(mktemp -d /tmp/jobs-ab-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

case "$job" in
  wordcount) baseline() { "$first_build/bench/wc_tight" "$input" --threads 2 --sse2 --output "$tmp/wc.out" >/dev/null; }
             job_args=(-r 2) ;;
  grep) baseline() { LC_ALL=C grep -c -- "$word" "$input" >"$tmp/grep.out"; }  # not /dev/null: GNU grep would stop at the first match
        job_args=(-r 1 -p "pattern=$word") ;;
  sort) baseline() { LC_ALL=C sort --parallel=2 -S 4G "$input" -o "$tmp/sorted.txt"; }
        job_args=(-r 2) ;;
  *) echo "jobs_ab: unknown job $job" >&2; exit 2 ;;
esac

# shellcheck source=lib/worker_cpu.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/worker_cpu.sh"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }

ref=""
for i in $(seq "$runs"); do
  l=$(cut -d' ' -f1 /proc/loadavg)
  read -r _ _ cu0 cs0 < <(cat /proc/$$/stat | cut -d')' -f2 | awk '{print $1, $2, $14, $15}')
  t0=$(now); baseline; t1=$(now)
  read -r _ _ cu1 cs1 < <(cat /proc/$$/stat | cut -d')' -f2 | awk '{print $1, $2, $14, $15}')
  printf '%s\n' "$(echo "$t1 - $t0" | bc -l)" >>"$tmp/baseline.secs"
  printf 'jobs_ab: round %d baseline %.2f s, %.1f CPU s (load %s)\n' "$i" "$(echo "$t1 - $t0" | bc -l)" \
    "$(echo "($cu1 + $cs1 - $cu0 - $cs0) / $(getconf CLK_TCK)" | bc -l)" "$l" >&2
  for spec in "$@"; do
    IFS=: read -r name build cl <<<"$spec"
    M=("$build/tools/mrctl" --config "$cl/cluster.toml")
    out=/bench/ab-$job-$name-$i-$$
    l=$(cut -d' ' -f1 /proc/loadavg)
    c0=$(worker_cpu "$cl"); t0=$(now)
    "${M[@]}" job run "$job" -i /bench/in -o "$out" "${job_args[@]}" --wait >/dev/null
    t1=$(now); c1=$(worker_cpu "$cl")
    sum=$("${M[@]}" dfs cat "$out" | sha256sum | cut -c1-16)
    [[ -n "$ref" ]] || ref=$sum
    [[ "$sum" == "$ref" ]] || echo "$name" >>"$tmp/differs"
    "${M[@]}" dfs rm -r "$out" >/dev/null 2>&1 || "${M[@]}" dfs rm "$out" >/dev/null 2>&1 || true
    echo "$t1 - $t0" | bc -l >>"$tmp/$name.secs"
    printf 'jobs_ab: round %d %-10s %.2f s, workers %.1f CPU s (load %s), output %s\n' "$i" "$name" \
      "$(echo "$t1 - $t0" | bc -l)" "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)" "$l" "$sum" >&2
  done
done
base=$(median <"$tmp/baseline.secs")
printf 'baseline (%s) median %.2f s\n' "$job" "$base"
for spec in "$@"; do
  IFS=: read -r name _ _ <<<"$spec"
  med=$(median <"$tmp/$name.secs")
  if [[ "$job" == sort ]]; then ratio=$(echo "$med / $base" | bc -l); what="time / baseline's"
  else ratio=$(echo "$base / $med" | bc -l); what="x baseline's throughput"; fi
  same=yes; grep -qx "$name" "$tmp/differs" 2>/dev/null && same=NO
  printf '%-10s median %.2f s  %.2f %s  output identical to the first: %s\n' "$name" "$med" "$ratio" "$what" "$same"
done
