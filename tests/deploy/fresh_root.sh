#!/usr/bin/env bash
# Issue 11's target "from the .deb on a fresh Debian 12 root file system to a
# registered worker: one command", run for real (docs/deploy.md, "Proof on a
# fresh Debian 12 root"). Not part of ctest: it needs root, Debian's mirror
# and a few minutes for debootstrap. It
#  1. starts mr-master (the .deb's own binary) on the host, 127.0.0.1;
#  2. makes a fresh Debian 12 root with debootstrap (minbase plus systemd, so
#     the package's units run under a real systemd);
#  3. writes the tenant's files into it, as Ansible or cloud-init would:
#     /etc/mr/cluster.toml and /etc/mr/secret (mode 0640, group root: user mr
#     does not exist yet) and /etc/default/mr with MR_SERVICES="mr-worker@w1";
#  4. boots it with systemd-nspawn, sharing the host's network, and runs the
#     ONE command `apt-get install -y /root/mr_<version>_amd64.deb` in it;
#  5. waits (at most 60 s) until the master on the host lists w1 as live, and
#     checks the user, modes, unit state and journal levels in the container;
#  6. bad input under the real unit: /etc/mr/secret made world-readable, then
#     removed: the worker exits 2 with one journal line at priority err and
#     is not restarted; restored, it registers again.
# Usage: tests/deploy/fresh_root.sh [--deb FILE] [--build DIR] [--keep]
#   --deb FILE   the package (default: the newest DIR/mr_*_amd64.deb; made
#                with `cpack -G DEB` in DIR when there is none)
#   --build DIR  the build directory (default: build/ of this checkout)
#   --keep       keep the root file system and the logs (printed at the end)
# Environment: MR_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -uo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$src/build
deb=
keep=0
while (($#)); do
  case $1 in
    --deb) deb=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--deb FILE] [--build DIR] [--keep]" >&2; exit 2 ;;
  esac
done
mirror=${MR_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "fresh_root: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root (debootstrap, systemd-nspawn)"
for c in debootstrap systemd-nspawn nsenter jq ss; do
  command -v "$c" >/dev/null || die "$c is missing (deploy/install-deps.sh installs it)"
done

if [[ -z $deb ]]; then
  deb=$(ls -t "$build"/mr_*_amd64.deb 2>/dev/null | head -n 1)
  if [[ -z $deb ]]; then
    echo "== no .deb in $build: cpack -G DEB (the binaries already built)"
    (cd "$build" && cpack -G DEB >/dev/null) || die "cpack -G DEB in $build failed"
    deb=$(ls -t "$build"/mr_*_amd64.deb | head -n 1)
  fi
fi
[[ -f $deb ]] || die "no package: $deb"
deb=$(realpath "$deb")

work=$(mktemp -d /var/tmp/mr-fresh-root.XXXXXX)
root=$work/root
master_pid=
nspawn_pid=
cleanup() {
  if [[ -n $nspawn_pid ]]; then
    kill -TERM "$nspawn_pid" 2>/dev/null  # nspawn halts the container's systemd
    for _ in $(seq 1 300); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nspawn_pid" 2>/dev/null
    wait "$nspawn_pid" 2>/dev/null
  fi
  if [[ -n $master_pid ]]; then
    kill -TERM "$master_pid" 2>/dev/null
    wait "$master_pid" 2>/dev/null
  fi
  if ((keep)); then echo "kept: $work (root file system, logs)"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 12000))
    ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  die "no free port"
}

# 1. The master on the host, from the package's own binaries.
mkdir -p "$work/pkg" "$work/master"
dpkg-deb -x "$deb" "$work/pkg" || die "dpkg-deb -x $deb"
master_port=$(free_port)
worker_port=$(free_port)
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
workers_toml="[[worker]]
id = \"w1\"
address = \"127.0.0.1:$worker_port\"
datacenter = \"dc1\"
data_dir = \"/var/lib/mr/w1\""
cat >"$work/master/cluster.toml" <<TOML
[cluster]
name = "fresh-root"
secret_env = "MR_SECRET"
[master]
address = "127.0.0.1:$master_port"
data_dir = "$work/master/data"
$workers_toml
TOML
MR_SECRET=$secret "$work/pkg/usr/bin/mr-master" --config "$work/master/cluster.toml" \
  2>"$work/master/stderr" &
master_pid=$!
mrctl() { MR_SECRET=$secret "$work/pkg/usr/bin/mrctl" --config "$work/master/cluster.toml" "$@"; }
for _ in $(seq 1 100); do mrctl cluster status >/dev/null 2>&1 && break; sleep 0.1; done
mrctl cluster status >/dev/null 2>&1 || die "mr-master did not start: $(cat "$work/master/stderr")"
echo "== host: $("$work/pkg/usr/bin/mr-master" --version) on 127.0.0.1:$master_port"

# w1's state as the master sees it: live, dead or absent.
w1_state() {
  mrctl cluster status --json 2>/dev/null |
    jq -r '[.workers[] | select(.id == "w1") | if .live then "live" else "dead" end][0] // "absent"'
}
# Waits (at most $1 s) until w1_state is $2.
wait_w1() {
  local deadline=$((SECONDS + $1))
  while ((SECONDS < deadline)); do
    [[ $(w1_state) == "$2" ]] && return 0
    sleep 0.2
  done
  return 1
}

# 2. A fresh Debian 12 root.
echo "== debootstrap bookworm ($mirror) into $root"
t0=$SECONDS
mkdir -p /var/cache/mr-fresh-root  # the downloaded .debs, for the next run
if ! debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus \
    --cache-dir=/var/cache/mr-fresh-root bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -5 "$work/debootstrap.log"
  die "debootstrap failed (is $mirror reachable?)"
fi
echo "   debootstrap: $((SECONDS - t0)) s"

# 3. The tenant's files, before the package (group root: no user mr yet).
mkdir -p "$root/etc/mr"
cat >"$root/etc/mr/cluster.toml" <<TOML
[cluster]
name = "fresh-root"
secret_file = "/etc/mr/secret"
[master]
address = "127.0.0.1:$master_port"
data_dir = "/var/lib/mr/master"
$workers_toml
TOML
printf '%s\n' "$secret" >"$root/etc/mr/secret"
chmod 0640 "$root/etc/mr/cluster.toml" "$root/etc/mr/secret"
echo 'MR_SERVICES="mr-worker@w1"' >"$root/etc/default/mr"
cp "$deb" "$root/root/"

# 4. Boot it; the host's network (no --private-network), so 127.0.0.1 is shared.
systemd-nspawn -D "$root" -M mrfreshroot --register=no --keep-unit -b --console=pipe \
  >"$work/nspawn.log" 2>&1 &
nspawn_pid=$!
leader=
for _ in $(seq 1 300); do
  leader=$(pgrep -P "$nspawn_pid" -x systemd | head -n 1)
  [[ -n $leader ]] && break
  sleep 0.1
done
[[ -n $leader ]] || die "the container did not boot: $(tail -3 "$work/nspawn.log")"
inside() {
  nsenter -t "$leader" -m -u -i -p -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"
}
state=
for _ in $(seq 1 300); do
  state=$(inside systemctl is-system-running 2>/dev/null)
  [[ $state == running || $state == degraded ]] && break
  sleep 0.2
done
echo "== container booted: systemd $state"

# The one command.
echo "== the one command: apt-get install -y /root/$(basename "$deb")"
t0=$SECONDS
if inside apt-get install -y "/root/$(basename "$deb")" >"$work/apt.log" 2>&1; then
  ok "apt-get install: $((SECONDS - t0)) s ($(grep -c '^Setting up' "$work/apt.log") packages set up)"
else
  tail -15 "$work/apt.log"
  fail "apt-get install"
fi
grep '^mr:' "$work/apt.log"  # what postinst said, if anything
t0=$SECONDS
if wait_w1 60 live; then
  ok "w1 registered with the master on the host, $((SECONDS - t0)) s after the install returned"
else
  fail "w1 is not live at the master after 60 s ($(w1_state)); in the container:"
  inside journalctl -u mr-worker@w1 --no-pager | tail -10
fi

# 5. What the package and unit made.
[[ $(inside systemctl is-enabled mr-worker@w1) == enabled ]] && ok "mr-worker@w1 enabled" ||
  fail "mr-worker@w1 is not enabled"
main_pid=$(inside systemctl show -p MainPID --value mr-worker@w1)
user=$(inside stat -c %U "/proc/$main_pid")
[[ $user == mr ]] && ok "mr-worker (pid $main_pid in the container) runs as user mr" ||
  fail "mr-worker's user: '$user'"
for want in "/var/lib/mr mr:mr 700" "/var/lib/mr/w1 mr:mr 700" "/etc/mr root:mr 750" \
    "/etc/mr/cluster.toml root:mr 640" "/etc/mr/secret root:mr 640"; do
  read -r path owner mode <<<"$want"
  got=$(inside stat -c '%U:%G %a' "$path")
  [[ $got == "$owner $mode" ]] && ok "$path $got" || fail "$path is '$got', want '$owner $mode'"
done
# The journal has each line once, with its level (PRIORITY=6 for info).
priorities=$(inside journalctl -u mr-worker@w1 -o json --no-pager | jq -r 'select(.MESSAGE | tostring | test("^\\[worker ")) | .PRIORITY' | sort | uniq -c | tr -s ' \n' ' ')
if grep -q ' 6 ' <<<" $priorities " && ! inside journalctl -u mr-worker@w1 -o cat --no-pager | grep -q '^<[0-7]>'; then
  ok "journal: the worker's lines as (count PRIORITY): $priorities(no '<N>' left in a message)"
else
  fail "journal priorities of the worker's lines: '$priorities'"
fi

# 6. Bad input under the unit: a secret others can read, then a missing one.
bad_secret() {  # bad_secret WHAT PATTERN SETUP...: the worker stops with one line, exit 2
  local what=$1 pattern=$2
  shift 2
  inside "$@"
  inside systemctl restart mr-worker@w1
  local deadline=$((SECONDS + 30)) st=
  while ((SECONDS < deadline)); do
    st=$(inside systemctl is-active mr-worker@w1)
    [[ $st == failed ]] && break
    sleep 0.2
  done
  local status line
  status=$(inside systemctl show -p ExecMainStatus --value mr-worker@w1)
  # -p err: the line came with "<3>", so the journal holds it as an error.
  line=$(inside journalctl -u mr-worker@w1 -p err -o cat --no-pager -n 5 | grep -- "$pattern" | tail -n 1)
  if [[ $st == failed && $status == 2 && -n $line ]]; then
    ok "$what: unit failed, exit 2, not restarted; journal (-p err): $line"
  else
    fail "$what: state '$st', exit '$status', line '$line'"
  fi
}
bad_secret "secret mode 0644" "accessible by others" chmod 0644 /etc/mr/secret
bad_secret "secret missing" "No such file" mv /etc/mr/secret /etc/mr/secret.away
wait_w1 60 dead || fail "the master still lists w1 as live ($(w1_state))"
inside mv /etc/mr/secret.away /etc/mr/secret
inside chmod 0640 /etc/mr/secret
inside systemctl restart mr-worker@w1
wait_w1 60 live && ok "secret restored: w1 live again" || fail "w1 did not come back ($(w1_state))"

((fails == 0)) && echo PASS || echo "FAIL: $fails"
((fails == 0))
