#!/usr/bin/env bash
# The plug-in SDK as a user meets it (docs/user-jobs.md, "Plug-ins"):
# examples/plugin-wordcount built with its own CMakeLists.txt
#   1. against the build tree (-DMrJobApi_DIR=BUILD/sdk), and
#   2. against `cmake --install BUILD --component sdk --prefix P`
#      (-DCMAKE_PREFIX_PATH=P: what the .deb installs under /usr),
# each .so then run by mr-local on generated text, whose output must equal
# the built-in wordcount's byte for byte.
#
#   tests/deploy/plugin_sdk_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1 SRC=$2
WORK=$(mktemp -d /tmp/mr-plugin-sdk-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$BUILD/tools/mrctl" gen text "$WORK/text.txt" --size 300K --seed 3 >/dev/null
"$BUILD/jobs/mr-local" wordcount --input "$WORK/text.txt" --output "$WORK/expected" --reducers 2 \
  --split-bytes 100000

# try NAME CMAKE_ARGS...: configure, build, run, compare.
try() {
  local name=$1
  shift
  if ! cmake -S "$SRC/examples/plugin-wordcount" -B "$WORK/$name" -G Ninja "$@" >"$WORK/$name.log" 2>&1 ||
     ! cmake --build "$WORK/$name" >>"$WORK/$name.log" 2>&1; then
    fail "$name: the example does not build"; cat "$WORK/$name.log"; return
  fi
  "$BUILD/jobs/mr-local" "$WORK/$name/libwordcount_plugin.so" --input "$WORK/text.txt" \
    --output "$WORK/out-$name" --reducers 2 --split-bytes 100000 ||
    { fail "$name: mr-local could not run the plug-in"; return; }
  if cmp -s <(cat "$WORK"/expected/part-*) <(cat "$WORK/out-$name"/part-*); then
    echo "ok   $name: the plug-in's output is the built-in wordcount's"
  else
    fail "$name: the plug-in's output differs from the built-in wordcount's"
  fi
}

try build-tree "-DMrJobApi_DIR=$BUILD/sdk"
cmake --install "$BUILD" --component sdk --prefix "$WORK/prefix" >/dev/null
for f in include/mr/jobs/job.h include/mr/jobs/plugin.h include/mr/common/status.h; do
  [[ -s $WORK/prefix/$f ]] || fail "the SDK lacks $f"
done
try installed "-DCMAKE_PREFIX_PATH=$WORK/prefix"
((fails == 0)) || exit 1
