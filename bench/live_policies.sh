#!/usr/bin/env bash
# Every policy on the live testbed (issue 12 point 5, docs/testbed.md
# "Benchmarking policies live"): runs one workload file under each policy,
# several repetitions, then `mr-sim` on the same file, then
# `mr-workload report OUT` (report.md, *.csv, *.svg).
#
#   bench/live_policies.sh --workload FILE --policies fifo,fair,joss-t [--reps 3]
#        [--rate 100mbit] [--datacenters K=2] [--workers N=2 (per dc)]
#        [--out DIR=live-policies-out] [--cluster CONFIG] [--build DIR=build]
#        [--max-minutes M=60] [--job-timeout S=900] [--client-dc D=1] [--verify]
#        [--set KEY=VALUE]... [--upload-rate RATE=1gbit] [--rtt RTT=0ms]
#
# Without --cluster (root): `deploy/testbed.sh up` once in OUT/testbed, torn
# down in an EXIT trap; the kernel's inter-datacenter counters are read
# around each run. With --cluster CONFIG: an existing cluster (local-cluster,
# real VPSs), no kernel columns. Repetitions are interleaved and the policy
# order rotates each repetition, so load drift hits every policy alike. Per
# repetition x policy, in OUT/POLICY/repN: `mrctl scheduler set POLICY`,
# the load average, counters reset, `mr-workload run` (its --before-jobs
# saves what the uploads moved, counters-puts.json, and resets the kernel
# counters again), counters as soon as the jobs end (its --after-jobs:
# counters.json), every job's record (records.json, written by
# mr-workload), the load average after (meta.json). On the testbed the
# links run at --rate only while the jobs run (from --before-jobs to
# --after-jobs); the uploads before and the verification after run at
# --upload-rate, which is no part of the experiment (the same bytes go to
# the same places, sooner). --rtt adds that round trip between every two
# datacenters for the whole run (testbed.sh up --rtt: the delay line).
# --verify has mr-workload compare every output with mr-local's (jobs.csv `verified`); --set is passed to mr-workload and
# mr-sim. The whole run stops after --max-minutes (the current mr-workload is told the rest as its
# --timeout). Exit status: 0 all ran and the report was written; 1 a run
# failed (the report is still written from the rest); 2 bad usage.
set -euo pipefail
export LC_ALL=C
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "live_policies: $*" >&2; exit 2; }
say() { echo "live_policies: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

workload="" policies="" reps=3 rate="100mbit" dcs=2 workers=2 out="live-policies-out"
cluster="" build="${MR_BUILD_DIR:-$ROOT/build}" max_minutes=60 job_timeout=900 client_dc=1
verify=() sets=() upload_rate=1gbit rtt=0ms
while (($#)); do
  case "$1" in
    --workload) workload="$2"; shift 2 ;;
    --policies) policies="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --datacenters) dcs="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --max-minutes) max_minutes="$2"; shift 2 ;;
    --job-timeout) job_timeout="$2"; shift 2 ;;
    --client-dc) client_dc="$2"; shift 2 ;;
    --verify) verify=(--verify); shift ;;  # --oracle-cache added below, once OUT is known
    --set) sets+=(--set "$2"); shift 2 ;;
    --upload-rate) upload_rate="$2"; shift 2 ;;
    --rtt) rtt="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help for usage)" ;;
  esac
done
[[ -n "$workload" && -f "$workload" ]] || die "--workload FILE is required and must exist (got '$workload')"
[[ -n "$policies" ]] || die "--policies NAME,NAME,... is required"
for n in "$reps" "$dcs" "$workers" "$max_minutes" "$job_timeout" "$client_dc"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive whole number"
done
IFS=, read -r -a POLICY <<<"$policies"
for p in "${POLICY[@]}"; do [[ "$p" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad policy name '$p'"; done
build="$(cd "$build" && pwd)" || die "no build directory '$build'"
for b in tools/mrctl sim/mr-sim sim/mr-workload; do
  [[ -x "$build/$b" ]] || die "$build/$b is missing (ninja -C $build mrctl mr-sim mr-workload mr-master mr-worker)"
done
command -v jq >/dev/null || die "jq is missing (deploy/install-deps.sh)"
workload="$(cd "$(dirname "$workload")" && pwd)/$(basename "$workload")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
echo "$policies" >"$out/policies.txt"  # the report's order
((${#verify[@]})) && verify+=(--oracle-cache "$out/oracle-cache")  # each oracle once
deadline=$((SECONDS + max_minutes * 60))

kernel=0
tb="$out/testbed"
if [[ -z "$cluster" ]]; then
  ((EUID == 0)) || die "the testbed needs root (or give --cluster CONFIG for an existing cluster)"
  kernel=1
  # shellcheck disable=SC2317  # called by the trap
  teardown() { "$ROOT/deploy/testbed.sh" down --dir "$tb" >/dev/null 2>&1 || true; }
  trap teardown EXIT
  started=$SECONDS
  "$ROOT/deploy/testbed.sh" up --dir "$tb" --datacenters "$dcs" --workers "$workers" --rate "$rate" \
    --rtt "$rtt" --client-dc "$client_dc" --build "$build" >"$out/testbed-up.txt"
  "$ROOT/deploy/testbed.sh" status --dir "$tb" >"$out/testbed-status.txt"  # its prefix, rates, pids
  say "testbed up in $((SECONDS - started)) s: $dcs datacenters x $workers workers at $rate, rtt $rtt"
  client() { "$ROOT/deploy/testbed.sh" exec --dir "$tb" client -- "$@"; }
else
  [[ -f "$cluster" ]] || die "no cluster file '$cluster'"
  cluster="$(cd "$(dirname "$cluster")" && pwd)/$(basename "$cluster")"
  client() { MR_CONFIG="$cluster" "$@"; }
fi
mrctl() { client "$build/tools/mrctl" "$@"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

failed=0
for ((rep = 1; rep <= reps; rep++)); do
  n=${#POLICY[@]}
  for ((k = 0; k < n; k++)); do
    p="${POLICY[$(((k + rep - 1) % n))]}"  # rotate the order each repetition
    dir="$out/$p/rep$rep"
    left=$((deadline - SECONDS))
    if ((left <= 0)); then
      say "--max-minutes $max_minutes reached: $p rep $rep and later not run"
      failed=1
      break 2
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    mrctl scheduler set "$p" >"$dir/scheduler.txt" 2>&1 || { say "$p: scheduler set failed: $(cat "$dir/scheduler.txt")"; failed=1; continue; }
    load_before="$(loadavg)"
    hooks=()
    if ((kernel)); then
      tbc="$ROOT/deploy/testbed.sh"
      "$tbc" rate --dir "$tb" "$upload_rate" >/dev/null
      "$tbc" counters --dir "$tb" --reset >/dev/null  # from here: the puts
      hooks=(--before-jobs "$tbc rate --dir $tb $rate >/dev/null && $tbc counters --dir $tb --reset >$dir/counters-puts.json"
             --after-jobs "$tbc counters --dir $tb >$dir/counters.json && $tbc rate --dir $tb $upload_rate >/dev/null")
    fi
    t0=$SECONDS
    rc=0
    client "$build/sim/mr-workload" run "$workload" --out "$dir" \
      --timeout "$((left < job_timeout ? left : job_timeout))" \
      --dfs-root "/live-policies/$p/rep$rep" "${hooks[@]}" "${verify[@]}" "${sets[@]}" \
      >"$dir/mr-workload.out" 2>"$dir/mr-workload.err" || rc=$?
    secs=$((SECONDS - t0))
    load_after="$(loadavg)"
    jq -n --arg p "$p" --argjson rep "$rep" --arg lb "$load_before" --arg la "$load_after" \
      --argjson secs "$secs" --argjson rc "$rc" --arg rate "$rate" --arg rtt "$rtt" --argjson kernel "$kernel" \
      '{policy:$p, rep:$rep, load_before:($lb|split(" ")|map(tonumber)),
        load_after:($la|split(" ")|map(tonumber)), seconds:$secs, exit:$rc,
        rate:(if $kernel == 1 then $rate else null end), rtt:(if $kernel == 1 then $rtt else null end),
        kernel:($kernel == 1)}' >"$dir/meta.json"
    say "$p rep $rep: exit $rc in $secs s (load $load_before -> $load_after); $(tail -1 "$dir/mr-workload.out" 2>/dev/null)"
    ((rc == 0)) || { failed=1; say "  $(tail -3 "$dir/mr-workload.err")"; }
  done
done

# mr-sim on the same file, under the same policies: the file's own
# [[schedulers]] entry when it has one (its label and parameters), else
# the policy by name with its defaults.
mkdir -p "$out/sim"
for p in "${POLICY[@]}"; do
  if ! "$build/sim/mr-sim" run "$workload" --json --quiet "${sets[@]}" --only "$p" >"$out/sim/$p.json" 2>"$out/sim/$p.err"; then
    "$build/sim/mr-sim" run "$workload" --json --quiet "${sets[@]}" --set "schedulers.0.name=\"$p\"" \
      --set "schedulers.0.label=\"$p\"" --set "schedulers.0.params={}" --only "$p" \
      >"$out/sim/$p.json" 2>"$out/sim/$p.err" || { say "mr-sim $p: $(cat "$out/sim/$p.err")"; rm -f "$out/sim/$p.json"; }
  fi
done

"$build/sim/mr-workload" report "$out" --workload "$workload" || { say "mr-workload report failed"; exit 1; }
say "report: $out/report.md"
exit "$failed"
