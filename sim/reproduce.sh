#!/usr/bin/env bash
# Re-runs every shipped scenario (sim/scenarios/*.toml) and writes the
# reproduction report: OUTDIR/<scenario>.json, OUTDIR/report.md and its SVG
# charts (docs/simulator.md, "Reproducing the papers"). Each scenario is one
# mr-sim process; --jobs N of them run at once (default 2, this machine's
# cores), the longest first, and the time of each is printed as it ends.
# Every file is written by one process from its scenario and seed alone, so
# the output is byte-for-byte that of a serial run (--jobs 1), except
# scale-500's wall-clock figures (it runs with --timing; --no-timing drops
# them, and then every byte is a function of the seed).
#
#   ninja -C build mr-sim && sim/reproduce.sh [--jobs N] [--full] [--no-timing] OUTDIR [MR_SIM]
#
# --full: a scenario file may carry one comment line
#   # full: --set KEY=VALUE [--set KEY=VALUE ...]
# (values without spaces); with --full those arguments are added to its run
# (e.g. the Joint files' long runs); without it the file runs as written.
#
# Exit status: 0 when every scenario ran and the report was written; 1 when
# any run failed (its name and exit status are printed, its stderr is in
# OUTDIR/<scenario>.err); 2 on a usage error.
set -euo pipefail
usage() { echo "usage: sim/reproduce.sh [--jobs N] [--full] [--no-timing] OUTDIR [MR_SIM]" >&2; exit 2; }
JOBS=2 FULL=0 TIMING=1 args=()
while (($#)); do
  case "$1" in
    --jobs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage; JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; [[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || usage; shift ;;
    --full) FULL=1; shift ;;
    --no-timing) TIMING=0; shift ;;
    -h|--help) usage ;;
    -*) echo "sim/reproduce.sh: unknown option '$1'" >&2; usage ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} >= 1 && ${#args[@]} <= 2)) || usage
OUT="${args[0]}"
SIM="${args[1]:-build/sim/mr-sim}"
[[ -x "$SIM" ]] || { echo "sim/reproduce.sh: '$SIM' is not an executable mr-sim (build it: ninja -C build mr-sim)" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
STATUS="$(mktemp -d)"
trap 'rm -rf "$STATUS"' EXIT

# Longest first (measured: docs/simulator.md), then every other file.
LONGEST=(pandas-skewed joint-skew pandas-uniform joint-uniform scale-500)
files=()
for name in "${LONGEST[@]}"; do
  [[ -f "$ROOT/sim/scenarios/$name.toml" ]] && files+=("$ROOT/sim/scenarios/$name.toml")
done
for f in "$ROOT"/sim/scenarios/*.toml; do
  [[ " ${LONGEST[*]} " == *" $(basename "$f" .toml) "* ]] || files+=("$f")
done

# One scenario: OUT/<name>.json (written whole or not at all) and its exit
# status in STATUS/<name>.
run_one() {
  local f=$1 name extra=() start rc=0
  name=$(basename "$f" .toml)
  [[ "$name" == scale-500 && $TIMING == 1 ]] && extra+=(--timing)
  if ((FULL)); then
    # shellcheck disable=SC2207  # the line is a list of words by contract
    extra+=($(sed -n 's/^# full:[[:space:]]*//p' "$f" | head -n 1))
  fi
  start=$(date +%s.%N)
  "$SIM" run "$f" --json --quiet "${extra[@]}" > "$OUT/$name.json.tmp" 2> "$OUT/$name.err" || rc=$?
  if ((rc == 0)); then
    mv "$OUT/$name.json.tmp" "$OUT/$name.json"
    [[ -s "$OUT/$name.err" ]] || rm -f "$OUT/$name.err"
    echo "$name: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
  else
    rm -f "$OUT/$name.json.tmp"
    echo "$name: FAILED (exit $rc; see $OUT/$name.err)" >&2
  fi
  echo "$rc" > "$STATUS/$name"
}

begin=$(date +%s.%N)
for f in "${files[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  run_one "$f" &
done
wait
failed=0
for f in "${files[@]}"; do
  name=$(basename "$f" .toml)
  [[ "$(cat "$STATUS/$name" 2>/dev/null)" == 0 ]] || failed=1
done
if ((failed)); then
  echo "sim/reproduce.sh: some scenarios failed; no report written" >&2
  exit 1
fi
"$SIM" report "$OUT"
echo "all $(( ${#files[@]} )) scenarios in $(awk -v s="$begin" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s (--jobs $JOBS)"
echo "wrote $OUT/report.md"
