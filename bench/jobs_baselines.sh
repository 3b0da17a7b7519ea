#!/usr/bin/env bash
# Job benchmark, baselines side (issue 3): the single-machine programs the
# engine's WordCount, Grep and Sort are compared with, all measured in this
# run on the same generated text.
#
#   bench/jobs_baselines.sh [--size 1G] [--runs 3] [--out DIR] [--grep-word the]
#
#   wc_tight_1t   bench/wc_tight FILE --threads 1 --output OUT
#   wc_tight_2t   bench/wc_tight FILE --threads 2 --output OUT
#   wc_tight_2t_sse2  the same with --sse2: the engine's way of splitting words
#                 (since issue 15), for the like-for-like ratio the targets
#                 table prints below the issue's
#   wc_mrmpi_2p   mpirun -np 2 bench/wc_mrmpi FILE --output OUT --tmpdir WORK
#   gnu_sort      LC_ALL=C sort --parallel=2 -S 4G FILE -o OUT
#   grep_count    LC_ALL=C grep -c WORD FILE
#
# Steps: installs packages (deploy/install-deps.sh, bench/install-bench-deps.sh);
# builds mrctl and the bench programs in $MR_BUILD_DIR (default build-bench/,
# never build/); generates FILE with `mrctl gen text --size SIZE --seed 1`;
# checks correctness on a 20 MB file (wc_tight with 1 and 2 threads, wc_mrmpi
# and a tr|sort|uniq pipeline must print the same bytes); times each baseline
# --runs times (wall clock of the whole command, output written to a local
# file) and takes medians. The word counts' own JSON lines give the median
# of their counting time alone (count_seconds), reported beside the wall time.
#
# Writes DIR/jobs_baselines.json (DIR defaults to bench/out):
#   {"machine": {...}, "input": {...}, "runs": N, "correctness": {...},
#    "results": [{"name", "command", "median_seconds", "mb_per_s",
#                 "seconds": [...], "count_seconds", "count_mb_per_s",
#                 "load_before", "busy_before_pct"}, ...]}
# where mb_per_s = input bytes / 1e6 / median_seconds; and prints a Markdown
# table (also DIR/jobs_baselines.md). The engine's cluster runs plug in at
# engine_runs() below, timed by the same time_median().
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MR_BUILD_DIR="${MR_BUILD_DIR:-$ROOT/build-bench}"
BUILD="$MR_BUILD_DIR"
MRCTL="$BUILD/tools/mrctl"
WC_TIGHT="$BUILD/bench/wc_tight"
WC_MRMPI="$BUILD/bench/wc_mrmpi"

size=1G runs=3 out="$ROOT/bench/out" grep_word=the
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --grep-word) grep_word="$2"; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "jobs_baselines: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "jobs_baselines: --runs must be a positive number" >&2; exit 2; }

# Added to by the engine side (e.g. mr-master mr-worker), built with the rest.
ENGINE_TARGETS=(mr-master mr-worker)

"$ROOT/deploy/install-deps.sh"
"$ROOT/bench/install-bench-deps.sh"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$BUILD" -j "$(nproc)" mrctl wc_tight wc_mrmpi "${ENGINE_TARGETS[@]}" >/dev/null

MPIRUN=(mpirun -np 2 --oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)

mkdir -p "$out"
out="$(cd "$out" && pwd)"
WORK="$(mktemp -d /tmp/mr-jobs-bench-XXXXXX)"
CLUSTER=""  # set by engine_runs() when it starts a cluster
cleanup() {
  [[ -n "$CLUSTER" ]] && "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/runs"

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
load1() { cut -d' ' -f1 /proc/loadavg; }
# Percent of the machine's CPU time that was busy over the next second. Run
# while this script waits, it shows other work on the machine (the load
# average cannot: it still counts this script's own previous steps).
cpu_busy() {
  local a b total=0 k
  read -ra a < <(sed -n 's/^cpu  //p' /proc/stat); sleep 1
  read -ra b < <(sed -n 's/^cpu  //p' /proc/stat)
  for k in 0 1 2 3 4 5 6 7; do total=$((total + b[k] - a[k])); done
  echo $(( total > 0 ? 100 * (total - (b[3] - a[3]) - (b[4] - a[4])) / total : 0 ))
}

# ---------------------------------------------------------------------------
# time_median NAME BYTES FUNC [ARGS...]
#
# The one way every figure of this benchmark is taken, baselines and engine
# alike. Calls `FUNC ARGS... RUN` for RUN = 1..--runs, one after another, each
# timed by wall clock from start to exit (so FUNC should do only the measured
# work; RUN lets it pick a fresh output name per run). FUNC's stdout is kept
# in $WORK/runs/NAME.RUN; when it holds a JSON object with count_seconds (as
# wc_tight and wc_mrmpi print), its median is recorded too. A failing FUNC
# stops the benchmark. Before each run, one second of cpu_busy: the highest
# is recorded (busy_before_pct) and, above 10 %, warned about, since on two
# cores any other work shows in every figure. Appends one result (see the
# header) to $WORK/results.jsonl and prints a progress line to stderr.
time_median() {
  local name="$1" bytes="$2"; shift 2
  local secs=() load t0 t1 i busy busiest=0
  load=$(load1)
  for i in $(seq "$runs"); do
    busy=$(cpu_busy); (( busy > busiest )) && busiest=$busy
    t0=$(now)
    "$@" "$i" >"$WORK/runs/$name.$i" || { echo "jobs_baselines: $name run $i failed" >&2; exit 1; }
    t1=$(now)
    secs+=("$(printf '%.4f' "$(echo "$t1 - $t0" | bc -l)")")
  done
  (( busiest > 10 )) && echo "jobs_baselines: warning: up to $busiest % of the CPU busy" \
    "with other work just before runs of $name: its figures are unreliable" >&2
  local med count_med=null
  med=$(printf '%s\n' "${secs[@]}" | median)
  if [[ -s "$WORK/runs/$name.1" ]] &&
    jq -e 'type == "object" and has("count_seconds")' "$WORK/runs/$name.1" >/dev/null 2>&1; then
    count_med=$(cat "$WORK/runs/$name".* | jq -r '.count_seconds' | median)
  fi
  jq -cn --arg name "$name" --arg cmd "$(declare -f "$1" | sed '1,2d;$d;s/^ *//;s/;$//' | paste -sd';')" \
    --argjson bytes "$bytes" --argjson med "$med" --argjson count "$count_med" \
    --argjson load "$load" --argjson busy "$busiest" --argjson secs "[$(IFS=,; echo "${secs[*]}")]" '
    {name: $name, command: $cmd, median_seconds: $med,
     mb_per_s: ($bytes / 1e6 / $med * 10 | round / 10),
     seconds: $secs, count_seconds: $count,
     count_mb_per_s: (if $count then ($bytes / 1e6 / $count * 10 | round / 10) else null end),
     load_before: $load, busy_before_pct: $busy}' >>"$WORK/results.jsonl"
  printf 'jobs_baselines: %-16s median %7.2f s  %6.0f MB/s  (runs: %s; CPU busy before: %s %%)\n' \
    "$name" "$med" "$(echo "$bytes / 1000000 / $med" | bc -l)" "${secs[*]}" "$busiest" >&2
}

# ratio NAME BASE: NAME's throughput over BASE's (median seconds of BASE / of
# NAME) from the results so far, e.g. `ratio engine_wordcount wc_mrmpi_2p`.
ratio() {
  jq -rs --arg a "$1" --arg b "$2" '(map(select(.name == $b))[0].median_seconds) /
    (map(select(.name == $a))[0].median_seconds)' "$WORK/results.jsonl"
}

# The baselines. Each takes the run number and runs one measured command.
wc_tight_1t() { "$WC_TIGHT" "$FILE" --threads 1 --output "$WORK/wc_tight_1t.out"; }
wc_tight_2t() { "$WC_TIGHT" "$FILE" --threads 2 --output "$WORK/wc_tight_2t.out"; }
wc_tight_2t_sse2() { "$WC_TIGHT" "$FILE" --threads 2 --sse2 --output "$WORK/wc_tight_2t_sse2.out"; }
wc_mrmpi_2p() { "${MPIRUN[@]}" "$WC_MRMPI" "$FILE" --output "$WORK/wc_mrmpi_2p.out" --tmpdir "$WORK"; }
gnu_sort() { LC_ALL=C sort --parallel=2 -S 4G "$FILE" -o "$WORK/sorted.txt"; }
grep_count() { LC_ALL=C grep -c -- "$grep_word" "$FILE"; }

# ---------------------------------------------------------------------------
# ENGINE RUNS: the same input in the DFS of a local cluster of 2 workers in
# one datacenter (2 map slots and 1 reduce slot each, 64 MiB blocks,
# replication 1), output written to the DFS; each run submitted with
# `mrctl job run ... --wait`, so a figure is submit-to-committed-output.
# Each output is checked: WordCount against wc_tight's, Sort against GNU
# sort's, Grep's count against `grep -o WORD | wc -l`.
engine_wordcount() { "${M[@]}" job run wordcount -i /bench/in -o "/bench/wc-$1" -r 2 --wait >/dev/null; }
engine_grep() { "${M[@]}" job run grep -i /bench/in -o "/bench/grep-$1" -r 1 -p "pattern=$grep_word" --wait >/dev/null; }
engine_sort() { "${M[@]}" job run sort -i /bench/in -o "/bench/sort-$1" -r 2 --wait >/dev/null; }
engine_runs() {
  CLUSTER="$WORK/cluster"  # cleanup() stops it on exit
  "$ROOT/deploy/local-cluster.sh" up --workers 2 --datacenters 1 --replication 1 \
    --block-size $((64 << 20)) --dir "$CLUSTER" >/dev/null
  M=("$MRCTL" --config "$CLUSTER/cluster.toml")
  "${M[@]}" dfs put "$FILE" /bench/in
  time_median engine_wordcount "$BYTES" engine_wordcount
  cmp -s <("${M[@]}" dfs cat /bench/wc-1 | LC_ALL=C sort) "$WC_REF" ||
    { echo "jobs_baselines: engine wordcount output differs from wc_tight's" >&2; exit 1; }
  time_median engine_grep "$BYTES" engine_grep
  local want
  want=$(LC_ALL=C grep -o -- "$grep_word" "$FILE" | wc -l)
  [[ "$("${M[@]}" dfs cat /bench/grep-1)" == "$grep_word"$'\t'"$want" ]] ||
    { echo "jobs_baselines: engine grep count differs from grep -o | wc -l ($want)" >&2; exit 1; }
  time_median engine_sort "$BYTES" engine_sort
  cmp -s <("${M[@]}" dfs cat /bench/sort-1) "$WORK/sorted.txt" ||
    { echo "jobs_baselines: engine sort output differs from GNU sort's" >&2; exit 1; }
  "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null
  CLUSTER=""
  {
    echo
    echo "| target | measured | met |"
    echo "|---|---:|---|"
    local r
    # Issue 15's targets (docs/benchmarks.md); MR-MPI's is issue 3's.
    r=$(ratio engine_wordcount wc_tight_2t); printf '| WordCount ≥ 0.70 × wc_tight 2t | %.2f | %s |\n' "$r" "$(bc -l <<<"$r >= 0.70" | sed 's/1/yes/;s/0/no/')"
    r=$(ratio engine_wordcount wc_tight_2t_sse2); printf '| WordCount ≥ 0.60 × wc_tight 2t splitting with SSE2 as the engine does (issue 29) | %.2f | %s |\n' "$r" "$(bc -l <<<"$r >= 0.60" | sed 's/1/yes/;s/0/no/')"
    r=$(ratio engine_wordcount wc_mrmpi_2p); printf '| WordCount ≥ 4 × MR-MPI | %.2f | %s |\n' "$r" "$(bc -l <<<"$r >= 4" | sed 's/1/yes/;s/0/no/')"
    r=$(ratio engine_grep grep_count); printf '| Grep ≥ 0.60 × grep -c | %.2f | %s |\n' "$r" "$(bc -l <<<"$r >= 0.60" | sed 's/1/yes/;s/0/no/')"
    r=$(ratio engine_grep grep_count); printf '| Grep ≥ 0.90 × grep -c (issue 29) | %.2f | %s |\n' "$r" "$(bc -l <<<"$r >= 0.90" | sed 's/1/yes/;s/0/no/')"
    r=$(ratio gnu_sort engine_sort); printf '| Sort time ≤ 0.90 × GNU sort | %.2f × | %s |\n' "$r" "$(bc -l <<<"$r <= 0.90" | sed 's/1/yes/;s/0/no/')"
    printf '| Sort time ≤ 0.75 × GNU sort (issue 29) | %.2f × | %s |\n' "$r" "$(bc -l <<<"$r <= 0.75" | sed 's/1/yes/;s/0/no/')"
  } >"$WORK/targets.md"
}

# ---------------------------------------------------------------------------
# Correctness on a small file: four independent counts, one answer.
SMALL="$WORK/small.txt"
"$MRCTL" gen text "$SMALL" --size 20M --seed 2
"$WC_TIGHT" "$SMALL" --threads 1 --output "$WORK/small.1t" >/dev/null
"$WC_TIGHT" "$SMALL" --threads 2 --output "$WORK/small.2t" >/dev/null
"$WC_TIGHT" "$SMALL" --threads 2 --sse2 --output "$WORK/small.sse2" >/dev/null
"${MPIRUN[@]}" "$WC_MRMPI" "$SMALL" --output "$WORK/small.mrmpi" --tmpdir "$WORK" >/dev/null
LC_ALL=C tr -s ' \t\r\f\v' '\n' <"$SMALL" | LC_ALL=C grep -av '^$' | LC_ALL=C sort |
  LC_ALL=C uniq -c | LC_ALL=C awk '{print $2 "\t" $1}' >"$WORK/small.shell"
for f in small.2t small.sse2 small.mrmpi small.shell; do
  cmp -s "$WORK/small.1t" "$WORK/$f" ||
    { echo "jobs_baselines: word counts differ on the 20 MB check: small.1t vs $f" >&2; exit 1; }
done
SMALL_BYTES=$(stat -c %s "$SMALL")
echo "jobs_baselines: correctness: wc_tight 1t = 2t = 2t --sse2 = wc_mrmpi 2p = shell pipeline on $SMALL_BYTES bytes ($(wc -l <"$WORK/small.1t") words)" >&2
rm -f "$SMALL"

# ---------------------------------------------------------------------------
FILE="$WORK/input.txt"
"$MRCTL" gen text "$FILE" --size "$size" --seed 1
BYTES=$(stat -c %s "$FILE")
cat "$FILE" >/dev/null  # into the page cache, for every measurement alike
sync
echo "jobs_baselines: input: $BYTES bytes of generated text; $runs runs each" >&2

time_median wc_tight_1t "$BYTES" wc_tight_1t
time_median wc_tight_2t "$BYTES" wc_tight_2t
time_median wc_tight_2t_sse2 "$BYTES" wc_tight_2t_sse2
time_median wc_mrmpi_2p "$BYTES" wc_mrmpi_2p
time_median gnu_sort "$BYTES" gnu_sort
time_median grep_count "$BYTES" grep_count

# The timed outputs agree too (same check as above, on the full input).
WC_REF="$WORK/wc_tight_1t.out"
for f in wc_tight_2t.out wc_tight_2t_sse2.out wc_mrmpi_2p.out; do
  cmp -s "$WC_REF" "$WORK/$f" ||
    { echo "jobs_baselines: $f differs from wc_tight_1t.out on the full input" >&2; exit 1; }
done

engine_runs

# ---------------------------------------------------------------------------
jq -n --slurpfile r "$WORK/results.jsonl" \
  --arg model "$(lscpu | sed -n 's/^Model name: *//p')" --argjson cpus "$(nproc)" \
  --argjson mem "$(awk '/MemTotal/ {print $2 * 1024}' /proc/meminfo)" --arg kernel "$(uname -r)" \
  --argjson bytes "$BYTES" --arg size "$size" --argjson runs "$runs" \
  --argjson small "$SMALL_BYTES" --arg word "$grep_word" '
  {machine: {cpu: $model, cpus: $cpus, mem_bytes: $mem, kernel: $kernel},
   input: {bytes: $bytes, command: "mrctl gen text FILE --size \($size) --seed 1", grep_word: $word},
   runs: $runs,
   correctness: {bytes: $small, command: "mrctl gen text FILE --size 20M --seed 2",
                 equal: ["wc_tight_1t", "wc_tight_2t", "wc_tight_2t --sse2", "wc_mrmpi_2p", "tr|grep|sort|uniq -c"]},
   results: $r}' >"$out/jobs_baselines.json"

{
  echo "| measurement (median of $runs, $(numfmt --to=iec-i --suffix=B "$BYTES") generated text) | seconds | MB/s | counting only, MB/s | vs wc_tight 2t |"
  echo "|---|---:|---:|---:|---:|"
  jq -r '.results as $r | ($r[] | select(.name == "wc_tight_2t") | .median_seconds) as $base |
    $r[] | "| \(.name) | \(.median_seconds * 100 | round / 100) | \(.mb_per_s | round) | \(
      if .count_mb_per_s then (.count_mb_per_s | round | tostring) else "—" end) | \(
      $base / .median_seconds * 100 | round) % |"' "$out/jobs_baselines.json"
  [[ -f "$WORK/targets.md" ]] && cat "$WORK/targets.md"
} | tee "$out/jobs_baselines.md"
echo "jobs_baselines: wrote $out/jobs_baselines.json" >&2
