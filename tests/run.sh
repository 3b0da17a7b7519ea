#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds, runs ctest.
# Idempotent and fast when nothing changed. Extra arguments go to ctest
# (e.g. ./tests/run.sh -R Dfs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"

"$ROOT/deploy/install-deps.sh"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$BUILD"
cd "$BUILD"
exec ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
