#!/usr/bin/env bash
# Grades one job or one scheduling policy, for a student and a teacher alike
# (docs/course/README.md). It cannot skip the named code: the name must be
# registered, and every check below runs it.
#
#   tests/grade.sh job NAME [--param K=V]... [--input text|web|dna] [options]
#   tests/grade.sh policy NAME [options]
#   options: --quick (smaller inputs and simulations: the suite's size)
#            --no-build (do not run ninja first)  --keep (keep the work directory)
#
# A job: its oracle (jobs/oracles/NAME.sh, when the student wrote one)
# against mr-local; then on a local cluster of 4 workers in 2 datacenters
# with small blocks (several maps per job): 1 and 3 reducers, with and
# without the combiner (when the job has a `combiner` param), each output
# byte for byte equal to mr-local's and, sorted, to the oracle's; and one run
# while a worker is killed and restarted.
# A policy: the conformance suite (scheduler_conformance_test, filtered to
# it; at least 6 tests must run), the purity check, a live mixed workload
# (4 jobs at once, outputs equal to mr-local's), a crash run (a worker
# killed mid-job), and mr-sim on two scenarios with the policy added beside
# the built-ins (a comparison table; every job of its row must finish).
#
# The oracle convention: jobs/oracles/NAME.sh FILE... prints the job's
# output records (key TAB value lines, any order) for those input files,
# with LC_ALL=C; job params arrive as MR_PARAM_<name> variables.
#
# Prints one row per check (check | result | time) and exits 0 only if every
# check passed; 2 for bad usage or a name that is not registered.
# Needs the build in $MR_BUILD_DIR (default build/) and jq.
set -uo pipefail
export LC_ALL=C
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
BUILD="$(realpath -m "$BUILD")"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "grade: $*" >&2; exit 2; }
kind="${1:-}" name="${2:-}"
[[ "$kind" == -h || "$kind" == --help ]] && { usage; exit 0; }
[[ "$kind" == job || "$kind" == policy ]] && [[ -n "$name" && "$name" != -* ]] ||
  { usage >&2; exit 2; }
shift 2
quick=0 build=1 keep=0 input=text params=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --no-build) build=0; shift ;;
    --keep) keep=1; shift ;;
    --param) [[ "${2:-}" == *=* ]] || die "--param needs K=V"; params+=("$2"); shift 2 ;;
    --input) [[ "${2:-}" =~ ^(text|web|dna)$ ]] || die "--input must be text, web or dna"
             input="$2"; shift 2 ;;
    *) die "unknown option '$1' (tests/grade.sh --help)" ;;
  esac
done
command -v jq >/dev/null || die "jq is missing (deploy/install-deps.sh installs it)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mr-grade-$kind-$name.XXXXXX")"
CL="$WORK/cluster"
ROWS=() FAILED=0
cleanup() {
  [[ -f "$CL/cluster.toml" ]] && lc down >/dev/null 2>&1
  if (( keep || FAILED )); then echo "grade: work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
lc() { MR_BUILD_DIR="$BUILD" "$ROOT/deploy/local-cluster.sh" "$@" --dir "$CL"; }
mrctl() { "$BUILD/tools/mrctl" --config "$CL/cluster.toml" "$@"; }
sized() { if (( quick )); then echo "$1"; else echo "$2"; fi; }  # sized QUICK FULL

# check TITLE FUNCTION [ARGS...]: runs FUNCTION, its output in the work
# directory; a failing function's last line is the reason shown.
check() {
  local title="$1" t0 t1 rc log
  shift
  log="$WORK/log.$((${#ROWS[@]} + 1))"
  echo "grade: $title ..." >&2
  t0=$(date +%s.%N)
  # A subshell with -e: a failing step (`fail REASON`) ends the check.
  ( set -e; "$@" ) >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }')
  if (( rc == 0 )); then
    local what
    what="$(tail -n 1 "$log" | grep '^note: ' | cut -c7-)"
    ROWS+=("$title|PASS${what:+ $what}|$secs")
  else
    FAILED=1
    local why
    why="$(grep -v '^note: ' "$log" | tail -n 1)"
    local mpid
    mpid="$(cat "$CL/pids/master.pid" 2>/dev/null)"
    if [[ -n "$mpid" ]] && [[ ! -r /proc/$mpid/stat || "$(sed 's/^.*) //' /proc/$mpid/stat | cut -c1)" == Z ]]; then
      # A policy that breaks Launcher's REQUIRES (a task launched twice) aborts the master.
      why="mr-master exited: $(tail -n 1 "$CL/logs/master.out" 2>/dev/null) (then: $why)"
    fi
    ROWS+=("$title|FAIL: $why|$secs")
  fi
  return "$rc"
}
note() { echo "note: $*"; }
fail() { echo "$*"; return 1; }

# ---- building and the registry ---------------------------------------------
do_build() {
  local targets=(mr-master mr-worker mrctl mr-local)
  [[ "$kind" == policy ]] && targets+=(mr-sim scheduler_conformance_test)
  [[ -f "$BUILD/build.ninja" ]] ||
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
    fail "cmake failed"
  ninja -C "$BUILD" "${targets[@]}" || fail "the build failed (ninja -C $BUILD ${targets[*]})"
}
# Fails at once, with one line, when NAME is not registered.
require_registered() {
  local list names
  if [[ "$kind" == job ]]; then list=jobs; else list=schedulers; fi
  names="$("$BUILD/tools/mrctl" "$list" --json | jq -r '.[].name')" ||
    die "cannot list the $list ($BUILD/tools/mrctl $list --json)"
  if ! grep -qxF -- "$name" <<<"$names"; then
    if [[ "$kind" == job ]]; then
      die "no job named '$name' is registered (jobs: $(echo $names | tr ' ' ','));" \
          "list it in jobs/registry.cc (docs/writing-a-job.md, \"Adding a job\")"
    fi
    die "no policy named '$name' is registered (policies: $(echo $names | tr ' ' ','));" \
        "list it in scheduler/registry.cc (docs/schedulers.md, \"Write your own scheduler\")"
  fi
}

# ---- shared by both kinds -------------------------------------------------
gen() { "$BUILD/tools/mrctl" gen "$1" "$2" --size "$3" --seed "$4" >/dev/null; }
# oracle_out JOB LOCAL DFS REDUCERS SPLIT OUT [K=V...]: mr-local's parts, in
# order, into OUT, with the local input path replaced by the DFS one.
oracle_out() {
  local job="$1" local_in="$2" dfs_in="$3" r="$4" split="$5" out="$6" p args=()
  shift 6
  for p in "$@"; do args+=(--param "$p"); done
  rm -rf "$out.d"
  "$BUILD/jobs/mr-local" "$job" --input "$local_in" --output "$out.d" --reducers "$r" \
    --split-bytes "$split" "${args[@]}" >/dev/null || return 1
  cat "$out.d"/* 2>/dev/null | sed "s|$local_in|$dfs_in|g" >"$out"
}
# diagnose ID: why job ID is not done, from its record.
diagnose() {
  local j
  if ! "$BUILD/tools/mrctl" --config "$CL/cluster.toml" cluster status >/dev/null 2>&1; then
    # A policy that breaks Launcher's REQUIRES (a task launched twice) aborts it.
    echo "mr-master is gone: $(tail -n 2 "$CL/logs/master.out" 2>/dev/null | tr '\n' ' ')"
    return
  fi
  j="$(mrctl job show --json "$1" 2>/dev/null)" || { echo "job $1: no record"; return; }
  jq -r '
    if .state != "running" then "job \(.id) (\(.job)) \(.state): \(.error)"
    elif .maps_done < .maps_total then
      "job \(.id) (\(.job)): maps \(.maps_done)/\(.maps_total) done: the policy does not launch its maps"
    else "job \(.id) (\(.job)): all \(.maps_total) maps done but reduces \(.reduces_done)/\(.reduces_total): the policy does not launch reduces (Launcher::LaunchReduce once reduces_may_start())"
    end' <<<"$j"
}
# wait_jobs SECONDS ID...: until every job has ended; fails with a diagnosis.
wait_jobs() {
  local limit="$1" until=$((SECONDS + $1)) id running
  shift
  # Also stops when no job made progress for 30 s (a policy that launches nothing).
  local progress last="" still=$SECONDS
  while (( SECONDS < until )); do
    running=0 progress=""
    for id in "$@"; do
      progress+="$(mrctl job show --json "$id" 2>/dev/null | jq -r '"\(.state) \(.maps_done) \(.reduces_done) "')"
    done
    [[ "$progress" == *running* ]] && running=1
    (( running )) || break
    mrctl cluster status >/dev/null 2>&1 || break
    if [[ "$progress" != "$last" ]]; then last="$progress" still=$SECONDS; fi
    (( SECONDS - still < 30 )) || { limit="$limit, no progress for 30"; break; }
    sleep 0.3
  done
  for id in "$@"; do
    if [[ "$(mrctl job show --json "$id" 2>/dev/null | jq -r .state)" != succeeded ]]; then
      fail "$(diagnose "$id") (waited up to $limit s)"
      return 1
    fi
  done
}
# same_output DFSDIR EXPECTED: the job's parts, in order, equal EXPECTED.
same_output() {
  mrctl dfs cat "$1" >"$WORK/got" || fail "cannot read $1"
  cmp -s "$WORK/got" "$2" && return 0
  fail "$1 differs from mr-local's output ($(wc -c <"$WORK/got") vs $(wc -c <"$2") bytes; first difference: $(cmp "$WORK/got" "$2" 2>&1 | head -n 1))"
}
# kill_and_restart ID WORKER: kills WORKER while job ID runs, restarts it.
kill_and_restart() {
  local until=$((SECONDS + 30)) j state="" progress=""
  while (( SECONDS < until )); do
    j="$(mrctl job show --json "$1")"
    state="$(jq -r .state <<<"$j")"
    [[ "$state" == running ]] || break
    # While its maps run, so that finished map outputs on the victim are lost too.
    if [[ "$(jq -r '.maps_done > 0 or .maps_total == 0' <<<"$j")" == true ]]; then
      progress="$(jq -r '"\(.maps_done)/\(.maps_total) maps, \(.reduces_done)/\(.reduces_total) reduces"' <<<"$j")"
      break
    fi
    sleep 0.05
  done
  [[ "$state" == running && -n "$progress" ]] ||
    fail "job $1 ended before $2 could be killed: grade with larger inputs (without --quick)" || return 1
  lc kill "$2" && sleep 1 && lc start "$2"
  note "$2 killed after $progress done, restarted 1 s later"
}
submit() {  # submit JOB IN OUT R [K=V...] -> prints the job id
  local job="$1" in="$2" out="$3" r="$4" p ps=()
  shift 4
  for p in "$@"; do ps+=(-p "$p"); done
  mrctl job run "$job" -i "$in" -o "$out" -r "$r" "${ps[@]}" --json | jq -r .id
}

# report: the score table, and the exit status.
report() {
  local row title result secs
  echo
  printf '%-56s | %-6s | %s\n' "check ($kind $name)" result time
  printf '%s\n' "---------------------------------------------------------+--------+---------"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r title result secs <<<"$row"
    printf '%-56s | %-6s | %8s\n' "$title" "${result%% *}" "$secs"
    [[ "$result" == *" "* ]] && printf '    %s\n' "${result#* }"
  done
  echo
  if [[ -f "$WORK/extra" ]]; then cat "$WORK/extra"; echo; fi
  if (( FAILED )); then
    echo "grade: $kind $name: FAIL (${#ROWS[@]} checks ran; logs in $WORK)"
    exit 1
  fi
  echo "grade: $kind $name: PASS (${#ROWS[@]} checks ran)"
  exit 0
}

if (( build )); then check "build (ninja)" do_build || report; fi
require_registered
check "registered" note "$kind '$name' is in the registry"
source "$ROOT/tests/grade_${kind}.sh"
report
