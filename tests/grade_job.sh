# shellcheck shell=bash
# tests/grade.sh job NAME: the checks of a job (sourced by grade.sh, which
# defines check, lc, mrctl, oracle_out, wait_jobs, same_output, ...).

block=$(sized 65536 262144)   # several maps per job: small blocks
size=$(sized 600K 3M)         # the input
kill_size=$(sized 6M 16M)      # the input of the run with a worker killed
oracle_file="$ROOT/jobs/oracles/$name.sh"
local_in="$WORK/input.$input"
dfs_in="/in/input.$input"
has_combiner=0

# combiner variants: "combiner=true" and "combiner=false" when the job has
# the param, else one run with its defaults ("").
variants() {
  if (( has_combiner )); then printf '%s\n' combiner=true combiner=false; else echo ""; fi
}
# run_oracle FILE OUT: the student's oracle, its lines sorted.
run_oracle() {
  local p env=()
  for p in "${params[@]}"; do env+=("MR_PARAM_${p%%=*}=${p#*=}"); done
  env "${env[@]}" bash "$oracle_file" "$1" >"$2.raw" || return 1
  sort "$2.raw" >"$2"
}

oracle_vs_local() {
  [[ -f "$oracle_file" ]] || {
    note "no jobs/oracles/$name.sh: mr-local is the only oracle"; return 0; }
  run_oracle "$local_in" "$WORK/want.sorted" || fail "jobs/oracles/$name.sh failed"
  [[ -s "$WORK/want.sorted" ]] || fail "jobs/oracles/$name.sh printed nothing: a vacuous oracle"
  local r
  for r in 1 3; do
    oracle_out "$name" "$local_in" "$local_in" "$r" "$block" "$WORK/local.$r" "${params[@]}" ||
      fail "mr-local $name failed"
    sort "$WORK/local.$r" | cmp -s - "$WORK/want.sorted" ||
      fail "mr-local ($r reducers) and jobs/oracles/$name.sh differ: $(sort "$WORK/local.$r" | diff - "$WORK/want.sorted" | sed -n 2p)"
  done
  note "$(wc -l <"$WORK/want.sorted") lines, 1 and 3 reducers"
}

cluster_up() {
  lc up --workers 4 --datacenters 2 --block-size "$block" --replication 2 --heartbeat-ms 100 ||
    fail "the local cluster did not come up"
  mrctl dfs put "$local_in" "$dfs_in" >/dev/null || fail "dfs put failed"
  mrctl dfs put "$WORK/kill.$input" "/in/kill.$input" >/dev/null || fail "dfs put failed"
}

# cluster_run REDUCERS VARIANT: one job on the cluster against mr-local and the oracle.
cluster_run() {
  local r="$1" v="$2" ps=("${params[@]}") id maps
  if [[ -n "$v" ]]; then ps+=("$v"); fi
  local n=${#ROWS[@]}
  id="$(submit "$name" "$dfs_in" "/out/$n" "$r" "${ps[@]}")" || fail "mrctl job run failed"
  wait_jobs 120 "$id" || return 1
  oracle_out "$name" "$local_in" "$dfs_in" "$r" "$block" "$WORK/want.$n" "${ps[@]}" ||
    fail "mr-local failed"
  same_output "/out/$n" "$WORK/want.$n" || return 1
  if [[ -f "$oracle_file" ]]; then
    mrctl dfs cat "/out/$n" | sed "s|$dfs_in|$local_in|g" | sort | cmp -s - "$WORK/want.sorted" ||
      fail "the cluster's output and jobs/oracles/$name.sh differ"
  fi
  maps="$(mrctl job show --json "$id" | jq .maps_total)"
  (( maps >= 2 )) || fail "only $maps map: the input is too small for several maps"
  note "$maps maps; output = mr-local's$( [[ -f "$oracle_file" ]] && echo " and the oracle's")"
}

killed_run() {
  local id n=${#ROWS[@]}
  id="$(submit "$name" "/in/kill.$input" "/out/$n" 3 "${params[@]}")" || fail "mrctl job run failed"
  kill_and_restart "$id" w1 >"$WORK/kill.note" || { cat "$WORK/kill.note"; return 1; }
  wait_jobs 180 "$id" || return 1
  oracle_out "$name" "$WORK/kill.$input" "/in/kill.$input" 3 "$block" "$WORK/want.$n" "${params[@]}" ||
    fail "mr-local failed"
  same_output "/out/$n" "$WORK/want.$n" || return 1
  note "$(cut -c7- "$WORK/kill.note"); output = mr-local's"
}

"$BUILD/tools/mrctl" jobs --json | jq -e --arg n "$name" '.[] | select(.name == $n) | .params[] | select(.name == "combiner")' >/dev/null && has_combiner=1
gen "$input" "$local_in" "$size" 5 && gen "$input" "$WORK/kill.$input" "$kill_size" 6 || die "mrctl gen failed"
check "oracle vs mr-local" oracle_vs_local
if check "local cluster up (4 workers, 2 DCs, ${block}-byte blocks)" cluster_up; then
  while read -r v; do
    for r in 1 3; do
      check "cluster: $r reducer(s)${v:+, $v}" cluster_run "$r" "$v"
    done
  done < <(variants)
  check "cluster: 3 reducers, w1 killed mid-job" killed_run
fi
