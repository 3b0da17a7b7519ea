#!/usr/bin/env bash
# Builds the Debian package in one command: a Release build in build-release
# (apart from the development build in build/), only the five binaries, their
# man pages and mrctl's completion, then CPack (stripped binaries). Prints the
# path of mr_<version>_amd64.deb. Runs deploy/install-deps.sh first.
#
#   deploy/package.sh            # -> build-release/mr_0.1.0_amd64.deb
#   MR_RELEASE_BUILD_DIR=/tmp/r deploy/package.sh
#
# --from-build DIR packages an existing, configured build directory instead
# (e.g. build/, RelWithDebInfo): no reconfiguration, no install-deps; it
# builds only what is missing or stale of the five binaries, man pages and
# completion (nothing, after `ninja -C DIR`), then runs CPack there. For tests
# that need a .deb of the code they just built, without a second compile.
#   deploy/package.sh --from-build build   # -> build/mr_0.1.0_amd64.deb
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
targets=(mr-master mr-worker mr-task mrctl mr-local mr-sim mr-workload mr_job_api mr_man_pages mr_bash_completion)

# Prints the path of the .deb CPack made in build directory $1.
deb_path() {
  local version deb
  version=$(grep -o 'kVersion\[\] = "[^"]*"' "$1/common/version.h" | cut -d'"' -f2)
  deb="$1/mr_${version}_$(dpkg --print-architecture).deb"
  [[ -f $deb ]] || { echo "package.sh: cpack did not make $deb" >&2; exit 1; }
  echo "$deb"
}

if [[ ${1:-} == --from-build ]]; then
  [[ -n ${2:-} && -f $2/CPackConfig.cmake ]] ||
    { echo "package.sh: --from-build DIR: DIR must be a configured build directory" >&2; exit 2; }
  build=$(cd "$2" && pwd)
  cmake --build "$build" --target "${targets[@]}" >/dev/null
  (cd "$build" && cpack -G DEB >/dev/null)
  deb_path "$build"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: package.sh [--from-build DIR]" >&2; exit 2; }

build=${MR_RELEASE_BUILD_DIR:-$root/build-release}
"$root/deploy/install-deps.sh"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs what is built below,
# without building the tests and benchmarks first.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON "${launcher[@]}" >/dev/null
cmake --build "$build" --target "${targets[@]}"
(cd "$build" && cpack -G DEB >/dev/null)
deb_path "$build"
