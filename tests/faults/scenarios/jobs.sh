# shellcheck shell=bash
# Fault scenarios around running jobs: worker-kills, master-restart,
# holders-down. Sourced by tests/faults/scenario.sh; see
# docs/reliability.md for what each one checks and why.

# The job mix, one per line: JOB INPUT(text|dna|book) REDUCERS [K=V].
job_mix() {
  cat <<'EOF'
wordcount text 3
sort text 2
permu dna 2
sequencecount text 2
grep text 1 pattern=[A-Z][a-z]+ing
invertedindex text 2
wordcount dna 1
sort dna 3
EOF
}

# put_inputs BLOCK_SIZE TEXT_SIZE DNA_SIZE: generated text and DNA (and a
# real book when ../shared/data exists) in /in/, replication 2.
put_inputs() {
  gen text "$WORK/text.txt" "$2" 11
  gen dna "$WORK/dna.fa" "$3" 12
  put "$WORK/text.txt" /in/text.txt -b "$1"
  put "$WORK/dna.fa" /in/dna.fa -b "$1"
  local b
  b="$(book)"
  if [[ -n "$b" ]]; then
    cp "$b" "$WORK/book.txt"
    put "$WORK/book.txt" /in/book.txt -b "$1"
    say "real book: $b"
  fi
}

# submit_mix N FIRST BLOCK_SIZE: submits N jobs of the mix (cycling), named
# j<FIRST>..., output /out/j<i>. A book run replaces every fourth wordcount.
submit_mix() {
  local n="$1" first="$2" bs="$3" i job in r p mix
  mapfile -t mix < <(job_mix)
  local pass
  # Pass 1 computes the oracles (cached), so that pass 2 submits all at once.
  for pass in oracle submit; do
    for ((i = first; i < first + n; i++)); do
      read -r job in r p <<<"${mix[$(( (i - 1) % ${#mix[@]} ))]}"
      if [[ $job == wordcount && $in == text && -f "$WORK/book.txt" && $(( i % 4 )) == 1 ]]; then in=book; fi
      local ext=txt; [[ $in == dna ]] && ext=fa
      # shellcheck disable=SC2086
      if [[ $pass == oracle ]]; then
        oracle "$job" "$WORK/$in.$ext" "$r" "$bs" $p >/dev/null
      else
        submit "j$i" "$job" "/in/$in.$ext" "$WORK/$in.$ext" "/out/j$i" "$r" "$bs" $p
      fi
    done
  done
}

# Random worker SIGKILLs and restarts while jobs run; every output exact.
# A machine fast enough to end a wave of jobs before min_kills kills gets
# another wave (at most 3 in all), so the kills always land on running jobs.
scenario_worker_kills() {
  local bs=262144 jobs kills=0 min_kills round victim wave
  jobs=$(sized 8 24); min_kills=$(sized 3 10)
  cluster_up --workers 4 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  put_inputs $bs "$(sized 10M 48M)" "$(sized 3M 12M)"
  for ((wave = 0; wave < 3 && kills < min_kills; wave++)); do
    (( wave == 0 )) || say "the jobs ended after $kills kills: another wave of $jobs"
    submit_mix "$jobs" $((1 + wave * jobs)) $bs
    for ((round = 0; round < 200 && SECONDS < DEADLINE - 30; round++)); do
      [[ "$(running_clients)" -gt 0 ]] || break
      victim="w$((1 + RANDOM % 4))"
      lc kill "$victim"; kills=$((kills + 1)); say "SIGKILL $victim"
      sleep "0.$((2 + RANDOM % 8))"
      (( RANDOM % 4 == 0 )) && sleep 1  # sometimes long enough to be declared dead
      lc start "$victim" || fail "could not restart $victim"
      sleep "0.$((2 + RANDOM % 6))"
    done
  done
  say "$kills workers killed"
  (( kills >= min_kills )) || fail "only $kills kills before the jobs ended (want >= $min_kills)"
  wait_jobs
  wait_until 20 all_live 4 || fail "not every worker is live again"
  check_job_records
}

# check_job_records: every job the clients submitted has exactly one record,
# in state succeeded; no temporary job files are left in the namespace.
check_job_records() {
  local list out n state
  list="$(mrctl job list --json)" || { fail "job list failed"; return; }
  for f in "$WORK"/jobs/*.expect; do
    out="$(cut -f1 "$f")"
    n="$(jq --arg o "$out" '[.[] | select(.output == $o)] | length' <<<"$list")"
    state="$(jq -r --arg o "$out" '[.[] | select(.output == $o) | .state] | join(",")' <<<"$list")"
    [[ "$n" == 1 ]] || fail "$out: $n job records in the history (want 1)"
    [[ "$state" == succeeded ]] || fail "$out: job state '$state' (want succeeded)"
  done
  wait_until 10 jobs_dir_empty || fail "/.mr/jobs still holds: $(mrctl dfs ls /.mr/jobs | tr '\n' ' ')"
}
jobs_dir_empty() { [[ "$(mrctl dfs ls --json /.mr/jobs 2>/dev/null | jq length 2>/dev/null)" =~ ^(0|)$ ]]; }

# The master SIGKILLed and restarted mid-workload: jobs recovered, clients
# report their results, no DFS file lost or half-visible, one record per job.
scenario_master_restart() {
  local bs=262144 rounds round put_pid put_rc
  rounds=$(sized 1 3)
  cluster_up --workers 4 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  put_inputs $bs "$(sized 10M 48M)" "$(sized 3M 12M)"
  submit_mix "$(sized 4 12)" 1 $bs
  gen text "$WORK/late.txt" "$(sized 24M 96M)" 13
  for ((round = 1; round <= rounds; round++)); do
    # A put in flight at the kill: it must succeed whole or leave nothing.
    "${MRCTL[@]}" dfs put -b $bs "$WORK/late.txt" "/late/$round.txt" 2>"$WORK/late$round.err" &
    put_pid=$!; BG_PIDS+=($put_pid)
    wait_until 20 some_map_done || say "no map finished before the kill"
    sleep 0.$((RANDOM % 3))
    lc kill master; say "SIGKILL master (round $round)"
    sleep 1
    lc start master; say "master restarted"
    put_rc=0; wait "$put_pid" || put_rc=$?
    check_put_whole_or_absent "/late/$round.txt" "$WORK/late.txt" "$put_rc"
    (( round < rounds )) && sleep $(sized 3 5)
  done
  wait_jobs
  wait_until 20 all_live 4 || fail "not every worker is live again"
  check_job_records
}
some_map_done() {
  [[ "$(mrctl job list --json 2>/dev/null | jq '[.[] | .maps_done] | add // 0')" -gt 0 ]]
}

# check_put_whole_or_absent DFSPATH LOCAL RC: a put that exited 0 must have
# put exactly LOCAL's bytes; one that failed must have left no file.
check_put_whole_or_absent() {
  if (( $3 == 0 )); then
    expect "$1" "$2"; say "put $1 succeeded"
  elif mrctl dfs stat "$1" >/dev/null 2>&1; then
    fail "put $1 failed (exit $3: $(tail -n 1 "$WORK/late$round.err" 2>/dev/null)) but the file exists"
  else
    say "put $1 failed cleanly (exit $3), no file"
  fi
}

# Both holders of many blocks down for a few seconds while jobs run
# (SIGKILL, and in the full size also SIGSTOP): every job completes exactly.
# A sort is running when the outage starts; a wordcount and a grep (one
# reducer: no client-side sampling) are submitted during it.
scenario_holders_down() {
  local bs=262144 outage how pair h1 h2 rounds round
  outage=$(sized 3 6); rounds=$(sized 1 2)
  cluster_up --workers 4 --datacenters 2 --block-size $bs --replication 2 --heartbeat-ms 100
  put_inputs $bs "$(sized 12M 48M)" "$(sized 1M 4M)"
  for ((round = 1; round <= rounds; round++)); do
    how=kill; (( round == 2 )) && how=stop
    oracle sort "$WORK/text.txt" 2 $bs >/dev/null
    oracle wordcount "$WORK/text.txt" 1 $bs >/dev/null
    oracle grep "$WORK/text.txt" 1 $bs 'pattern=[A-Z][a-z]+ing' >/dev/null
    submit "sort$round" sort /in/text.txt "$WORK/text.txt" "/out/sort$round" 2 $bs
    wait_until 30 job_started "/out/sort$round" || say "sort$round has not started a map yet"
    # The pair of workers holding both replicas of the most blocks.
    pair="$(mrctl dfs stat --json /in/text.txt |
            jq -r '[.blocks[].replicas | sort | join(" ")] | group_by(.) | max_by(length) | .[0]')"
    read -r h1 h2 <<<"$pair"
    [[ -n "$h1" && -n "$h2" ]] || die "no pair of holders found"
    say "outage of $h1 and $h2, both holders of $(mrctl dfs stat --json /in/text.txt |
         jq --arg p "$pair" '[.blocks[].replicas | sort | join(" ") | select(. == $p)] | length') blocks, for ${outage}s ($how)"
    if [[ $how == kill ]]; then lc kill "$h1"; lc kill "$h2"; else stop_daemon "$h1"; stop_daemon "$h2"; fi
    submit "wc$round" wordcount /in/text.txt "$WORK/text.txt" "/out/wc$round" 1 $bs
    submit "grep$round" grep /in/text.txt "$WORK/text.txt" "/out/grep$round" 1 $bs 'pattern=[A-Z][a-z]+ing'
    sleep "$outage"
    if [[ $how == kill ]]; then lc start "$h1"; lc start "$h2"; else cont_daemon "$h1"; cont_daemon "$h2"; fi
    say "$h1 and $h2 back"
    wait_jobs
    wait_until 20 all_live 4 || fail "not every worker is live again"
  done
  check_job_records
}
# job_started OUTDIR: the job writing OUTDIR has finished at least one map.
job_started() {
  [[ "$(mrctl job list --json 2>/dev/null | jq --arg o "$1" '[.[] | select(.output == $o) | .maps_done] | add // 0')" -gt 0 ]]
}
