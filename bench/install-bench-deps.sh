#!/usr/bin/env bash
# Installs the Debian 12 packages the benchmarks need beyond
# deploy/install-deps.sh: MR-MPI (a baseline of bench/jobs_baselines.sh) and
# the MPI it is built against. Debian's libmrmpi1 links Open MPI, so the
# compiler wrappers and `mpirun` come from Open MPI too; and linux-perf, which
# bench/master_scale.sh --perf runs on the master. The main build and CI
# do not need any of this: bench/CMakeLists.txt skips wc_mrmpi without it.
# Idempotent: asks dpkg first and calls apt-get only when something is missing.
set -euo pipefail

PACKAGES=(libmrmpi-dev libopenmpi-dev openmpi-bin linux-perf)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-bench-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
echo "install-bench-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
