#!/usr/bin/env bash
# Re-runs every shipped scenario (sim/scenarios/*.toml) and writes the
# reproduction report: OUTDIR/<scenario>.json, OUTDIR/report.md and its SVG
# charts (docs/simulator.md, "Reproducing the papers"). scale-500 runs with
# --timing, so its figures are wall-clock times of this machine.
#
#   ninja -C build mr-sim && sim/reproduce.sh build/sim-report [build/sim/mr-sim]
set -euo pipefail
OUT="${1:?usage: sim/reproduce.sh OUTDIR [MR_SIM]}"
SIM="${2:-build/sim/mr-sim}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
for f in "$ROOT"/sim/scenarios/*.toml; do
  name=$(basename "$f" .toml)
  extra=()
  [[ "$name" == scale-500 ]] && extra=(--timing)
  start=$(date +%s)
  "$SIM" run "$f" --json --quiet "${extra[@]}" > "$OUT/$name.json"
  echo "$name: $(( $(date +%s) - start )) s"
done
"$SIM" report "$OUT"
echo "wrote $OUT/report.md"
