#!/usr/bin/env python3
"""WordCount's mapper for `mrctl job run streaming` (docs/user-jobs.md).

Reads the lines of one input split on stdin and writes `word<TAB>count`
lines, one per distinct word of the split. A word is a maximal run of bytes
that are not ASCII whitespace, exactly as the built-in wordcount splits
(bytes.split() with no argument splits on space, \\t, \\n, \\r, \\v, \\f).
Counting in a dictionary before writing is "in-mapper combining": far fewer
lines go through the pipe, the sort and the reducer than `word<TAB>1` each.
"""
import collections
import sys

counts = collections.Counter()
for line in sys.stdin.buffer:
    counts.update(line.split())
out = sys.stdout.buffer
for word, n in counts.items():
    out.write(b"%s\t%d\n" % (word, n))
