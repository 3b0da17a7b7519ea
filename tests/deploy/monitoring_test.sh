#!/usr/bin/env bash
# deploy/monitoring/ against a real local cluster (issue 27, item 5;
# docs/status-page.md): the alert rules pass `promtool check rules` and their
# unit tests (`promtool test rules`), the example configuration `promtool
# check config`; the Grafana dashboard is valid JSON, and every metric it or
# the rules name is one a real master or worker serves, scraped after a
# small job. The new metrics are there with values checked against /proc and
# the job's record.
# Usage: monitoring_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 root=$2
# shellcheck source=tests/deploy/lib.sh
. "$root/tests/deploy/lib.sh"
mon="$root/deploy/monitoring"
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed (Debian package prometheus; deploy/install-deps.sh)"; exit 77; }
dir="$(mktemp -d "${TMPDIR:-/tmp}/mr-monitoring-test.XXXXXX")"
lc() { MR_BUILD_DIR="$build" "$root/deploy/local-cluster.sh" "$@" --dir "$dir/c"; }
mrctl() { "$build/tools/mrctl" --config "$dir/c/cluster.toml" "$@"; }
cleanup() { lc down >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT

(cd "$mon" && promtool check rules alerts.yml >/dev/null) || fail "promtool check rules alerts.yml"
(cd "$mon" && promtool test rules alerts_test.yml >/dev/null) || fail "promtool test rules alerts_test.yml"
(cd "$mon" && promtool check config prometheus.yml >/dev/null) || fail "promtool check config prometheus.yml"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["panels"]' "$mon/grafana-dashboard.json" ||
  fail "grafana-dashboard.json is not a dashboard"

# A cluster with its status server on by default (no --http), one small job.
before=$(date +%s)
lc up --workers 2 --datacenters 2 --heartbeat-ms 100 --block-size 65536 >"$dir/up.out" || { cat "$dir/up.out"; echo "FAIL: up"; exit 1; }
grep -q '^status page: http://127.0.0.1:' "$dir/up.out" || fail "up does not print the status page's address"
seq 1 30000 | sed 's/$/ a word or two/' >"$dir/in.txt"
mrctl dfs put "$dir/in.txt" /in.txt >/dev/null || fail "dfs put"
mrctl job run wordcount -i /in.txt -o /out -r 2 --wait --json >"$dir/job.json" || fail "job run"
maps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["maps_total"])' "$dir/job.json")
master=$(grep -m1 '^http_address' "$dir/c/cluster.toml" | cut -d'"' -f2)
worker=$(grep '^http_address' "$dir/c/cluster.toml" | sed -n 2p | cut -d'"' -f2)
curl -sf "http://$master/metrics" >"$dir/master.prom" || fail "scrape the master"
curl -sf "http://$worker/metrics" >"$dir/worker.prom" || fail "scrape a worker"
for f in master worker; do promtool check metrics <"$dir/$f.prom" || fail "promtool check metrics ($f)"; done

# Every name the dashboard and the rules use is served (histograms by their
# _bucket, _sum and _count series; `up` is Prometheus' own).
cat "$dir"/*.prom | awk '/^# TYPE/ {print $3; if ($4 == "histogram") {print $3 "_bucket"; print $3 "_sum"; print $3 "_count"}}' |
  sort -u >"$dir/served"
{ python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for p in d["panels"]:
    for t in p["targets"]: print(t["expr"])' "$mon/grafana-dashboard.json"; grep -E '^\s+expr:|^\s+(mr|process)_' "$mon/alerts.yml"; } |
  grep -oE '\b(mr|process)_[a-zA-Z0-9_]+' | sort -u >"$dir/used"
missing=$(comm -23 "$dir/used" "$dir/served")
[[ -z $missing ]] || fail "the dashboard or the rules use metrics no daemon serves: $(echo $missing)"
(( $(wc -l <"$dir/used") >= 20 )) || fail "too few metrics found in the dashboard and rules: $(wc -l <"$dir/used")"

# The new families, with values checked independently.
value() { awk -v k="$2" 'index($0, k) == 1 {print $NF; exit}' "$dir/$1.prom"; }
[[ "$(value master 'mr_jobs_finished_total{state="succeeded"}')" == 1 ]] || fail "mr_jobs_finished_total{succeeded} is not 1"
[[ "$(value master 'mr_jobs_finished_total{state="failed"}')" == 0 ]] || fail "mr_jobs_finished_total{failed} is not 0"
[[ "$(value master 'mr_task_attempts_total{kind="map",outcome="succeeded"}')" == "$maps" ]] ||
  fail "map attempts succeeded: $(value master 'mr_task_attempts_total{kind="map",outcome="succeeded"}'), the record has $maps maps"
grep -q '^mr_build_info{build_type="[^"]*",commit="[^"]*",version="[0-9][^"]*"} 1' "$dir/master.prom" || fail "mr_build_info"
grep -q '^mr_rpc_duration_seconds_bucket{method="cluster.Heartbeat",le="' "$dir/master.prom" || fail "RPC latency histogram"
for w in w1 w2; do
  for m in mr_worker_dfs_used_bytes mr_worker_dfs_capacity_bytes mr_worker_dfs_free_bytes mr_worker_heartbeat_age_seconds; do
    grep -q "^$m{datacenter=\"dc[12]\",worker=\"$w\"} " "$dir/master.prom" || fail "$m of $w"
  done
  [[ "$(grep "^mr_worker_up{.*worker=\"$w\"}" "$dir/master.prom" | awk '{print $2}')" == 1 ]] || fail "mr_worker_up of $w"
done
pid=$(cat "$dir/c/pids/master.pid")
start=$(value master process_start_time_seconds)
python3 - "$start" "$before" "$(date +%s)" <<'PY' || fail "process_start_time_seconds $start is not between the start of up ($before) and now"
import sys
start, before, now = map(float, sys.argv[1:])
sys.exit(0 if before - 2 <= start <= now else 1)
PY
rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
python3 - "$(value master process_resident_memory_bytes)" "$rss_kib" <<'PY' || fail "process_resident_memory_bytes is far from VmRSS"
import sys
served, kib = float(sys.argv[1]), float(sys.argv[2]) * 1024
sys.exit(0 if 0.5 * kib <= served <= 2 * kib else 1)
PY
fds=$(ls "/proc/$pid/fd" | wc -l)
served_fds=$(value master process_open_fds)
(( served_fds > 5 && served_fds <= fds + 5 && served_fds >= fds - 5 )) || fail "process_open_fds $served_fds, /proc has $fds"
grep -q '^process_cpu_seconds_total ' "$dir/worker.prom" || fail "a worker's process_cpu_seconds_total"
finish
