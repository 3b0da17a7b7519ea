#!/usr/bin/env bash
# ctest's checks of tests/grade.sh (issue 16):
#   grade_test.sh BUILD job       grade.sh job wordcount --quick: exit 0, every check listed
#   grade_test.sh BUILD policy    grade.sh policy fifo --quick: exit 0, every check listed
#   grade_test.sh BUILD unregistered
#                                 grade.sh job|policy NAME for a name not in the registry:
#                                 exit 2 at once, one line naming it and where to register it
set -u
build=$1 what=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
grade() { MR_BUILD_DIR="$build" bash "$root/tests/grade.sh" "$@" --no-build; }
failed=0
expect_rows() {  # expect_rows OUTPUT TITLE...: each check ran and passed
  local out="$1" t
  shift
  for t in "$@"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no row '$t'"; failed=1; continue; }
    grep -F -- "$t" <<<"$out" | grep -q '| PASS' || { echo "FAIL: row '$t' did not pass"; failed=1; }
  done
}
case "$what" in
  job)
    out="$(grade job wordcount --quick 2>&1)"; rc=$?
    echo "$out"
    (( rc == 0 )) || { echo "FAIL: grade.sh job wordcount exited $rc"; failed=1; }
    expect_rows "$out" registered "oracle vs mr-local" "local cluster up" \
      "cluster: 1 reducer(s), combiner=true" "cluster: 3 reducer(s), combiner=true" \
      "cluster: 1 reducer(s), combiner=false" "cluster: 3 reducer(s), combiner=false" \
      "w1 killed mid-job"
    # wordcount ships an oracle (jobs/oracles/wordcount.sh): it must have been used.
    grep -q "output = mr-local's and the oracle's" <<<"$out" ||
      { echo "FAIL: the cluster runs were not compared with jobs/oracles/wordcount.sh"; failed=1; }
    grep -q 'grade: job wordcount: PASS (8 checks ran)' <<<"$out" || { echo "FAIL: summary"; failed=1; }
    ;;
  policy)
    out="$(grade policy fifo --quick 2>&1)"; rc=$?
    echo "$out"
    (( rc == 0 )) || { echo "FAIL: grade.sh policy fifo exited $rc"; failed=1; }
    expect_rows "$out" registered "conformance suite" purity "local cluster up" \
      "live mixed workload" "crash run" "mr-sim joss-small" "mr-sim pandas-uniform"
    grep -q 'fifo (graded)' <<<"$out" || { echo "FAIL: no mr-sim table row for fifo"; failed=1; }
    ;;
  unregistered)
    for kind in job policy; do
      out="$(grade "$kind" no-such-name 2>&1)"; rc=$?
      echo "$out"
      (( rc == 2 )) || { echo "FAIL: grade.sh $kind no-such-name exited $rc, want 2"; failed=1; }
      [[ "$(wc -l <<<"$out")" == 1 ]] || { echo "FAIL: more than one line"; failed=1; }
      grep -q "grade: no $kind named 'no-such-name' is registered (.*wordcount\|.*fifo" <<<"$out" ||
        { echo "FAIL: the line does not name the $kind and the registered ones"; failed=1; }
      grep -q "registry.cc" <<<"$out" || { echo "FAIL: the line does not say where to register"; failed=1; }
    done
    out="$(MR_BUILD_DIR="$build" bash "$root/tests/grade.sh" lab nope 2>&1)"; rc=$?
    (( rc == 2 )) || { echo "FAIL: a bad kind exited $rc, want 2"; failed=1; }
    ;;
  *) echo "grade_test: unknown check '$what'" >&2; exit 2 ;;
esac
(( failed == 0 )) && echo "PASS: grade_test $what"
exit "$failed"
