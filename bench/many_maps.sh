#!/usr/bin/env bash
# A job of many maps at `ulimit -n 1024` (issue 28 item 8): WordCount over a
# directory of MAPS small files (one map each), 2 reduces, on a local cluster
# of 2 workers whose daemons start under `ulimit -n 1024`; its output must
# equal a shell pipeline's. Baseline in the same invocation: the same job on
# a cluster started with `ulimit -n 65536` (or the hard limit, if lower)
# and jobs.merge_factor = MAPS (one merge pass, every segment open at once,
# as before issue 28).
#
#   bench/many_maps.sh [MAPS] [BUILD_DIR]     (defaults: 10000, build/)
#
# Prints, per run: the job's wall time, its reduces' longest run, and the
# load average before it. Exit 1 if a job fails or its output differs.
set -u
maps=${1:-10000}
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${2:-$here/build}" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/mr-many-maps.XXXXXX")"
mrctl="$build/tools/mrctl"
export LC_ALL=C
cleanup() {
  local d
  for d in "$tmp"/c-*; do [[ -d "$d" ]] && MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" down --dir "$d" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/in"
"$mrctl" gen text "$tmp/all.txt" --size $((maps * 2048)) --seed 10 >/dev/null
split -n "l/$maps" -a 6 -d "$tmp/all.txt" "$tmp/in/part-"   # MAPS files of ~2 KiB, whole lines
bash "$here/jobs/oracles/wordcount.sh" "$tmp/all.txt" >"$tmp/oracle"
echo "many_maps: $(ls "$tmp/in" | wc -l) input files, $(wc -c <"$tmp/all.txt") bytes"

status=0
# run NAME NOFILE [JOBS_OPTION]
run() {
  local name=$1 nofile=$2 opt=${3:-} d="$tmp/c-$1" t0 t1 l
  local args=(--workers 2 --datacenters 1 --replication 1 --heartbeat-ms 100)
  [[ -n "$opt" ]] && args+=(--jobs-option "$opt")
  ( ulimit -n "$nofile" && MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" up "${args[@]}" --dir "$d" >/dev/null ) ||
    { echo "many_maps: $name: the cluster did not come up"; status=1; return; }
  local M=("$mrctl" --config "$d/cluster.toml")
  "${M[@]}" dfs put "$tmp/in" /in >/dev/null || { echo "many_maps: $name: put failed"; status=1; return; }
  l=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$(date +%s.%N)
  if ! "${M[@]}" job run wordcount -i /in -o /out -r 2 --wait --json >"$tmp/$name.json" 2>"$tmp/$name.err"; then
    echo "many_maps: $name (nofile $nofile${opt:+, $opt}): the job FAILED: $(tail -n 1 "$tmp/$name.err")"
    status=1
  else
    t1=$(date +%s.%N)
    "${M[@]}" dfs cat /out | sort | cmp -s - <(sort "$tmp/oracle") && exact=exact || { exact=DIFFERS; status=1; }
    python3 - "$tmp/$name.json" "$name" "$nofile" "$t0" "$t1" "$l" "$exact" "$opt" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1])); name, nofile, t0, t1, load, exact, opt = sys.argv[2:]
red = max(t["run_ms"] for t in rec["reduce_tasks"]) / 1000
print(f"many_maps: {name:>8} (nofile {nofile}{', ' + opt if opt else ''}): {rec['maps_total']} maps, "
      f"job {float(t1) - float(t0):.1f} s, longest reduce {red:.1f} s, output {exact}, load {load}")
PY
  fi
  MR_BUILD_DIR="$build" "$here/deploy/local-cluster.sh" down --dir "$d" >/dev/null 2>&1
}
hard=$(ulimit -Hn)
high=65536
[[ "$hard" != unlimited && "$hard" -lt "$high" ]] && high=$hard
if (( high < maps + 100 )); then
  echo "many_maps: the hard limit on open files ($hard) is too low for the one-pass baseline of $maps maps" >&2
  exit 2
fi
run bounded 1024
run onepass "$high" "merge_factor = $maps"
exit $status
