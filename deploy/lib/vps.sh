# shellcheck shell=bash
# Emulated VPSs: an sshd in a network namespace of deploy/lib/netns.sh, with
# the files a VPS keeps to itself bind-mounted from a private directory (sourced).
#
#   source deploy/lib/netns.sh; source deploy/lib/vps.sh
#   netns_init ...; netns_fabric K; netns_add_host D NAME ...
#   vps_init DIR                 # DIR/ssh: the client key, known_hosts, ssh_config
#   vps_start NAME               # sshd on NAME's address, port 22, root by key only
#   vps_ssh_from CONTROL NAME CMD...  # CMD on NAME as root over ssh, from the
#                                # namespace of host CONTROL (e.g. the control node)
#   vps_teardown                 # ends the sshds it started (by PID), removes the
#                                # mount points it had to create; idempotent
#
# What a VPS has of its own: its network namespace (addresses, routes,
# nftables ruleset, ports), and, through `unshare --mount --propagation
# private` around sshd, private copies of VPS_PRIVATE_DIRS (/etc/mr,
# /var/lib/mr, /var/log/mr, /run/mr) and of /etc/nftables.conf, bind-mounted
# from DIR/vps/NAME/. Every ssh session inherits sshd's mount namespace, so
# it sees that VPS's own files there.
#
# What every VPS shares with the machine: everything else of the root file
# system, notably /usr and the dpkg database (installing a .deb on one VPS
# installs it on the machine, for all of them at once; apt's lock serialises
# them), /etc/passwd (the `mr` user), /root (ansible's remote temp files) and
# /tmp. No VPS runs systemd.
#
# sshd_config is generated: ListenAddress the VPS's address, its own host key
# (ed25519, made here), AuthorizedKeysFile DIR/ssh/authorized_keys,
# PermitRootLogin prohibit-password, no passwords, no PAM, StrictModes no
# (the keys live in a test directory, not in a home directory).

VPS_DIR=""
VPS_PRIVATE_DIRS=(/etc/mr /var/lib/mr /var/log/mr /run/mr)
VPS_PRIVATE_FILES=(/etc/nftables.conf)

vps_log() { echo "vps: $*" >&2; }

# vps_init DIR: the client key pair and an ssh_config that uses it and
# DIR/ssh/known_hosts (filled by vps_start with each VPS's host key).
vps_init() {
  VPS_DIR="$1"
  mkdir -p "$VPS_DIR/ssh" "$VPS_DIR/vps"
  chmod 700 "$VPS_DIR/ssh"
  : >>"$VPS_DIR/vps.pids"
  : >>"$VPS_DIR/vps.created"
  [[ -f "$VPS_DIR/ssh/id_ed25519" ]] ||
    ssh-keygen -q -t ed25519 -N '' -C "vps-test-client" -f "$VPS_DIR/ssh/id_ed25519"
  cp "$VPS_DIR/ssh/id_ed25519.pub" "$VPS_DIR/ssh/authorized_keys"
  : >>"$VPS_DIR/ssh/known_hosts"
  cat >"$VPS_DIR/ssh/ssh_config" <<EOF
Host *
  User root
  IdentityFile $VPS_DIR/ssh/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $VPS_DIR/ssh/known_hosts
  StrictHostKeyChecking yes
  PasswordAuthentication no
  BatchMode yes
  ConnectTimeout 10
EOF
  # sshd's privilege separation directory (made by systemd's tmpfiles normally).
  if [[ ! -d /run/sshd ]]; then
    echo "dir /run/sshd" >>"$VPS_DIR/vps.created"
    mkdir -p /run/sshd && chmod 755 /run/sshd
  fi
  local d f
  for d in "${VPS_PRIVATE_DIRS[@]}"; do
    if [[ ! -d "$d" ]]; then echo "dir $d" >>"$VPS_DIR/vps.created"; mkdir -p "$d"; fi
  done
  for f in "${VPS_PRIVATE_FILES[@]}"; do
    if [[ ! -e "$f" ]]; then echo "file $f" >>"$VPS_DIR/vps.created"; : >"$f"; fi
  done
}

# vps_start NAME: a host key, a config, and sshd -D in NAME's namespace inside
# a private mount namespace; waits until it listens (at most 10 s).
vps_start() {
  local name="$1" addr ns dir mounts="" d f i
  addr="$(netns_addr "$name")" ns="$(netns_ns "$name")" dir="$VPS_DIR/vps/$name"
  mkdir -p "$dir"
  for d in "${VPS_PRIVATE_DIRS[@]}"; do
    mkdir -p "$dir/root$d"
    mounts+="mount --bind '$dir/root$d' '$d'; "
  done
  for f in "${VPS_PRIVATE_FILES[@]}"; do
    mkdir -p "$(dirname "$dir/root$f")"
    : >"$dir/root$f"
    mounts+="mount --bind '$dir/root$f' '$f'; "
  done
  ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$dir/host_key"
  echo "$addr $(cut -d' ' -f1,2 "$dir/host_key.pub")" >>"$VPS_DIR/ssh/known_hosts"
  cat >"$dir/sshd_config" <<EOF
ListenAddress $addr:22
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $VPS_DIR/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowUsers root
MaxStartups 100:30:200
MaxSessions 50
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
  ip netns exec "$ns" unshare --mount --propagation private \
    bash -c "set -e; $mounts exec /usr/sbin/sshd -D -e -f '$dir/sshd_config'" \
    >>"$dir/sshd.log" 2>&1 &
  echo "$! $dir/sshd_config" >>"$VPS_DIR/vps.pids"
  for i in $(seq 1 100); do
    ip netns exec "$ns" ss -Htln "sport = :22" | grep -q . && return 0
    sleep 0.1
  done
  vps_log "sshd on $name ($addr) did not start: $(tail -n 3 "$dir/sshd.log")"
  return 1
}

# vps_ssh_from CONTROL NAME CMD...: CMD on NAME over ssh, from namespace CONTROL.
vps_ssh_from() {
  local from="$1" name="$2"; shift 2
  netns_exec "$from" ssh -F "$VPS_DIR/ssh/ssh_config" "$(netns_addr "$name")" "$@"
}

# vps_teardown: TERM, then KILL, to each sshd this run started whose command
# line still names its config (a recycled PID is never hit); removes the
# mount points and files it created on the shared root. Idempotent.
vps_teardown() { ( set +e; _vps_teardown ); return 0; }
_vps_teardown() {
  [[ -n "${VPS_DIR:-}" && -f "$VPS_DIR/vps.pids" ]] || return 0
  local pid cfg kind path i
  while read -r pid cfg; do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$cfg"; then
      kill -TERM "$pid" 2>/dev/null
      for i in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null
    fi
  done <"$VPS_DIR/vps.pids"
  : >"$VPS_DIR/vps.pids"
  if [[ -f "$VPS_DIR/vps.created" ]]; then
    tac "$VPS_DIR/vps.created" | while read -r kind path; do
      case "$kind" in
        dir) rmdir "$path" 2>/dev/null || true ;;
        file) [[ -s "$path" ]] || rm -f "$path" ;;
      esac
    done
    : >"$VPS_DIR/vps.created"
  fi
  return 0
}

# vps_next_deb DEB DIR: the next release for an upgrade test: DEB's files
# under the version VERSION+vpstest1, written to DIR; prints its path.
vps_next_deb() {
  local deb="$1" dir="$2" version
  version="$(dpkg-deb -f "$deb" Version)"
  mkdir -p "$dir"
  dpkg-deb -R "$deb" "$dir/root"
  sed -i "s/^Version: .*/Version: ${version}+vpstest1/" "$dir/root/DEBIAN/control"
  dpkg-deb -Zgzip -z1 -b "$dir/root" "$dir/mr_${version}+vpstest1_amd64.deb" >/dev/null  # fast: a test package
  rm -rf "$dir/root"
  echo "$dir/mr_${version}+vpstest1_amd64.deb"
}
