#!/usr/bin/env bash
# The packaged systemd units (deploy/systemd/): `systemd-analyze verify` on
# mr-master.service and an instance of mr-worker@.service, installed with
# `cmake --install` into a scratch root so that ExecStart= resolves to the
# installed binaries; then the settings docs/deploy.md promises, and that the
# flags ExecStart passes exist. Exits 77 (ctest: skipped) only when
# systemd-analyze is absent (deploy/install-deps.sh installs systemd).
# Usage: systemd_units_test.sh BUILD_DIR
set -u
build=$1
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (deploy/install-deps.sh installs the systemd package)"
  exit 77
fi
root=$(mktemp -d /tmp/mr-units-test.XXXXXX)
trap 'rm -rf "$root"' EXIT
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

install_into "$root" "$build"
units=$root/usr/lib/systemd/system

# verify --root needs the targets and slices the units order against (copied
# from this machine's systemd). --man=no: verify would run the host's man on
# Documentation=; install_test checks the man pages.
cp /lib/systemd/system/*.target /lib/systemd/system/*.slice "$units/" 2>/dev/null
for unit in mr-master.service mr-worker@w1.service; do
  out=$(systemd-analyze verify --man=no --root="$root" "$unit" 2>&1)
  rc=$?
  if [[ $rc -ne 0 || -n $out ]]; then
    fail "systemd-analyze verify $unit (exit $rc): $out"
  else
    echo "ok   systemd-analyze verify $unit: no warning, no error"
  fi
done

for unit in mr-master.service mr-worker@.service; do
  for line in User=mr Group=mr StateDirectory=mr StateDirectoryMode=0700 UMask=0077 \
      Restart=on-failure RestartPreventExitStatus=2 EnvironmentFile=-/etc/mr/secret.env \
      StandardError=journal NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes \
      WantedBy=multi-user.target; do
    grep -qx "$line" "$units/$unit" || fail "$unit lacks $line"
  done
done
# A worker the master refused (exit 3, a secret being rotated) is restarted
# for as long as it takes; on main exit 2 stopped it for good.
for line in StartLimitIntervalSec=0 RestartSec=5s; do
  grep -qx "$line" "$units/mr-worker@.service" || fail "mr-worker@.service lacks $line"
done
grep -qx 'ExecStart=/usr/bin/mr-master --config /etc/mr/cluster.toml' "$units/mr-master.service" ||
  fail "mr-master.service ExecStart"
grep -qx 'ExecStart=/usr/bin/mr-worker --config /etc/mr/cluster.toml --id %i' \
  "$units/mr-worker@.service" || fail "mr-worker@.service ExecStart"
# The flags ExecStart passes exist in the installed binaries.
"$root/usr/bin/mr-master" --help | grep -q -- "--config" || fail "mr-master has no --config"
"$root/usr/bin/mr-worker" --help | grep -q -- "--id" || fail "mr-worker has no --id"
((fails == 0)) && echo "ok   unit settings and ExecStart flags"

finish
