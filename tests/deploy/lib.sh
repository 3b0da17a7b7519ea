# shellcheck shell=bash
# Sourced by the tests in tests/deploy/: counting failures, the last line,
# and installing a build into a scratch root.
fails=0

# fail MESSAGE: one FAIL line; the test goes on and fails at `finish`.
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# finish: prints PASS or the failure count; the test's exit status.
finish() {
  ((fails == 0)) && echo PASS || echo "FAIL: $fails"
  ((fails == 0))
}

# install_into ROOT BUILD_DIR: `cmake --install` of BUILD_DIR with prefix /usr
# into ROOT, as CPack fills the .deb; on failure prints the log and exits 1.
install_into() {
  if ! DESTDIR=$1 cmake --install "$2" --prefix /usr >"$1/install.log" 2>&1; then
    cat "$1/install.log"
    echo "FAIL: cmake --install"
    exit 1
  fi
  rm -f "$1/install.log"
}

# scratch_dir NAME: makes $tmp, a new directory /tmp/mr-NAME.XXXXXX, and at
# exit stops the daemon whose pid the test left in $pid (if any) and removes
# $tmp.
scratch_dir() {
  tmp=$(mktemp -d "/tmp/mr-$1.XXXXXX")
  pid=
  trap remove_scratch_dir EXIT
}
remove_scratch_dir() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
