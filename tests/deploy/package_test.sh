#!/usr/bin/env bash
# The .deb, made the cheap way (docs/deploy.md): `cpack -G DEB` with the
# build directory's CPackConfig.cmake, from the binaries already built, into
# a scratch directory. Checks the file name mr_<version>_<arch>.deb, that
# Depends come from dpkg-shlibdeps (libc6, libstdc++6, ...) and name no -dev
# package, the maintainer scripts, the files, stripped binaries, and that the
# packaged binaries run.
# Usage: package_test.sh BUILD_DIR
set -u
build=$1
out=$(mktemp -d /tmp/mr-package-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"

if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log"
  echo "FAIL: cpack -G DEB"
  exit 1
fi
version=$(grep -o 'kVersion\[\] = "[^"]*"' "$build/common/version.h" | cut -d'"' -f2)
deb=$out/mr_${version}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || { ls "$out"; echo "FAIL: no $deb"; exit 1; }
echo "ok   $(basename "$deb"), $(stat -c %s "$deb") bytes"

depends=$(dpkg-deb -f "$deb" Depends)
echo "     Depends: $depends"
for lib in libc6 libstdc++6 libprotobuf libssl3 libzstd1 zlib1g libbz2-1.0 adduser; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib (dpkg-shlibdeps did not run?)"
done
grep -qE -- '-dev( |,|$)' <<<"$depends" && fail "Depends names a -dev package"
[[ $(dpkg-deb -f "$deb" Package) == mr && $(dpkg-deb -f "$deb" Version) == "$version" ]] ||
  fail "Package/Version: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"

mkdir "$out/control" "$out/root"
dpkg-deb -e "$deb" "$out/control"
for script in postinst prerm postrm; do
  [[ -x $out/control/$script ]] || fail "no executable $script in the package"
done
dpkg-deb -x "$deb" "$out/root"
for b in mr-master mr-worker mrctl mr-local mr-sim mr-workload; do
  f=$out/root/usr/bin/$b
  [[ -x $f ]] || { fail "/usr/bin/$b not in the package"; continue; }
  readelf -S "$f" | grep -qE '\.(debug_info|symtab)' && fail "/usr/bin/$b is not stripped"
  "$f" --version | grep -q "^$b $version " || fail "$b --version: $("$f" --version 2>&1)"
done
for f in usr/lib/systemd/system/mr-master.service usr/lib/systemd/system/mr-worker@.service \
    usr/share/man/man1/mrctl.1.gz usr/share/bash-completion/completions/mrctl \
    usr/share/doc/mr/deploy.md usr/bin/mr-task usr/include/mr/jobs/plugin.h \
    usr/include/mr/jobs/job.h usr/include/mr/common/status.h; do
  [[ -s $out/root/$f ]] || fail "/$f not in the package"
done
compgen -G "$out/root/usr/lib*/**/cmake/MrJobApi/MrJobApiConfig.cmake" >/dev/null ||
  compgen -G "$out/root/usr/lib/cmake/MrJobApi/MrJobApiConfig.cmake" >/dev/null ||
  fail "the plug-in SDK's CMake package (MrJobApiConfig.cmake) is not in the package"
((fails == 0)) && echo "ok   control scripts, files, stripped binaries that run"

finish
