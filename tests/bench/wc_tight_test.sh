#!/usr/bin/env bash
# bench/wc_tight, the baseline of the WordCount benchmark, must count exactly
# what an independent tr|sort|uniq pipeline counts: on generated text, on
# every ASCII whitespace byte, non-ASCII bytes, CRLF, a missing final newline,
# a word across the two-thread split point, and an empty file; with 1 and 2
# threads, splitting byte by byte and with --sse2 (64 bytes at a time; the
# 5000-byte word and the lines of gen.txt cross its 64-byte chunks). Registered in tests/CMakeLists.txt; a few seconds.
#
#   tests/bench/wc_tight_test.sh WC_TIGHT MRCTL
set -euo pipefail
WC_TIGHT="$1" MRCTL="$2"
export LC_ALL=C
WORK="$(mktemp -d /tmp/wc-tight-test-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# The oracle: every whitespace byte becomes '\n', runs squeezed.
shell_count() {
  tr -s ' \t\r\f\v' '\n' <"$1" | { grep -av '^$' || true; } | sort | uniq -c | awk '{print $2 "\t" $1}'
}

"$MRCTL" gen text "$WORK/gen.txt" --size 3M --seed 7
printf ' \t lead\f\vform\rfeed\r\nCRLF line\r\n caf\xc3\xa9 caf\xc3\xa9 \xff\xfe\x01 ctrl\x01\x02 a,b a,b. A a\n\n\n' \
  >"$WORK/edges.txt"
printf 'tail without newline\ttab' >>"$WORK/edges.txt"
{ printf 'a b '; head -c 5000 /dev/zero | tr '\0' 'x'; printf ' c d\n'; } >"$WORK/long.txt"
: >"$WORK/empty.txt"
cat "$WORK/edges.txt" "$WORK/gen.txt" "$WORK/edges.txt" >"$WORK/mixed.txt"

failed=0
for input in gen edges long empty mixed; do
  shell_count "$WORK/$input.txt" >"$WORK/$input.want"
  for t in 1 2 "1 --sse2" "2 --sse2"; do
    # shellcheck disable=SC2086 # "$t" is the thread count, maybe with --sse2
    "$WC_TIGHT" "$WORK/$input.txt" --threads $t --output "$WORK/$input.${t// /}" >"$WORK/$input.${t// /}.json"
    if cmp -s "$WORK/$input.want" "$WORK/$input.${t// /}"; then
      echo "PASS $input, $t thread(s): $(wc -l <"$WORK/$input.want") distinct words"
    else
      echo "FAIL $input, $t thread(s):"; diff "$WORK/$input.want" "$WORK/$input.${t// /}" | cut -c1-120 | head -10
      failed=1
    fi
  done
done
# Its JSON line counts the same bytes and words.
jq -e --argjson b "$(stat -c %s "$WORK/mixed.txt")" \
  --argjson w "$(awk -F'\t' '{n += $2} END {print n}' "$WORK/mixed.want")" \
  '.bytes == $b and .words == $w' "$WORK/mixed.2.json" >/dev/null ||
  { echo "FAIL JSON line: $(cat "$WORK/mixed.2.json")"; failed=1; }
exit "$failed"
