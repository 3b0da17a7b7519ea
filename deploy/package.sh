#!/usr/bin/env bash
# Builds the Debian package in one command: a Release build in build-release
# (apart from the development build in build/), only the five binaries, their
# man pages and mrctl's completion, then CPack (stripped binaries). Prints the
# path of mr_<version>_amd64.deb. Runs deploy/install-deps.sh first.
#
#   deploy/package.sh            # -> build-release/mr_0.1.0_amd64.deb
#   MR_RELEASE_BUILD_DIR=/tmp/r deploy/package.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${MR_RELEASE_BUILD_DIR:-$root/build-release}
"$root/deploy/install-deps.sh"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs what is built below,
# without building the tests and benchmarks first.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON "${launcher[@]}" >/dev/null
cmake --build "$build" --target mr-master mr-worker mrctl mr-local mr-sim mr_man_pages \
  mr_bash_completion
(cd "$build" && cpack -G DEB >/dev/null)
version=$(grep -o 'kVersion\[\] = "[^"]*"' "$build/common/version.h" | cut -d'"' -f2)
deb="$build/mr_${version}_$(dpkg --print-architecture).deb"
[[ -f $deb ]] || { echo "package.sh: cpack did not make $deb" >&2; exit 1; }
echo "$deb"
