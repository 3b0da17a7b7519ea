#!/usr/bin/env bash
# Usage errors of mrctl, mr-master and mr-worker (issue 14): exactly one
# line on stderr, starting with the program's name, naming the fix, and
# exit code 2; nothing on stdout. No cluster is needed: every case fails
# before a connection is made.
# Usage: mrctl_errors_test.sh MRCTL MR_MASTER MR_WORKER
set -u
mrctl=$1 master=$2 worker=$3
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect CODE REGEX PROGRAM ARGS...: exit CODE, one stderr line matching
# the extended REGEX (anchored at its start), empty stdout.
expect() {
  local code=$1 regex=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc == "$code" && $lines == 1 && ! -s $tmp/out ]] && grep -Eq "^$regex" "$tmp/err"; then
    echo "ok   ${*##*/}: $(cat "$tmp/err")"
  else
    echo "FAIL $*: exit $rc (want $code), $lines stderr lines, stdout $(wc -c <"$tmp/out") bytes:"
    sed 's/^/     /' "$tmp/err"
    fails=$((fails + 1))
  fi
}

cd "$tmp" || exit 1  # no .mr/cluster.toml above
export MR_CONFIG=
expect 2 "mrctl: no such command 'dfs frob' \(dfs commands: put, get, getmerge, cat, ls, rm, mkdir, stat, mv, cp, du, tail, setrep, test\)$" "$mrctl" dfs frob
expect 2 "mrctl: no such command 'frob' \(commands: dfs, " "$mrctl" frob
expect 2 "mrctl: no such command 'job frob' \(job commands: run, list, show, wait, logs, kill" "$mrctl" job frob
expect 2 "mrctl: dfs: a command is required \(put, get, .*\); see mrctl dfs --help$" "$mrctl" dfs
expect 2 "mrctl: a command is required \(dfs, .*\); see mrctl --help$" "$mrctl"
expect 2 "mrctl: job show: ID is required; see mrctl job show --help$" "$mrctl" job show
expect 2 "mrctl: dfs ls: the following argument was not expected: --bogus; see mrctl dfs ls --help$" "$mrctl" dfs ls --bogus /
expect 2 "mrctl: dfs test wants exactly one of -e, -d, -f$" "$mrctl" dfs test /x
expect 2 "mrctl: \\\$MR_SECRET is unset: with --master and no --config" env -u MR_SECRET "$mrctl" --master 127.0.0.1:1 dfs ls /
expect 2 "mrctl: no cluster file: pass --config FILE" "$mrctl" dfs ls /
expect 2 "mr-master: --config is required; see mr-master --help$" "$master"
expect 2 "mr-master: the following argument was not expected: --bogus; see mr-master --help$" "$master" -c x.toml --bogus
expect 2 "mr-worker: --config is required; see mr-worker --help$" "$worker"
expect 2 "mr-worker: --threads: Value 0 not in range" "$worker" -c x.toml --id w1 --threads 0
# --help and --version still exit 0 with their text on stdout.
for p in "$mrctl" "$master" "$worker"; do
  if ! "$p" --help >/dev/null 2>&1 || ! "$p" --version >/dev/null 2>&1; then
    echo "FAIL $p --help or --version does not exit 0"
    fails=$((fails + 1))
  fi
done
((fails == 0)) && echo PASS || echo "FAIL: $fails"
((fails == 0))
