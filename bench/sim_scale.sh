#!/usr/bin/env bash
# mr-sim's performance target (issue 5): 500 nodes and 100,000 tasks in
# <= 10 s on one core. Runs sim/scenarios/scale-500.toml once per registered
# policy (--only), pinned to one CPU, and prints per policy: the wall time of the
# whole run, the time inside the policy, the simulator's own share (the
# difference) and whether the run met 10 s.
#
#   ninja -C build mr-sim && bench/sim_scale.sh build/sim/mr-sim
set -euo pipefail
SIM="${1:-build/sim/mr-sim}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCENARIO="$ROOT/sim/scenarios/scale-500.toml"
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)
POLICIES=(capacity fair fair-matchmaking fair-pandas fifo fifo-delay fifo-matchmaking fifo-pandas
          joint joss-j joss-t probabilistic)
printf '%-18s %9s %10s %9s %9s %8s  %s\n' policy wall_s policy_s sim_s tasks jobs target
for p in "${POLICIES[@]}"; do
  start=$(date +%s.%N)
  json=$("${PIN[@]}" "$SIM" run "$SCENARIO" --json --timing --quiet --only "$p")
  end=$(date +%s.%N)
  python3 - "$p" "$start" "$end" <<PY "$json"
import json, sys
p, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.loads(sys.argv[4])["runs"][0]
wall = end - start
tasks = r["maps_total"] + r["reduces_done"]
print("%-18s %9.2f %10.2f %9.2f %9d %8d  %s" % (p, wall, r["policy_ms"] / 1000,
      wall - r["policy_ms"] / 1000, tasks, r["jobs_finished"], "met" if wall <= 10 else "MISSED"))
PY
done
