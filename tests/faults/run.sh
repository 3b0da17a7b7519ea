#!/usr/bin/env bash
# The named fault scenarios (docs/reliability.md): each starts its
# own local cluster, does one kind of damage while jobs or reads run, checks
# every output byte against an independent oracle, and prints one line:
#
#   SCENARIO jobs=N exact=K/M bytes_lost=B hung=H peak_rss_mib=master:…,w1:… PASS|FAIL (T s)
#
#   tests/faults/run.sh                      every scenario, reduced size (ctest's fault_scenarios)
#   tests/faults/run.sh --full               every scenario, full size
#   tests/faults/run.sh --scenario NAME ...  only NAME (repeatable), e.g. --scenario corrupt-two
#   tests/faults/run.sh --list               the scenario names
#   options: --keep (keep every scenario's directory), --seed N (the random choices)
#
# Needs the build (mr-master, mr-worker, mrctl, mr-local, fault_flood) in
# $MR_BUILD_DIR (default build/), and root for disk-full (it mounts a tmpfs).
# Ends with 'N passed, N failed'; exit 0 only if every scenario passed. The
# directory of a failed scenario (logs, cluster logs, records) is kept and named.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"

ALL=(worker-kills master-restart corrupt-one corrupt-two disk-full holders-down lease-restart
     flood-unauth flood-fds flood-addresses)
# Time limits in seconds (reduced, full): past it the scenario is stopped and fails.
declare -A LIMIT=(
  [worker-kills]="150 900" [master-restart]="120 600" [corrupt-one]="60 240"
  [corrupt-two]="60 240" [disk-full]="120 600" [holders-down]="90 400"
  [lease-restart]="90 400" [flood-unauth]="90 200" [flood-fds]="60 120"
  [flood-addresses]="90 240"
)

size=reduced keep=0 chosen=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) size=full; shift ;;
    --scenario) [[ -n "${2:-}" && -n "${LIMIT[$2]:-}" ]] ||
                  { echo "faults: unknown scenario '${2:-}' (--list names them)" >&2; exit 2; }
                chosen+=("$2"); shift 2 ;;
    --list) printf '%s\n' "${ALL[@]}"; exit 0 ;;
    --keep) keep=1; shift ;;
    --seed) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "faults: --seed wants a number" >&2; exit 2; }
            export MR_FAULT_SEED="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "faults: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${#chosen[@]} -gt 0 ]] || chosen=("${ALL[@]}")
export MR_FAULT_FLOOD="${MR_FAULT_FLOOD:-$BUILD/tests/fault_flood}"
for b in master/mr-master worker/mr-worker tools/mrctl jobs/mr-local; do
  [[ -x "$BUILD/$b" ]] || { echo "faults: $BUILD/$b is missing: build first (ninja -C build)" >&2; exit 2; }
done
[[ -x "$MR_FAULT_FLOOD" ]] || { echo "faults: $MR_FAULT_FLOOD is missing (ninja -C build fault_flood)" >&2; exit 2; }

TMP="$(mktemp -d /tmp/mr-faults-XXXXXX)"
passed=0 failed=0
# summary NAME RC SECONDS: the scenario's one line, from its state files.
summary() {
  local name="$1" rc="$2" secs="$3" st="$TMP/$1/state" rss="" f v verdict
  get() { cat "$st/$1" 2>/dev/null || echo "${2:-0}"; }
  for f in "$st"/rss.master "$st"/rss.w*; do
    [[ -e "$f" ]] && rss+="${rss:+,}$(basename "$f" | cut -d. -f2):$(( $(cat "$f") / 1024 ))"
  done
  if (( rc == 124 || rc == 137 )); then echo "time limit of ${LIMIT[$name]%% *}s reached" >>"$st/fail"; fi
  if (( rc != 0 )) && [[ ! -s "$st/fail" ]]; then echo "scenario exited $rc" >>"$st/fail"; fi
  if [[ -s "$st/fail" ]]; then
    v="$(wc -l <"$st/fail")"
    verdict="FAIL ($secs s): $(head -n 1 "$st/fail")$( (( v > 1 )) && echo " (+$((v - 1)) more)")"
  else
    verdict="PASS ($secs s)"
  fi
  printf '%-15s jobs=%s exact=%s/%s bytes_lost=%s hung=%s peak_rss_mib=%s %s\n' "$name" \
    "$(get jobs)" "$(get exact)" "$(get expected)" "$(get lost ?)" "$(get hung)" "${rss:--}" "$verdict"
}

for name in "${chosen[@]}"; do
  read -r lim_reduced lim_full <<<"${LIMIT[$name]}"
  lim=$lim_reduced; [[ $size == full ]] && lim=$lim_full
  LIMIT[$name]="$lim"
  mkdir -p "$TMP/$name/state"
  start=$SECONDS
  ROOT="$ROOT" BUILD="$BUILD" SCENARIO="$name" SIZE="$size" WORK="$TMP/$name" LIMIT="$lim" \
    timeout -k 30 "$lim" bash "$HERE/scenario.sh" "$name" >"$TMP/$name/log" 2>&1
  rc=$?
  summary "$name" "$rc" $((SECONDS - start))
  if (( rc == 0 )) && [[ ! -s "$TMP/$name/state/fail" ]]; then
    passed=$((passed + 1))
    (( keep )) || rm -rf "${TMP:?}/$name"
  else
    failed=$((failed + 1))
    # A spinning daemon writes fast: keep the first and last MiB of a big log.
    for f in "$TMP/$name"/cluster/logs/*; do
      if [[ -f "$f" ]] && (( $(stat -c %s "$f") > (4 << 20) )); then
        { head -c 1M "$f"; printf '\n[... cut by tests/faults/run.sh ...]\n'; tail -c 1M "$f"; } >"$f.cut"
        mv "$f.cut" "$f"
      fi
    done
    echo "  kept: $TMP/$name (log, cluster/logs)"
  fi
done
echo "faults: $passed passed, $failed failed"
rmdir "$TMP" 2>/dev/null || true
(( failed == 0 ))
