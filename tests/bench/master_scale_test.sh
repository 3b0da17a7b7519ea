#!/usr/bin/env bash
# The master at reduced scale (issue 29, item 6): 300 emulated workers
# (bench/master_scale/fleet.h) against a real mr-master, three jobs of 300
# maps and 2 reduces each, two workers stopped mid-run. Every task must be
# launched once (again only after its worker was lost: stopped, or declared
# dead by a master that heard nothing for 5 s on a loaded machine), every heartbeat must
# succeed, every job must succeed, and the stopped workers must be declared
# dead. Every worker's view of the members (common/member_view.h) must end
# as the master's list, and the heartbeats must carry each change of the list
# to each worker once (deltas), not the whole list at each change: O(workers)
# entries per worker, where the master before deltas sent O(workers²).
# No timing assertion: the figures are printed, not judged.
# Registered in tests/CMakeLists.txt; about half a minute.
#
#   tests/bench/master_scale_test.sh MASTER_SCALE MR_MASTER
set -euo pipefail
SCALE="$1" MASTER="$2"
WORK="$(mktemp -d /tmp/master-scale-test-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/master_scale_lib.sh"
scale_config "$WORK/cluster.toml" scale-test "$WORK/master"
rc=0
line="$("$SCALE" jobs --config "$WORK/cluster.toml" --master "$MASTER" --log "$WORK/master.log" \
  --workers 300 --jobs 3 --maps 900 --reducers 2 --map-ms 1500 --reduce-ms 500 \
  --warmup-s 1 --window-s 8 --stop-workers 2 --until-done --done-timeout-s 180 --check-views)" || rc=$?
echo "$line"
[[ -n "$line" ]] || fail "master_scale printed no figures (exit $rc)"
check '.jobs == "3 succeeded of 3"' "every job succeeds"
check '.duplicate_launches == 0' "no task is launched twice unless its worker was lost"
check '.launches >= 906' "every map and reduce was launched"
check '.beat_errors == 0' "every heartbeat succeeds"
check '.output_errors == 0' "every reduce's output file is created"
check '.dead_noticed_s > 0' "the stopped workers are declared dead"
check '.views_agree == "yes"' "every worker's view of the members is the master's list"
# A worker's beats carry each change once per registration of that worker:
# (workers + reregisters) sessions, each hearing at most of every join, return
# and death (workers + 2 reregisters + 2 stopped).
check '.member_entries <= (.workers + .reregisters) * (.workers + 2 * .reregisters + 2)' \
  "each change of the members reaches each worker once, not the whole list at each change"
(( rc == 0 )) || fail "master_scale exited $rc"
echo PASS
