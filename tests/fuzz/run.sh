#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz, one at a time.
#
#   tests/fuzz/run.sh [--seconds N] [--harness NAME]... [--build-only | --no-build]
#
# Configures and builds build-fuzz (clang, -DMR_FUZZ=ON: libFuzzer + ASan +
# UBSan; MR_FUZZ_BUILD_DIR and MR_FUZZ_OPT override the directory and -O1),
# building only the harnesses and what they link. Each
# harness runs N seconds (default 30) on a temporary copy of its seed corpus
# tests/fuzz/corpus/NAME (the checked-in corpus never grows by itself), and
# prints one line: name, executions, crashes. A crashing input is saved in
# build-fuzz/fuzz-out/NAME/ and makes the script exit 1; its log is beside
# it. docs/reliability.md, "Fuzzing", says how to reproduce one.
# --build-only stops after the build; --no-build runs what was built (the
# suite builds in one ctest test, alone, and runs in another, beside others).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${MR_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
ALL=(fuzz_frame fuzz_handshake fuzz_cluster_config fuzz_sim_scenario fuzz_master_rpc
     fuzz_worker_rpc)

seconds=30
harnesses=()
build=1 run=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --harness) harnesses+=("$2"); shift 2 ;;
    --build-only) run=0; shift ;;
    --no-build) build=0; shift ;;
    *) echo "usage: $0 [--seconds N] [--harness NAME]... [--build-only | --no-build]" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --seconds wants a positive integer" >&2; exit 2; }
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=("${ALL[@]}")
for h in "${harnesses[@]}"; do
  [[ " ${ALL[*]} " == *" $h "* ]] || { echo "run.sh: no harness '$h' (${ALL[*]})" >&2; exit 2; }
done

CXX="${MR_FUZZ_CXX:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "run.sh: $CXX not found (deploy/install-deps.sh installs it)" >&2; exit 1; }
# MR_FUZZ_OPT: -O1 (libFuzzer's usual build) by default; the suite's short
# run uses -O0, which builds in half the time and runs slower.
OPT="${MR_FUZZ_OPT:--O1}"
if [[ $build -eq 1 ]]; then
  mkdir -p "$BUILD"
  # Line tables only: enough for stack traces, quickest to compile. A unity
  # build (each library's sources compiled a batch at a time, as one file):
  # Asio's, Beast's and protobuf's headers are parsed, and their templates
  # instantiated and instrumented, once per batch instead of once per file
  # (docs/reliability.md, "Fuzzing", has the figures). Line tables still name
  # the original files. The normal build compiles file by file.
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=None \
        "-DCMAKE_CXX_FLAGS=$OPT -gline-tables-only" -DCMAKE_CXX_COMPILER="$CXX" -DMR_FUZZ=ON \
        -DCMAKE_UNITY_BUILD=ON \
        >"$BUILD/fuzz-configure.log" 2>&1 || { cat "$BUILD/fuzz-configure.log" >&2; exit 1; }
  ninja -C "$BUILD" "${harnesses[@]}" >"$BUILD/fuzz-build.log" 2>&1 ||
    { tail -50 "$BUILD/fuzz-build.log" >&2; exit 1; }
fi
[[ $run -eq 1 ]] || exit 0
for h in "${harnesses[@]}"; do
  [[ -x "$BUILD/tests/fuzz/$h" ]] || { echo "run.sh: $BUILD/tests/fuzz/$h not built (run without --no-build)" >&2; exit 1; }
done

# Per-harness limits: inputs up to max_len bytes (scenario files are larger).
max_len() {
  case "$1" in
    fuzz_sim_scenario) echo 16384 ;;
    fuzz_cluster_config) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

# The servers' coverage is large: libFuzzer's entropic schedule spends most
# of the time updating its feature frequencies there (measured: 6x fewer
# executions for the same CPU), so those harnesses use the plain schedule.
extra_flags() {
  case "$1" in
    fuzz_master_rpc|fuzz_worker_rpc|fuzz_handshake) echo -entropic=0 ;;
  esac
}

failed=0
total=0
for h in "${harnesses[@]}"; do
  out="$BUILD/fuzz-out/$h"
  rm -rf "$out"
  mkdir -p "$out"
  work="$(mktemp -d "${TMPDIR:-/tmp}/mr-fuzz-corpus.XXXXXX")"
  cp -r "$ROOT/tests/fuzz/corpus/$h/." "$work/" 2>/dev/null || true
  status=0
  # -timeout: one input may take 30 s (the harnesses call a hang at 5 s).
  "$BUILD/tests/fuzz/$h" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -max_len="$(max_len "$h")" $(extra_flags "$h") -print_final_stats=1 -artifact_prefix="$out/" \
      "$work" >"$out/log" 2>&1 || status=$?
  rm -rf "$work"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
  crashes=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
            -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  if [[ $status -ne 0 && $crashes -eq 0 ]]; then crashes=1; fi  # died without an artifact
  printf '%-20s %12s executions  %d crashes\n' "$h" "${execs:-?}" "$crashes"
  total=$((total + ${execs:-0}))
  if [[ $crashes -ne 0 ]]; then
    failed=1
    echo "  log and input: $out/ (reproduce: $BUILD/tests/fuzz/$h $out/crash-...)" >&2
    grep -m3 -E 'FUZZ FAILURE|ERROR: |runtime error' "$out/log" | sed 's/^/  /' >&2 || true
  fi
done
echo "total: $total executions"
exit $failed
