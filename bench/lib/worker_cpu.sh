# shellcheck shell=bash
# worker_cpu CLUSTER_DIR: the CPU ticks (user + system, waited-for children
# included; /proc/PID/stat) used so far by the workers w1 and w2 of a local
# cluster (deploy/local-cluster.sh writes their PIDs to CLUSTER_DIR/pids/).
# Divide a difference by `getconf CLK_TCK` for seconds. Sourced by
# bench/sort_ab.sh and bench/jobs_ab.sh.
worker_cpu() {
  local s=0 p
  for p in $(cat "$1/pids/w1.pid" "$1/pids/w2.pid"); do
    s=$((s + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat")))
  done
  echo "$s"
}
