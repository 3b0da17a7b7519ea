#!/usr/bin/env bash
# Bad input at start-up, on the real binaries: a secret file that is missing,
# readable by others, or group-readable but not owned by root makes mr-master
# and mr-worker exit 2 with exactly one line on stderr naming the file (and
# the chmod that fixes it). Under systemd ($JOURNAL_STREAM names stderr) that
# line carries the error level "<3>", and a failure after logging started
# (the master's address in use) is still one line, not two.
# Usage: startup_errors_test.sh MR_MASTER MR_WORKER
set -u
master_bin=$1
worker_bin=$2
# shellcheck source=tests/deploy/lib.sh
. "$(dirname "$0")/lib.sh"
scratch_dir startup-errors

port=$((20000 + RANDOM % 12000))
# cluster.toml with [cluster] secret_file = $1.
write_config() {
  cat >"$tmp/cluster.toml" <<TOML
[cluster]
secret_file = "$1"
[master]
address = "127.0.0.1:$port"
data_dir = "$tmp/master"
[[worker]]
id = "w1"
address = "127.0.0.1:$((port + 1))"
datacenter = "dc1"
data_dir = "$tmp/w1"
TOML
}

# expect_one_line NAME WANT_EXIT PATTERN CMD...: CMD exits WANT_EXIT and its
# stderr is exactly one line matching PATTERN (an extended regex).
expect_one_line() {
  local name=$1 want=$2 pattern=$3
  shift 3
  timeout 20 "$@" >/dev/null 2>"$tmp/stderr" </dev/null  # 124: it started after all
  local rc=$? lines
  lines=$(wc -l <"$tmp/stderr")
  if [[ $rc == "$want" && $lines == 1 ]] && grep -qE -- "$pattern" "$tmp/stderr"; then
    echo "ok   $name: exit $rc, $(cat "$tmp/stderr")"
  else
    fail "$name: exit $rc (want $want), $lines lines (want 1): $(cat "$tmp/stderr")"
  fi
}

secret=$tmp/secret
echo "a-secret-of-enough-length-for-the-test" >"$secret"
write_config "$secret"
for bin in "$master_bin" "$worker_bin"; do
  name=$(basename "$bin")
  args=(--config "$tmp/cluster.toml")
  [[ $name == mr-worker ]] && args+=(--id w1)
  chmod 0644 "$secret"
  expect_one_line "$name, secret 0644" 2 "^$name: .*'$secret' is accessible by others \(mode 0644\); run: chmod o-rwx $secret$" \
    "$bin" "${args[@]}"
  chmod 0640 "$secret"
  if ((EUID == 0)); then
    chown 65534 "$secret"
    expect_one_line "$name, secret 0640 not owned by root" 2 "^$name: .*not owned by root.*chmod g-rwx $secret" \
      "$bin" "${args[@]}"
    chown 0 "$secret"
  fi
  mv "$secret" "$secret.away"
  expect_one_line "$name, secret missing" 2 "^$name: .*'$secret': No such file or directory$" \
    "$bin" "${args[@]}"
  mv "$secret.away" "$secret"
  # Under the journal: the same one line, with the error level.
  chmod 0604 "$secret"
  : >"$tmp/stderr"
  expect_one_line "$name, secret 0604, under the journal" 2 "^<3>$name: .*accessible by others" \
    env "JOURNAL_STREAM=$(stat -c %d:%i "$tmp/stderr")" "$bin" "${args[@]}"
  chmod 0600 "$secret"
done

# A failure after logging started, under the journal: the master's address
# is taken (by another master), so the second one cannot listen.
"$master_bin" --config "$tmp/cluster.toml" 2>"$tmp/first.stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$tmp/master/master.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on" "$tmp/master/master.log" 2>/dev/null || fail "the first master did not start"
write_config "$secret"
sed -i "s|data_dir = \"$tmp/master\"|data_dir = \"$tmp/master2\"|" "$tmp/cluster.toml"
: >"$tmp/stderr"
expect_one_line "mr-master, address in use, under the journal" 1 "^<3>" \
  env "JOURNAL_STREAM=$(stat -c %d:%i "$tmp/stderr")" "$master_bin" --config "$tmp/cluster.toml"

finish
