# WordCount's mapper in awk, for `mrctl job run streaming` (docs/user-jobs.md):
#   --mapper 'LC_ALL=C awk -f wc_mapper.awk' --file examples/streaming/wc_mapper.awk
# Counts the words of its split in an array (in-mapper combining) and writes
# `word<TAB>count` once per word at the end. Words are split on the bytes the
# built-in wordcount splits on (space, \t, \f, \v; the line ends are gone);
# LC_ALL=C makes every other byte, UTF-8 included, a word byte.
BEGIN { FS = "[ \t\f\v]+" }
{
  for (i = 1; i <= NF; i++) if ($i != "") count[$i ""]++
}
END {
  for (w in count) printf "%s\t%d\n", w, count[w]
}
