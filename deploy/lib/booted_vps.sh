# shellcheck shell=bash
# Emulated VPSs that boot a real systemd: a Debian 12 root (debootstrap,
# cached), one overlay of it per VPS, booted by systemd-nspawn -b inside the
# VPS's network namespace of deploy/lib/netns.sh, with sshd (root by key) as
# a real VPS has. Sourced by tests/deploy/vps_systemd_test.sh.
#
#   source deploy/lib/netns.sh; source deploy/lib/vps.sh; source deploy/lib/booted_vps.sh
#   bvps_root DEB                  # prints the cached root for DEB's Depends (builds it once)
#   bvps_init DIR ROOT             # DIR: overlays, logs; vps_init DIR for the ssh keys first
#   bvps_boot NAME                 # boots NAME (netns_add_host NAME first); waits for sshd
#   bvps_in NAME CMD...            # CMD inside NAME's systemd (nsenter), as root
#   bvps_reboot NAME               # `systemctl reboot` inside, then boots it again
#   bvps_poweroff NAME             # `systemctl poweroff` inside; waits until nspawn ends
#   bvps_teardown                  # stops every container, unmounts, removes cgroups; idempotent
#
# The root: debootstrap --variant=minbase bookworm plus systemd, dbus,
# openssh-server, python3 (Ansible), nftables and iproute2, but not netbase
# (nftables only recommends it: no /etc/protocols, as on a minimal image),
# with the libraries DEB depends on downloaded into /var/cache/apt/archives
# (the VPSs have no route to a mirror; apt-get installs from that cache).
# Built once per Depends line under BVPS_CACHE (/var/cache/mr-vps-systemd),
# into a temporary directory renamed when complete. apt's daily timers are
# masked, /etc/machine-id emptied (each boot makes its own) and the ssh host
# keys removed (each VPS gets its own).
#
# Each container: systemd-nspawn -b --register=no --keep-unit
# --network-namespace-path=/run/netns/NS --capability=CAP_NET_ADMIN (nftables),
# started from a cgroup of its own (PREFIX-NAME in the name=systemd and
# unified hierarchies), the root an overlay (lower: the cached root, upper:
# DIR/bvps/NAME/upper, so a reboot keeps the VPS's files). The cached root is
# never written. Everything made is recorded in DIR/bvps.objects first, so a
# run that fails halfway still removes exactly what it made.

BVPS_CACHE="${BVPS_CACHE:-/var/cache/mr-vps-systemd}"
BVPS_MIRROR="${MR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
BVPS_PACKAGES=systemd,systemd-sysv,dbus,openssh-server,python3,nftables,iproute2,procps
BVPS_DIR="" BVPS_ROOT=""
VPS_DIR="${VPS_DIR:-}"  # deploy/lib/vps.sh's: the ssh keys (vps_init)
declare -gA BVPS_PID=() BVPS_LEADER=()

bvps_log() { echo "bvps: $*" >&2; }

# bvps_root DEB: the cached root for DEB's Depends line; builds it when missing.
bvps_root() {
  local deb="$1" key root tmp
  key="$( { echo "$BVPS_PACKAGES"; dpkg-deb -f "$deb" Depends; } | sha256sum | cut -c1-16)"
  root="$BVPS_CACHE/$key/root"
  if [[ ! -f "$BVPS_CACHE/$key/complete" ]]; then
    mkdir -p "$BVPS_CACHE/debs"
    tmp="$(mktemp -d "$BVPS_CACHE/build.XXXXXX")"
    bvps_log "building the Debian 12 root ($BVPS_MIRROR) into $BVPS_CACHE/$key, once"
    if ! _bvps_build_root "$deb" "$tmp/root" >"$tmp/build.log" 2>&1; then
      bvps_log "building the root failed (kept: $tmp): $(tail -n 5 "$tmp/build.log")"
      return 1
    fi
    rm -rf "${BVPS_CACHE:?}/$key"
    mv "$tmp" "$BVPS_CACHE/$key"
    touch "$BVPS_CACHE/$key/complete"
  fi
  echo "$root"
}
_bvps_build_root() {
  local deb="$1" root="$2"
  debootstrap --variant=minbase --include="$BVPS_PACKAGES" --cache-dir="$BVPS_CACHE/debs" \
    bookworm "$root" "$BVPS_MIRROR"
  cp "$deb" "$root/tmp/mr.deb"
  # The package's libraries, downloaded, not installed: apt-get installs them
  # from the cache on each VPS (as a VPS's own apt would from its mirror).
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --download-only \
    --no-install-recommends /tmp/mr.deb
  rm -f "$root/tmp/mr.deb"
  # No /etc/protocols, as on a minimal image (nothing here needs netbase).
  # shellcheck disable=SC2016 # ${Status} is dpkg-query's
  if chroot "$root" dpkg-query -W -f '${Status}' netbase 2>/dev/null | grep -q 'ok installed'; then
    chroot "$root" dpkg --purge netbase
  fi
  [[ ! -e "$root/etc/protocols" ]] || { echo "$root/etc/protocols exists"; return 1; }
  chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer >/dev/null
  rm -f "$root"/etc/ssh/ssh_host_*
  : >"$root/etc/machine-id"
}

# bvps_init DIR ROOT: where the overlays and logs go, and the root to boot.
bvps_init() {
  BVPS_DIR="$1" BVPS_ROOT="$2"
  mkdir -p "$BVPS_DIR/bvps"
  : >>"$BVPS_DIR/bvps.objects"
}

_bvps_cgroups() {  # the cgroup directories of container NAME
  local h
  for h in systemd unified; do
    [[ -d "/sys/fs/cgroup/$h" ]] && echo "/sys/fs/cgroup/$h/${NETNS_PREFIX}$1"
  done
}

# bvps_boot NAME: mounts NAME's overlay (first time: its hostname, host key,
# root's authorized key), boots it in NAME's network namespace, and waits
# until systemd is up and sshd listens (at most 120 s).
bvps_boot() {
  local name="$1" d="$BVPS_DIR/bvps/$1" cg i state
  mkdir -p "$d/upper" "$d/work" "$d/root"
  if ! mountpoint -q "$d/root"; then
    echo "mount $d/root" >>"$BVPS_DIR/bvps.objects"
    mount -t overlay "bvps-$name" -o "lowerdir=$BVPS_ROOT,upperdir=$d/upper,workdir=$d/work" "$d/root"
  fi
  if [[ ! -f "$d/root/etc/ssh/ssh_host_ed25519_key" ]]; then
    echo "$name" >"$d/root/etc/hostname"
    ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$d/root/etc/ssh/ssh_host_ed25519_key"
    echo "$(netns_addr "$name") $(cut -d' ' -f1,2 "$d/root/etc/ssh/ssh_host_ed25519_key.pub")" \
      >>"$VPS_DIR/ssh/known_hosts"
    install -d -m 700 "$d/root/root/.ssh"
    install -m 600 "$VPS_DIR/ssh/id_ed25519.pub" "$d/root/root/.ssh/authorized_keys"
  fi
  for cg in $(_bvps_cgroups "$name"); do
    grep -qxF "cgroup $cg" "$BVPS_DIR/bvps.objects" || echo "cgroup $cg" >>"$BVPS_DIR/bvps.objects"
    mkdir -p "$cg"
  done
  # A cgroup of its own: nspawn --keep-unit makes the cgroup it starts in the container's.
  (
    for cg in $(_bvps_cgroups "$name"); do echo "$BASHPID" >"$cg/cgroup.procs"; done
    exec systemd-nspawn -D "$d/root" -M "${NETNS_PREFIX}$name" --register=no --keep-unit -b \
      --console=pipe --network-namespace-path="/run/netns/$(netns_ns "$name")" \
      --capability=CAP_NET_ADMIN
  ) >>"$d/nspawn.log" 2>&1 &
  BVPS_PID[$name]=$!
  echo "nspawn $! $d/root" >>"$BVPS_DIR/bvps.objects"
  BVPS_LEADER[$name]=""
  for i in $(seq 1 600); do
    BVPS_LEADER[$name]="$(pgrep -P "${BVPS_PID[$name]}" -x systemd | head -n 1 || true)"
    [[ -n "${BVPS_LEADER[$name]}" ]] && break
    kill -0 "${BVPS_PID[$name]}" 2>/dev/null || break
    sleep 0.2
  done
  [[ -n "${BVPS_LEADER[$name]}" ]] || { bvps_log "$name did not boot: $(tail -n 5 "$d/nspawn.log")"; return 1; }
  for i in $(seq 1 600); do
    state="$(bvps_in "$name" systemctl is-system-running 2>/dev/null || true)"
    [[ "$state" == running || "$state" == degraded ]] && break
    sleep 0.2
  done
  for i in $(seq 1 100); do
    netns_exec "$name" ss -Htln "sport = :22" | grep -q . && return 0
    sleep 0.2
  done
  bvps_log "$name: systemd '$state', sshd not listening: $(bvps_in "$name" systemctl --failed --no-legend 2>&1 | head -n 3)"
  return 1
}

# bvps_in NAME CMD...: CMD in NAME's namespaces, a clean environment.
bvps_in() {
  local name="$1"; shift
  nsenter -t "${BVPS_LEADER[$name]}" -m -u -i -n -p -- /usr/bin/env -i \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"
}

# _bvps_wait_exit NAME SECONDS: waits for NAME's nspawn to end; its status.
_bvps_wait_exit() {
  local pid="${BVPS_PID[$1]}" rc=0 i
  for i in $(seq 1 $(($2 * 5))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -0 "$pid" 2>/dev/null && return 255
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}

# bvps_reboot NAME: a reboot from inside; nspawn exits 133 and is started again.
bvps_reboot() {
  local rc=0
  bvps_in "$1" systemctl reboot || true
  _bvps_wait_exit "$1" 90 || rc=$?
  [[ $rc -eq 133 ]] || { bvps_log "$1: nspawn ended with $rc on reboot, not 133"; return 1; }
  bvps_boot "$1"
}

# bvps_poweroff NAME: a clean power-off from inside.
bvps_poweroff() {
  bvps_in "$1" systemctl poweroff || true
  _bvps_wait_exit "$1" 90
}

# bvps_teardown: every container this run started (TERM: nspawn halts its
# systemd; KILL after 30 s), then the overlays, then the cgroups. Idempotent.
bvps_teardown() { ( set +e; _bvps_teardown ); return 0; }
_bvps_teardown() {
  [[ -n "${BVPS_DIR:-}" && -f "$BVPS_DIR/bvps.objects" ]] || return 0
  local kind a b i
  while read -r kind a b; do
    [[ $kind == nspawn ]] || continue
    if tr '\0' ' ' 2>/dev/null <"/proc/$a/cmdline" | grep -qF -- "-D $b "; then kill -TERM "$a"; fi
  done <"$BVPS_DIR/bvps.objects"
  while read -r kind a b; do
    [[ $kind == nspawn ]] || continue
    for i in $(seq 1 150); do
      tr '\0' ' ' 2>/dev/null <"/proc/$a/cmdline" | grep -qF -- "-D $b " || break
      sleep 0.2
    done
    if tr '\0' ' ' 2>/dev/null <"/proc/$a/cmdline" | grep -qF -- "-D $b "; then kill -KILL "$a"; fi
  done <"$BVPS_DIR/bvps.objects"
  tac "$BVPS_DIR/bvps.objects" | while read -r kind a b; do
    case "$kind" in
      mount) for _ in $(seq 1 20); do mountpoint -q "$a" || break; umount "$a" || umount -l "$a"; done ;;
      cgroup)
        if [[ -d "$a" ]]; then
          find "$a" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do kill -KILL "$pid"; done
          for _ in $(seq 1 50); do
            find "$a" -depth -type d -exec rmdir {} + 2>/dev/null
            [[ -d "$a" ]] || break
            sleep 0.1
          done
          [[ -d "$a" ]] && bvps_log "cgroup $a left behind"
        fi ;;
    esac
  done
  : >"$BVPS_DIR/bvps.objects"
  return 0
}
