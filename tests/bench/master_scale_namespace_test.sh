#!/usr/bin/env bash
# The namespace run of bench/master_scale at reduced scale (issue 29, item
# 2): 6,000 files of 10 blocks on 3 emulated workers, so each holds 60,000
# replicas, and frames of 192 KiB (the least the cluster file allows), so
# no worker's full block report fits one frame (~580 KB at ~10 bytes a
# block). After the master restarts, every worker must register again with
# its report in parts (dfs/block_report.h) and the master must know every
# replica: before the split, such a worker could never register (the
# client refuses the frame) and this run timed out. No timing assertion.
# Registered in tests/CMakeLists.txt; about ten seconds.
#
#   tests/bench/master_scale_namespace_test.sh MASTER_SCALE MR_MASTER
set -euo pipefail
SCALE="$1" MASTER="$2"
WORK="$(mktemp -d /tmp/master-scale-ns-test-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/master_scale_lib.sh"
scale_config "$WORK/cluster.toml" scale-ns-test "$WORK/master" "max_frame_bytes = 196608" \
  $'block_size = 65536\ntransfer_chunk_bytes = 65536'
rc=0
# The run gives up on the reports after 10 minutes; a test need not wait so long.
line="$(timeout 180 "$SCALE" namespace --config "$WORK/cluster.toml" --master "$MASTER" \
  --log "$WORK/master.log" --workers 3 --files 6000 --blocks-per-file 10 --ops 200 \
  --dir-entries 1000)" || rc=$?
echo "$line"
[[ -n "$line" ]] || fail "master_scale printed no figures (exit $rc: 124 is the timeout)"
check '.blocks == 60000' "the namespace was built"
check '.restart_serving_s > 0' "after the restart the master knows every replica (every report is in)"
check '.ls_status == "ok" and .ls_entries == 1000' "a directory of 1,000 entries is listed"
(( rc == 0 )) || fail "master_scale exited $rc"
echo PASS
