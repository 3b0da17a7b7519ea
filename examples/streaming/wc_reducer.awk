# WordCount's reducer (and combiner) in awk: sums the counts of each word.
# Its input is sorted by word, so a word's lines are consecutive. Words are
# compared as strings ($1 "" ...): awk would compare "1250" and "1250." as
# the numbers they look like, and find them equal.
#   --reducer 'LC_ALL=C awk -f wc_reducer.awk' --file examples/streaming/wc_reducer.awk
BEGIN { FS = "\t" }
NR > 1 && ($1 "") != word { printf "%s\t%d\n", word, total; total = 0 }
{ word = $1 ""; total += $2 }
END { if (NR > 0) printf "%s\t%d\n", word, total }
