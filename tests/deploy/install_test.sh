#!/usr/bin/env bash
# What `cmake --install` (and so the .deb, which CPack fills the same way)
# puts on a machine: installs the build into a scratch root with prefix /usr
# and checks every file, the man pages, the installed bash completion (in a
# real bash) and the systemd units with `systemd-analyze verify --root`
# against the installed binaries.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
root=$(mktemp -d /tmp/mr-install-test.XXXXXX)
trap 'rm -rf "$root"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! DESTDIR=$root cmake --install "$build" --prefix /usr >"$root.log" 2>&1; then
  cat "$root.log"
  rm -f "$root.log"
  echo "FAIL: cmake --install"
  exit 1
fi
rm -f "$root.log"

bins="mr-master mr-worker mrctl mr-local mr-sim"
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

# systemd units. verify --root resolves ExecStart= in the scratch root; it
# needs the targets the units order against (copied from this machine's
# systemd). Man pages are checked above (verify would run the host's man).
if ! command -v systemd-analyze >/dev/null; then
  fail "systemd-analyze is missing (deploy/install-deps.sh installs systemd)"
else
  cp /lib/systemd/system/*.target /lib/systemd/system/*.slice "$root/usr/lib/systemd/system/" 2>/dev/null
  for unit in mr-master.service mr-worker@w1.service; do
    out=$(systemd-analyze verify --man=no --root="$root" "$unit" 2>&1)
    rc=$?
    if [[ $rc -ne 0 || -n $out ]]; then
      fail "systemd-analyze verify $unit (exit $rc): $out"
    else
      echo "ok   systemd-analyze verify $unit: clean"
    fi
  done
  for unit in mr-master.service mr-worker@.service; do
    f=$root/usr/lib/systemd/system/$unit
    for line in User=mr Group=mr StateDirectory=mr StateDirectoryMode=0700 Restart=on-failure \
        EnvironmentFile=-/etc/mr/secret.env NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes; do
      grep -qx "$line" "$f" || fail "$unit lacks $line"
    done
  done
  grep -q '^ExecStart=/usr/bin/mr-worker --config /etc/mr/cluster.toml --id %i$' \
    "$root/usr/lib/systemd/system/mr-worker@.service" || fail "mr-worker@.service ExecStart"
  # The flags ExecStart passes exist.
  "$root/usr/bin/mr-worker" --help | grep -q -- "--id" || fail "mr-worker has no --id"
fi

((fails == 0)) && echo PASS || echo "FAIL: $fails"
((fails == 0))
