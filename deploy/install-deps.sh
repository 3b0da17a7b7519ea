#!/usr/bin/env bash
# Installs the Debian 12 packages the build, tests, demo and benchmarks need.
# Idempotent: asks dpkg first and calls apt-get only when something is missing.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ pkg-config
  libboost1.81-dev libprotobuf-dev protobuf-compiler librocksdb-dev libzstd-dev
  libspdlog-dev libgtest-dev libgmock-dev libre2-dev libxxhash-dev libcli11-dev
  libtomlplusplus-dev libbenchmark-dev libssl-dev nlohmann-json3-dev
  zlib1g-dev libbz2-dev gzip zstd bzip2  # compressed input and output (jobs/codec.h), and their tests
  iperf3 iproute2 procps psmisc jq bc coreutils
  tcpdump  # tests/integration/tls_capture_test.sh: no plaintext between datacenters
  clang-14 libclang-rt-14-dev  # tests/fuzz: libFuzzer, ASan, UBSan
  help2man bash-completion dpkg-dev systemd  # man pages, mrctl completion, the .deb, unit checks
  debootstrap systemd-container  # tests/deploy/fresh_root.sh (manual, not in ctest)
  ansible openssh-server openssh-client nftables ethtool tcpdump  # tests/deploy: emulated VPSs (deploy/ansible, deploy/lib)
  libnetfilter-queue-dev iptables iputils-ping  # tools/delayline.cc: the testbed's round trips (docs/testbed.md)
  shellcheck  # deploy/testbed.sh and deploy/lib are kept shellcheck-clean (docs/testbed.md)
  python3 mawk  # examples/streaming and their tests (docs/user-jobs.md)
  prometheus-cpp-dev  # /metrics of mr-master and mr-worker (common/metrics.h)
  libabsl-dev  # flat hash maps, inlined vectors: the master's per-block state (master/replica_list.h)
  prometheus chromium  # tests/integration/status_page_test.cc: promtool check metrics, headless DOM
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
# A line per phase (a fresh machine spends minutes here); on a terminal also
# apt's own progress, elsewhere (CI logs) only the lines.
echo "install-deps: ${#missing[@]} Debian packages missing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: apt-get update (the package lists)" >&2
apt-get update -qq
echo "install-deps: apt-get install: downloading and installing them with their dependencies (a few minutes on a fresh machine)" >&2
start=$SECONDS
if [[ -t 1 ]]; then
  apt-get install -y -q --no-install-recommends -o Dpkg::Progress-Fancy=1 "${missing[@]}"
else
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: installed in $((SECONDS - start)) s" >&2
