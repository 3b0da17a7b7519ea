#!/usr/bin/env bash
# The tenant's path on emulated VPSs: deploy/ansible/site.yml, run by the real
# ansible-playbook over ssh, deploys a cluster on network-namespace "VPSs" in
# two datacenters (deploy/lib/netns.sh, deploy/lib/vps.sh); then a WordCount
# run from a client VPS must equal tr | sort | uniq -c of its input, and
# `--tags upgrade` (a rolling upgrade to a newer package) must keep a DFS file
# byte for byte and a job that was running when it began.
#
#   tests/deploy/vps_playbook_test.sh [--full] [--tls MODE] [--deb FILE] [--build DIR] [--keep]
#
#   reduced (ctest vps_playbook): dc1: m1 (master), w1; dc2: w2, w3, c1 (client)
#   --full: six VPSs in three datacenters: dc1: m1, w1; dc2: w2, w3; dc3: w4, w5, c1
#   --tls: the cluster's tls (mr_tls): off (default), inter-dc or all; the
#          playbook then makes the CA and certificates with the build's mrctl
#   --deb: the package to deploy (default: $MR_DEB, else cpack -G DEB in the build dir)
#   --keep: leave the temp directory (logs, inventory) for a look afterwards
#
# What is emulated, and what is not:
#  - Each VPS is a network namespace with its own address, routes, nftables
#    ruleset and sshd (own host key; root by key only). The control node, where
#    ansible-playbook runs, is one more namespace, in a datacenter of its own,
#    reaching the VPSs through the router.
#  - There is no systemd in the namespaces, so the playbook runs with
#    mr_service_manager=exec: it starts each daemon with the installed unit
#    file's own ExecStart line (plus a worker's identity flags, as its systemd
#    drop-in does) as user mr via start-stop-daemon. Everything before that
#    (package, files, modes, firewall, certificates) is the tenant's path.
#  - Every VPS has its own /etc/mr, /var/lib/mr, /var/log/mr, /run/mr and
#    /etc/nftables.conf (bind mounts in sshd's mount namespace), and shares
#    the rest of the machine's root: /usr and the dpkg database above all.
#    Installing the .deb on one VPS installs it for the machine; the test
#    purges it (and removes the user mr) at the end only if the machine did
#    not have it before.
#
# Needs root; exits 77 (ctest: skipped) with one line otherwise.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
root_test_begin vps_playbook "network namespaces, sshd, dpkg" "$@"
full=0 deb="${MR_DEB:-}" tls=off
set -- "${REST[@]}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) full=1; shift ;;
    --tls) tls="$2"; shift 2 ;;
    --deb) deb="$2"; shift 2 ;;
    *) unknown_option "$1" ;;
  esac
done
for tool in ansible-playbook sshd nft unshare start-stop-daemon ethtool ssh-keygen dpkg-deb; do
  command -v "$tool" >/dev/null || fail "$tool is missing (deploy/install-deps.sh installs it)"
done

# shellcheck source=../../deploy/lib/netns.sh
source "$ROOT/deploy/lib/netns.sh"
# shellcheck source=../../deploy/lib/vps.sh
source "$ROOT/deploy/lib/vps.sh"

T="$(mktemp -d /tmp/vps-playbook.XXXXXX)"
had_pkg=0 had_user=0
dpkg-query -W -f '${Status}' mr 2>/dev/null | grep -q "install ok installed" && had_pkg=1
getent passwd mr >/dev/null && had_user=1

cleanup() {
  local rc=$?
  set +e
  vps_teardown
  netns_teardown
  rm -f "/var/cache/mr-$(basename "$deb")" "/var/cache/mr-$(basename "${deb2:-none}")"
  rm -rf "/tmp/.vps-ansible-$$"
  if [[ $had_pkg -eq 0 ]] && dpkg-query -W mr >/dev/null 2>&1; then
    dpkg --purge mr >"$T/purge.log" 2>&1 || echo "vps_playbook: dpkg --purge mr failed: $(tail -n 2 "$T/purge.log")" >&2
  fi
  if [[ $had_user -eq 0 ]] && getent passwd mr >/dev/null; then
    deluser --system --quiet mr >/dev/null 2>&1 || userdel mr 2>/dev/null
    getent group mr >/dev/null && { delgroup --system --quiet mr >/dev/null 2>&1 || groupdel mr 2>/dev/null; }
  fi
  vps_teardown  # the mount points dpkg --purge did not remove
  local left
  left="$(ip netns list | awk '{ print $1 }' | grep -c "^$NETNS_PREFIX" || true)"
  [[ "$left" -eq 0 ]] || { echo "vps_playbook: $left namespaces left behind" >&2; rc=1; }
  if [[ $keep -eq 1 || $rc -ne 0 && -n "${MR_VPS_KEEP_ON_FAIL:-}" ]]; then
    echo "vps_playbook: kept $T" >&2
  else
    rm -rf "$T"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the package -------------------------------------------------------------
if [[ -z "$deb" ]]; then
  if [[ ! -f "$BUILD/CPackConfig.cmake" ]]; then
    say "SKIP: no package: pass --deb FILE (or MR_DEB), or configure $BUILD with CPack (deploy/CMakeLists.txt)"
    exit 77
  fi
  (cd "$BUILD" && cpack -G DEB -B "$T/deb" >"$T/cpack.log" 2>&1) || fail "cpack -G DEB: $(tail -n 3 "$T/cpack.log")"
  deb="$(ls "$T"/deb/mr_*.deb | head -n 1)"
fi
[[ -f "$deb" ]] || fail "no package '$deb'"
dpkg-deb -c "$deb" >"$T/deb.list"
grep -q '\./usr/bin/mr-worker$' "$T/deb.list" || fail "$deb does not install /usr/bin/mr-worker"
deb="$(realpath "$deb")"
version="$(dpkg-deb -f "$deb" Version)"
# The upgrade: the same files under a higher version, as the next release.
deb2="$(vps_next_deb "$deb" "$T/deb2")"
say "package $(basename "$deb"), upgrade to ${version}+vpstest1"

# --- the VPSs ----------------------------------------------------------------
netns_init "$T" mrvps
if [[ $full -eq 1 ]]; then
  dcs=3 workers=(w1 w2 w3 w4 w5); declare -A dc_of=([m1]=1 [w1]=1 [w2]=2 [w3]=2 [w4]=3 [w5]=3 [c1]=3)
else
  dcs=2 workers=(w1 w2 w3); declare -A dc_of=([m1]=1 [w1]=1 [w2]=2 [w3]=2 [c1]=2)
fi
vpss=(m1 "${workers[@]}" c1)
netns_fabric $((dcs + 1))            # the last one holds only the control node
netns_add_host $((dcs + 1)) ctl
for v in "${vpss[@]}"; do netns_add_host "${dc_of[$v]}" "$v"; done
vps_init "$T"
for v in "${vpss[@]}"; do vps_start "$v"; done
say "${#vpss[@]} VPSs in $dcs datacenters, sshd on each; control node $(netns_addr ctl); tls $tls"

# Each VPS sees its own /etc/mr: a file made on m1 is not on w1.
vps_ssh_from ctl m1 'echo m1 >/etc/mr/.vps-probe'
[[ "$(vps_ssh_from ctl w1 'cat /etc/mr/.vps-probe 2>/dev/null || echo absent')" == absent ]] ||
  fail "w1 sees m1's /etc/mr: the VPSs do not have private files"
vps_ssh_from ctl m1 'rm /etc/mr/.vps-probe'

# --- the inventory -----------------------------------------------------------
secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
write_inventory() {  # the VPSs m1, "${workers[@]}" and c1, grouped by datacenter
  local hosts=(m1 "${workers[@]}" c1) d v w
  {
    echo "all:"
    echo "  children:"
    for ((d = 1; d <= dcs; d++)); do
      echo "    dc$d:"
      echo "      vars: { datacenter: dc$d }"
      echo "      hosts:"
      for v in "${hosts[@]}"; do
        [[ ${dc_of[$v]} -eq $d ]] && echo "        $v: { ansible_host: $(netns_addr "$v") }"
      done
    done
    echo "    master: { hosts: { m1: } }"
    echo "    workers:"
    echo "      hosts:"
    for w in "${workers[@]}"; do echo "        $w:"; done
    echo "    clients: { hosts: { c1: } }"
    echo "  vars:"
    echo "    ansible_user: root"
    echo "    ansible_ssh_common_args: -F $T/ssh/ssh_config"
    echo "    mr_service_manager: exec"
    echo "    mr_secret: $secret"
    echo "    mr_ssh_from: [$(netns_addr ctl)]"
    echo "    mr_block_size: 1048576"
    echo "    mr_fsync: false"
    echo "    mr_heartbeat_interval_ms: 500"
    echo "    mr_dead_after_missed_heartbeats: 6"
    echo "    mr_control_mrctl: $BUILD/tools/mrctl"
    echo "    mr_tls_ca_dir: $T/tls-ca"
    echo "    mr_smoke_size: 1M"
    echo "    mr_tls: \"$tls\""  # quoted: YAML reads a bare off as false
  } >"$T/inventory.yml"
}
write_inventory

playbook() {  # playbook LOG ARGS...: ansible-playbook from the control node
  local log="$1"; shift
  netns_exec ctl env ANSIBLE_CONFIG="$ROOT/deploy/ansible/ansible.cfg" ANSIBLE_LOCAL_TEMP="$T/ansible-local" \
    ANSIBLE_REMOTE_TEMP="/tmp/.vps-ansible-$$" ANSIBLE_SSH_CONTROL_PATH_DIR="$T/ansible-cp" \
    ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 LC_ALL=C.UTF-8 LANG=C.UTF-8 \
    ansible-playbook -i "$T/inventory.yml" "$ROOT/deploy/ansible/site.yml" "$@" >"$log" 2>&1
}
on_m1() { vps_ssh_from ctl m1 "$@"; }
on_c1() { vps_ssh_from ctl c1 "$@"; }
mrctl_c1() { on_c1 mrctl --config /etc/mr/cluster.toml "$@"; }

start=$SECONDS
if ! playbook "$T/deploy.log" -e "mr_deb=$deb"; then
  grep -E 'fatal:|FAILED|ERROR|msg' "$T/deploy.log" | tail -n 15 >&2
  fail "ansible-playbook site.yml failed (log: $T/deploy.log; --keep keeps it)"
fi
deploy_s=$((SECONDS - start))
grep -q 'smoke: WordCount' "$T/deploy.log" || fail "the playbook did not run its smoke job"
# Its message is the one line, no progress bars ("\r" in it on main).
grep '"msg": "smoke' "$T/deploy.log" | grep -qF '\r' && fail "the smoke message carries \\r progress bars"
say "site.yml: deployed and smoke job checked in ${deploy_s} s ($(grep -o 'smoke: WordCount[^"]*' "$T/deploy.log" | head -n 1))"

# --- what the playbook left ----------------------------------------------------
status="$(on_m1 mrctl --config /etc/mr/cluster.toml cluster status --json)"
for w in "${workers[@]}"; do
  dc="$(jq -r --arg w "$w" '.workers[] | select(.id == $w and .live) | .datacenter' <<<"$status")"
  [[ "$dc" == "dc${dc_of[$w]}" ]] || fail "worker $w is not live in dc${dc_of[$w]} (cluster status: $(jq -c '[.workers[] | {id, live, datacenter}]' <<<"$status"))"
done
modes="$(on_m1 'stat -c "%n %U:%G %a" /etc/mr /etc/mr/cluster.toml /etc/mr/secret /var/lib/mr')"
expected="/etc/mr root:mr 750
/etc/mr/cluster.toml root:mr 640
/etc/mr/secret root:mr 640
/var/lib/mr mr:mr 700"
[[ "$modes" == "$expected" ]] || fail "owners and modes on m1 are
$modes
expected
$expected"
user="$(on_m1 'ps -o user= -p $(cat /run/mr/mr-master.pid)')"
[[ "$user" == mr ]] || fail "mr-master runs as '$user', not mr"

# The firewall: the client reaches a worker's port, the control node (not a
# peer) does not; ssh from the control node works (we are using it).
probe() {  # probe FROM ADDR PORT: connect within 2 s?
  netns_exec "$1" python3 -c 'import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), 2).close()
except OSError:
    sys.exit(1)' "$2" "$3"
}
probe c1 "$(netns_addr w1)" 7100 || fail "the client c1 cannot reach w1:7100"
probe c1 "$(netns_addr m1)" 7000 || fail "the client c1 cannot reach m1:7000"
if probe ctl "$(netns_addr w1)" 7100; then fail "the control node reaches w1:7100: the firewall is open to non-peers"; fi
if probe ctl "$(netns_addr m1)" 7000; then fail "the control node reaches m1:7000: the firewall is open to non-peers"; fi
say "firewall: c1 reaches m1:7000 and w1:7100, the control node neither"
on_m1 nft list ruleset >"$T/nft-m1.txt"; vps_ssh_from ctl w1 nft list ruleset >"$T/nft-w1.txt"

# --- a job from the client VPS, checked independently ---------------------------
"$BUILD/tools/mrctl" gen text "$T/words.txt" --size 4M --seed 5 >/dev/null
chmod 644 "$T/words.txt"
mrctl_c1 dfs put --replication 2 "$T/words.txt" /data/words.txt >/dev/null
mrctl_c1 job run wordcount -i /data/words.txt -o /out/wc1 -r 2 --wait >/dev/null ||
  fail "wordcount from c1 failed"
mrctl_c1 dfs cat /out/wc1 | sort >"$T/wc1.got"
tr ' \t\n\r\f\v' '[\n*]' <"$T/words.txt" | awk 'length' | sort | uniq -c |
  sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/' >"$T/wc.want"
cmp -s "$T/wc.want" "$T/wc1.got" ||
  fail "wordcount from c1 differs from tr | sort | uniq -c ($(wc -l <"$T/wc.want") lines expected, $(wc -l <"$T/wc1.got") got)"
say "wordcount from c1 (dc${dc_of[c1]}) = tr | sort | uniq -c ($(wc -l <"$T/wc1.got") words)"

# --- rolling upgrade with a DFS file and a running job ------------------------
head -c $((3 << 20)) /dev/urandom >"$T/keep.bin"
chmod 644 "$T/keep.bin"
keep_sum="$(sha256sum <"$T/keep.bin" | cut -d' ' -f1)"
mrctl_c1 dfs put --replication 2 "$T/keep.bin" /data/keep.bin >/dev/null
# A job still running when the upgrade begins: on a quiet machine a small
# one can finish before `job show` asks, so the input grows until it does
# not (32, 128, 512 MiB of 1 MiB blocks; bounded).
before=none
for size in 32 128 512; do
  "$BUILD/tools/mrctl" gen text "$T/big.txt" --size "${size}M" --seed 6 >/dev/null
  chmod 644 "$T/big.txt"
  mrctl_c1 dfs put --replication 2 --block-size 1M "$T/big.txt" "/data/big$size.txt" >/dev/null
  out="/out/wc2-$size"
  job="$(mrctl_c1 job run wordcount -i "/data/big$size.txt" -o "$out" -r 2 --json | jq -r .id)"
  [[ "$job" =~ ^[0-9]+$ ]] || fail "could not submit the job to run during the upgrade"
  before="$(mrctl_c1 job show "$job" --json | jq -r .state)"
  [[ "$before" == running ]] && break
  say "job $job ($size MiB) was '$before' before the upgrade could begin; again with more input"
done
[[ "$before" == running ]] || fail "job $job is '$before' before the upgrade began, not running (input too small for this machine?)"
start=$SECONDS
if ! playbook "$T/upgrade.log" --tags upgrade -e "mr_deb=$deb2"; then
  grep -E 'fatal:|FAILED|ERROR|msg' "$T/upgrade.log" | tail -n 15 >&2
  fail "ansible-playbook --tags upgrade failed (log: $T/upgrade.log)"
fi
upgrade_s=$((SECONDS - start))
after="$(mrctl_c1 job show "$job" --json | jq -r .state)"
say "rolling upgrade in ${upgrade_s} s; job $job was running when it began, $after when it ended"
[[ "$(dpkg-query -W -f '${Version}' mr)" == "${version}+vpstest1" ]] || fail "the upgrade did not install ${version}+vpstest1"
for w in "${workers[@]}" master; do
  grep -q "start mr-worker@$w\|start mr-$w" "$T/upgrade.log" || fail "the upgrade did not restart $w"
done
for _ in $(seq 1 300); do
  state="$(mrctl_c1 job show "$job" --json | jq -r .state)"
  [[ "$state" == running ]] || break
  sleep 1
done
[[ "$state" == succeeded ]] || fail "job $job ended '$state' after the upgrade: $(mrctl_c1 job show "$job" --json | jq -r .error)"
mrctl_c1 dfs cat "$out" | sort >"$T/wc2.got"
tr ' \t\n\r\f\v' '[\n*]' <"$T/big.txt" | awk 'length' | sort | uniq -c |
  sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/' >"$T/wc2.want"
cmp -s "$T/wc2.want" "$T/wc2.got" || fail "job $job's output after the upgrade differs from tr | sort | uniq -c"
got_sum="$(mrctl_c1 dfs cat /data/keep.bin | sha256sum | cut -d' ' -f1)"
[[ "$got_sum" == "$keep_sum" ]] || fail "/data/keep.bin changed across the upgrade"
say "after the upgrade: /data/keep.bin has its sha256, job $job succeeded with the right output"

# --- backup and restore of the master's RocksDBs (docs/deploy.md) --------
# The master stopped (what the unit's stop does: TERM, then it closes its
# RocksDBs), its data_dir archived, started again; a file put after the
# backup; then the backup restored: the namespace is back at the backup, and
# the file put before it is whole.
master_ctl() {  # master_ctl stop|start: as site.yml's exec mode does
  if [[ "$1" == stop ]]; then
    on_m1 start-stop-daemon --stop --oknodo --retry TERM/30/KILL/5 --pidfile /run/mr/mr-master.pid --remove-pidfile >/dev/null
  else
    on_m1 start-stop-daemon --start --background --make-pidfile --pidfile /run/mr/mr-master.pid --chuid mr:mr \
      --umask 077 --chdir /var/lib/mr --output /var/log/mr/mr-master.out --exec /usr/bin/mr-master -- \
      --config /etc/mr/cluster.toml
  fi
}
wait_workers() {
  vps_ssh_from ctl m1 python3 - --ids "$(IFS=,; echo "${workers[*]}")" --timeout 120 \
    <"$ROOT/deploy/ansible/roles/mr/files/mr_wait_workers.py" >/dev/null || fail "workers did not come back: $1"
}
master_ctl stop
on_m1 'tar -C /var/lib/mr -czf /var/lib/mr/master-backup.tgz master/namespace master/history'
master_ctl start
wait_workers "after the backup"
mrctl_c1 dfs put "$T/keep.bin" /data/after-backup.bin >/dev/null
master_ctl stop
on_m1 'mv /var/lib/mr/master /var/lib/mr/master.before-restore && mkdir -m 700 /var/lib/mr/master &&
       tar -C /var/lib/mr -xzf /var/lib/mr/master-backup.tgz && chown -R mr:mr /var/lib/mr/master'
master_ctl start
wait_workers "after the restore"
got_sum="$(mrctl_c1 dfs cat /data/keep.bin | sha256sum | cut -d' ' -f1)"
[[ "$got_sum" == "$keep_sum" ]] || fail "/data/keep.bin is not whole after the restore"
if mrctl_c1 dfs stat /data/after-backup.bin >/dev/null 2>&1; then
  fail "/data/after-backup.bin, put after the backup, exists after the restore"
fi
[[ "$(mrctl_c1 job show "$job" --json | jq -r .state)" == succeeded ]] || fail "job $job's record is gone after the restore"
say "backup (master stopped, tar of master/namespace and master/history) and restore: /data/keep.bin whole, the later file gone, job $job's record kept"

# --- adding and retiring a worker (docs/deploy.md) ----------------------
# w3 is decommissioned (its blocks copied elsewhere first) and stopped; a new
# VPS wn joins c1's datacenter; the inventory loses w3 and gains wn, and
# site.yml runs again: wn starts and registers without a master restart,
# and the firewalls stop letting w3 in.
retired="${workers[-1]}"
dc_of[wn]="${dc_of[c1]}"
netns_add_host "${dc_of[wn]}" wn
vps_start wn
mrctl_c1 cluster decommission "$retired" >/dev/null
for _ in $(seq 1 240); do
  admin="$(mrctl_c1 cluster status --json | jq -r --arg w "$retired" '.workers[] | select(.id == $w) | .admin_state')"
  [[ "$admin" == decommissioned ]] && break
  sleep 0.5
done
[[ "$admin" == decommissioned ]] || fail "$retired is '$admin' 120 s after mrctl cluster decommission"
vps_ssh_from ctl "$retired" start-stop-daemon --stop --retry TERM/30/KILL/5 --pidfile "/run/mr/mr-worker@$retired.pid" --remove-pidfile >/dev/null
workers=("${workers[@]:0:${#workers[@]}-1}" wn)
write_inventory
start=$SECONDS
if ! playbook "$T/scale.log" -e "mr_deb=$deb2"; then
  grep -E 'fatal:|FAILED|ERROR|msg' "$T/scale.log" | tail -n 15 >&2
  fail "ansible-playbook site.yml with wn added and $retired removed failed (log: $T/scale.log)"
fi
scale_s=$((SECONDS - start))
status="$(mrctl_c1 cluster status --json)"
[[ "$(jq -r '.workers[] | select(.id == "wn" and .live) | .datacenter' <<<"$status")" == "dc${dc_of[wn]}" ]] ||
  fail "wn is not live in dc${dc_of[wn]}"
[[ "$(jq -r --arg w "$retired" '.workers[] | select(.id == $w) | .admin_state' <<<"$status")" == decommissioned ]] ||
  fail "$retired is no longer decommissioned"
[[ "$(jq -r '.under_replicated_blocks' <<<"$status")" == 0 ]] || fail "under-replicated blocks after retiring $retired"
got_sum="$(mrctl_c1 dfs cat /data/keep.bin | sha256sum | cut -d' ' -f1)"
[[ "$got_sum" == "$keep_sum" ]] || fail "/data/keep.bin is not whole after retiring $retired"
if probe "$retired" "$(netns_addr w1)" 7100; then fail "$retired, retired, still reaches w1:7100"; fi
probe wn "$(netns_addr w1)" 7100 || fail "wn cannot reach w1:7100"
say "worker wn added and $retired retired (decommissioned, stopped, out of the inventory) in ${scale_s} s: /data/keep.bin whole, $retired kept out by the firewalls"
say "PASS (deploy ${deploy_s} s, upgrade ${upgrade_s} s, add/retire ${scale_s} s)"
