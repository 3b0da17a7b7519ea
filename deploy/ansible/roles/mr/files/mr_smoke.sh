#!/bin/bash
# The smoke job of site.yml, run on the master host: WordCount over generated
# text, its output compared with tr | sort | uniq -c of the same file.
#   mr_smoke.sh SIZE
set -euo pipefail
export LC_ALL=C
size="${1:-2M}"
cfg=(--config /etc/mr/cluster.toml)
tag="smoke-$(date +%s)-$$"
work=$(mktemp -d)
trap 'rm -rf "$work"; mrctl "${cfg[@]}" dfs rm -r "/smoke/$tag" >/dev/null 2>&1 || true' EXIT
# Each step's stderr (progress bars drawn with \r on a terminal: Ansible's
# ssh gives the script one) goes to a file, shown only when the step fails.
step() {  # step WHAT CMD...
  local what=$1
  shift
  if ! "$@" 2>"$work/stderr"; then
    echo "smoke: $what failed: $(tr '\r' '\n' <"$work/stderr" | grep -v '^ *$' | tail -n 3)" >&2
    exit 1
  fi
}
step "mrctl gen text" mrctl gen text "$work/in.txt" --size "$size" --seed 11 >/dev/null
step "dfs put" mrctl "${cfg[@]}" dfs put "$work/in.txt" "/smoke/$tag/in.txt" >/dev/null
step "job run wordcount" mrctl "${cfg[@]}" job run wordcount -i "/smoke/$tag/in.txt" -o "/smoke/$tag/out" \
  -r 2 --wait >/dev/null
step "dfs cat" mrctl "${cfg[@]}" dfs cat "/smoke/$tag/out" >"$work/got.unsorted"
sort "$work/got.unsorted" >"$work/got"
tr ' \t\n\r\f\v' '[\n*]' <"$work/in.txt" | awk 'length' | sort | uniq -c |
  sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/' >"$work/want"
if ! cmp -s "$work/want" "$work/got"; then
  echo "smoke: WordCount output differs from tr | sort | uniq -c ($(wc -l <"$work/want") lines expected, $(wc -l <"$work/got") got)" >&2
  diff "$work/want" "$work/got" | head -n 5 >&2 || true
  exit 1
fi
echo "smoke: WordCount of $size of text = tr | sort | uniq -c ($(wc -l <"$work/got") words)"
