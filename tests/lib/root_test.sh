# shellcheck shell=bash
# Sourced first by the tests that build network namespaces as root
# (tests/testbed/smoke.sh, tests/deploy/vps_*): their common start.
#
#   root_test_begin NAME "what needs root" "$@"
#
# sets LC_ALL=C, ROOT (the checkout), BUILD ($MR_BUILD_DIR, else
# ROOT/build; --build DIR), keep (1 with --keep) and REST (the other
# arguments, for the test's own options); defines say and fail (one line
# named NAME; fail exits 1); and exits 77 (ctest: skipped) with one line
# when not root.
root_test_begin() {
  ROOT_TEST_NAME=$1
  local why=$2
  shift 2
  export LC_ALL=C
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  BUILD="${MR_BUILD_DIR:-$ROOT/build}"
  keep=0
  REST=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --build) BUILD="$2"; shift 2 ;;
      --keep) keep=1; shift ;;
      *) REST+=("$1"); shift ;;
    esac
  done
  if [[ $(id -u) -ne 0 ]]; then say "SKIP: needs root ($why)"; exit 77; fi
}
say() { echo "$ROOT_TEST_NAME: $*"; }
fail() { echo "$ROOT_TEST_NAME: FAIL: $*" >&2; exit 1; }
# A test option root_test_begin does not know.
unknown_option() { echo "$ROOT_TEST_NAME: unknown option '$1'" >&2; exit 2; }
