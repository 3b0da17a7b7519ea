#!/usr/bin/env bash
# The oracle of the bigram job (jobs/oracles/bigram.sh once copied in):
# prints `w1 w2<TAB>count` for every pair of consecutive words within a line
# of the files given, in any order (tests/grade.sh sorts). Lines end at \n,
# \r\n or a lone \r, as the job's line reader ends them; words are runs of
# bytes that are not ASCII whitespace (space, \t, \n, \v, \f, \r).
set -euo pipefail
export LC_ALL=C
for f in "$@"; do
  perl -pe 's/\r\n?/\n/g; $_ .= "\n" unless /\n\z/' "$f"
done | awk -F'[ \t\v\f\r]+' '{
  n = 0
  for (i = 1; i <= NF; i++) if ($i != "") w[++n] = $i
  for (i = 1; i < n; i++) c[w[i] " " w[i + 1]]++
} END { for (k in c) printf "%s\t%d\n", k, c[k] }'
