#!/usr/bin/env bash
# Speculative execution on a real local cluster (issue 26, items 3 and 4):
#   1. Racing commits: `late` made to back up every task it can (cap 1, the
#      100th percentile, no minimum run, no gain asked) on a healthy
#      cluster, so backups race their originals to commit, maps and
#      reduces, map-only and with reduces. Every output must equal the
#      oracle's (tr | sort | uniq -c), with no part file twice, and the
#      masters' log must show races settled both ways or at least once.
#   2. A throttled worker (cgroup v1 cpu share, when the machine has one and
#      we are root; else this part is skipped with a line saying so): with
#      `late` at its defaults, the slow worker's task gets a backup, and the
#      output is exact.
# Usage: speculation_test.sh BUILD_DIR. Exit 0 pass, 1 fail.
set -u
build=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/mr-speculation-test.XXXXXX")"
mrctl="$build/tools/mrctl"
lc() { MR_BUILD_DIR="$build" "$root/deploy/local-cluster.sh" "$@" --dir "$dir/c"; }
cleanup() { lc down >/dev/null 2>&1; [[ -n "${KEEP:-}" ]] || rm -rf "$dir"; }
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
m() { "$mrctl" --config "$dir/c/cluster.toml" "$@"; }

# The job's output, sorted, against the oracle's.
check_output() {  # OUT LABEL
  local got="$dir/got" want="$dir/want"
  m dfs getmerge "$1" "$got" >/dev/null || { fail "$2: cannot read $1"; return; }
  LC_ALL=C sort "$got" -o "$got"
  LC_ALL=C sort "$dir/oracle" >"$want"
  cmp -s "$got" "$want" || fail "$2: output differs from the oracle ($(wc -l <"$got") vs $(wc -l <"$want") lines)"
  local parts; parts="$(m dfs ls "$1" | grep -c part-)"
  [[ "$parts" == "$3" ]] || fail "$2: $parts part files, expected $3"
}

# A field of a job's record.
field() { m job show "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

"$mrctl" gen text "$dir/in.txt" --size 24M --seed 7 >/dev/null
bash "$root/jobs/oracles/wordcount.sh" "$dir/in.txt" >"$dir/oracle"

# ---- 1. racing commits
lc up --workers 4 --datacenters 2 --heartbeat-ms 100 --block-size 2097152 --speculation late \
  --speculation-param 'cap = 1.0' --speculation-param 'slow_task_percentile = 100.0' \
  --speculation-param 'min_run_ms = 0' --speculation-param 'require_gain = false' >/dev/null ||
  { echo "FAIL: up"; exit 1; }
m dfs put "$dir/in.txt" /in.txt >/dev/null || { echo "FAIL: put"; exit 1; }
launched=0
for r in 3 0; do
  for rep in 1 2; do
    out="/out-r$r-$rep"
    m job run wordcount -i /in.txt -o "$out" -r "$r" --wait >/dev/null || { fail "job -r $r failed"; continue; }
    id="$(m job list --json | python3 -c "import json,sys; print(max(j['id'] for j in json.load(sys.stdin)))")"
    if (( r > 0 )); then
      check_output "$out" "-r $r (job $id)" "$r"
    else
      # Map-only: one part per map, each a map's word counts of its split;
      # summed per word they are the oracle's.
      m dfs getmerge "$out" "$dir/parts" >/dev/null
      awk -F'\t' '{ n[$1] += $2 } END { for (w in n) printf "%s\t%d\n", w, n[w] }' "$dir/parts" |
        LC_ALL=C sort >"$dir/summed"
      LC_ALL=C sort "$dir/oracle" | cmp -s - "$dir/summed" || fail "map-only (job $id): counts differ"
      maps="$(field "$id" maps_total)"
      parts="$(m dfs ls "$out" | grep -c part-m-)"
      [[ "$parts" == "$maps" ]] || fail "map-only (job $id): $parts parts for $maps maps"
    fi
    launched=$(( launched + $(field "$id" backups_launched) ))
  done
done
races="$(grep -c ' won; attempt ' "$dir/c/logs/master.log")"
(( launched > 0 )) || fail "no backup was launched: the race was not tested"
(( races > 0 )) || fail "no race settled in the master's log"
echo "racing: $launched backups launched, $races races settled, outputs exact"
lc down >/dev/null

# ---- 2. a throttled worker
cpu_root="$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)"
if [[ "$(id -u)" != 0 || -z "$cpu_root" ]]; then
  echo "SKIP: throttled worker (needs root and the cgroup v1 cpu controller)"
else
  # 12 maps of 2 MiB, half of them with a replica on w4; rates after 0.5 s.
  lc up --workers 4 --datacenters 2 --heartbeat-ms 100 --block-size 2097152 --speculation late \
    --speculation-param 'min_run_ms = 500' --cpu w4=5% >/dev/null || { echo "FAIL: up --cpu"; exit 1; }
  m dfs put "$dir/in.txt" /in.txt >/dev/null || { echo "FAIL: put"; exit 1; }
  m job run wordcount -i /in.txt -o /out -r 4 --wait >/dev/null || fail "throttled: job failed"
  check_output /out "throttled" 4
  b="$(field 1 backups_launched)"
  (( b > 0 )) || fail "throttled: no backup for the worker at 5 % CPU"
  echo "throttled: $b backup(s), $(field 1 backups_won) won, output exact"
fi

(( failed == 0 )) && echo "PASS: speculation keeps outputs exact"
exit "$failed"
