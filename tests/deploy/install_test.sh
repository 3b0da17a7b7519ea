#!/usr/bin/env bash
# What `cmake --install` (and so the .deb, which CPack fills the same way)
# puts on a machine: installs the build into a scratch root with prefix /usr
# and checks every file, the man pages and the installed bash completion (in
# a real bash). The units: systemd_units_test.sh; the .deb: package_test.sh.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
root=$(mktemp -d /tmp/mr-install-test.XXXXXX)
trap 'rm -rf "$root"' EXIT
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

install_into "$root" "$build"

bins="mr-master mr-worker mrctl mr-local mr-sim mr-workload"
expected=(usr/lib/systemd/system/mr-master.service usr/lib/systemd/system/mr-worker@.service
          usr/share/bash-completion/completions/mrctl usr/share/doc/mr/README.md
          usr/share/doc/mr/deploy.md usr/share/doc/mr/config.md
          usr/share/doc/mr/examples/cluster.toml usr/share/doc/mr/examples/logrotate.conf)
for b in $bins; do expected+=("usr/bin/$b" "usr/share/man/man1/$b.1.gz"); done
for f in "${expected[@]}"; do [[ -s $root/$f ]] || fail "not installed: /$f"; done
echo "ok   ${#expected[@]} files installed"

for b in $bins; do
  [[ -x $root/usr/bin/$b ]] || { fail "/usr/bin/$b is not executable"; continue; }
  "$root/usr/bin/$b" --version | grep -qE "^$b [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7}|unknown, " ||
    fail "$b --version: $("$root/usr/bin/$b" --version 2>&1)"
  page=$(MANWIDTH=100 man -l "$root/usr/share/man/man1/$b.1.gz" 2>/dev/null | col -b)
  grep -q "^NAME" <<<"$page" && grep -q "^OPTIONS" <<<"$page" && grep -q -- "--version" <<<"$page" ||
    fail "man page of $b lacks NAME, OPTIONS or --version"
done
zcat "$root/usr/share/man/man1/mrctl.1.gz" | grep -q '^.SS "mrctl dfs put"' ||
  fail "mrctl.1 has no COMMANDS entry for 'mrctl dfs put'"
echo "ok   binaries run, man pages render"

# The installed completion file, with the installed mrctl.
if bash "$src/tests/deploy/mrctl_completion_test.sh" "$root/usr/bin/mrctl" \
    "$root/usr/share/bash-completion/completions/mrctl" >"$root/completion.out"; then
  echo "ok   the installed completion completes"
else
  cat "$root/completion.out"
  fail "the installed bash completion"
fi

finish
