#!/usr/bin/env bash
# The playbook's systemd branch, the one real VPSs use, on emulated VPSs that
# boot systemd (issue 28; docs/deploy.md#the-proof-on-vpss-that-boot-systemd):
# Debian 12 roots booted by systemd-nspawn -b, each in its own network
# namespace, two datacenters behind a router namespace, sshd with root by
# key (deploy/lib/netns.sh, vps.sh, booted_vps.sh). From the control node's
# namespace the real ansible-playbook runs deploy/ansible/site.yml as the
# docs say, and the test checks:
#   deploy (a host that is both master and worker; the firewall on a root
#   without netbase), a WordCount against tr | sort | uniq -c, a worker
#   refused after a secret change coming back by itself, a reboot of a worker
#   and of the master host, adding a worker by running the playbook again
#   with another mr_secret (the cluster's is kept), a rolling upgrade without
#   mr_secret with a job running through it (the master restarted once, after
#   its host's worker), rotating the secret, a worker that fails to start
#   (caught on its host with its own line), and apt-get remove leaving no
#   dangling wants link.
#
#   MR_TEST_VPS_SYSTEMD=1 tests/deploy/vps_systemd_test.sh [--deb FILE] [--build DIR] [--keep]
#
# Without MR_TEST_VPS_SYSTEMD=1 it exits 77 (ctest: skipped): it takes
# minutes, and the first run builds the cached root with debootstrap
# (/var/cache/mr-vps-systemd, Debian's mirror). Needs root. Containers,
# overlays, cgroups and namespaces are removed on exit, pass or fail.
set -euo pipefail
# shellcheck source=tests/lib/root_test.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/root_test.sh"
root_test_begin vps_systemd "network namespaces, systemd-nspawn, overlays, cgroups" "$@"
if [[ "${MR_TEST_VPS_SYSTEMD:-}" != 1 ]]; then
  say "SKIP: the booted-systemd fleet runs with MR_TEST_VPS_SYSTEMD=1 (minutes; playbook_checks is its reduced part)"
  exit 77
fi
deb="${MR_DEB:-}"
set -- "${REST[@]}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --deb) deb="$2"; shift 2 ;;
    *) unknown_option "$1" ;;
  esac
done
for tool in ansible-playbook systemd-nspawn debootstrap nsenter nft ssh-keygen dpkg-deb jq; do
  command -v "$tool" >/dev/null || fail "$tool is missing (deploy/install-deps.sh installs it)"
done
# shellcheck source=../../deploy/lib/netns.sh
source "$ROOT/deploy/lib/netns.sh"
# shellcheck source=../../deploy/lib/vps.sh
source "$ROOT/deploy/lib/vps.sh"
# shellcheck source=../../deploy/lib/booted_vps.sh
source "$ROOT/deploy/lib/booted_vps.sh"

T="$(mktemp -d /var/tmp/vps-systemd.XXXXXX)"  # not /tmp: the overlays' upper dirs
t0=$SECONDS
cleanup() {
  local rc=$? left
  set +e
  bvps_teardown
  netns_teardown
  left="$(ip netns list | awk '{ print $1 }' | grep -c "^$NETNS_PREFIX" || true)"
  [[ "$left" -eq 0 ]] || { echo "vps_systemd: $left namespaces left behind" >&2; rc=1; }
  left="$(grep -c "$T/" /proc/mounts || true)"
  [[ "$left" -eq 0 ]] || { echo "vps_systemd: $left mounts left behind" >&2; rc=1; }
  left=0
  [[ -n "$NETNS_PREFIX" ]] && left="$(find /sys/fs/cgroup/*/ -maxdepth 1 -name "${NETNS_PREFIX}*" 2>/dev/null | wc -l)"
  [[ "$left" -eq 0 ]] || { echo "vps_systemd: $left cgroups left behind" >&2; rc=1; }
  if [[ $keep -eq 1 ]]; then echo "vps_systemd: kept $T" >&2; else rm -rf "$T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the package and its next version ------------------------------------------
if [[ -z "$deb" ]]; then
  [[ -f "$BUILD/CPackConfig.cmake" ]] || { say "SKIP: no package: pass --deb FILE, or a build with CPack"; exit 77; }
  (cd "$BUILD" && cpack -G DEB -B "$T/deb" >"$T/cpack.log" 2>&1) || fail "cpack -G DEB: $(tail -n 3 "$T/cpack.log")"
  deb="$(ls "$T"/deb/mr_*.deb | head -n 1)"
fi
deb="$(realpath "$deb")"
version="$(dpkg-deb -f "$deb" Version)"
# The upgrade: the same files under a higher version, as the next release.
deb2="$(vps_next_deb "$deb" "$T/deb2")"

# --- the VPSs ----------------------------------------------------------------------
start=$SECONDS
root="$(bvps_root "$deb")" || fail "no Debian 12 root"
say "root $root ready in $((SECONDS - start)) s"
netns_init "$T" mrsd
netns_fabric 3                       # dc1, dc2; dc3 holds only the control node
netns_add_host 3 ctl
declare -A dc_of=([m1]=1 [w1]=1 [w2]=2 [w3]=2)
for v in m1 w1 w2; do netns_add_host "${dc_of[$v]}" "$v"; done
vps_init "$T"
bvps_init "$T" "$root"
start=$SECONDS
for v in m1 w1 w2; do bvps_boot "$v" || fail "$v did not boot"; done
say "3 VPSs booted systemd in $((SECONDS - start)) s (dc1: m1 master+worker, w1; dc2: w2); control node $(netns_addr ctl)"

workers=(m1 w1 w2)
declare -A hostvars_extra=()
write_inventory() {
  local d v w
  {
    echo "all:"
    echo "  children:"
    for d in 1 2; do
      echo "    dc$d:"
      echo "      vars: { datacenter: dc$d }"
      echo "      hosts:"
      for v in "${workers[@]}"; do
        [[ ${dc_of[$v]} -eq $d ]] &&
          echo "        $v: { ansible_host: $(netns_addr "$v")${hostvars_extra[$v]:+, ${hostvars_extra[$v]}} }"
      done
    done
    echo "    master:"
    echo "      hosts:"
    echo "        m1:"
    echo "    workers:"
    echo "      hosts:"
    for w in "${workers[@]}"; do echo "        $w:"; done
    echo "    clients:"
    echo "      hosts:"
    echo "        m1:"
    echo "  vars:"
    echo "    ansible_user: root"
    echo "    ansible_ssh_common_args: -F $T/ssh/ssh_config"
    echo "    mr_ssh_from: [$(netns_addr ctl)]"
    echo "    mr_block_size: 1048576"
    echo "    mr_fsync: false"
    echo "    mr_heartbeat_interval_ms: 500"
    echo "    mr_dead_after_missed_heartbeats: 6"
    echo "    mr_recovery_wait_ms: 5000"
    echo "    mr_smoke_size: 1M"
  } >"$T/inventory.yml"
}
write_inventory
playbook() {  # playbook LOG ARGS...: ansible-playbook from the control node
  local log="$1"; shift
  netns_exec ctl env ANSIBLE_CONFIG="$ROOT/deploy/ansible/ansible.cfg" ANSIBLE_LOCAL_TEMP="$T/ansible-local" \
    ANSIBLE_SSH_CONTROL_PATH_DIR="$T/ansible-cp" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
    LC_ALL=C.UTF-8 LANG=C.UTF-8 \
    ansible-playbook -i "$T/inventory.yml" "$ROOT/deploy/ansible/site.yml" "$@" >"$log" 2>&1
}
playbook_ok() {  # playbook_ok WHAT LOG ARGS...: the playbook must pass
  local what="$1" log="$2"; shift 2
  if ! playbook "$log" "$@"; then
    grep -E 'fatal:|FAILED|ERROR|"msg"' "$log" | tail -n 12 >&2
    fail "ansible-playbook ($what) failed (log: $log; --keep keeps it)"
  fi
}
on() { local h="$1"; shift; vps_ssh_from ctl "$h" "$@"; }
mrctl_m1() { on m1 mrctl --config /etc/mr/cluster.toml "$@"; }
# wait_live IDS SECONDS [SINCE]: every worker of IDS live and in service, per
# the master (the playbook's own mr_wait_workers.py, run on m1); with SINCE
# (epoch s; the VPSs share this machine's clock), heard from after SINCE.
wait_live() {
  on m1 python3 - --ids "$1" --timeout "$2" ${3:+--since "$3"} \
    <"$ROOT/deploy/ansible/roles/mr/files/mr_wait_workers.py" >/dev/null
}
expected_wc() {  # expected_wc FILE: tr | sort | uniq -c, as WordCount prints it
  tr ' \t\n\r\f\v' '[\n*]' <"$1" | awk 'length' | LC_ALL=C sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/'
}
put_on_m1() {  # put_on_m1 FILE NAME: FILE as /var/tmp/NAME inside m1 (its overlay)
  install -m 644 "$1" "$T/bvps/m1/root/var/tmp/$2"
}

# --- 1. deploy -------------------------------------------------------------------------
secret1="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start=$SECONDS
playbook_ok deploy "$T/deploy.log" -e "mr_deb=$deb" -e "mr_secret=$secret1"
deploy_s=$((SECONDS - start))
smoke="$(grep -o 'smoke: WordCount[^"]*' "$T/deploy.log" | head -n 1)"
[[ -n "$smoke" ]] || fail "no smoke line in the deploy log"
grep '"msg"' "$T/deploy.log" | grep -q '\\r' && fail "a message of the deploy carries \\r: $(grep '"msg"' "$T/deploy.log" | grep '\\r' | head -c 300)"
wait_live m1,w1,w2 30 || fail "after the deploy"
for v in m1 w1 w2; do
  [[ "$(on "$v" systemctl is-active "mr-worker@$v")" == active ]] || fail "mr-worker@$v is not active on $v"
  [[ "$(on "$v" systemctl is-enabled "mr-worker@$v")" == enabled ]] || fail "mr-worker@$v is not enabled on $v"
  on "$v" test -e /etc/protocols && fail "$v has /etc/protocols (netbase): the minimal-image case is not tested"
  on "$v" nft list ruleset | grep -q 'tcp dport 7100' || fail "$v has no firewall rule for 7100"
done
[[ "$(on m1 'ps -o user= -p $(systemctl show -p MainPID --value mr-master)')" == mr ]] || fail "mr-master does not run as mr"
say "deploy: site.yml (systemd branch) in ${deploy_s} s; every unit active and enabled, nftables loaded without netbase; $smoke"

# --- 2. a WordCount against a shell pipeline ----------------------------------------------
"$BUILD/tools/mrctl" gen text "$T/words.txt" --size 4M --seed 5 >/dev/null
put_on_m1 "$T/words.txt" words.txt
mrctl_m1 dfs put --replication 2 /var/tmp/words.txt /data/words.txt >/dev/null
mrctl_m1 job run wordcount -i /data/words.txt -o /out/wc1 -r 2 --wait >/dev/null 2>&1 || fail "wordcount failed"
expected_wc "$T/words.txt" >"$T/wc.want"
mrctl_m1 dfs cat /out/wc1 | LC_ALL=C sort >"$T/wc1.got"
cmp -s "$T/wc.want" "$T/wc1.got" || fail "wordcount differs from tr | sort | uniq -c"
keep_sum="$(sha256sum <"$T/words.txt" | cut -d' ' -f1)"
dfs_sum() { mrctl_m1 dfs cat /data/words.txt | sha256sum | cut -d' ' -f1; }
say "wordcount = tr | sort | uniq -c ($(wc -l <"$T/wc1.got") words)"

# --- 3. a worker refused after a secret change comes back by itself ------------------------
# w2 gets another secret and is restarted: the master refuses it (exit 3);
# systemd restarts it every 5 s; with the right secret back, it rejoins
# without anyone touching the unit. (On main: exit 2, never restarted.)
on w2 "cp -p /etc/mr/secret /root/secret.good && echo 0000000000000000wrong > /etc/mr/secret && systemctl restart mr-worker@w2"
for _ in $(seq 1 100); do
  [[ "$(on w2 systemctl show -p NRestarts --value mr-worker@w2)" -ge 1 ]] && break
  sleep 0.2
done
refused="$(on w2 journalctl -u mr-worker@w2 -p err -o cat -n 1 --no-pager)"
restarts="$(on w2 systemctl show -p NRestarts --value mr-worker@w2)"
[[ "$restarts" -ge 1 ]] || fail "w2, refused, was not restarted (NRestarts $restarts; $(on w2 systemctl show -p ActiveState,Result,ExecMainStatus mr-worker@w2 | tr '\n' ' '))"
on w2 "cp -p /root/secret.good /etc/mr/secret"
wait_live w2 30 || fail "w2 did not rejoin after its secret was put back"
say "w2 with another secret: refused ('$refused'), restarted by systemd ($restarts restarts); the secret put back, it rejoined by itself"

# --- 4. reboots: a worker, then the master's host -------------------------------------------
# A heartbeat after the container is up again comes from the worker its
# systemd started at boot (the old one ended with the old container).
start=$SECONDS
bvps_reboot w1 || fail "w1 did not reboot"
wait_live w1 60 "$(date +%s)" || fail "w1 after its reboot"
w1_s=$((SECONDS - start))
start=$SECONDS
bvps_reboot m1 || fail "m1 did not reboot"
wait_live m1,w1,w2 90 "$(date +%s)" || fail "the cluster after m1 (master and worker) rebooted"
m1_s=$((SECONDS - start))
[[ "$(dfs_sum)" == "$keep_sum" ]] || fail "/data/words.txt differs after the reboots"
say "reboot of w1: live again in ${w1_s} s; reboot of m1 (master+worker): every worker live in ${m1_s} s; /data/words.txt whole"

# --- 5. adding a worker, with another mr_secret on the command line ----------------------------
netns_add_host "${dc_of[w3]}" w3
bvps_boot w3 || fail "w3 did not boot"
workers+=(w3)
write_inventory
other="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start=$SECONDS
playbook_ok "adding w3" "$T/add.log" -e "mr_deb=$deb" -e "mr_secret=$other"
add_s=$((SECONDS - start))
grep -q "kept the cluster's secret" "$T/add.log" || fail "the playbook did not say it kept the cluster's secret"
for v in m1 w1 w2 w3; do
  [[ "$(on "$v" cat /etc/mr/secret)" == "$secret1" ]] || fail "$v's secret changed on a re-run without mr_rotate_secret"
done
wait_live m1,w1,w2,w3 30 || fail "after adding w3"
say "w3 added in ${add_s} s (playbook run again with another mr_secret: the cluster's kept, nothing restarted)"

# --- 6. rolling upgrade, no mr_secret, a job running through it ---------------------------------
listening() { on m1 journalctl -u mr-master -o cat --no-pager | grep -c 'listening on' || true; }
before_listen="$(listening)"
# A job still running when the upgrade begins: a small one can end before
# `job show` asks, so the input grows until it does not (bounded).
state_before=none
for size in 48 192; do
  "$BUILD/tools/mrctl" gen text "$T/big.txt" --size "${size}M" --seed 6 >/dev/null
  put_on_m1 "$T/big.txt" big.txt
  mrctl_m1 dfs put --replication 2 /var/tmp/big.txt "/data/big$size.txt" >/dev/null
  out="/out/wc2-$size"
  job="$(mrctl_m1 job run wordcount -i "/data/big$size.txt" -o "$out" -r 2 --json | jq -r .id)"
  state_before="$(mrctl_m1 job show "$job" --json | jq -r .state)"
  [[ "$state_before" == running ]] && break
  say "job $job ($size MiB) was '$state_before' before the upgrade could begin; again with more input"
done
[[ "$state_before" == running ]] || fail "job $job was '$state_before' before the upgrade began, not running"
start=$SECONDS
playbook_ok upgrade "$T/upgrade.log" --tags upgrade -e "mr_deb=$deb2"
upgrade_s=$((SECONDS - start))
for v in m1 w1 w2 w3; do
  [[ "$(on "$v" "dpkg-query -W -f '\${Version}' mr")" == "${version}+vpstest1" ]] || fail "$v was not upgraded"
done
restarts=$(( $(listening) - before_listen ))
[[ $restarts -eq 1 ]] || fail "the master started $restarts times during the upgrade, not once (postinst restarted it in the worker phase?)"
master_at="$(on m1 systemctl show -p ExecMainStartTimestampMonotonic --value mr-master)"
worker_at="$(on m1 systemctl show -p ExecMainStartTimestampMonotonic --value mr-worker@m1)"
[[ $master_at -gt $worker_at ]] || fail "on m1 the master was restarted before its worker"
for _ in $(seq 1 300); do
  state="$(mrctl_m1 job show "$job" --json | jq -r .state)"
  [[ "$state" == running ]] || break
  sleep 1
done
[[ "$state" == succeeded ]] || fail "job $job ended '$state' after the upgrade"
expected_wc "$T/big.txt" >"$T/wc2.want"
mrctl_m1 dfs cat "$out" | LC_ALL=C sort >"$T/wc2.got"
cmp -s "$T/wc2.want" "$T/wc2.got" || fail "job $job's output differs from tr | sort | uniq -c"
say "rolling upgrade (no mr_secret) in ${upgrade_s} s: job $job running when it began, $state after, output exact; on m1 the master restarted once, after its worker"

# --- 7. rotating the secret --------------------------------------------------------------------
secret2="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start=$SECONDS
playbook_ok rotation "$T/rotate.log" -e "mr_deb=$deb2" -e mr_rotate_secret=true -e "mr_secret=$secret2"
rotate_s=$((SECONDS - start))
for v in m1 w1 w2 w3; do
  [[ "$(on "$v" cat /etc/mr/secret)" == "$secret2" ]] || fail "$v does not have the new secret"
done
wait_live m1,w1,w2,w3 30 || fail "after the rotation"
[[ "$(dfs_sum)" == "$keep_sum" ]] || fail "/data/words.txt differs after the rotation"
say "secret rotated in ${rotate_s} s: every host has the new one, every worker live, the smoke job passed, /data/words.txt whole"

# --- 8. a worker that fails to start ----------------------------------------------------------------
hostvars_extra[w2]="mr_map_slots: 0"
write_inventory
start=$SECONDS
if playbook "$T/badworker.log" -e "mr_deb=$deb2"; then fail "the playbook passed with a worker that cannot start"; fi
bad_s=$((SECONDS - start))
line="$(grep -o 'mr-worker@w2.service exited[^"\\]*' "$T/badworker.log" | head -n 1)"
[[ "$line" == *"map-slots"* ]] || fail "the failure does not carry w2's own line: $(grep -E 'fatal:' "$T/badworker.log" | head -n 3)"
grep -qE '^w2 +:.*failed=1' "$T/badworker.log" || fail "w2 does not show failed=1: $(grep -A6 'PLAY RECAP' "$T/badworker.log")"
grep -q 'Workers live and in service' "$T/badworker.log" &&
  fail "the run went on to the wait on the master after w2 failed (any_errors_fatal)"
say "a worker that cannot start: the play failed on w2 in ${bad_s} s (whole run) with: $line"
hostvars_extra[w2]=""
write_inventory
playbook_ok "w2 fixed" "$T/fixed.log" -e "mr_deb=$deb2"
wait_live m1,w1,w2,w3 30 || fail "after fixing w2"

# --- 9. apt-get remove leaves no dangling wants link ----------------------------------------------
on w3 "systemctl stop mr-worker@w3; DEBIAN_FRONTEND=noninteractive apt-get remove -y -q mr" >"$T/remove.log" 2>&1 ||
  fail "apt-get remove on w3: $(tail -n 3 "$T/remove.log")"
dangling="$(on w3 'find /etc/systemd/system -xtype l -name "mr-*"')"
[[ -z "$dangling" ]] || fail "dangling links after apt-get remove: $dangling"
say "apt-get remove mr on w3: no dangling wants link"

say "PASS in $((SECONDS - t0)) s (deploy ${deploy_s} s, add ${add_s} s, upgrade ${upgrade_s} s, rotation ${rotate_s} s, failing worker ${bad_s} s)"
