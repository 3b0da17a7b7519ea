#!/usr/bin/env bash
# DFS throughput: `dfs put` and `dfs cat` of one file on a local cluster, at
# replication 1 and 2, next to two baselines measured in the same run:
# single-stream loopback TCP (iperf3) and `cat FILE > /dev/null` (page cache).
#
#   bench/dfs_throughput.sh [--size 1G] [--runs 3] [--block-size 128M] [--pin]
#
# --pin (issue 29 item 5): each worker's process on a core of its own
# (taskset: w1 on CPU 0, w2 on CPU 1, ...), the master and the client on
# the last CPU, so the pipeline's hops stop competing for one scheduler's
# cores. On a 2-core machine the client shares CPU 1 with w2: a machine
# has to have workers + 1 cores before every process has its own.
#
# Prints a Markdown table of medians and ratios; also writes it to
# bench/out/dfs_throughput.md. Targets (issue 15): cat ≥ 70 % and put ≥ 40 %
# of loopback TCP at replication 1; put at replication 2 ≥ 65 % of put at
# replication 1. Checksums are verified on every read and write.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
MRCTL="$BUILD/tools/mrctl"
size=1G runs=3 block_size=128M pin=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --pin) pin=1; shift ;;
    *) echo "dfs_throughput: unknown option $1" >&2; exit 2 ;;
  esac
done
"$ROOT/deploy/install-deps.sh"
[[ -x "$MRCTL" ]] || { cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null && ninja -C "$BUILD"; }

OUT="$ROOT/bench/out"; mkdir -p "$OUT"
WORK="$(mktemp -d /tmp/mr-bench-XXXXXX)"
CLUSTER="$WORK/cluster"
IPERF_PID=""
cleanup() {
  "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1 || true
  [[ -n "$IPERF_PID" ]] && kill "$IPERF_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.0f", b / t / 1e6}'; }

FILE="$WORK/input.txt"
"$MRCTL" gen text "$FILE" --size "$size" --seed 1
sync
BYTES=$(stat -c %s "$FILE")
echo "input: $BYTES bytes of generated text; $runs runs each; block size $block_size" >&2

# Baseline 1: page-cache read.
cat "$FILE" >/dev/null
pc=()
for _ in $(seq "$runs"); do t0=$(now); cat "$FILE" >/dev/null; t1=$(now); pc+=("$(mbps "$BYTES" "$(echo "$t1 - $t0" | bc -l)")"); done
PAGECACHE=$(printf '%s\n' "${pc[@]}" | median)

# Baseline 2: single-stream loopback TCP.
PORT=$(( 40000 + RANDOM % 10000 ))
iperf3 -s -p "$PORT" >/dev/null 2>&1 & IPERF_PID=$!
sleep 0.5
tcp=()
for _ in $(seq "$runs"); do
  bps=$(iperf3 -c 127.0.0.1 -p "$PORT" -t 3 -J | jq '.end.sum_received.bits_per_second')
  tcp+=("$(awk -v b="$bps" 'BEGIN {printf "%.0f", b / 8 / 1e6}')")
done
kill "$IPERF_PID" 2>/dev/null || true; IPERF_PID=""
TCP=$(printf '%s\n' "${tcp[@]}" | median)

"$ROOT/deploy/local-cluster.sh" up --workers 2 --datacenters 1 --dir "$CLUSTER" \
  --block-size "$(numfmt --from=iec "$block_size")" >/dev/null
M=("$MRCTL" --config "$CLUSTER/cluster.toml")
if (( pin )); then
  command -v taskset >/dev/null || { echo "dfs_throughput: --pin needs taskset (util-linux)" >&2; exit 2; }
  last=$(( $(nproc) - 1 ))
  cpu=0
  for w in w1 w2; do
    taskset -a -p -c "$(( cpu % (last + 1) ))" "$(cat "$CLUSTER/pids/$w.pid")" >/dev/null
    cpu=$(( cpu + 1 ))
  done
  taskset -a -p -c "$last" "$(cat "$CLUSTER/pids/master.pid")" >/dev/null
  M=(taskset -c "$last" "${M[@]}")
  echo "pinned: w1 on CPU 0, w2 on CPU $(( 1 % (last + 1) )), the master and the client on CPU $last" >&2
fi

declare -A result
for r in 1 2; do
  puts=() cats=()
  # Run 0 is a warm-up, not counted. Before each put the previous copy is
  # removed (its dirty pages are dropped, not written back) and `sync` leaves
  # nothing dirty. Two effects of this VM would otherwise dominate: the kernel
  # throttles writers to disk speed a few GiB into a run, and pages freed more
  # than ~2 s earlier have gone back to the hypervisor (virtio-balloon free
  # page reporting), so writing into them runs at a tenth of the usual speed.
  # A long-running worker writes into recycled page cache, as here.
  for i in $(seq 0 "$runs"); do
    "${M[@]}" dfs rm -r /bench >/dev/null 2>&1 || true
    sleep 0.5; sync
    t0=$(now); "${M[@]}" dfs put --replication "$r" "$FILE" "/bench/r$r-$i"; t1=$(now)
    [[ $i -eq 0 ]] && continue
    puts+=("$(mbps "$BYTES" "$(echo "$t1 - $t0" | bc -l)")")
    t0=$(now); "${M[@]}" dfs cat "/bench/r$r-$i" >/dev/null; t1=$(now)
    cats+=("$(mbps "$BYTES" "$(echo "$t1 - $t0" | bc -l)")")
  done
  result[put$r]=$(printf '%s\n' "${puts[@]}" | median)
  result[cat$r]=$(printf '%s\n' "${cats[@]}" | median)
  echo "replication $r: put ${puts[*]} MB/s, cat ${cats[*]} MB/s" >&2
done
# Spot-check correctness of what was measured.
[[ "$("${M[@]}" dfs cat "/bench/r2-$runs" | sha256sum)" == "$(sha256sum <"$FILE")" ]] || { echo "dfs_throughput: cat returned wrong bytes" >&2; exit 1; }

pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f %%", 100 * a / b}'; }
verdict() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {print (a / b >= t) ? "met" : "MISSED"}'; }
{
  echo "| measurement (median of $runs, $(numfmt --to=iec "$BYTES")B file$( (( pin )) && echo ", workers pinned")) | MB/s | ratio | target |"
  echo "|---|---:|---:|---|"
  echo "| loopback TCP, one stream (iperf3) | $TCP | 100 % | baseline |"
  echo "| \`cat FILE > /dev/null\` (page cache) | $PAGECACHE | $(pct "$PAGECACHE" "$TCP") of TCP | reference |"
  echo "| \`dfs cat\`, replication 1 | ${result[cat1]} | $(pct "${result[cat1]}" "$TCP") of TCP | ≥ 70 %: $(verdict "${result[cat1]}" "$TCP" 0.7) |"
  echo "| \`dfs put\`, replication 1 | ${result[put1]} | $(pct "${result[put1]}" "$TCP") of TCP | ≥ 40 %: $(verdict "${result[put1]}" "$TCP" 0.4) |"
  echo "| \`dfs put\`, replication 2 | ${result[put2]} | $(pct "${result[put2]}" "${result[put1]}") of put r=1 | ≥ 65 %: $(verdict "${result[put2]}" "${result[put1]}" 0.65) |"
  echo "| \`dfs cat\`, replication 2 | ${result[cat2]} | $(pct "${result[cat2]}" "$TCP") of TCP | — |"
} | tee "$OUT/dfs_throughput.md"
