#!/usr/bin/env bash
# Engine Sort, builds side by side (issue 15): interleaved runs of
#   mrctl job run sort -i /bench/in -o OUT -r 2 --wait
# on clusters that are already up, one per build, each with the same input
# at /bench/in (deploy/local-cluster.sh up --workers 2 --datacenters 1
# --replication 1 --block-size 67108864 --dir DIR, with MR_BUILD_DIR set to
# the build, then `mrctl dfs put FILE /bench/in`).
#
#   bench/sort_ab.sh RUNS NAME:BUILD_DIR:CLUSTER_DIR [NAME:BUILD_DIR:CLUSTER_DIR ...]
#
# For each run, in turn for each cluster: the wall clock of the job, the CPU
# seconds (user + system, waited-for children included) its two workers used
# meanwhile (/proc/PID/stat of CLUSTER_DIR/pids/w1.pid and w2.pid), the load
# average before it, the job's id, and each
# reduce's output bytes and run time. Outputs are removed unless KEEP=1.
# Other work on the machine shows in the wall clock more than in the CPU
# seconds; compare rows of one invocation.
set -u
runs=$1; shift
# shellcheck source=lib/worker_cpu.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/worker_cpu.sh"
for i in $(seq "$runs"); do
  for spec in "$@"; do
    IFS=: read -r name build cl <<<"$spec"
    M=("$build/tools/mrctl" --config "$cl/cluster.toml")
    out=/bench/sort-$name-$i-$RANDOM
    l=$(cut -d' ' -f1-3 /proc/loadavg)
    c0=$(worker_cpu "$cl"); t0=$(date +%s.%N)
    "${M[@]}" job run sort -i /bench/in -o "$out" -r 2 --wait >/dev/null 2>&1 || echo "sort_ab: $name run $i failed"
    t1=$(date +%s.%N); c1=$(worker_cpu "$cl")
    id=$("${M[@]}" job list 2>/dev/null | awk -v o="$out" '$0 ~ o {print $1}')
    red=$("${M[@]}" job show "$id" --tasks --csv |
      awk -F, '$2 == "reduce" {printf "%s:%.0fMB/%ss ", $3, $7 / 1e6, $10 / 1000}')
    printf '%s run %d: %.2f s wall, %.1f worker CPU s, load %s, job %s, reduces %s\n' "$name" "$i" \
      "$(echo "$t1 - $t0" | bc -l)" "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)" "$l" "$id" "$red"
    [[ -n "${KEEP:-}" ]] || "${M[@]}" dfs rm "$out" >/dev/null 2>&1 || true
  done
done
