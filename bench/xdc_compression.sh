#!/usr/bin/env bash
# Bytes across datacenters (issue 15, docs/benchmarks.md "Bytes across
# datacenters"): Sort and Permu on the testbed (2 datacenters x 2 workers,
# network namespaces, htb-shaped inter-dc links, kernel counters), each run
# under cluster.inter_dc_zstd_level = OLD (0: today's behaviour, nothing
# recompressed) and NEW (the default, 3), interleaved, at each --rates rate.
# Same input, placement (hdfs), policy (fifo) and reducers in every run; the
# workers are restarted with the edited cluster file before each run.
#
#   sudo MR_BUILD_DIR=build bench/xdc_compression.sh [--rates 100mbit,20mbit]
#        [--runs 3] [--text-size 64M] [--dna-size 24M] [--block-size 8388608]
#        [--reducers 2] [--output-replication N] [--levels 0,3,3:24] [--out DIR=xdc-out]
#
# A --levels entry is L or L:W (inter_dc_zstd_level L, inter_dc_zstd_window_log W).
# --output-replication N runs every job with `mrctl job run --output-replication N`;
# without it, jobs use the cluster's default (dfs.replication, 2 on the testbed).
# Per run: the job's record (inter_dc_bytes: the per-job socket counters),
# the kernel's bytes between datacenters over the job (worker<->worker, plus
# client<->worker when the record counts the client), its turnaround
# (elapsed_ms) and the workers' CPU seconds (utime+stime+cutime+cstime of
# every mr-worker from /proc/PID/stat, before and after). Prints medians per
# (rate, job, level) and NEW/OLD ratios; raw rows in OUT/runs.tsv. Every
# output is compared with the first run's (sha256). Needs root; the
# namespaces are removed in an EXIT trap.
set -euo pipefail
export LC_ALL=C
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "xdc_compression: $*" >&2; exit 2; }
say() { echo "xdc_compression: $*" >&2; }

rates="100mbit,20mbit" runs=3 text_size=64M dna_size=24M block_size=$((8 << 20)) reducers=2
out_rep="" levels="0,3,3:24" out="xdc-out" build="${MR_BUILD_DIR:-$ROOT/build}"
while (($#)); do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --text-size) text_size="$2"; shift 2 ;;
    --dna-size) dna_size="$2"; shift 2 ;;
    --block-size) block_size="$2"; shift 2 ;;
    --reducers) reducers="$2"; shift 2 ;;
    --output-replication) out_rep="$2"; shift 2 ;;
    --levels) levels="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option '$1'" ;;
  esac
done
((EUID == 0)) || die "needs root (the testbed)"
command -v jq >/dev/null || die "jq is missing"
build="$(cd "$build" && pwd)"
for b in tools/mrctl worker/mr-worker master/mr-master; do [[ -x "$build/$b" ]] || die "$build/$b is missing"; done
IFS=, read -r -a RATES <<<"$rates"
IFS=, read -r -a LEVELS <<<"$levels"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tb="$out/testbed"
tbc() { "$ROOT/deploy/testbed.sh" "$1" --dir "$tb" "${@:2}"; }
teardown() { "$ROOT/deploy/testbed.sh" down --dir "$tb" >/dev/null 2>&1 || true; }
trap teardown EXIT
tbc up --datacenters 2 --workers 2 --rate 1gbit --block-size "$block_size" >"$out/testbed-up.txt"
mrctl() { tbc exec client -- "$build/tools/mrctl" "$@"; }
conf="$tb/cluster.toml"
rep_flag=()
[[ -n "$out_rep" ]] && rep_flag=(--output-replication "$out_rep")

set_level() {  # set_level L[:W]: the keys in [cluster] (replaced or added), then restart the workers
  local l="${1%%:*}" w=0
  [[ "$1" == *:* ]] && w="${1#*:}"
  awk -v l="$l" -v w="$w" '
    function keys() { print "inter_dc_zstd_level = " l; print "inter_dc_zstd_window_log = " w; done = 1 }
    /^\[/ { if (sect == "[cluster]" && !done) keys(); sect = $0 }
    sect == "[cluster]" && /^inter_dc_zstd_(level|window_log) =/ { if (!done) keys(); next }
    { print }' "$conf" >"$conf.new" && mv "$conf.new" "$conf"
  tbc restart-workers >>"$out/restarts.txt"
  sleep 3  # the master still lists the old processes live; let the new ones register
}
cpu_ticks() {  # all workers' utime+stime+cutime+cstime
  local t=0 f pid
  for f in "$tb"/pids/w*.pid; do
    pid="$(cat "$f")"
    [[ -r "/proc/$pid/stat" ]] ||
      die "worker $(basename "$f" .pid) (pid $pid) is not running: see $tb/logs (rebuilt binaries during the bench?)"
    t=$((t + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 + $14 + $15 }')))
  done
  echo "$t"
}
wait_replicated() {
  for _ in $(seq 1 300); do
    [[ "$(mrctl cluster status --json | jq .under_replicated_blocks)" == 0 ]] && return 0
    sleep 0.2
  done
  die "blocks still under-replicated after 60 s"
}

say "inputs: text $text_size, dna $dna_size (mrctl gen, seed 1), blocks of $block_size"
"$build/tools/mrctl" gen text "$out/in.txt" --size "$text_size" --seed 1
"$build/tools/mrctl" gen dna "$out/in.fa" --size "$dna_size" --seed 1
mrctl dfs put "$out/in.txt" /in/text.txt >/dev/null
mrctl dfs put "$out/in.fa" /in/dna.fa >/dev/null
wait_replicated
hz="$(getconf CLK_TCK)"
printf 'rate\tjob\tlevel\trun\tint\tkernel\tturnaround_ms\tcpu_s\tshuffle_other\tmap_input_other\toutput_other\tload\n' >"$out/runs.tsv"
declare -A sha
n=0
for rate in "${RATES[@]}"; do
  for ((run = 1; run <= runs; run++)); do
    for ((k = 0; k < ${#LEVELS[@]}; k++)); do
      level="${LEVELS[$(((k + run - 1) % ${#LEVELS[@]}))]}"  # rotate the order each run
      tbc rate 1gbit >/dev/null
      set_level "$level"
      for job in sort permu; do
        input=/in/text.txt
        [[ "$job" == permu ]] && input=/in/dna.fa
        n=$((n + 1))
        dst="/out/$job-$n"
        tbc rate "$rate" >/dev/null
        tbc counters --reset >/dev/null
        c0="$(cpu_ticks)"
        rec="$(mrctl job run "$job" -i "$input" -o "$dst" -r "$reducers" "${rep_flag[@]}" --wait --json)" ||
          die "$job ($rate, level $level) failed: $(jq -r .error <<<"$rec" 2>/dev/null)"
        c1="$(cpu_ticks)"
        tbc counters >"$out/counters-$n.json"
        load="$(cut -d' ' -f1 /proc/loadavg)"
        tbc rate 1gbit >/dev/null
        echo "$rec" >"$out/job-$n.json"
        [[ "$(jq -r .state <<<"$rec")" == succeeded ]] || die "$job: $(jq -r .error <<<"$rec")"
        kernel="$(jq '[.pairs[].worker_bytes] | add' "$out/counters-$n.json")"
        if jq -e 'has("client_inter_dc_bytes")' <<<"$rec" >/dev/null; then
          kernel=$((kernel + $(jq '[.pairs[].client_bytes] | add' "$out/counters-$n.json")))
        fi
        s="$(mrctl dfs cat "$dst" | sha256sum | cut -d' ' -f1)"
        [[ -z "${sha[$job]:-}" ]] && sha[$job]="$s"
        [[ "${sha[$job]}" == "$s" ]] || die "$job run $n: output differs from the first run's"
        mrctl dfs rm -r "$dst" >/dev/null 2>&1 || true
        row="$(jq -r --arg r "$rate" --arg l "$level" --argjson run "$run" --argjson k "$kernel" \
          --argjson cpu "$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')" \
          --arg load "$load" \
          '[$r, .job, $l, $run, .inter_dc_bytes, $k, .elapsed_ms, $cpu, .shuffle_bytes.other_dc,
            .map_input_bytes.other_dc, .output_replication_bytes.other_dc, $load] | @tsv' <<<"$rec")"
        echo "$row" >>"$out/runs.tsv"
        say "$row"
      done
    done
  done
done

# Medians per (rate, job, level) and each level's ratios to the first
# level in --levels (OLD).
old="${LEVELS[0]}"
awk -F'\t' -v old="$old" '
  NR == 1 { next }
  { key = $1 "\t" $2 "\t" $3; n[key]++; for (c = 5; c <= 11; c++) v[key, c, n[key]] = $c; keys[key] = 1 }
  function med(key, c,   m, i, j, t, a) {
    m = n[key]; for (i = 1; i <= m; i++) a[i] = v[key, c, i] + 0
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    print "rate\tjob\tlevel\truns\tINT(median)\tkernel\tkernel/INT\tturnaround_s\tworker_cpu_s\tshuffle_other\tmap_input_other\toutput_other"
    for (key in keys) {
      split(key, k, "\t")
      printf "%s\t%s\t%s\t%d\t%d\t%d\t%.3f\t%.2f\t%.2f\t%d\t%d\t%d\n", k[1], k[2], k[3], n[key], med(key, 5), med(key, 6),
        med(key, 6) / (med(key, 5) > 0 ? med(key, 5) : 1), med(key, 7) / 1000, med(key, 8), med(key, 9), med(key, 10), med(key, 11)
      if (k[3] != old) { nk[k[1] "\t" k[2] "\t" k[3]] = key }
      if (k[3] == old) { ok[k[1] "\t" k[2]] = key }
    }
    print ""
    print "rate\tjob\tlevel\tINT /old\tkernel /old\tturnaround /old\tworker CPU /old"
    for (rjl in nk) {
      split(rjl, k, "\t"); rj = k[1] "\t" k[2]
      if (!(rj in ok)) continue
      printf "%s\t%.3f\t%.3f\t%.3f\t%.3f\n", rjl, med(nk[rjl], 5) / med(ok[rj], 5), med(nk[rjl], 6) / med(ok[rj], 6),
        med(nk[rjl], 7) / med(ok[rj], 7), med(nk[rjl], 8) / med(ok[rj], 8)
    }
  }' "$out/runs.tsv" | tee "$out/summary.tsv"
