# shellcheck shell=bash
# Emulated datacenters on one machine, with network namespaces (sourced, not run).
#
#   source deploy/lib/netns.sh
#   netns_init STATE_DIR [BASE]   # BASE default "mrnet"; the prefix is BASE<pid>- (unique per run)
#   trap netns_teardown EXIT      # safe on failure, and when called twice
#   netns_fabric K                # K datacenters: a bridge each, one router between them
#   netns_add_host DC NAME        # a "VPS": namespace PREFIX-NAME, eth0 on DC's bridge
#   netns_addr NAME               # its address, 10.<NETNS_NET>.<DC>.<n>
#   netns_ns NAME                 # its namespace name (for ip netns exec / ip -n)
#   netns_router_ns; netns_router_iface DC   # where to capture DC's inter-datacenter link
#   netns_switch_ns; netns_switch_iface DC   # its other end, DC's bridge port to the router
#   netns_subnet DC               # 10.<NETNS_NET>.<DC>.0/24
#   netns_teardown                # ends every process in our namespaces, deletes them
#   netns_save; netns_load STATE_DIR          # the layout, for another process
#   netns_hosts                   # host names, one a line
#
# Layout. Everything lives in namespaces named PREFIX-*; nothing is added to
# the caller's namespace (no interface, route or firewall rule), so the host is
# untouched and concurrent runs cannot collide: interface names are private to
# their namespace and only the namespace names carry the prefix.
#
#   PREFIX-sw    one bridge per datacenter (brD) and the switch ends of every veth
#   PREFIX-rt    the router: one veth per datacenter, dcD = 10.N.D.254/24, forwarding on.
#                Every packet between two datacenters crosses dcD of both: that
#                veth is the "inter-datacenter link" a capture watches.
#   PREFIX-NAME  a VPS: eth0 = 10.N.D.n/24 (n = 1, 2, ... in the order added to D),
#                default route via 10.N.D.254, lo up.
#
# NETNS_NET (default 213) is the second octet. Offloads (checksum, TSO, GSO,
# GRO) are off on every veth, so captures see the segments as sent and no
# checksum is left to a device that does not exist.
#
# Every namespace is written to STATE_DIR/netns.objects before it is created,
# so a run that fails halfway still removes exactly what it made. Teardown
# ends the processes inside our namespaces (ip netns pids: they can only be
# ours) with TERM, then KILL after 5 s, then deletes the namespaces, which
# deletes their veths and bridges. netns_stale BASE lists namespaces left by
# runs whose process is gone.

NETNS_NET="${NETNS_NET:-213}"
NETNS_PREFIX=""
NETNS_STATE=""
declare -gA NETNS_HOST_ADDR=() NETNS_HOST_DC=()
declare -gA NETNS_DC_COUNT=()
NETNS_DCS=0
NETNS_PORT_SEQ=0

netns_log() { echo "netns: $*" >&2; }

# netns_init STATE_DIR [BASE]: where the record goes, and the prefix.
netns_init() {
  NETNS_STATE="$1"
  local base="${2:-mrnet}"
  NETNS_PREFIX="${base}$$-"
  mkdir -p "$NETNS_STATE"
  : >>"$NETNS_STATE/netns.objects"
  [[ $(id -u) -eq 0 ]] || { netns_log "needs root (ip netns)"; return 1; }
}

netns_ns() { echo "${NETNS_PREFIX}$1"; }
netns_router_ns() { echo "${NETNS_PREFIX}rt"; }
netns_router_iface() { echo "dc$1"; }
netns_switch_ns() { echo "${NETNS_PREFIX}sw"; }
netns_switch_iface() { echo "r$1"; }  # in the switch: the bridge port towards the router
netns_subnet() { echo "10.$NETNS_NET.$1.0/24"; }
netns_addr() { echo "${NETNS_HOST_ADDR[$1]:?netns: no host $1}"; }
netns_dc_of() { echo "${NETNS_HOST_DC[$1]:?netns: no host $1}"; }
netns_exec() { local n="$1"; shift; ip netns exec "$(netns_ns "$n")" "$@"; }

_netns_create() {  # _netns_create NS: record, then create, lo up
  echo "netns $1" >>"$NETNS_STATE/netns.objects"
  ip netns add "$1"
  ip -n "$1" link set lo up
}

_netns_offloads_off() {  # NS IFACE
  ip netns exec "$1" ethtool -K "$2" rx off tx off tso off gso off gro off >/dev/null 2>&1 || true
}

# _netns_wire NS_A IF_A NS_B IF_B: a veth pair between two namespaces, both up.
_netns_wire() {
  ip -n "$1" link add "$2" type veth peer name "$4" netns "$3"
  _netns_offloads_off "$1" "$2"
  _netns_offloads_off "$3" "$4"
  ip -n "$1" link set "$2" up
  ip -n "$3" link set "$4" up
}

# netns_fabric K: the switch with K bridges and the router with one veth per
# datacenter. Datacenters are numbered 1..K.
netns_fabric() {
  local k="$1" d sw rt
  sw="${NETNS_PREFIX}sw" rt="$(netns_router_ns)"
  _netns_create "$sw"
  _netns_create "$rt"
  ip netns exec "$rt" sysctl -qw net.ipv4.ip_forward=1
  for ((d = 1; d <= k; d++)); do
    ip -n "$sw" link add "br$d" type bridge
    ip -n "$sw" link set "br$d" up
    _netns_wire "$rt" "dc$d" "$sw" "r$d"
    ip -n "$sw" link set "r$d" master "br$d"
    ip -n "$rt" addr add "10.$NETNS_NET.$d.254/24" dev "dc$d"
    NETNS_DC_COUNT[$d]=0
  done
  NETNS_DCS="$k"
}

# netns_add_host DC NAME: one VPS in datacenter DC (1..K).
netns_add_host() {
  local d="$1" name="$2" ns n port
  [[ "$d" =~ ^[0-9]+$ && "$d" -ge 1 && "$d" -le "$NETNS_DCS" ]] || { netns_log "no datacenter '$d'"; return 1; }
  [[ "$name" =~ ^[a-z0-9][a-z0-9-]*$ ]] || { netns_log "bad host name '$name'"; return 1; }
  [[ -z "${NETNS_HOST_ADDR[$name]:-}" ]] || { netns_log "host '$name' exists"; return 1; }
  ns="$(netns_ns "$name")"
  n=$(( NETNS_DC_COUNT[$d] + 1 ))
  [[ $n -le 250 ]] || { netns_log "datacenter $d is full"; return 1; }
  NETNS_DC_COUNT[$d]=$n
  NETNS_PORT_SEQ=$(( NETNS_PORT_SEQ + 1 ))
  port="p$NETNS_PORT_SEQ"
  _netns_create "$ns"
  _netns_wire "$ns" eth0 "${NETNS_PREFIX}sw" "$port"
  ip -n "${NETNS_PREFIX}sw" link set "$port" master "br$d"
  ip -n "$ns" addr add "10.$NETNS_NET.$d.$n/24" dev eth0
  ip -n "$ns" route add default via "10.$NETNS_NET.$d.254"
  NETNS_HOST_ADDR[$name]="10.$NETNS_NET.$d.$n"
  NETNS_HOST_DC[$name]="$d"
}

# netns_teardown: ends every process in the namespaces this run recorded, then
# deletes them (and so their veths and bridges). Idempotent; never fails.
netns_teardown() { ( set +e; _netns_teardown ); return 0; }
_netns_teardown() {
  local f="${NETNS_STATE:-}/netns.objects" ns pids left=() i
  [[ -n "${NETNS_STATE:-}" && -f "$f" ]] || return 0
  mapfile -t left < <(awk '$1 == "netns" { print $2 }' "$f" | tac)
  for ns in "${left[@]}"; do
    pids="$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    # shellcheck disable=SC2086 # $pids is a list
    [[ -n "${pids// /}" ]] && kill -TERM $pids 2>/dev/null
  done
  for i in $(seq 1 80); do  # TERM, 5 s, KILL, up to 3 s more
    pids=""
    for ns in "${left[@]}"; do pids+="$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"; done
    [[ -z "${pids// /}" ]] && break
    # shellcheck disable=SC2086 # $pids is a list
    [[ $i -eq 50 ]] && kill -KILL $pids 2>/dev/null
    sleep 0.1
  done
  for ns in "${left[@]}"; do
    if ip netns list | awk '{ print $1 }' | grep -qxF "$ns"; then
      ip netns del "$ns" 2>/dev/null || netns_log "could not delete namespace $ns"
    fi
  done
  : >"$f"
  return 0
}

# netns_stale BASE: namespaces named BASE<pid>-* whose run (pid) is gone.
netns_stale() {
  local base="$1" ns pid
  ip netns list 2>/dev/null | awk '{ print $1 }' | while read -r ns; do
    [[ "$ns" =~ ^${base}([0-9]+)- ]] || continue
    pid="${BASH_REMATCH[1]}"
    kill -0 "$pid" 2>/dev/null || echo "$ns"
  done
}

# netns_save: writes the layout (prefix, second octet, datacenters, hosts) to
# STATE_DIR/netns.state, so a later process can netns_load it (deploy/testbed.sh
# builds the fabric in `up` and uses it in `exec`, `rate`, `down`...).
netns_save() {
  local f="$NETNS_STATE/netns.state" n
  {
    echo "prefix $NETNS_PREFIX"
    echo "net $NETNS_NET"
    echo "dcs $NETNS_DCS"
    for n in "${!NETNS_HOST_ADDR[@]}"; do echo "host $n ${NETNS_HOST_DC[$n]} ${NETNS_HOST_ADDR[$n]}"; done
  } >"$f.tmp"
  mv "$f.tmp" "$f"
}

# netns_load STATE_DIR: the layout netns_save wrote, for netns_ns, netns_addr,
# netns_exec and netns_teardown in another process. Fails when there is none.
netns_load() {
  local f="$1/netns.state" key a b c
  NETNS_STATE="$1"
  [[ -f "$f" ]] || { netns_log "no layout in $1"; return 1; }
  NETNS_HOST_ADDR=() NETNS_HOST_DC=()
  while read -r key a b c; do
    case "$key" in
      prefix) NETNS_PREFIX="$a" ;;
      net) NETNS_NET="$a" ;;
      dcs) NETNS_DCS="$a" ;;
      host) NETNS_HOST_DC[$a]="$b"; NETNS_HOST_ADDR[$a]="$c" ;;
    esac
  done <"$f"
  [[ -n "$NETNS_PREFIX" ]] || { netns_log "no prefix in $f"; return 1; }
}

# netns_hosts: the host names added (or loaded), one a line, sorted.
netns_hosts() { printf '%s\n' "${!NETNS_HOST_ADDR[@]}" | sort -V; }
