# shellcheck shell=bash
# Sourced by the testbed tests (tests/testbed/*.sh) after root_test.sh: the
# checks and the teardown they share.
#
#   require_tools TOOL...        fail unless each is on PATH
#   require_built BINARY...      fail unless each is built under $BUILD
#   testbed_cleanup_on_exit T TB
#
# testbed_cleanup_on_exit installs EXIT and INT/TERM traps that run
# `testbed.sh down --dir TB` (idempotent; also after a failed or never-run
# `up`), fail the test if a namespace of the run is left, and remove the
# scratch directory T (kept with --keep, or on failure when
# MR_TESTBED_KEEP_ON_FAIL is set). The namespaces' prefix is
# $TESTBED_PREFIX when the test set it, else read from TB/netns.state (while
# the testbed is up), else from a `testbed.sh status` saved beside TB as
# testbed-status.txt (bench/live_policies.sh saves one).
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || fail "$tool is missing (deploy/install-deps.sh installs it)"
  done
}
require_built() {
  local b
  for b in "$@"; do [[ -x "$BUILD/$b" ]] || fail "$BUILD/$b is missing: build first"; done
}

TESTBED_PREFIX=""
# testbed_prefix TB: the namespaces' prefix of the testbed in TB, or "".
testbed_prefix() {
  local tb=$1
  if [[ -n "$TESTBED_PREFIX" ]]; then
    echo "$TESTBED_PREFIX"
  elif [[ -f "$tb/netns.state" ]]; then
    awk '$1 == "prefix" { print $2 }' "$tb/netns.state"
  elif [[ -f "$(dirname "$tb")/testbed-status.txt" ]]; then
    sed -n 's/^testbed in .*: prefix \([^ ]*\)$/\1/p' "$(dirname "$tb")/testbed-status.txt"
  fi
}
# namespaces_left PREFIX: how many namespaces named PREFIX* exist.
namespaces_left() { ip netns list | awk '{ print $1 }' | grep -c "^$1" || true; }

testbed_cleanup_on_exit() {
  _TESTBED_T=$1 _TESTBED_TB=$2
  trap _testbed_cleanup EXIT
  trap 'exit 130' INT TERM
}
_testbed_cleanup() {
  local rc=$? prefix left
  set +e
  prefix="$(testbed_prefix "$_TESTBED_TB")"
  "$ROOT/deploy/testbed.sh" down --dir "$_TESTBED_TB" >/dev/null 2>&1 ||
    echo "$ROOT_TEST_NAME: testbed.sh down failed" >&2
  if [[ -n "$prefix" ]]; then
    left="$(namespaces_left "$prefix")"
    [[ "$left" -eq 0 ]] || { echo "$ROOT_TEST_NAME: $left namespaces named $prefix* left behind" >&2; rc=1; }
  fi
  if [[ ${keep:-0} -eq 1 || ($rc -ne 0 && -n "${MR_TESTBED_KEEP_ON_FAIL:-}") ]]; then
    echo "$ROOT_TEST_NAME: kept $_TESTBED_T" >&2
  else
    rm -rf "$_TESTBED_T"
  fi
  exit "$rc"
}
