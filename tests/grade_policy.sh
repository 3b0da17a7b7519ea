# shellcheck shell=bash
# tests/grade.sh policy NAME: the checks of a scheduling policy (sourced by
# grade.sh, which defines check, lc, mrctl, oracle_out, wait_jobs, ...).

block=$(sized 65536 131072)
escaped="$(sed 's/[^A-Za-z0-9]/_/g' <<<"$name")"   # gtest's parameter name (conformance_test.cc)

conformance() {
  local out="$WORK/conformance.txt" ran
  "$BUILD/tests/scheduler_conformance_test" --gtest_filter="AllPolicies/SchedulerConformanceTest.*/$escaped" \
    >"$out" 2>&1 && local rc=0 || local rc=$?
  ran="$(sed -n 's/^\[==========\] \([0-9]*\) tests\? from .* ran.*/\1/p' "$out")"
  (( ${ran:-0} >= 6 )) || fail "only ${ran:-0} conformance tests ran for '$name' (expected 6 or more)"
  if (( rc != 0 )); then
    # Which contracts broke (the test names say it), and the first message:
    # the TestHost names a broken Launcher REQUIRES ("launched map 0/1, which is not pending").
    local names first
    names="$(sed -n 's/^\[  FAILED  \] AllPolicies\/SchedulerConformanceTest\.\([A-Za-z]*\)\/.*/\1/p' "$out" |
             sort -u | paste -sd ',' | sed 's/,/, /g')"
    first="$(grep -m1 -A4 ': Failure$' "$out" | sed 1d | grep -v -e '^Failed$' -e '^--' -e ': Failure$' |
             grep . | head -n 3 | paste -sd ' ')"
    fail "failed: $names; first failure: $first ($out)"
  fi
  note "$ran tests"
}

# The source half of purity over scheduler/, and over the policy's own
# folder when it lives elsewhere (the link half is a configure-time rule).
purity() {
  local file dir
  sh "$ROOT/tests/scheduler/check_purity.sh" "$ROOT/scheduler" || fail "scheduler/ is not pure (above)"
  # The file naming NAME: NAME_policy.cc, else a *policy*.cc, else any.
  file="$(grep -rlF "\"$name\"" "$ROOT/scheduler" "$ROOT/tests/scheduler/broken" --include='*.cc' |
            awk -v own="/${name//-/_}_policy.cc" '
              index($0, own) { print; exit }
              /policy[^\/]*$/ && !p { p = $0 } !a { a = $0 }
              END { print (p ? p : a) }' | head -n 1)"
  [[ -n "$file" ]] || fail "no .cc under scheduler/ names \"$name\""
  dir="$(dirname "$file")"
  if [[ "$dir" != "$ROOT/scheduler" ]]; then
    sh "$ROOT/tests/scheduler/check_purity.sh" "$dir" || fail "$dir is not pure (above)"
  fi
  note "${file#"$ROOT"/} and scheduler/ clean"
}

cluster_up() {
  lc up --workers 4 --datacenters 2 --block-size "$block" --replication 2 --heartbeat-ms 100 \
    --scheduler "$name" || fail "the local cluster did not come up with --scheduler $name"
  gen text "$WORK/text" "$(sized 400K 1M)" 31
  gen web "$WORK/web" "$(sized 300K 768K)" 32
  gen dna "$WORK/dna" "$(sized 300K 768K)" 33
  gen text "$WORK/crash" "$(sized 6M 16M)" 34
  local f
  for f in text web dna crash; do mrctl dfs put "$WORK/$f" "/in/$f" >/dev/null; done
}

# Four jobs submitted at once, so the policy orders jobs as well as placing tasks.
mixed() {
  local ids=() k job in r p
  local cases=("wordcount text 2" "sort text 2" "grep web 2 pattern=<[a-z]+>" "permu dna 3")
  for k in "${cases[@]}"; do
    read -r job in r p <<<"$k"
    ids+=("$(submit "$job" "/in/$in" "/out/mixed-$job" "$r" ${p:+"$p"})")
  done
  wait_jobs 150 "${ids[@]}"
  local i=0
  for k in "${cases[@]}"; do
    read -r job in r p <<<"$k"
    [[ "$(mrctl job show --json "${ids[$i]}" | jq -r .scheduler)" == "$name" ]] ||
      fail "job ${ids[$i]} was not scheduled by $name"
    oracle_out "$job" "$WORK/$in" "/in/$in" "$r" "$block" "$WORK/want.$job" ${p:+"$p"}
    same_output "/out/mixed-$job" "$WORK/want.$job"
    i=$((i + 1))
  done
  note "4 jobs, $(mrctl job list --json 2>/dev/null | jq length) records; outputs = mr-local's"
}

crash() {
  local id
  id="$(submit wordcount /in/crash /out/crash 3)"
  kill_and_restart "$id" w2 >"$WORK/kill.note" || { cat "$WORK/kill.note"; return 1; }
  wait_jobs 180 "$id"
  oracle_out wordcount "$WORK/crash" /in/crash 3 "$block" "$WORK/want.crash"
  same_output /out/crash "$WORK/want.crash"
  note "$(cut -c7- "$WORK/kill.note"); output = mr-local's"
}

# sim SCENARIO SET...: the scenario with the policy added, as a table.
sim() {
  local scen="$1" out="$WORK/sim.$1.json" sets=() s
  shift
  for s in "$@"; do sets+=(--set "$s"); done
  "$BUILD/sim/mr-sim" run "$ROOT/sim/scenarios/$scen.toml" --quiet --json "${sets[@]}" \
    --add-scheduler "$name:$name (graded)" >"$out" 2>"$out.err" ||
    fail "mr-sim exited $?: $(tail -n 1 "$out.err")"
  {
    echo "mr-sim $scen ($*):"
    printf '  %-22s %9s %8s %6s %6s %6s %7s %s\n' label jobs jtt_s vps cen offcen rdl stopped
    jq -r '.runs[] | [.label, "\(.jobs_finished)/\(.jobs_total)", (.jtt_ms / 1000 | floor),
           .vps_locality_rate, .cen_locality_rate, .off_cen_rate, .reduce_data_locality_rate, .stopped]
           | @tsv' "$out" |
      awk -F'\t' '{ printf "  %-22s %9s %8s %6.3f %6.3f %6.3f %7.3f %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
  } >>"$WORK/extra"
  local row
  row="$(jq -c --arg l "$name (graded)" '.runs[] | select(.label == $l)' "$out")"
  [[ -n "$row" ]] || fail "no row labelled '$name (graded)' in mr-sim's output"
  jq -e '.stopped != "stalled" and .stopped != "max_backlog" and .jobs_finished > 0' <<<"$row" >/dev/null ||
    fail "$(jq -r '"mr-sim stopped (\(.stopped)) with \(.jobs_finished)/\(.jobs_total) jobs finished, \(.reduces_done)/\(.reduces_total) reduces done"' <<<"$row")"
  note "$(jq -r '"\(.jobs_finished)/\(.jobs_total) jobs, JTT \(.jtt_ms / 1000 | floor) s, VPS locality \(.vps_locality_rate)"' <<<"$row")"
}

check "conformance suite (scheduler_conformance_test)" conformance
check "purity (tests/scheduler/check_purity.sh)" purity
if check "local cluster up (4 workers, 2 DCs, --scheduler $name)" cluster_up; then
  check "live mixed workload (4 jobs at once)" mixed
  check "crash run (w2 killed mid-job)" crash
fi
check "mr-sim joss-small (policy added)" sim joss-small network.dc_mb_s=62.5
check "mr-sim pandas-uniform (policy added)" sim pandas-uniform workload.load=0.5 \
  cluster.nodes=60 "workload.duration_ms=$(sized 150000 400000)"
