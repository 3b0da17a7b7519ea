#!/bin/sh
# check_purity.sh [DIR] — the source half of the scheduler's purity proof
# (the link half is mr_add_policy in scheduler/CMakeLists.txt). Fails,
# naming file:line, if a .h or .cc under DIR (default: scheduler/) reaches
# threads, a clock, entropy, files, sleeping or a heavy library, or includes
# a project header outside scheduler/ other than common/status.h.
# Registered with ctest as `scheduler_purity`.
set -u
dir=${1:-$(dirname "$0")/../../scheduler}
[ -d "$dir" ] || { echo "check_purity: no directory $dir" >&2; exit 2; }

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*'
status=0
# check WHAT REGEX [ALLOWED]: lines matching REGEX (and not ALLOWED) fail.
check() {
  hits=$(find "$dir" -type f \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z |
         xargs -0 -r grep -nHE -- "$2" | grep -vE -- "^[^:]*:[0-9]+:${3:-$}")
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|^|  $1: |"
    status=1
  fi
}
check "threads" "$inc<(thread|mutex|shared_mutex|condition_variable|future|stop_token|semaphore|latch|barrier)>"
check "clock" "(steady_clock|system_clock|high_resolution_clock)::now|$inc<(ctime|time\.h|sys/time\.h|unistd\.h)>"
check "entropy (use SchedulerEnv's seed)" "random_device"
check "file I/O" "$inc<(fstream|cstdio|stdio\.h|filesystem)>|(^|[^[:alnum:]_])(fopen|freopen|popen)[[:space:]]*\("
check "sleeping" "(^|[^[:alnum:]_])(sleep|usleep|nanosleep|sleep_for|sleep_until)[[:space:]]*\("
check "heavy library" "$inc[<\"](boost/asio|asio\.hpp|rocksdb/|google/protobuf|spdlog)"
check "project header outside the seam" "$inc\"" "[[:space:]]*#[[:space:]]*include[[:space:]]*\"(scheduler/[^\"]*|common/status\.h)\""

if [ "$status" -ne 0 ]; then
  echo "scheduler purity: forbidden in $dir (no I/O, no clock, no threads, no heavy libraries; see scheduler/scheduler.h)"
  exit 1
fi
echo "scheduler purity: $(find "$dir" -type f \( -name '*.h' -o -name '*.cc' \) | wc -l) files clean"
