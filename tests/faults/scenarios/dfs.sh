# shellcheck shell=bash
# Fault scenarios of the DFS and the disk: corrupt-one, corrupt-two,
# disk-full, lease-restart. Sourced by tests/faults/scenario.sh; see
# docs/reliability.md.

# block_file WORKER BLOCK_ID: the path of that worker's block file, if any.
block_file() {
  find "$CL/data/$1/blocks" -name "$(printf 'blk_%016x' "$2")" 2>/dev/null | head -n 1
}

# flip FILE OFFSET: inverts the byte at OFFSET in place.
flip() {
  local b
  b="$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')"
  printf "\\$(printf '%03o' $(( b ^ 0xff )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# chunk_sum FILE OFFSET LENGTH: sha256 of those bytes.
chunk_sum() { dd if="$1" bs=65536 iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none | sha256sum | cut -c1-64; }

# last_copies_kept SRC BLOCK_OFFSET BLOCK_BYTES BLOCK_ID: true when every
# 64 KiB chunk of the block is still good in at least one block file on some
# worker's disk (a replica deleted while it was the last good copy of some
# bytes makes this false for good).
last_copies_kept() {
  local src="$1" off="$2" len="$3" id="$4" c n want f ok w
  n=$(( (len + 65535) / 65536 ))
  for ((c = 0; c < n; c++)); do
    want="$(chunk_sum "$src" $((off + c * 65536)) 65536)"
    ok=0
    for w in "$CL"/data/w*; do
      f="$(block_file "$(basename "$w")" "$id")"
      [[ -n "$f" ]] && [[ "$(chunk_sum "$f" $((c * 65536)) 65536)" == "$want" ]] && { ok=1; break; }
    done
    (( ok )) || { say "no good copy of chunk $c of block $id is left on any disk"; return 1; }
  done
}

# replicas_good DFSPATH INDEX SRC REPLICATION: the master lists REPLICATION
# replicas of the block and each one's file on disk holds the source bytes.
replicas_good() {
  local path="$1" idx="$2" src="$3" want_n="$4" stat id off len nodes w f
  stat="$(mrctl dfs stat --json "$path")" || return 1
  id="$(jq ".blocks[$idx].id" <<<"$stat")"; off="$(jq ".blocks[$idx].offset" <<<"$stat")"
  len="$(jq ".blocks[$idx].bytes" <<<"$stat")"
  mapfile -t nodes < <(jq -r ".blocks[$idx].replicas[]" <<<"$stat")
  [[ ${#nodes[@]} -eq $want_n ]] || return 1
  for w in "${nodes[@]}"; do
    f="$(block_file "$w" "$id")"
    [[ -n "$f" && "$(chunk_sum "$f" 0 "$len")" == "$(chunk_sum "$src" "$off" "$len")" ]] || return 1
  done
}

# Corrupts chunk 2 of one replica (corrupt-one), and chunk 10 of the other
# too (corrupt-two), of the same block; reads and a job stay exact, no last
# good copy is deleted, the block ends up with two good replicas.
corrupt_scenario() {
  local replicas_bad="$1" bs=$((1 << 20)) idx stat id off len a b fa fb i
  cluster_up --workers 4 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  gen text "$WORK/text.txt" "$(sized 4M 32M)" 21
  put "$WORK/text.txt" /in/text.txt -r 2
  stat="$(mrctl dfs stat --json /in/text.txt)"
  idx=1
  id="$(jq ".blocks[$idx].id" <<<"$stat")"; off="$(jq ".blocks[$idx].offset" <<<"$stat")"
  len="$(jq ".blocks[$idx].bytes" <<<"$stat")"
  read -r a b < <(jq -r ".blocks[$idx].replicas | join(\" \")" <<<"$stat")
  fa="$(block_file "$a" "$id")"; fb="$(block_file "$b" "$id")"
  [[ -f "$fa" && -f "$fb" ]] || die "block $id: replica files on $a and $b not found"
  flip "$fa" $((2 * 65536 + 1234)); say "flipped a byte in chunk 2 of block $id on $a (read first)"
  if (( replicas_bad == 2 )); then
    flip "$fb" $((10 * 65536 + 4321)); say "flipped a byte in chunk 10 of block $id on $b"
  fi
  for ((i = 1; i <= $(sized 3 10); i++)); do
    if [[ "$(mrctl dfs cat /in/text.txt 2>>"$WORK/cat.err" | sha256sum)" != "$(sha256sum <"$WORK/text.txt")" ]]; then
      fail "read $i of /in/text.txt was not exact: $(tail -n 1 "$WORK/cat.err")"
    fi
    last_copies_kept "$WORK/text.txt" "$off" "$len" "$id" ||
      fail "after read $i a replica was deleted while it held the last good copy of some bytes"
    sleep 0.5
  done
  submit wc wordcount /in/text.txt "$WORK/text.txt" /out/wc 2 $bs
  wait_jobs
  last_copies_kept "$WORK/text.txt" "$off" "$len" "$id" ||
    fail "after the job a replica was deleted while it held the last good copy of some bytes"
  wait_until "$(sized 30 60)" replicas_good /in/text.txt $idx "$WORK/text.txt" 2 ||
    fail "block $id was not re-replicated to 2 good replicas: $(mrctl dfs stat /in/text.txt | sed -n "$((idx + 3))p")"
  check_job_records
}
scenario_corrupt_one() { corrupt_scenario 1; }
scenario_corrupt_two() { corrupt_scenario 2; }

# A worker whose data dir is a small tmpfs that fills while jobs run: jobs
# complete exactly, every task within jobs.max_attempts, logs stay small.
scenario_disk_full() {
  local bs=262144 mnt avail f max_attempts=4 log_limit=$((2 << 20)) log
  cluster_up --workers 3 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  (( $(id -u) == 0 )) || die "disk-full needs root to mount a tmpfs"
  mnt="$CL/data/w3"
  lc stop w3
  rm -rf "$mnt"; mkdir -p "$mnt"
  mount -t tmpfs -o size="$(sized 48M 96M)" faults-tmpfs "$mnt" || die "mount -t tmpfs on $mnt failed"
  MOUNTS+=("$mnt"); say "w3's data dir is a $(sized 48M 96M) tmpfs"
  lc start w3
  wait_until 10 all_live 3 || die "w3 did not come back on its tmpfs"
  gen text "$WORK/text.txt" "$(sized 8M 48M)" 31
  put "$WORK/text.txt" /in/text.txt -b $bs
  oracle sort "$WORK/text.txt" 3 $bs >/dev/null
  oracle wordcount "$WORK/text.txt" 3 $bs >/dev/null
  oracle sort "$WORK/text.txt" 2 $bs >/dev/null
  # Leave 2 MiB: the jobs' map outputs, shuffle and reduce output fill the rest.
  avail=$(( $(df -B1 --output=avail "$mnt" | tail -n 1) - (2 << 20) ))
  (( avail > 0 )) && fallocate -l "$avail" "$mnt/ballast"
  say "w3 has $(df -h --output=avail "$mnt" | tail -n 1 | tr -d ' ') free"
  submit sort sort /in/text.txt "$WORK/text.txt" /out/sort 3 $bs
  submit wc wordcount /in/text.txt "$WORK/text.txt" /out/wc 3 $bs
  submit sort2 sort /in/text.txt "$WORK/text.txt" /out/sort2 2 $bs
  wait_jobs
  for f in "$WORK"/jobs/*.json; do
    jq -e . "$f" >/dev/null 2>&1 || continue
    local worst
    worst="$(jq '[.map_tasks[]?.attempts, .reduce_tasks[]?.attempts] | max // 0' "$f")"
    (( worst <= max_attempts )) || fail "$(basename "$f" .json): a task took $worst attempts (jobs.max_attempts is $max_attempts)"
  done
  for log in "$CL"/logs/*.log; do
    (( $(stat -c %s "$log") < log_limit )) ||
      fail "$(basename "$log") grew to $(stat -c %s "$log") bytes (limit $log_limit)"
  done
  say "w3 free at the end: $(df -h --output=avail "$mnt" | tail -n 1 | tr -d ' ')"
  check_job_records
}

# Put A paused (SIGSTOP), the master killed and restarted, put B paused, both
# resumed: each put ends with exactly its own bytes or fails with its file
# absent; never mixed bytes.
#
# The cluster runs with rpc_timeout_ms = 4000 so that a pause of 5 s outlasts
# it, as a long stall of a client would the default 30 s: the workers drop
# the paused puts' pipeline connections, so on resuming each put asks the
# master for a new pipeline (dfs.AddBlock) with the lease id it holds. With
# 1 MiB blocks, a put paused after reading 1.5 MiB is most likely in the middle
# of streaming its second block. Each
# round starts with a fresh master, so A's lease and B's lease get the same
# number unless lease ids survive a restart.
scenario_lease_restart() {
  local bs=$((1 << 20)) rounds round pa pb rca rcb n put
  rounds=$(sized 2 6)
  cluster_up --workers 3 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  lc down >/dev/null
  sed -i 's/^\[cluster\]$/[cluster]\nrpc_timeout_ms = 4000/' "$CL/cluster.toml"
  for n in master w1 w2 w3; do lc start "$n"; done
  wait_until 20 all_live 3 || die "the cluster did not come back with rpc_timeout_ms = 4000"
  gen text "$WORK/a.txt" "$(sized 16M 48M)" 41
  gen web "$WORK/b.txt" "$(sized 16M 48M)" 42
  put=("$BUILD/tools/mrctl" --config "$CL/cluster.toml" dfs put -b $bs)
  for ((round = 1; round <= rounds; round++)); do
    restart_master
    "${put[@]}" "$WORK/a.txt" "/a/$round.txt" 2>"$WORK/a$round.err" &
pa=$!; BG_PIDS+=("$pa")
    pause_after_read "$pa" $((3 << 19)) || die "put A ended before it could be paused"
    say "put A (pid $pa) paused"
    restart_master
    "${put[@]}" "$WORK/b.txt" "/b/$round.txt" 2>"$WORK/b$round.err" &
    pb=$!; BG_PIDS+=($pb)
    pause_after_read "$pb" $((3 << 19)) || die "put B ended before it could be paused"
    say "put B (pid $pb) paused"
    sleep 5
    kill -CONT "$pa" "$pb"; say "both resumed"
    rca=0; wait "$pa" || rca=$?
    rcb=0; wait "$pb" || rcb=$?
    say "put A exited $rca: $(tail -n 1 "$WORK/a$round.err")"
    say "put B exited $rcb: $(tail -n 1 "$WORK/b$round.err")"
    whole_or_absent "/a/$round.txt" "$WORK/a.txt" "$rca" "$WORK/b.txt"
    whole_or_absent "/b/$round.txt" "$WORK/b.txt" "$rcb" "$WORK/a.txt"
    # B's lease was made by the master that is still running, seconds ago,
    # far from its expiry (60 s): only another client using the same lease id
    # (A abandoning "its" lease) can have ended it.
    if (( rcb != 0 )) && grep -q 'no file under construction with lease' "$WORK/b$round.err"; then
      fail "put B lost its lease to put A (same lease id after the restart): $(tail -n 1 "$WORK/b$round.err")"
    fi
  done
}
restart_master() {
  lc kill master; lc start master; say "master SIGKILLed and restarted"
  wait_until 20 all_live 3 || fail "workers did not re-register with the restarted master"
}

# pause_after_read PID BYTES: SIGSTOPs the process as soon as it has read
# more than BYTES (its rchar; polled without forking, so it catches a fast
# put). False if it ended or never got there within 20 s.
pause_after_read() {
  local pid="$1" want="$2" until=$((SECONDS + 20)) k v
  while (( SECONDS < until )) && kill -0 "$pid" 2>/dev/null; do
    while read -r k v; do
      if [[ $k == rchar: ]] && (( v > want )); then kill -STOP "$pid"; return 0; fi
    done <"/proc/$pid/io" 2>/dev/null
  done
  return 1
}

# whole_or_absent DFSPATH LOCAL RC OTHER: exit 0 means the file is LOCAL's
# bytes exactly; a failure means no file. Blocks of OTHER's bytes in it are
# named (the lease mix-up).
whole_or_absent() {
  local path="$1" src="$2" rc="$3" other="$4" got mixed
  if (( rc == 0 )); then
    expect "$path" "$src"
    mrctl dfs cat "$path" >"$WORK/got" 2>/dev/null
    if ! cmp -s "$WORK/got" "$src"; then
      mixed="$(grep -cxFf <(split -b 65536 --filter=sha256sum "$other") \
                 <(split -b 65536 --filter=sha256sum "$WORK/got"))"
      fail "put $path succeeded but the file is not its bytes ($(stat -c %s "$WORK/got") bytes, want $(stat -c %s "$src"); $mixed blocks of the other put's file)"
    fi
  elif mrctl dfs stat "$path" >/dev/null 2>&1; then
    mrctl dfs cat "$path" >"$WORK/got" 2>/dev/null
    mixed="$(grep -cxFf <(split -b 65536 --filter=sha256sum "$other") \
               <(split -b 65536 --filter=sha256sum "$WORK/got"))"
    fail "put $path failed (exit $rc) but the file exists ($(stat -c %s "$WORK/got") bytes; $mixed blocks of the other put's file)"
  fi
}
