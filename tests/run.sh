#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds, runs ctest.
# Idempotent and fast when nothing changed. Extra arguments go to ctest
# (e.g. ./tests/run.sh -R Dfs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"

# A line per phase: on a fresh machine the packages and the build take minutes.
echo "run.sh: the Debian packages (deploy/install-deps.sh; installs only what is missing)"
"$ROOT/deploy/install-deps.sh"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  echo "run.sh: configuring the build in $BUILD (cmake)"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
echo "run.sh: building everything in $BUILD (ninja)"
ninja -C "$BUILD"
echo "run.sh: the tests (ctest -j $(nproc))"
cd "$BUILD"
exec ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
