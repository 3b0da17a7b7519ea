#!/bin/sh
# check_layers.sh [ROOT] — the folder layering of the sources: each folder
# may include project headers only from itself and the folders below it.
# Fails naming file:line and the rule. Run by the configure step
# (CMakeLists.txt: a violation stops cmake) and by ctest as `layering`.
# scheduler/ is held to more (only common/status.h): check_purity.sh.
#
#   proto, common                      the base: each other only
#   scheduler, dfs, jobs               + common, proto
#   worker                             + dfs, jobs
#   master                             + dfs, jobs, scheduler
#   sim                                + dfs, jobs, scheduler
#   tools                              + dfs, jobs, scheduler (clients:
#                                        never the daemons' or sim's code)
#   bench, tests, examples             anything
set -u
root=${1:-$(dirname "$0")/..}
status=0
# allowed FOLDER: the folders FOLDER's sources may include from.
allowed() {
  case "$1" in
    proto) echo "proto" ;;
    common) echo "common proto" ;;
    scheduler|dfs|jobs) echo "$1 common proto" ;;
    worker) echo "worker common proto dfs jobs" ;;
    master) echo "master common proto dfs jobs scheduler" ;;
    sim) echo "sim common proto dfs jobs scheduler" ;;
    tools) echo "tools common proto dfs jobs scheduler" ;;
  esac
}
for dir in proto common scheduler dfs jobs worker master sim tools; do
  [ -d "$root/$dir" ] || continue
  ok=$(allowed "$dir")
  hits=$(find "$root/$dir" -type f \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z |
         xargs -0 -r grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' |
         while IFS= read -r line; do
           inc=$(printf '%s\n' "$line" | sed -E 's/^[^"]*"([a-z_]+)\/.*$/\1/')
           case " $ok " in *" $inc "*) ;; *) printf '  %s: %s/ may not include %s/\n' "${line%%:*}:$(printf '%s' "$line" | cut -d: -f2)" "$dir" "$inc" ;; esac
         done)
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits"
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "layering: an include crosses the folder layers above (tests/check_layers.sh); move what both sides need into the layer below (common/)"
  exit 1
fi
echo "layering: every folder includes only its own layer and the ones below"
