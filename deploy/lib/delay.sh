# shellcheck shell=bash
# Round trips between the datacenters of the deploy/lib/netns.sh fabric,
# without netem: tools/delayline.cc (mr-delayline) in the router holds each
# forwarded packet for its pair's one-way delay (sourced after netns.sh, once
# netns_fabric or netns_load has run; docs/testbed.md, "Round trips").
#
#   delay_rtt_ok RTT                      # 0..2000 ms with a unit: 40ms, 1.5ms, 0.2s, 500us
#   delay_pairs_ok K RTT PAIRS...         # dcA:dcB=RTT each; one line to stderr if not
#   delay_pair_us K RTT A B PAIRS...      # one-way delay A -> B in µs (half the pair's round trip)
#   delay_up K RTT RATE BIN PIDFILE LOG PAIRS...   # rules + the delay line; waits until it is bound
#   delay_show                            # "QUEUE held dropped user_dropped" per bound queue
#   delay_queue A B                       # the queue number of pair A -> B
#
# A round trip is symmetric: `--pair-rtt dcA:dcB=80ms` sets the round trip
# between A and B, 40 ms each way (giving B:A too is allowed when it agrees).
# Pairs not given get RTT. A pair at 0 gets no rule.
#
# Path of a packet from A to B: A's bridge, rA egress (htb: leaving A), the
# router's forward hook, where an iptables rule (table filter, chain FORWARD;
# nft has no `queue` statement on this kernel, iptables' NFQUEUE target works
# through nft_compat) sends it to queue (A << 8 | B) with --queue-bypass, so
# that no delay line bound means no delay rather than no traffic; mr-delayline
# accepts it one-way later; then dcB egress (htb: entering B). The nft
# counters (table mrtb) count each packet once either way.
#
# The kernel holds the delayed packets; each queue's maxlen is sized for four
# times rate x one-way delay in 1500-byte packets (at least 2048): a `rate`
# raised later past four times the one given to `up` may overflow it (drops
# show in delay_show and `testbed.sh status`).

delay_rtt_ok() {
  [[ "$1" =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] && (( $(_delay_us "$1") <= 2000000 ))
}

_delay_us() {  # RTT -> µs (integer)
  awk -v r="$1" 'BEGIN { n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
    printf "%d\n", n * ((u == "s") ? 1e6 : (u == "ms") ? 1e3 : 1) + 0.5 }'
}

delay_queue() { echo $(( ($1 << 8) | $2 )); }

# _delay_pair_rtt A B PAIRS...: the RTT given for {A, B} in either order, or "".
_delay_pair_rtt() {
  local a="$1" b="$2" p; shift 2
  for p in "$@"; do
    if [[ "$p" =~ ^(dc)?([0-9]+):(dc)?([0-9]+)=(.+)$ ]]; then
      local x="${BASH_REMATCH[2]}" y="${BASH_REMATCH[4]}"
      if [[ ($x == "$a" && $y == "$b") || ($x == "$b" && $y == "$a") ]]; then echo "${BASH_REMATCH[5]}"; return; fi
    fi
  done
}

delay_pairs_ok() {
  local k="$1" rtt="$2" p a b r s seen=(); shift 2
  delay_rtt_ok "$rtt" || { echo "delay: bad --rtt '$rtt' (want 0..2000ms with a unit: 40ms, 1.5ms, 0.2s)" >&2; return 1; }
  for p in "$@"; do
    a=0 b=0 r=""
    if [[ "$p" =~ ^(dc)?([0-9]+):(dc)?([0-9]+)=(.+)$ ]]; then
      a="${BASH_REMATCH[2]}" b="${BASH_REMATCH[4]}" r="${BASH_REMATCH[5]}"
    fi
    if ! delay_rtt_ok "$r" || (( 10#$a < 1 || 10#$a > k || 10#$b < 1 || 10#$b > k || 10#$a == 10#$b )); then
      echo "delay: bad pair round trip '$p' (want dcA:dcB=RTT, A != B in 1..$k, RTT 0..2000ms like 80ms)" >&2
      return 1
    fi
    for s in "${seen[@]}"; do
      if [[ "${s%=*}" == "$((10#$a)):$((10#$b))" || "${s%=*}" == "$((10#$b)):$((10#$a))" ]] &&
         (( $(_delay_us "${s#*=}") != $(_delay_us "$r") )); then
        echo "delay: --pair-rtt '$p' contradicts an earlier one for the same pair (a round trip has one value)" >&2
        return 1
      fi
    done
    seen+=("$((10#$a)):$((10#$b))=$r")
  done
}

delay_pair_us() {
  local k="$1" rtt="$2" a="$3" b="$4" r; shift 4
  r="$(_delay_pair_rtt "$a" "$b" "$@")"
  echo $(( $(_delay_us "${r:-$rtt}") / 2 ))
}

# delay_up K RTT RATE BIN PIDFILE LOG PAIRS...: the iptables rules in the
# router and BIN (mr-delayline) started there, its pid in PIDFILE (which is on
# its command line: deploy/testbed.sh signals only a process naming it).
# Waits until every queue is bound (5 s at most). Does nothing when every
# pair's round trip is 0. Called once by deploy/testbed.sh up.
delay_up() {
  local k="$1" rtt="$2" rate="$3" bin="$4" pidf="$5" log="$6" a b us max=0 rules="" args=() rt maxlen
  shift 6
  rt="$(netns_router_ns)"
  for ((a = 1; a <= k; a++)); do for ((b = 1; b <= k; b++)); do
    (( a == b )) && continue
    us="$(delay_pair_us "$k" "$rtt" "$a" "$b" "$@")"
    (( us > 0 )) || continue
    (( us > max )) && max=$us
    args+=("$(delay_queue "$a" "$b")=${us}us")
    rules+="-A FORWARD -s $(netns_subnet "$a") -d $(netns_subnet "$b") -j NFQUEUE --queue-num $(delay_queue "$a" "$b") --queue-bypass"$'\n'
  done; done
  (( ${#args[@]} > 0 )) || return 0
  maxlen="$(awk -v r="$(_shaping_bits "$rate")" -v us="$max" 'BEGIN {
    n = int(4 * r * us / 1e6 / 12000) + 1; if (n < 2048) n = 2048; if (n > 16777216) n = 16777216; print n }')"
  ip netns exec "$rt" "$bin" --maxlen "$maxlen" --pid-file "$pidf" "${args[@]}" >>"$log" 2>&1 </dev/null &
  echo $! >"$pidf"  # ip netns exec execs it: the same pid
  _delay_wait_bound "${#args[@]}" "$!" "$log" || return 1
  printf '*filter\n%sCOMMIT\n' "$rules" | ip netns exec "$rt" iptables-restore --noflush
}

_delay_wait_bound() {  # N PID LOG: until N queues are bound, while PID lives
  local n="$1" pid="$2" log="$3"
  for _ in $(seq 1 100); do
    (( $(delay_show | awk '$2 != 0' | wc -l) >= n )) && return 0
    kill -0 "$pid" 2>/dev/null || { echo "delay: mr-delayline exited: $(tail -n 1 "$log")" >&2; return 1; }
    sleep 0.05
  done
  echo "delay: mr-delayline bound fewer than $n queues in 5 s (see $log)" >&2
  return 1
}

# delay_show: the router's bound queues as the kernel counts them:
# "QUEUE PORTID HELD DROPPED USER_DROPPED" (DROPPED: the queue was full;
# USER_DROPPED: the delay line's socket was).
delay_show() {
  ip netns exec "$(netns_router_ns)" cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null |
    awk '{ print $1, $2, $3, $6, $7 }'
}
