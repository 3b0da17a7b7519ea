#!/usr/bin/env bash
# Stragglers and speculation on the live testbed (issue 26, item 7;
# docs/benchmarks.md "Stragglers"): WordCount and Sort of >= 64 maps on 2
# datacenters x 3 workers with a 40 ms round trip between them, under fault
# cases x policies x speculators, repetitions interleaved.
#
#   sudo bench/stragglers.sh [--reps 3] [--cases LIST] [--policies fifo,fair]
#        [--speculators none,hadoop,late] [--jobs wordcount,sort] [--size 512M]
#        [--block-size 8M] [--reducers 4] [--out DIR=stragglers-out] [--build DIR=build]
#        [--max-minutes 60] [--job-timeout 600] [--rtt 40ms] [--rate 1gbit]
#        [--worker w4] [--fault-at 2] [--cpu-pct 25] [--freeze-for 60]
#        [--episode-pct 10] [--episode-for 30] [--cut-for 30]
#        [--speculator-param NAME:'KEY = VALUE']... [--quick]
#
# Cases (--cases, default all):
#   homogeneous  nothing done to the cluster;
#   slow-cpu     --worker capped at --cpu-pct % of a core for the whole job (testbed.sh cpu);
#   frozen       every process in --worker's namespace SIGSTOPped --fault-at s after the
#                submission, SIGCONTed --freeze-for s later (the run waits for it);
#   noisy        a noisy neighbour: testbed.sh episode --worker --episode-pct
#                --at --fault-at --for --episode-for, started at the submission;
#   dc-cut       an nft table in the router's namespace drops every packet between dc1
#                and dc2 from --fault-at s after the submission for --cut-for s.
# Policies switch live (mrctl scheduler set); a speculator is in the cluster
# file, so the master is restarted with it (testbed.sh restart-master
# --speculation, DFS and history kept) before that speculator's runs.
# --speculator-param hadoop:'lag_ms = 10000' gives one speculator a
# parameter. Each repetition runs every speculator (order rotated by one per
# repetition), and under it every case x policy x job (order rotated too).
# Every output is checked against an independent computation of the same
# input (WordCount: jobs/oracles/wordcount.sh; Sort: LC_ALL=C sort), cached
# by the input's sha256 in /tmp/mr-stragglers-oracle. A run not started
# before --max-minutes is skipped.
# --quick: 1 rep, wordcount, homogeneous + slow-cpu, fifo, none + late.
#
# Writes OUT/runs.csv (one row a run), OUT/results.csv and OUT/results.md
# (medians per job x case x policy x speculator: JTT, JTT / homogeneous JTT
# of the same policy and speculator, and / homogeneous with speculator none,
# wasted task-seconds (speculation_wasted_ms) and their % of the job's
# task-seconds (sum of its tasks' run_ms), backups launched / won, INT from
# the record and the kernel's worker bytes between datacenters), prints
# results.md. Needs root. Everything is torn down in an EXIT trap: frozen
# processes continued, the cut removed, the job client killed (by pid), the
# testbed down (its namespaces, cgroups, episodes). Exit status 0 when every
# run succeeded with an exact output, 1 otherwise, 2 for bad usage.
set -euo pipefail
export LC_ALL=C
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "stragglers: $*" >&2; exit 2; }
say() { echo "stragglers: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

ALL_CASES=homogeneous,slow-cpu,frozen,noisy,dc-cut
reps=3 cases=$ALL_CASES policies=fifo,fair speculators=none,hadoop,late jobs=wordcount,sort
size=512M block_size=8M reducers=4 out=stragglers-out build="${MR_BUILD_DIR:-$ROOT/build}"
max_minutes=60 job_timeout=600 rtt=40ms rate=1gbit worker=w4 fault_at=2 cpu_pct=25
freeze_for=60 episode_pct=10 episode_for=30 cut_for=30 quick=0
declare -A SPEC_PARAMS=()
while (($#)); do
  case "$1" in
    --quick | -h | --help) ;;
    --reps | --cases | --policies | --speculators | --jobs | --size | --block-size | --reducers | --out | --build | \
      --max-minutes | --job-timeout | --rtt | --rate | --worker | --fault-at | --cpu-pct | --freeze-for | \
      --episode-pct | --episode-for | --cut-for | --speculator-param) (($# >= 2)) || die "$1 needs a value" ;;
  esac
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --policies) policies="$2"; shift 2 ;;
    --speculators) speculators="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --reducers) reducers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --max-minutes) max_minutes="$2"; shift 2 ;;
    --job-timeout) job_timeout="$2"; shift 2 ;;
    --rtt) rtt="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --worker) worker="$2"; shift 2 ;;
    --fault-at) fault_at="$2"; shift 2 ;;
    --cpu-pct) cpu_pct="$2"; shift 2 ;;
    --freeze-for) freeze_for="$2"; shift 2 ;;
    --episode-pct) episode_pct="$2"; shift 2 ;;
    --episode-for) episode_for="$2"; shift 2 ;;
    --cut-for) cut_for="$2"; shift 2 ;;
    --speculator-param)
      [[ "$2" =~ ^([a-z0-9_-]+):(.+)$ ]] || die "bad --speculator-param '$2' (want NAME:'KEY = VALUE')"
      SPEC_PARAMS[${BASH_REMATCH[1]}]+="${BASH_REMATCH[2]}"$'\n'; shift 2 ;;
    --quick) quick=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help for usage)" ;;
  esac
done
if ((quick)); then
  reps=1 jobs=wordcount cases=homogeneous,slow-cpu policies=fifo speculators=none,late
fi
for v in reps reducers max_minutes job_timeout cpu_pct freeze_for episode_pct episode_for cut_for; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--${v//_/-} must be a positive whole number, got '${!v}'"
done
[[ "$fault_at" =~ ^[0-9]+$ ]] || die "--fault-at must be a whole number of seconds, got '$fault_at'"
((cpu_pct <= 400 && episode_pct <= 400)) || die "--cpu-pct and --episode-pct are 1..400"
[[ "$worker" =~ ^w[1-6]$ ]] || die "--worker must be one of w1..w6, got '$worker'"
IFS=, read -r -a CASES <<<"$cases"
IFS=, read -r -a POLICIES <<<"$policies"
IFS=, read -r -a SPECS <<<"$speculators"
IFS=, read -r -a JOBS <<<"$jobs"
for c in "${CASES[@]}"; do [[ ",$ALL_CASES," == *",$c,"* ]] || die "unknown case '$c' (have $ALL_CASES)"; done
for j in "${JOBS[@]}"; do [[ "$j" == wordcount || "$j" == sort ]] || die "unknown job '$j' (have wordcount,sort)"; done
for p in "${POLICIES[@]}" "${SPECS[@]}"; do [[ "$p" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad name '$p'"; done
((${#CASES[@]} && ${#POLICIES[@]} && ${#SPECS[@]} && ${#JOBS[@]})) || die "empty --cases, --policies, --speculators or --jobs"
((EUID == 0)) || die "needs root (the testbed)"
command -v jq >/dev/null || die "jq is missing (deploy/install-deps.sh)"
build="$(cd "$build" 2>/dev/null && pwd)" || die "no build directory '$build'"
for b in tools/mrctl worker/mr-worker master/mr-master tools/mr-delayline; do
  [[ -x "$build/$b" ]] || die "$build/$b is missing (ninja -C $build mrctl mr-master mr-worker mr-task mr-delayline)"
done
bytes() { numfmt --from=iec "$1" 2>/dev/null || die "bad size '$1' (e.g. 256M)"; }
size_b="$(bytes "$size")" block_b="$(bytes "$block_size")"
maps=$(((size_b + block_b - 1) / block_b))
((maps >= 64)) || say "note: $size in blocks of $block_size is $maps maps (the issue asks >= 64)"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
tb="$out/testbed"
deadline=$((SECONDS + max_minutes * 60))
tbc() { "$ROOT/deploy/testbed.sh" "$1" --dir "$tb" "${@:2}"; }
mrctl() { tbc exec client -- "$build/tools/mrctl" "$@"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# ---- Teardown: what a run may leave in flight, then the testbed. ----
FROZEN=()     # pids SIGSTOPped by this script (in the worker's namespace)
CUT=0         # the router's drop table is in place
CLIENT_PID="" # the running `mrctl job run --wait`
cont_frozen() { local p; for p in "${FROZEN[@]}"; do kill -CONT "$p" 2>/dev/null || true; done; FROZEN=(); }
uncut() { ((CUT)) || return 0; tbc exec router -- nft delete table ip mrcut >/dev/null 2>&1 || true; CUT=0; }
# shellcheck disable=SC2317  # called by the trap
teardown() {
  set +e
  cont_frozen
  uncut
  [[ -n "$CLIENT_PID" ]] && kill "$CLIENT_PID" 2>/dev/null
  "$ROOT/deploy/testbed.sh" down --dir "$tb" >/dev/null 2>&1
}
trap teardown EXIT
trap 'exit 130' INT TERM

# ---- The inputs and their independent answers. ----
say "load before setup: $(loadavg)"
in="$out/in.txt"
if [[ ! -f "$in" || "$(stat -c %s "$in")" != "$size_b" ]]; then
  "$build/tools/mrctl" gen text "$in" --size "$size" --seed 1 >/dev/null
fi
cache=/tmp/mr-stragglers-oracle
mkdir -p "$cache"
in_sha="$(sha256sum "$in" | cut -d' ' -f1)"
declare -A WANT=()
for j in "${JOBS[@]}"; do
  f="$cache/$in_sha.$j"
  if [[ ! -s "$f" ]]; then
    t0=$SECONDS
    case "$j" in
      wordcount) "$ROOT/jobs/oracles/wordcount.sh" "$in" | sort | sha256sum | cut -d' ' -f1 >"$f.new" ;;
      sort) sort -S 512M "$in" | sha256sum | cut -d' ' -f1 >"$f.new" ;;
    esac
    mv "$f.new" "$f"
    say "oracle $j: $(cat "$f") in $((SECONDS - t0)) s"
  fi
  WANT[$j]="$(cat "$f")"
done
out_sha() {  # out_sha JOB DFSDIR: the digest compared with the oracle's
  if [[ "$1" == wordcount ]]; then mrctl dfs cat "$2" | sort | sha256sum | cut -d' ' -f1
  else mrctl dfs cat "$2" | sha256sum | cut -d' ' -f1; fi
}

# ---- The testbed. ----
spec_flags() {  # spec_flags NAME: --speculation NAME and its --speculation-param lines
  local l
  printf '%s\n' --speculation "$1"
  while IFS= read -r l; do [[ -n "$l" ]] && printf '%s\n' --speculation-param "$l"; done <<<"${SPEC_PARAMS[$1]:-}"
}
mapfile -t sf < <(spec_flags "${SPECS[0]}")
t0=$SECONDS
tbc up --datacenters 2 --workers 3 --rtt "$rtt" --rate "$rate" --block-size "$block_b" \
  --scheduler "${POLICIES[0]}" "${sf[@]}" --build "$build" >"$out/testbed-up.txt"
current_spec="${SPECS[0]}"
say "testbed up in $((SECONDS - t0)) s (2 datacenters x 3 workers, rtt $rtt, rate $rate, blocks of $block_size)"
t0=$SECONDS
mrctl dfs put "$in" /in/text.txt >/dev/null 2>"$out/put.err" || die "put failed: $(tail -n 1 "$out/put.err")"
for _ in $(seq 1 300); do
  [[ "$(mrctl cluster status --json | jq .under_replicated_blocks)" == 0 ]] && break
  sleep 0.2
done
say "input put in $((SECONDS - t0)) s: $size, $maps blocks"

all_live() {  # waits (60 s at most) until every worker is live again
  local i
  for i in $(seq 1 300); do
    [[ "$(mrctl cluster status --json 2>/dev/null | jq '[.workers[] | select(.live)] | length' 2>/dev/null)" == 6 ]] && return 0
    sleep 0.2
  done
  return 1
}
freeze() {  # every process in $worker's namespace, SIGSTOPped (recorded to be continued)
  local pid ns p
  pid="$(cat "$tb/pids/$worker.pid")"
  ns="$(ip netns identify "$pid")"
  [[ "$ns" == mrtb*-"$worker" ]] || { say "cannot find $worker's namespace (pid $pid: '$ns')"; return 1; }
  for p in $(ip netns pids "$ns"); do FROZEN+=("$p"); kill -STOP "$p" 2>/dev/null || true; done
}
cut_dcs() {
  printf '%s\n' 'table ip mrcut {' '  chain forward {' \
    '    type filter hook forward priority -10; policy accept;' \
    '    ip saddr 10.213.1.0/24 ip daddr 10.213.2.0/24 drop' \
    '    ip saddr 10.213.2.0/24 ip daddr 10.213.1.0/24 drop' '  }' '}' >"$out/cut.nft"
  CUT=1
  tbc exec router -- nft -f "$out/cut.nft"
}
# sleep_until T: sleeps until the epoch second T.
sleep_until() { local d; d=$(($1 - $(date +%s))); ((d > 0)) && sleep "$d"; return 0; }

# run_one SPEC CASE POLICY JOB REP: one job under one case; appends a row to runs.csv.
failed=0
n=0
printf 'job,case,policy,speculator,rep,seq,state,output_exact,jtt_s,backups_launched,backups_won,wasted_ms,task_ms,maps,int_bytes,kernel_worker_bytes,load_before,load_after\n' >"$out/runs.csv"
run_one() {
  local spec="$1" case="$2" policy="$3" job="$4" rep="$5" dir rec load_b load_a t_sub rc=0 id exact=no state
  n=$((n + 1))
  dir="$out/runs/$job-$case-$policy-$spec-rep$rep"
  mkdir -p "$dir"
  mrctl scheduler set "$policy" >"$dir/scheduler.txt" 2>&1 || { say "scheduler set $policy failed"; failed=1; return; }
  case "$case" in
    slow-cpu) tbc cpu "$worker" "$cpu_pct" >/dev/null ;;
    noisy) tbc episode "$worker" "$episode_pct" --at "$fault_at" --for "$episode_for" >/dev/null ;;
  esac
  tbc counters --reset >/dev/null
  load_b="$(loadavg)"
  local dst="/out/$n-$job"
  t_sub="$(date +%s)"
  mrctl job run "$job" -i /in/text.txt -o "$dst" -r "$reducers" --wait --json >"$dir/run.json" 2>"$dir/run.err" &
  CLIENT_PID=$!
  case "$case" in
    frozen)
      sleep_until $((t_sub + fault_at)); freeze; say "  froze $worker (${#FROZEN[@]} processes)"
      sleep_until $((t_sub + fault_at + freeze_for)); cont_frozen ;;
    dc-cut)
      sleep_until $((t_sub + fault_at)); cut_dcs; say "  cut dc1 <-> dc2"
      sleep_until $((t_sub + fault_at + cut_for)); uncut ;;
  esac
  local end=$((SECONDS + job_timeout))
  while kill -0 "$CLIENT_PID" 2>/dev/null && ((SECONDS < end)); do sleep 0.5; done
  if kill -0 "$CLIENT_PID" 2>/dev/null; then
    kill "$CLIENT_PID" 2>/dev/null || true
    say "  $job did not end in $job_timeout s"
  fi
  wait "$CLIENT_PID" || rc=$?
  CLIENT_PID=""
  tbc counters >"$dir/counters.json"
  load_a="$(loadavg)"
  [[ "$case" == slow-cpu || "$case" == noisy ]] && tbc cpu "$worker" off >/dev/null  # also ends the episode
  id="$(jq -r '.id // empty' "$dir/run.json" 2>/dev/null || true)"
  if [[ -n "$id" ]]; then mrctl job show "$id" --json >"$dir/record.json" 2>/dev/null || cp "$dir/run.json" "$dir/record.json"
  else echo '{}' >"$dir/record.json"; fi
  state="$(jq -r '.state // "unknown"' "$dir/record.json")"
  if [[ "$state" == succeeded ]] && [[ "$(out_sha "$job" "$dst")" == "${WANT[$job]}" ]]; then exact=yes; fi
  [[ "$state" == succeeded && "$exact" == yes && $rc == 0 ]] || failed=1
  mrctl dfs rm -r "$dst" >/dev/null 2>&1 || true
  all_live || say "  not every worker live again 60 s after the run"
  local kernel
  kernel="$(jq '[.pairs[].worker_bytes] | add' "$dir/counters.json")"
  jq -r --arg job "$job" --arg case "$case" --arg policy "$policy" --arg spec "$spec" --argjson rep "$rep" \
    --argjson seq "$n" --arg state "$state" --arg exact "$exact" --argjson kernel "$kernel" \
    --arg lb "${load_b%% *}" --arg la "${load_a%% *}" '
    [$job, $case, $policy, $spec, $rep, $seq, $state, $exact, ((.elapsed_ms // 0) / 1000),
     (.backups_launched // 0), (.backups_won // 0), (.speculation_wasted_ms // 0),
     ([(.map_tasks // [])[].run_ms, (.reduce_tasks // [])[].run_ms] | map(. // 0) | add // 0),
     ((.map_tasks // []) | length), (.inter_dc_bytes // 0), $kernel, $lb, $la] | @csv' \
    "$dir/record.json" | tr -d '"' >>"$out/runs.csv"
  say "  $(tail -n 1 "$out/runs.csv")"
}

# ---- The runs: repetitions interleaved, orders rotated. ----
combos=()
for c in "${CASES[@]}"; do for p in "${POLICIES[@]}"; do for j in "${JOBS[@]}"; do combos+=("$c $p $j"); done; done; done
total=$((reps * ${#SPECS[@]} * ${#combos[@]}))
say "$total runs: ${#SPECS[@]} speculators x ${#combos[@]} case x policy x job, $reps reps (load $(loadavg))"
started=$SECONDS
for ((rep = 1; rep <= reps; rep++)); do
  for ((s = 0; s < ${#SPECS[@]}; s++)); do
    spec="${SPECS[$(((s + rep - 1) % ${#SPECS[@]}))]}"
    if [[ "$spec" != "$current_spec" ]]; then
      mapfile -t sf < <(spec_flags "$spec")
      tbc restart-master "${sf[@]}" >>"$out/restarts.txt" || die "the master did not come back with speculation $spec"
      current_spec="$spec"
    fi
    for ((k = 0; k < ${#combos[@]}; k++)); do
      read -r c p j <<<"${combos[$(((k + rep - 1) % ${#combos[@]}))]}"
      if ((SECONDS >= deadline)); then
        say "--max-minutes $max_minutes reached: the rest not run"; failed=1; break 3
      fi
      say "rep $rep: $j $c $p $spec (load $(loadavg))"
      run_one "$spec" "$c" "$p" "$j" "$rep"
    done
  done
done
say "runs took $((SECONDS - started)) s"

# ---- Medians and ratios. ----
awk -F, -v OFS=, '
  NR == 1 { next }
  { key = $1 FS $2 FS $3 FS $4; keys[key] = 1; m = ++cnt[key]
    jtt[key, m] = $9; wl[key, m] = $12; tk[key, m] = $13; bl[key, m] = $10; bw[key, m] = $11
    it[key, m] = $15; kn[key, m] = $16; ok[key] += ($7 == "succeeded" && $8 == "yes") }
  function med(arr, key,   m, i, j, t, a) {
    m = cnt[key]; for (i = 1; i <= m; i++) a[i] = arr[key, i] + 0
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "" }
  END {
    print "job,case,policy,speculator,reps,exact,jtt_s,jtt_vs_homogeneous,jtt_vs_homogeneous_none,wasted_task_s,wasted_pct,backups_launched,backups_won,int_mb,kernel_worker_mb"
    for (key in keys) {
      split(key, k, FS)
      h = k[1] FS "homogeneous" FS k[3] FS k[4]; h0 = k[1] FS "homogeneous" FS k[3] FS "none"
      r = ""; if (h in keys) r = ratio(med(jtt, key), med(jtt, h))
      r0 = ""; if (h0 in keys) r0 = ratio(med(jtt, key), med(jtt, h0))
      pct = ""; if (med(tk, key) > 0) pct = sprintf("%.1f", 100 * med(wl, key) / med(tk, key))
      printf "%s,%d,%d,%.1f,%s,%s,%.1f,%s,%g,%g,%.1f,%.1f\n", key, cnt[key], ok[key], med(jtt, key), r, r0,
        med(wl, key) / 1000, pct, med(bl, key), med(bw, key), med(it, key) / 1e6, med(kn, key) / 1e6
    }
  }' "$out/runs.csv" | { IFS= read -r h; echo "$h"; sort -t, -k1,1 -k2,2 -k3,3 -k4,4; } >"$out/results.csv"
{
  echo "Stragglers: $size of text in $block_size blocks ($maps maps), $reducers reducers; 2 datacenters x 3 workers,"
  echo "rtt $rtt, rate $rate; fault worker $worker; medians over reps (ratios of medians)."
  echo
  echo "| job | case | policy | spec | reps | exact | JTT s | ÷ homog. | ÷ homog. none | wasted task-s | wasted % | backups | won | INT MB | kernel MB |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$out/results.csv" | awk -F, -v OFS=' | ' '{ $1 = $1; print "| " $0 " |" }'
  echo
  echo "Load (1-min average) before the runs: $(awk -F, 'NR > 1 { print $17 }' "$out/runs.csv" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "min %s, median %s, max %s over %d runs", a[1], a[int((NR + 1) / 2)], a[NR], NR }')"
} >"$out/results.md"
cat "$out/results.md"
exit "$failed"
