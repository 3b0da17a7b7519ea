#!/usr/bin/env python3
"""WordCount's reducer (and combiner) for `mrctl job run streaming`.

Reads `word<TAB>count` lines sorted by word on stdin and writes
`word<TAB>total` once per word: the built-in wordcount's output format.
"""
import sys

out = sys.stdout.buffer
word, total = None, 0
for line in sys.stdin.buffer:
    key, _, value = line.rstrip(b"\n").partition(b"\t")
    if key != word:
        if word is not None:
            out.write(b"%s\t%d\n" % (word, total))
        word, total = key, 0
    total += int(value)
if word is not None:
    out.write(b"%s\t%d\n" % (word, total))
