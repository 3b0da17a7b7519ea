#!/usr/bin/env bash
# The status page with a long history and the /metrics scrape (issue 14
# targets: a page ≤ 200 ms with 1,000 jobs in the history, /metrics ≤ 10 ms).
# A local cluster (3 workers, 2 datacenters, --http) runs one real WordCount
# with several maps and reduces; its record is then copied N times into the
# stopped master's history (bench/fill_history), the master restarts, and
# curl fetches each page `--runs` times over loopback. Reports the median and
# the maximum of curl's time_total per page.
#
#   bench/http_status.sh [--jobs 1000] [--runs 21]
#
# Prints a Markdown table; also writes it to bench/out/http_status.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$BUILD/tools/mrctl"
jobs=1000 runs=21
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "http_status: unknown option $1" >&2; exit 2 ;;
  esac
done
for b in "$MRCTL" "$BUILD/bench/fill_history"; do
  [[ -x "$b" ]] || { echo "http_status: $b is missing: ninja -C $BUILD mr-master mr-worker mrctl fill_history" >&2; exit 2; }
done
OUT="$ROOT/bench/out"; mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/mr-bench-http-XXXXXX)"
C="$WORK/cluster"
cleanup() { "$ROOT/deploy/local-cluster.sh" down --dir "$C" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

"$ROOT/deploy/local-cluster.sh" up --workers 3 --datacenters 2 --http --block-size 1048576 --dir "$C" >/dev/null
mrctl() { "$MRCTL" --config "$C/cluster.toml" "$@"; }
"$MRCTL" gen text "$WORK/in.txt" --size 8M --seed 3 >/dev/null
mrctl dfs put "$WORK/in.txt" /in/text.txt
mrctl job run wordcount -i /in/text.txt -o /out -r 3 --wait >/dev/null
"$ROOT/deploy/local-cluster.sh" stop master --dir "$C" >/dev/null
"$BUILD/bench/fill_history" "$C/data/master" "$jobs" >&2
"$ROOT/deploy/local-cluster.sh" start master --dir "$C" >/dev/null
port="$(grep -m1 '^http_address' "$C/cluster.toml" | sed 's/.*:\([0-9]*\)"/\1/')"
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
for _ in $(seq 1 100); do [[ "$(mrctl cluster status --json | jq '[.workers[] | select(.live)] | length')" == 3 ]] && break; sleep 0.2; done

LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
{
  echo "| page | bytes | median ms | max ms |"
  echo "|---|---|---|---|"
  for page in / /jobs /job/1 /job/1/timeline.svg "/dfs?path=/in" /metrics; do
    times=()
    bytes=0
    for _ in $(seq 1 "$runs"); do
      read -r t b < <(curl -fs -o /dev/null -w '%{time_total} %{size_download}\n' "http://127.0.0.1:$port$page")
      times+=("$t"); bytes=$b
    done
    med=$(printf '%s\n' "${times[@]}" | median)
    max=$(printf '%s\n' "${times[@]}" | sort -g | tail -1)
    # shellcheck disable=SC2016  # the backquotes are Markdown
    printf '| `%s` | %s | %.1f | %.1f |\n' "$page" "$bytes" "$(echo "$med * 1000" | bc -l)" "$(echo "$max * 1000" | bc -l)"
  done
  echo
  echo "$jobs copies of job 1 ($(mrctl job show 1 --json | jq '.maps_total') maps, 3 reduces) in the history; $runs runs per page; load average before: $LOAD; $(nproc) cores."
} | tee "$OUT/http_status.md"
