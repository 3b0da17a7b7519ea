# shellcheck shell=bash
# Inter-datacenter links of the deploy/lib/netns.sh fabric: rates (htb) and
# the kernel's byte counters per ordered datacenter pair (nft). Sourced after
# netns.sh, once netns_fabric (or netns_load) has run.
#
#   shaping_rate_ok RATE                 # a tc rate: 20mbit, 1gbit, 1.5gbit, 500kbit
#   shaping_htb_up K RATE [A:B=RATE...]  # htb on every uplink, both directions
#   shaping_htb_rate K RATE [A:B=RATE...]  # the same, changed live (tc class change)
#   shaping_htb_show K                   # one line per class: dir dc from rate ceil bytes packets dropped
#   shaping_nft_up K MASTER_ADDR CLIENT_ADDR  # the counters, in the router
#   shaping_counters_json K              # {"pairs":[{from,to,bytes,...}]} on stdout
#
# Rates. Datacenter D's uplink is the veth between its bridge and the router.
# Traffic leaving D is shaped on the bridge's end (switch namespace, rD
# egress), traffic entering D on the router's end (router namespace, dcD
# egress): one rate per direction, both RATE. On dcD, traffic is classified by
# source subnet into one class per other datacenter A (classid 1:(0x100+A)),
# children of the uplink class 1:1 (rate and ceil RATE). A pair A:B given a
# rate gets rate = ceil = min(pair rate, RATE); the others borrow up to RATE.
# The children's guaranteed rates sum to at most RATE (htb lets a child below
# its rate send without asking its parent), so the uplink never exceeds RATE.
# Unclassified packets (ARP, the router's own) go to 1:99.
#
# Counters. The router's forward chain (table ip mrtb) counts every packet
# between two datacenter subnets, by ordered pair and by kind: "control"
# when one end is the master (heartbeats, RPCs to the master), "client" when
# one end is the client (put, cat, mrctl's input sampling), else "worker"
# (map input read remotely, shuffle, output replication, prefetch: a job's
# INT). nft counts IP packets (headers included, no Ethernet header); htb
# counts what it sends, Ethernet header included.

SHAPING_TABLE=mrtb

shaping_rate_ok() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]]; }

_shaping_bits() {  # RATE -> bit/s (integer)
  awk -v r="$1" 'BEGIN {
    n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
    m = (u == "kbit") ? 1e3 : (u == "mbit") ? 1e6 : (u == "gbit") ? 1e9 : 1
    printf "%d\n", n * m }'
}

_shaping_burst() {  # bit/s -> bytes: 1 ms of the rate, at least 10 full frames
  local b=$(( $1 / 8000 ))
  (( b < 15140 )) && b=15140
  echo "$b"
}

_shaping_pair_rate() {  # FROM TO RATE PAIRS... -> bit/s of class FROM->TO ("" = none given)
  local a="$1" b="$2" rate="$3" p; shift 3
  for p in "$@"; do
    if [[ "$p" == "dc$a:dc$b="* || "$p" == "$a:$b="* ]]; then _shaping_bits "${p#*=}"; return; fi
  done
}

# shaping_pairs_ok K PAIRS...: every pair names two different datacenters of
# 1..K (dcA:dcB=RATE or A:B=RATE) and a valid rate; one line to stderr if not.
shaping_pairs_ok() {
  local k="$1" p a b r; shift
  for p in "$@"; do
    a=0 b=0 r=""
    if [[ "$p" =~ ^(dc)?([0-9]+):(dc)?([0-9]+)=(.+)$ ]]; then
      a="${BASH_REMATCH[2]}" b="${BASH_REMATCH[4]}" r="${BASH_REMATCH[5]}"
    fi
    if ! shaping_rate_ok "$r" || (( a < 1 || a > k || b < 1 || b > k || a == b )); then
      echo "shaping: bad pair rate '$p' (want dcA:dcB=RATE, A != B in 1..$k, RATE like 20mbit)" >&2
      return 1
    fi
  done
}

# _shaping_classes VERB K RATE PAIRS...: VERB = add | change, every class.
_shaping_classes() {
  local verb="$1" k="$2" rate="$3" bits share d a pr r c sw rt; shift 3
  bits="$(_shaping_bits "$rate")" share=$(( bits / k ))
  sw="$(netns_switch_ns)" rt="$(netns_router_ns)"
  for ((d = 1; d <= k; d++)); do
    tc -n "$sw" class "$verb" dev "$(netns_switch_iface "$d")" parent 1: classid 1:1 htb \
      rate "$bits" ceil "$bits" burst "$(_shaping_burst "$bits")" cburst "$(_shaping_burst "$bits")" quantum 1514
    tc -n "$rt" class "$verb" dev "$(netns_router_iface "$d")" parent 1: classid 1:1 htb \
      rate "$bits" ceil "$bits" burst "$(_shaping_burst "$bits")" cburst "$(_shaping_burst "$bits")" quantum 1514
    for ((a = 1; a <= k; a++)); do
      [[ $a -eq $d ]] && continue
      pr="$(_shaping_pair_rate "$a" "$d" "$rate" "$@")"
      if [[ -n "$pr" ]]; then
        c=$(( pr < bits ? pr : bits )) r=$(( c < share ? c : share ))
      else
        c="$bits" r="$share"
      fi
      tc -n "$rt" class "$verb" dev "$(netns_router_iface "$d")" parent 1:1 classid "1:$(printf '%x' $((0x100 + a)))" \
        htb rate "$r" ceil "$c" burst "$(_shaping_burst "$c")" cburst "$(_shaping_burst "$c")" quantum 1514
    done
    tc -n "$rt" class "$verb" dev "$(netns_router_iface "$d")" parent 1:1 classid 1:99 htb \
      rate "$share" ceil "$bits" burst "$(_shaping_burst "$bits")" quantum 1514
  done
}

# shaping_htb_up K RATE [PAIRS...]: the qdiscs, classes and filters. Called
# once by deploy/testbed.sh up, after netns_fabric K.
shaping_htb_up() {
  local k="$1" d a sw rt; shift
  sw="$(netns_switch_ns)" rt="$(netns_router_ns)"
  for ((d = 1; d <= k; d++)); do
    tc -n "$sw" qdisc replace dev "$(netns_switch_iface "$d")" root handle 1: htb default 1
    tc -n "$rt" qdisc replace dev "$(netns_router_iface "$d")" root handle 1: htb default 99
  done
  _shaping_classes add "$k" "$@"
  for ((d = 1; d <= k; d++)); do
    for ((a = 1; a <= k; a++)); do
      [[ $a -eq $d ]] && continue
      tc -n "$rt" filter add dev "$(netns_router_iface "$d")" parent 1: protocol ip prio 1 u32 \
        match ip src "$(netns_subnet "$a")" flowid "1:$(printf '%x' $((0x100 + a)))"
    done
  done
}

# shaping_htb_rate K RATE [PAIRS...]: new rates on the running fabric (deploy/
# testbed.sh rate). The whole setting is replaced: a pair not given returns
# to the uplink rate.
shaping_htb_rate() { _shaping_classes change "$@"; }

# shaping_htb_show K: "up|down DC FROM RATE CEIL BYTES PACKETS DROPPED" per class
# (FROM is - for an uplink class; rates as tc prints them).
shaping_htb_show() {
  local k="$1" d
  for ((d = 1; d <= k; d++)); do
    tc -n "$(netns_switch_ns)" -s class show dev "$(netns_switch_iface "$d")" |
      _shaping_parse_classes up "$d"
    tc -n "$(netns_router_ns)" -s class show dev "$(netns_router_iface "$d")" |
      _shaping_parse_classes down "$d"
  done
}
_shaping_parse_classes() {  # DIR DC < tc -s class show
  awk -v dir="$1" -v dc="$2" '
    function hex(s,   i, n) { n = 0; for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
    $1 == "class" && $2 == "htb" {
      id = $3; rate = ""; ceil = ""
      for (i = 4; i < NF; i++) { if ($i == "rate") rate = $(i + 1); if ($i == "ceil") ceil = $(i + 1) }
      from = "-"
      if (id ~ /^1:1[0-9a-f][0-9a-f]$/) from = hex(substr(id, 3)) - 256
      else if (id != "1:1") id = ""
      next }
    $1 == "Sent" && id != "" { d = $7; gsub(/[^0-9]/, "", d); print dir, dc, from, rate, ceil, $2, $4, d; id = "" }'
}

# shaping_nft_up K MASTER_ADDR CLIENT_ADDR: the counters in the router's
# forward chain, named KIND_A_B (kind w, c, m; from datacenter A to B).
shaping_nft_up() {
  local k="$1" master="$2" client="$3" a b kind chain
  {
    echo "table ip $SHAPING_TABLE {"
    for kind in w c m; do
      for ((a = 1; a <= k; a++)); do for ((b = 1; b <= k; b++)); do
        [[ $a -ne $b ]] && echo "  counter ${kind}_${a}_${b} { }"
      done; done
    done
    echo "  chain forward {"
    echo "    type filter hook forward priority filter; policy accept;"
    echo "    ip saddr $master goto control"
    echo "    ip daddr $master goto control"
    echo "    ip saddr $client goto client"
    echo "    ip daddr $client goto client"
    echo "    goto worker"
    echo "  }"
    for chain in worker:w client:c control:m; do
      echo "  chain ${chain%%:*} {"
      for ((a = 1; a <= k; a++)); do for ((b = 1; b <= k; b++)); do
        [[ $a -ne $b ]] &&
          echo "    ip saddr $(netns_subnet "$a") ip daddr $(netns_subnet "$b") counter name ${chain##*:}_${a}_${b}"
      done; done
      echo "  }"
    done
    echo "}"
  } | ip netns exec "$(netns_router_ns)" nft -f -
}

# shaping_counters_json K: per ordered pair, the nft bytes and packets by kind
# and the htb class bytes of the pair (on the destination's downlink):
# {"pairs":[{"from":"dc1","to":"dc2","bytes":..,"packets":..,"worker_bytes":..,
#   "worker_packets":..,"client_bytes":..,"client_packets":..,
#   "control_bytes":..,"control_packets":..,"htb_bytes":..,"htb_packets":..,
#   "htb_dropped":..}]} (htb_dropped: packets the pair's class dropped, queue full)
# bytes/packets = worker + client (all but control).
shaping_counters_json() {
  local k="$1" nftj htb
  nftj="$(ip netns exec "$(netns_router_ns)" nft -j list counters table ip "$SHAPING_TABLE")" || return 1
  htb="$(shaping_htb_show "$k" | awk '$1 == "down" && $3 != "-" {
    printf "{\"from\":\"dc%s\",\"to\":\"dc%s\",\"bytes\":%s,\"packets\":%s,\"dropped\":%s}\n", $3, $2, $6, $7, $8 }' | jq -s .)"
  jq -n --argjson nft "$nftj" --argjson htb "$htb" --argjson k "$k" '
    ([$nft.nftables[] | select(.counter) | .counter | {key: .name, value: .}] | from_entries) as $c
    | {pairs: [range(1; $k + 1) as $a | range(1; $k + 1) as $b | select($a != $b)
        | ($c["w_\($a)_\($b)"]) as $w | ($c["c_\($a)_\($b)"]) as $cl | ($c["m_\($a)_\($b)"]) as $m
        | ([$htb[] | select(.from == "dc\($a)" and .to == "dc\($b)")][0] // {bytes: 0, packets: 0, dropped: 0}) as $h
        | {from: "dc\($a)", to: "dc\($b)",
           bytes: ($w.bytes + $cl.bytes), packets: ($w.packets + $cl.packets),
           worker_bytes: $w.bytes, worker_packets: $w.packets,
           client_bytes: $cl.bytes, client_packets: $cl.packets,
           control_bytes: $m.bytes, control_packets: $m.packets,
           htb_bytes: $h.bytes, htb_packets: $h.packets, htb_dropped: $h.dropped}]}'
}
