#!/usr/bin/env bash
# Runs one fault scenario in this process: scenario.sh NAME. Called by
# tests/faults/run.sh, which sets ROOT, BUILD, SCENARIO, SIZE, WORK and LIMIT,
# enforces the time limit and prints the summary line from $WORK/state.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
for f in "$HERE"/scenarios/*.sh; do
  # shellcheck disable=SC1090
  source "$f"
done
fn="scenario_${1//-/_}"
declare -F "$fn" >/dev/null || die "no scenario '$1'"
say "scenario $1, size $SIZE, time limit ${LIMIT}s, seed $SEED"
"$fn"
finish
