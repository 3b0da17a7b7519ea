#!/usr/bin/env bash
# The bash completion of mrctl, generated from its command tree
# (`mrctl completion bash`), completes in a real bash with Debian's
# bash-completion: subcommands, options, job names, option values, files.
# Usage: mrctl_completion_test.sh MRCTL [SCRIPT]  (SCRIPT: a generated file
# to test instead of the binary's output, e.g. the one the build installs).
set -u
mrctl=$1
script=${2:-}
fails=0
if [[ ! -r /usr/share/bash-completion/bash_completion ]]; then
  echo "FAIL: bash-completion is not installed (deploy/install-deps.sh installs it)"
  exit 1
fi
# shellcheck disable=SC1091
source /usr/share/bash-completion/bash_completion
if [[ -n $script ]]; then
  # shellcheck disable=SC1090
  source "$script"
else
  eval "$("$mrctl" completion bash)"
fi

# Prints the completions bash offers at the end of the command line $1.
complete_line() {
  local line=$1
  COMP_LINE=$line
  COMP_POINT=${#line}
  read -ra COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _mrctl mrctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() {  # expect LINE WANT: the completions of LINE are exactly WANT (sorted)
  local got
  got=$(complete_line "$1")
  if [[ $got == "$2" ]]; then
    echo "ok   '$1' -> $got"
  else
    echo "FAIL '$1': got '$got', want '$2'"
    fails=$((fails + 1))
  fi
}

sorted() { tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//'; }

# The subcommands of `dfs`, read off `mrctl dfs --help`.
dfs_subs=$("$mrctl" dfs --help | awk '/^Subcommands:/ {on = 1; next} on && !NF {exit} on {print $1}' | sorted)
[[ $dfs_subs == *put* ]] || { echo "FAIL: no put in mrctl dfs --help"; fails=$((fails + 1)); }
expect "mrctl dfs " "$dfs_subs"
expect "mrctl dfs p" "put"
# The hdfs verbs and job wait (issue 14) are in the tree, so completed.
for verb in mv cp du tail setrep test getmerge; do
  [[ " $dfs_subs " == *" $verb "* ]] || { echo "FAIL: no $verb in mrctl dfs --help"; fails=$((fails + 1)); }
done
expect "mrctl dfs se" "setrep"
expect "mrctl dfs getm" "getmerge"
expect "mrctl job w" "wait"
expect "mrctl dfs du -" "--all --help --human --summary -a -h -s"
# Every job the binary knows (its registry), nothing else.
jobs=$("$mrctl" jobs --json | jq -r '.[].name' | sorted)
[[ $jobs == *wordcount* ]] || { echo "FAIL: mrctl jobs lists no wordcount"; fails=$((fails + 1)); }
expect "mrctl job run " "$jobs"
expect "mrctl job run word" "wordcount"
expect "mrctl --config c.toml job run gr" "grep"
expect "mrctl dfs put --rep" "--replication"
expect "mrctl gen " "dna text web"
# Values and positionals without word lists complete to file names.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/input-one.txt"
(cd "$tmp" && expect "mrctl job run wordcount -i inp" "input-one.txt") || fails=$((fails + 1))
(cd "$tmp" && expect "mrctl dfs put inp" "input-one.txt") || fails=$((fails + 1))
# The hidden completion command itself is not offered.
got=$(complete_line "mrctl co")
[[ $got == "" ]] && echo "ok   'mrctl co' -> (nothing)" || { echo "FAIL 'mrctl co' offers '$got'"; fails=$((fails + 1)); }

((fails == 0)) && echo PASS || echo "FAIL: $fails"
((fails == 0))
