#!/usr/bin/env bash
# The oracle of the wordcount job, and the example of the convention
# tests/grade.sh follows (docs/writing-a-job.md, "Its oracle"): a job NAME
# may ship jobs/oracles/NAME.sh, which prints the job's output records for
# the input files given as arguments (`key<TAB>value` lines, any order;
# grade.sh sorts), computed without the runtime. It runs with LC_ALL=C;
# job parameters arrive as MR_PARAM_<name> variables.
#
# A word is a maximal run of bytes that are not ASCII whitespace (space,
# \t, \n, \v, \f, \r); jobs/wordcount.cc.
set -euo pipefail
export LC_ALL=C
for f in "$@"; do tr -s ' \t\n\v\f\r' '\n' <"$f"; echo; done | grep -v '^$' | sort | uniq -c |
  awk '{ printf "%s\t%s\n", $2, $1 }'
