#!/usr/bin/env bash
# The testbed's proof with a workload (ctest testbed_workload, docs/testbed.md):
# bench/live_policies.sh runs tests/testbed/tiny-workload.toml (one job of
# each of the six jobs, inputs put from their jobs' datacenters at
# replication 1, submitted at their scaled times, overlapping) under fifo
# and joss-t on a testbed of 2 datacenters x 2 workers at 100mbit, with
# --verify: mr-workload compares every output with mr-local's on the same
# input (the oracle). Then, per policy: every job succeeded and equals its
# oracle; the bytes the kernel counted between datacenters while the jobs
# ran (worker<->worker, plus client<->worker when records carry
# client_inter_dc_bytes), over the jobs' summed INT, is within [1.00, 1.10]
# (0 kernel bytes when INT is 0); the report names both policies beside
# mr-sim and has the kernel table. And no namespace of the run is left.
#
#   tests/testbed/workload.sh [--build DIR] [--keep]
#
# Needs root; exits 77 (ctest: skipped) with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
# shellcheck source=tests/lib/testbed_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testbed_test.sh"
root_test_begin testbed_workload "network namespaces, tc, nft" "$@"
for arg in "${REST[@]}"; do unknown_option "$arg"; done
require_tools tc nft jq ethtool ip awk
require_built master/mr-master worker/mr-worker tools/mrctl jobs/mr-local sim/mr-sim sim/mr-workload

started=$SECONDS
T="$(mktemp -d /tmp/testbed-workload.XXXXXX)"
OUT="$T/out"
POLICIES=(fifo joss-t)
testbed_cleanup_on_exit "$T" "$OUT/testbed"

rc=0
"$ROOT/bench/live_policies.sh" --workload "$ROOT/tests/testbed/tiny-workload.toml" \
  --policies "$(IFS=,; echo "${POLICIES[*]}")" --reps 1 --datacenters 2 --workers 2 --rate 100mbit \
  --verify --out "$OUT" --build "$BUILD" --max-minutes 4 --job-timeout 120 >"$T/live.log" 2>&1 || rc=$?
[[ -f "$OUT/testbed-status.txt" ]] || fail "live_policies.sh built no testbed: $(tail -n 3 "$T/live.log")"
prefix="$(testbed_prefix "$OUT/testbed")"  # from the saved status: the testbed is down
[[ -n "$prefix" ]] || fail "no namespace prefix in $OUT/testbed-status.txt"
left="$(namespaces_left "$prefix")"
[[ "$left" -eq 0 ]] || fail "live_policies.sh left $left namespaces named $prefix*"
for p in "${POLICIES[@]}"; do
  [[ -f "$OUT/$p/rep1/mr-workload.err" ]] && grep -h 'mr-workload: ' "$OUT/$p/rep1/mr-workload.err" | sed "s/^/  $p: /" >&2
done
((rc == 0)) || fail "bench/live_policies.sh exited $rc: $(grep -v '^  ' "$T/live.log" | tail -n 3 | tr '\n' ' ')"

for p in "${POLICIES[@]}"; do
  d="$OUT/$p/rep1"
  [[ -f "$d/jobs.json" && -f "$d/counters.json" && -f "$d/records.json" ]] ||
    fail "$p: the run left no jobs.json, counters.json or records.json in $d"
  n="$(jq '.jobs | length' "$d/jobs.json")"
  good="$(jq '[.jobs[] | select(.state == "succeeded" and .verified == true and .policy == "'"$p"'")] | length' "$d/jobs.json")"
  [[ "$n" -eq 6 && "$good" -eq 6 ]] ||
    fail "$p: $good of $n jobs succeeded under $p with output = mr-local's (6 expected): $(jq -c '[.jobs[] | {job, state, verified, policy}]' "$d/jobs.json")"
  int="$(jq '[.[].inter_dc_bytes] | add' "$d/records.json")"
  kernel="$(jq '[.pairs[].worker_bytes] | add' "$d/counters.json")"
  client_k="$(jq '[.pairs[].client_bytes] | add' "$d/counters.json")"
  if jq -e 'all(.[]; has("client_inter_dc_bytes"))' "$d/records.json" >/dev/null; then kernel=$((kernel + client_k)); fi
  components="$(jq -c '{map_input: ([.[].map_input_bytes.other_dc] | add), shuffle: ([.[].shuffle_bytes.other_dc] | add), output: ([.[].output_replication_bytes.other_dc] | add), client: ([.[].client_inter_dc_bytes // 0] | add)}' "$d/records.json" | tr -d '"')"
  if [[ "$int" -eq 0 ]]; then
    [[ "$kernel" -eq 0 ]] || fail "$p: INT is 0 but the kernel counted $kernel bytes between datacenters"
    say "$p: 6 jobs = mr-local; INT 0 and 0 kernel bytes between datacenters"
    continue
  fi
  ratio="$(awk -v k="$kernel" -v i="$int" 'BEGIN { printf "%.4f", k / i }')"
  say "$p: 6 jobs = mr-local; INT $int B $components; kernel $kernel B; kernel/INT = $ratio"
  awk -v r="$ratio" 'BEGIN { exit !(r >= 1.00 && r <= 1.10) }' ||
    fail "$p: kernel/INT = $ratio ($kernel / $int) is outside [1.00, 1.10] (--keep to read $d)"
done

report="$OUT/report.md"
[[ -f "$report" ]] || fail "no report.md"
for label in FIFO JoSS-T; do
  grep -q "^| $label |" "$report" || fail "report.md has no row for $label"
done
grep -q 'kernel ÷ INT' "$report" || fail "report.md has no kernel ÷ INT table"
for f in runs.csv summary.csv; do [[ -s "$OUT/$f" ]] || fail "no $f beside report.md"; done
ls "$OUT"/*.svg >/dev/null 2>&1 || fail "no SVG chart beside report.md"
say "PASS in $((SECONDS - started)) s (report $(wc -l <"$report") lines; no namespace $prefix* left)"
