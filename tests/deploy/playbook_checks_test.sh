#!/usr/bin/env bash
# The deploy fixes of issue 28 that need no VPS (ctest playbook_checks; the
# booted fleet, tests/deploy/vps_systemd_test.sh, runs them for real):
#  1. the inventory in docs/deploy.md and inventory.example.yml parse
#     (ansible-inventory) into one master, five workers and a client;
#  2. site.yml with an inventory that has no master or no workers fails
#     (non-zero, its one message) instead of skipping every play;
#  3. every task of the role has a name;
#  4. the firewall the playbook writes loads where /etc/protocols is missing
#     (minimal Debian 12 has no netbase): nft -c in a mount namespace that
#     hides the file;
#  5. the package's postinst on an upgrade under MR_NO_RESTART=1 (the
#     playbook's rolling upgrade) restarts nothing, and without it restarts
#     the running units; postrm remove leaves no dangling mr-worker@ wants
#     link. Both in a throwaway overlay of this machine's root, with
#     systemctl a recorder (these scripts' only way out).
# Needs root for 4 and 5 (skipped with one line otherwise).
#   tests/deploy/playbook_checks_test.sh
set -uo pipefail
export LC_ALL=C.UTF-8 ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/deploy/lib.sh
source "$src/tests/deploy/lib.sh"
ok() { echo "ok   $*"; }
command -v ansible-inventory >/dev/null || { echo "SKIP: no ansible (deploy/install-deps.sh installs it)"; exit 77; }
tmp=$(mktemp -d /tmp/mr-playbook-checks.XXXXXX)
trap '[[ -n ${MR_KEEP:-} ]] || rm -rf "$tmp"' EXIT
export ANSIBLE_LOCAL_TEMP="$tmp/ansible-local" ANSIBLE_CONFIG="$src/deploy/ansible/ansible.cfg"

# --- 1. the inventories parse --------------------------------------------------
# The first ```yaml block after "### The inventory" in docs/deploy.md.
awk '/^### The inventory/ { f = 1 } f && /^```yaml/ { p = 1; next } p && /^```/ { exit } p' \
  "$src/docs/deploy.md" >"$tmp/docs-inventory.yml"
for inv in "$tmp/docs-inventory.yml" "$src/deploy/ansible/inventory.example.yml"; do
  name=${inv#"$src/"}; name=${name#"$tmp/"}
  if ! ansible-inventory -i "$inv" --list >"$tmp/inv.json" 2>"$tmp/inv.err" ||
      grep -q 'WARNING' "$tmp/inv.err"; then
    fail "$name does not parse: $(grep -v '^ *$' "$tmp/inv.err" | head -n 3)"
    continue
  fi
  got=$(jq -c '{master: .master.hosts, workers: .workers.hosts, clients: .clients.hosts,
               dc: [.dc1.vars.datacenter // ._meta.hostvars.vps1.datacenter, ._meta.hostvars.vps6.datacenter]}' "$tmp/inv.json")
  want='{"master":["vps1"],"workers":["vps2","vps3","vps4","vps5","vps6"],"clients":["vps1"],"dc":["fra","ams"]}'
  [[ $got == "$want" ]] && ok "$name parses: $got" || fail "$name parses to $got, want $want"
done

# --- 2. no master or no workers: the playbook fails ------------------------------
printf 'all:\n  hosts:\n    vps1: { ansible_host: 203.0.113.11 }\n' >"$tmp/no-groups.yml"
printf 'all:\n  children:\n    master: { hosts: { vps1: } }\n' >"$tmp/no-workers.yml"
for inv in no-groups no-workers; do
  ansible-playbook -i "$tmp/$inv.yml" "$src/deploy/ansible/site.yml" -e mr_deb=/nonexistent.deb \
    >"$tmp/$inv.log" 2>&1
  rc=$?
  line=$(grep -o 'the inventory has [^"]*' "$tmp/$inv.log" | head -n 1)
  if [[ $rc -ne 0 && -n $line ]]; then
    ok "site.yml with $inv: exit $rc, \"$line\""
  else
    fail "site.yml with $inv: exit $rc (want non-zero with 'the inventory has'): $(grep -E 'skipping|fatal|PLAY RECAP' "$tmp/$inv.log" | head -n 3)"
  fi
done

# --- 3. every task has a name ----------------------------------------------------
unnamed=$(python3 - "$src/deploy/ansible" <<'EOF'
import glob, sys, yaml
def walk(tasks, path):
    for t in tasks or []:
        if not isinstance(t, dict):
            continue
        if "name" not in t:
            yield "%s: %s" % (path, ", ".join(k for k in t if not k.startswith("when")))
        for k in ("block", "rescue", "always"):
            yield from walk(t.get(k), path)
for f in sorted(glob.glob(sys.argv[1] + "/roles/*/tasks/*.yml")):
    for line in walk(yaml.safe_load(open(f)), f[len(sys.argv[1]) + 1:]):
        print(line)
EOF
)
[[ -z $unnamed ]] && ok "every task of roles/mr has a name" || fail "tasks without a name: $unnamed"

if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP (not root): the firewall without /etc/protocols, postinst and postrm"
  finish
  exit
fi

# --- 4. the firewall without /etc/protocols --------------------------------------
cat >"$tmp/fw-inventory.yml" <<'EOF'
all:
  hosts:
    m1: { ansible_connection: local, mr_advertise_host: 10.1.1.1 }
    w1: { ansible_connection: local, mr_advertise_host: 10.1.1.2 }
  children:
    master: { hosts: { m1: {} } }
    workers: { hosts: { m1: {}, w1: {} } }
  vars: { mr_client_addresses: [192.0.2.0/24], mr_ssh_from: [], mr_master_port: 7000, mr_worker_port: 7100 }
EOF
ansible -i "$tmp/fw-inventory.yml" m1 -m ansible.builtin.template \
  -a "src=$src/deploy/ansible/roles/mr/templates/nftables.conf.j2 dest=$tmp/nftables.conf" \
  >"$tmp/fw.log" 2>&1 && [[ -s $tmp/nftables.conf ]] || fail "rendering nftables.conf.j2: $(tail -n 3 "$tmp/fw.log")"
# A network namespace of its own (nothing loaded here) and no /etc/protocols.
if out=$(unshare --net --mount sh -c 'mount --bind /dev/null /etc/protocols 2>/dev/null ||
           mount -t tmpfs none /etc/protocols 2>/dev/null; nft -c -f "$1"' - "$tmp/nftables.conf" 2>&1); then
  ok "the firewall loads without /etc/protocols (nft -c)"
else
  fail "the firewall does not load without /etc/protocols: $out"
fi

# --- 5. postinst and postrm in a throwaway overlay of this root -------------------
# in_overlay SCRIPT: SCRIPT (sh) chrooted into an overlay of / whose writes
# vanish; /run is a tmpfs with /run/systemd/system (as under systemd), and
# systemctl appends its arguments to /systemctl.calls.
in_overlay() {
  unshare --mount --fork sh -c '
    set -e
    t=$1; script=$2
    mount -t tmpfs t "$t/t"; mkdir "$t/t/u" "$t/t/w"
    mount -t overlay o -o "lowerdir=/,upperdir=$t/t/u,workdir=$t/t/w" "$t/m"
    mount -t tmpfs run "$t/m/run"; mkdir -p "$t/m/run/systemd/system"
    mount --bind /proc "$t/m/proc"; mount --bind /dev "$t/m/dev"
    for b in /usr/bin/systemctl /bin/systemctl; do
      [ -e "$t/m$b" ] && rm -f "$t/m$b"
      printf "#!/bin/sh\necho \"\$*\" >>/systemctl.calls\n" >"$t/m$b"; chmod 755 "$t/m$b"
    done
    cp "$script" "$t/m/run/script"; cp "$t/postinst" "$t/postrm" "$t/m/run/"
    chroot "$t/m" sh /run/script
  ' - "$tmp/ov" "$1"
}
mkdir -p "$tmp/ov/t" "$tmp/ov/m"
cp "$src/deploy/debian/postinst" "$src/deploy/debian/postrm" "$tmp/ov/"
cat >"$tmp/postinst-check.sh" <<EOF
set -e
sh /run/postinst configure 0.1.0 2>/dev/null
echo "without: \$(grep -c try-restart /systemctl.calls || true)"
: >/systemctl.calls
MR_NO_RESTART=1 sh /run/postinst configure 0.1.0 2>/dev/null
echo "MR_NO_RESTART=1: \$(grep -c try-restart /systemctl.calls || true)"
EOF
got=$(in_overlay "$tmp/postinst-check.sh" 2>&1 | tr '\n' ' ')
if [[ $got == "without: 1 MR_NO_RESTART=1: 0 " ]]; then
  ok "postinst on an upgrade: try-restart without MR_NO_RESTART, none with MR_NO_RESTART=1"
else
  fail "postinst on an upgrade (try-restart calls): '$got', want 'without: 1 MR_NO_RESTART=1: 0'"
fi
cat >"$tmp/postrm-check.sh" <<EOF
set -e
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /usr/lib/systemd/system/mr-worker@.service /etc/systemd/system/multi-user.target.wants/mr-worker@w1.service
ln -sf /usr/lib/systemd/system/mr-worker@.service /etc/systemd/system/multi-user.target.wants/mr-worker@w2.service
ln -sf /usr/lib/systemd/system/ssh.service /etc/systemd/system/multi-user.target.wants/mr-unrelated.service
rm -f /usr/lib/systemd/system/mr-worker@.service
sh /run/postrm remove 2>/dev/null
ls /etc/systemd/system/multi-user.target.wants | grep '^mr-' | tr '\n' ' '
EOF
got=$(in_overlay "$tmp/postrm-check.sh" 2>&1)
if [[ $got == "mr-unrelated.service " ]]; then
  ok "postrm remove: no dangling mr-worker@ wants link left (others kept)"
else
  fail "postrm remove left: '$got' (want only mr-unrelated.service)"
fi
finish
