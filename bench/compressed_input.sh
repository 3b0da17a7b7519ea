#!/usr/bin/env bash
# WordCount's per-map throughput reading .zst and .gz input against plain
# text, in one invocation (issue 27 item 6; docs/benchmarks.md):
#
#   bench/compressed_input.sh [SIZE] [RUNS]      (defaults: 256M 3)
#
# Generates SIZE of text (mrctl gen text --seed 1) under $TMPDIR (kept for
# the next run), compresses it with the zstd and gzip tools at their default
# levels, and runs one WordCount map task over each, round-robin, RUNS times
# (build/bench/compressed_input). Prints the medians, the ratios to plain
# text and the load average before and after. MR_BUILD_DIR: the build
# (default: build).
set -euo pipefail
size=${1:-256M}
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${MR_BUILD_DIR:-$here/build}
dir=${TMPDIR:-/tmp}/mr-bench-compressed-input
mkdir -p "$dir"
file=$dir/text-$size
[[ -s $file ]] || "$build/tools/mrctl" gen text "$file" --size "$size" --seed 1
[[ -s $file.zst ]] || zstd -q -f -k "$file" -o "$file.zst"
[[ -s $file.gz ]] || gzip -c "$file" >"$file.gz"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$build/bench/compressed_input" "$file" --runs "$runs"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
