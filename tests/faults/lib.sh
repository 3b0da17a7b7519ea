# shellcheck shell=bash
# Shared helpers of the fault scenarios, sourced by tests/faults/scenario.sh
# in the process of one scenario. See docs/reliability.md.
#
# The scenario's facts go to files in $STATE, which run.sh turns into the
# scenario's one summary line (so a scenario cut off by its time limit still
# reports what it measured):
#   jobs        jobs submitted                 exact    job outputs equal to their oracle
#   expected    jobs whose output is checked   hung     jobs not ended by the deadline
#   lost        bytes of missing or differing files (every put file, every job output)
#   rss.NAME    peak VmHWM of daemon NAME, KiB (over all its incarnations)
#   fail        the reasons for FAIL, one a line
# Requires: ROOT, BUILD, SCENARIO, SIZE (reduced|full), WORK, LIMIT (s).

export LC_ALL=C
CL="$WORK/cluster"
STATE="$WORK/state"
mkdir -p "$STATE" "$WORK/jobs" "$WORK/expect" "$WORK/oracle"
MRCTL=("$BUILD/tools/mrctl" --config "$CL/cluster.toml")
FLOOD="${MR_FAULT_FLOOD:-$BUILD/tests/fault_flood}"
DEADLINE=$((SECONDS + LIMIT - 20))  # leaves time for the final checks and the cleanup
BG_PIDS=()      # background processes this scenario started (mrctl clients, the sampler)
STOPPED=()      # daemon names this scenario SIGSTOPped and has not resumed
MOUNTS=()       # tmpfs mount points to unmount on exit
SEED="${MR_FAULT_SEED:-$(( (RANDOM << 15) | RANDOM ))}"
RANDOM=$SEED

say() { printf '%s %s\n' "$(date +%T.%3N)" "$*"; }
# fail REASON: the scenario fails, with this reason; it goes on to measure.
fail() { say "FAIL: $*"; echo "$*" >>"$STATE/fail"; }
# die REASON: the scenario fails and stops here (cleanup runs on exit).
die() { fail "$*"; exit 1; }
count() { echo $(( $(cat "$STATE/$1" 2>/dev/null || echo 0) + ${2:-1} )) >"$STATE/$1"; }
left() { echo $((DEADLINE - SECONDS)); }
sized() { if [[ "$SIZE" == full ]]; then echo "$2"; else echo "$1"; fi; }  # sized REDUCED FULL

# ---- the cluster -----------------------------------------------------------
lc() { "$ROOT/deploy/local-cluster.sh" "$@" --dir "$CL"; }
# (Background processes run "${MRCTL[@]}" directly, so that $! is mrctl itself.)
mrctl() { "${MRCTL[@]}" "$@"; }

# True when PID is alive, not a zombie, and one of this cluster's daemons.
ours() {
  local pid="$1"
  [[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
  [[ "$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" != Z ]] &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$CL/cluster.toml"
}
pid_of() { cat "$CL/pids/$1.pid" 2>/dev/null; }

# Samples VmHWM of every daemon every 0.3 s into $STATE/rss.NAME (the peak
# over restarts). Runs in the background until cleanup ends it.
sample_rss() {
  local f n pid kb old
  while (( SECONDS < DEADLINE + 10 )); do
    for f in "$CL"/pids/*.pid; do
      [[ -e "$f" ]] || continue
      n="$(basename "$f" .pid)"; pid="$(cat "$f" 2>/dev/null)"
      ours "$pid" || continue
      kb="$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)"
      [[ -n "$kb" ]] || continue
      old="$(cat "$STATE/rss.$n" 2>/dev/null || echo 0)"
      (( kb > old )) && echo "$kb" >"$STATE/rss.$n"
    done
    sleep 0.3
  done
}

# cluster_up ARGS...: a private local cluster in $CL, and the RSS sampler.
cluster_up() {
  say "cluster up $*"
  lc up "$@" || die "the cluster did not come up"
  sample_rss &
  BG_PIDS+=($!)
}

# Stops what this scenario started, always (EXIT trap): resumes stopped
# daemons, ends background clients by PID, takes the cluster down, unmounts.
cleanup() {
  local n p m
  trap '' TERM INT  # run.sh's time limit must not cut the cleanup short
  for n in "${STOPPED[@]}"; do p="$(pid_of "$n")"; ours "$p" && kill -CONT "$p" 2>/dev/null; done
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
  if [[ -f "$CL/cluster.toml" ]]; then lc down >/dev/null 2>&1 || true; fi
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# wait_until SECONDS CMD...: polls CMD every 0.2 s; false if it never held.
wait_until() {
  local until=$((SECONDS + $1)); shift
  while (( SECONDS < until && SECONDS < DEADLINE )); do
    "$@" && return 0
    sleep 0.2
  done
  "$@"
}
all_live() {
  [[ "$(mrctl cluster status --json 2>/dev/null | jq '[.workers[]? | select(.live)] | length' 2>/dev/null)" == "$1" ]]
}
stop_daemon() { kill -STOP "$(pid_of "$1")"; STOPPED+=("$1"); say "SIGSTOP $1"; }
cont_daemon() {
  local n keep=()
  kill -CONT "$(pid_of "$1")" 2>/dev/null; say "SIGCONT $1"
  for n in "${STOPPED[@]}"; do [[ "$n" == "$1" ]] || keep+=("$n"); done
  STOPPED=("${keep[@]}")
}
# holders DFSPATH BLOCK: the worker ids holding replicas of that block, one a line.
holders() { mrctl dfs stat --json "$1" | jq -r ".blocks[$2].replicas[]?"; }

# ---- inputs and expected files ---------------------------------------------
# gen KIND FILE SIZE SEED: generated input.
gen() { mrctl gen "$1" "$2" --size "$3" --seed "$4" >/dev/null || die "mrctl gen $1 failed"; }

# expect DFSPATH LOCAL: at the end, DFSPATH (a file, or a job's output
# directory, read as its parts in order) must hold exactly LOCAL's bytes.
expect() {
  printf '%s\t%s\n' "$1" "$2" >>"$WORK/expect/list"
}
# put LOCAL DFSPATH [ARGS...]: puts, and expects the bytes back at the end.
put() {
  local src="$1" dst="$2"; shift 2
  mrctl dfs put "$@" "$src" "$dst" || die "put $dst failed"
  expect "$dst" "$src"
}
# book: a real book from ../shared/data beside the checkout, if there is one.
book() {
  local d
  d="$(realpath -m "$ROOT/../shared/data/books")"
  [[ -d "$d" ]] && find "$d" -name '*.txt' | sort | head -n 1
}

# oracle JOB LOCAL REDUCERS SPLIT [K=V...]: path of mr-local's output, its
# parts concatenated in order (what `dfs cat OUTDIR` prints).
oracle() {
  local job="$1" input="$2" r="$3" split="$4" key out p args=()
  shift 4
  for p in "$@"; do args+=(--param "$p"); done
  key="$(printf '%s|' "$job" "$input" "$r" "$split" "$@" | sha1sum | cut -c1-12)"
  out="$WORK/oracle/$key"
  if [[ ! -f "$out.all" ]]; then
    "$BUILD/jobs/mr-local" "$job" --input "$input" --output "$out" --reducers "$r" \
      --split-bytes "$split" "${args[@]}" >/dev/null || die "mr-local $job failed"
    cat "$out"/* >"$out.all"
  fi
  echo "$out.all"
}

# submit NAME JOB INPUT_DFS INPUT_LOCAL OUT REDUCERS SPLIT [K=V...]: starts
# `mrctl job run --wait --json` in the background as job NAME; its output
# must equal mr-local's. The record goes to $WORK/jobs/NAME.json.
submit() {
  local name="$1" job="$2" in="$3" local="$4" out="$5" r="$6" split="$7" p params=()
  shift 7
  for p in "$@"; do params+=(-p "$p"); done
  "${MRCTL[@]}" job run "$job" -i "$in" -o "$out" -r "$r" "${params[@]}" --wait --json \
    >"$WORK/jobs/$name.json" 2>"$WORK/jobs/$name.err" &
  echo $! >"$WORK/jobs/$name.pid"
  BG_PIDS+=($!)
  printf '%s\t%s\n' "$out" "$(oracle "$job" "$local" "$r" "$split" "$@")" >"$WORK/jobs/$name.expect"
  count jobs
  say "submitted $name: $job $in -> $out (r=$r)"
}
running_clients() {
  local f n=0
  for f in "$WORK"/jobs/*.pid; do [[ -e "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null && n=$((n + 1)); done
  echo "$n"
}
# wait_jobs: waits (until the deadline) for every submitted job's client.
# A client still running then is a hung job; one that exited non-zero fails.
wait_jobs() {
  local f name pid rc
  for f in "$WORK"/jobs/*.pid; do
    [[ -e "$f" ]] || continue
    name="$(basename "$f" .pid)"; pid="$(cat "$f")"
    while kill -0 "$pid" 2>/dev/null && (( SECONDS < DEADLINE )); do sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null; count hung; fail "job $name did not end in time"
      rm -f "$f"; continue
    fi
    rc=0; wait "$pid" || rc=$?
    rm -f "$f"
    if (( rc != 0 )); then
      fail "job $name: mrctl job run exited $rc: $(tail -n 1 "$WORK/jobs/$name.err")"
    fi
    # Its output is checked whatever the client said: a job may have
    # succeeded although the client lost track of it.
    cat "$WORK/jobs/$name.expect" >>"$WORK/expect/list"
    count expected
  done
}

# check_expected: reads every expected file back; counts exact job outputs
# and the bytes of missing or differing files into $STATE/lost.
check_expected() {
  local dst src want got size lost=0 exact=0
  [[ -f "$WORK/expect/list" ]] || { echo 0 >"$STATE/lost"; return; }
  while IFS=$'\t' read -r dst src; do
    want="$(sha256sum <"$src" | cut -d' ' -f1)"
    got="$(mrctl dfs cat "$dst" 2>>"$WORK/expect/errors" | sha256sum | cut -d' ' -f1)"
    if [[ "$got" == "$want" ]]; then
      [[ "$src" == "$WORK/oracle/"* ]] && exact=$((exact + 1))
    else
      size="$(stat -c %s "$src")"
      lost=$((lost + (size > 0 ? size : 1)))
      fail "$dst: differs from $(basename "$src") or is missing ($size bytes)"
    fi
  done < <(sort -u "$WORK/expect/list")
  echo "$lost" >"$STATE/lost"
  echo "$exact" >"$STATE/exact"
}

# finish: the checks every scenario ends with. Exit status = verdict.
finish() {
  check_expected
  [[ -s "$STATE/fail" ]] && exit 1
  exit 0
}
