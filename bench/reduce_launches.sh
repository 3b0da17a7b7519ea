#!/usr/bin/env bash
# Reduce launches per second as a job's reducer count R grows (issue 28
# item 9), builds side by side in one invocation:
#
#   bench/reduce_launches.sh "R1 R2 ..." NAME:BUILD_DIR [NAME:BUILD_DIR ...]
#   e.g. bench/reduce_launches.sh "1000 5000 20000" before:/path/old/build after:build
#
# For each build: a local cluster (2 workers, one datacenter, heartbeat
# 100 ms, [jobs] max_reduces = 1000000, slowstart 1), one 64 KiB text file;
# then for each R, `mrctl job run wordcount -r R --wait`. Prints per run:
# launches/s = R / (last reduce end - first reduce start) from the job's
# task records, the master's CPU seconds over the job, and the load average
# before it. The reduces do almost nothing (a few words each), so the rate
# is the master's: its per-launch and per-acceptance work. Compare rows of
# one invocation (the machine's other load shows in both).
set -u
rs=$1; shift
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/mr-reduce-launches.XXXXXX")"
dirs=()
cleanup() {
  local d
  for d in "${dirs[@]}"; do MR_BUILD_DIR=x "$here/deploy/local-cluster.sh" down --dir "$d" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT
cpu() { awk '{print $14 + $15}' "/proc/$(cat "$1/pids/master.pid")/stat"; }
hz=$(getconf CLK_TCK)
for spec in "$@"; do
  IFS=: read -r name build <<<"$spec"
  d="$tmp/$name"; dirs+=("$d")
  MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" up --workers 2 --datacenters 1 --replication 1 \
    --heartbeat-ms 100 --jobs-option 'max_reduces = 1000000' --jobs-option 'slowstart = 1.0' \
    --dir "$d" >/dev/null 2>&1 ||
    MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" up --workers 2 --datacenters 1 \
      --replication 1 --heartbeat-ms 100 --jobs-option 'slowstart = 1.0' --dir "$d" >/dev/null ||
    { echo "reduce_launches: $name: the cluster did not come up"; continue; }
  M=("$build/tools/mrctl" --config "$d/cluster.toml")
  "${M[@]}" gen text "$tmp/in-$name.txt" --size 64K --seed 9 >/dev/null
  "${M[@]}" dfs put "$tmp/in-$name.txt" /in.txt >/dev/null
  for r in $rs; do
    l=$(cut -d' ' -f1-3 /proc/loadavg)
    c0=$(cpu "$d"); t0=$(date +%s.%N)
    if ! "${M[@]}" job run wordcount -i /in.txt -o "/out-$r" -r "$r" --wait --json >"$tmp/job.json" 2>"$tmp/job.err"; then
      echo "reduce_launches: $name R=$r failed: $(tail -n 1 "$tmp/job.err")"; continue
    fi
    t1=$(date +%s.%N); c1=$(cpu "$d")
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/job.json")
    "${M[@]}" job show "$id" --json >"$tmp/tasks.json"
    python3 - "$tmp/tasks.json" "$name" "$r" "$t0" "$t1" "$c0" "$c1" "$hz" "$l" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
name, r, t0, t1, c0, c1, hz, load = sys.argv[2:]
red = rec.get("reduce_tasks", [])
first = min(t["start_ms"] for t in red); last = max(t["end_ms"] for t in red)
secs = max(last - first, 1) / 1000
print(f"{name:>8} R={int(r):>7}: {len(red) / secs:8.1f} launches/s ({secs:.1f} s of reduces, "
      f"{float(t1) - float(t0):.1f} s job), master CPU {(int(c1) - int(c0)) / int(hz):.1f} s, load {load}")
PY
    "${M[@]}" dfs rm -r "/out-$r" >/dev/null 2>&1
  done
  MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" down --dir "$d" >/dev/null 2>&1
done
