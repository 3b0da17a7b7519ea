#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts a local cluster of 6
# workers in 2 datacenters (8 MiB blocks, replication 2), puts web, text and
# DNA inputs in the DFS, runs WordCount (text), Grep (web), Sort (text, 3
# reducers) and Permu (DNA), checks every output against a shell pipeline,
# prints one table of the jobs' locality, traffic and filtering figures, and
# stops the cluster.
#
#   ./deploy/demo.sh [--data DIR] [--size 24M] [--placement hdfs|random|spread|skewed]
#                    [--scheduler NAME]
#
# Inputs are generated (--size bytes of each kind, seed 42) unless --data DIR
# is given (e.g. ../shared/data): then every file under DIR except *.md goes
# in, and each job reads the files whose DFS input-type tag is its kind; a
# kind DIR lacks is generated. A failed job or a wrong output exits 1 and
# keeps the cluster's logs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${MR_BUILD_DIR:-$ROOT/build}"
data="" size=24M placement=hdfs scheduler=fifo
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) data="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --placement) placement="$2"; shift 2 ;;
    --scheduler) scheduler="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z "$data" || -d "$data" ]] || { echo "demo: --data '$data' is not a directory" >&2; exit 2; }
export LC_ALL=C  # bytewise sort and byte-oriented tr, grep, awk and sed: as the jobs see bytes

# A line per phase: on a fresh machine the packages and the build take minutes.
phase() { echo "demo: $*"; }
phase "1/4 the Debian packages the build needs (deploy/install-deps.sh; installs only what is missing)"
"$ROOT/deploy/install-deps.sh"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  phase "    configuring the build in $BUILD (cmake)"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
phase "2/4 building mr-master, mr-worker and mrctl in $BUILD (ninja; a few minutes the first time)"
if [[ -t 1 ]]; then
  ninja -C "$BUILD" mr-master mr-worker mrctl  # its one-line progress on a terminal
else
  ninja -C "$BUILD" mr-master mr-worker mrctl >/dev/null
fi
phase "3/4 starting a local cluster: 6 workers in 2 datacenters (deploy/local-cluster.sh)"

WORK="$(mktemp -d /tmp/mr-demo-XXXXXX)"
CLUSTER="$WORK/cluster"
cleanup() {
  local rc=$?
  "$ROOT/deploy/local-cluster.sh" down --dir "$CLUSTER" >/dev/null 2>&1 || true
  if [[ $rc -eq 0 ]]; then rm -rf "$WORK"; else echo "demo: logs kept in $CLUSTER/logs" >&2; fi
}
trap cleanup EXIT
die() { echo "demo: $*" >&2; exit 1; }
MRCTL=("$BUILD/tools/mrctl" --config "$CLUSTER/cluster.toml")

"$ROOT/deploy/local-cluster.sh" up --workers 6 --datacenters 2 --block-size $((8 << 20)) \
  --replication 2 --placement "$placement" --scheduler "$scheduler" --dir "$CLUSTER"

phase "4/4 inputs into the DFS, then the jobs, each output checked against a shell pipeline"
# ---- inputs: put each file, check it reads back byte-identical, note its tag
paths=()                # DFS paths, in put order
declare -A local_of=()  # DFS path -> local file
declare -A kind_of=()   # DFS path -> input-type tag (web, text or dna)
put() {  # put LOCAL DFSPATH
  "${MRCTL[@]}" dfs mkdir -p "$(dirname "$2")"
  "${MRCTL[@]}" dfs put "$1" "$2"
  [[ "$("${MRCTL[@]}" dfs cat "$2" | sha256sum)" == "$(sha256sum <"$1")" ]] ||
    die "$2 read back different bytes"
  paths+=("$2")
  local_of[$2]="$1"
  kind_of[$2]="$("${MRCTL[@]}" dfs stat --json "$2" | jq -r .input_type)"
}
of_kind() {  # of_kind KIND: the DFS paths tagged KIND, one a line
  local p
  for p in "${paths[@]}"; do
    if [[ ${kind_of[$p]} == "$1" ]]; then printf '%s\n' "$p"; fi
  done
}
if [[ -n "$data" ]]; then
  data="$(realpath "$data")"
  while IFS= read -r f; do put "$f" "/demo/in/${f#"$data"/}"; done \
    < <(find "$data" -type f ! -name '*.md' ! -name '.*' | sort)
fi
for kind in web text dna; do
  [[ -z "$(of_kind "$kind")" ]] || continue
  [[ -z "$data" ]] || echo "demo: no $kind file under $data; generating one"
  "${MRCTL[@]}" gen "$kind" "$WORK/sample.$kind" --size "$size" --seed 42
  put "$WORK/sample.$kind" "/demo/in/sample.$kind"
done
echo
for kind in web text dna; do
  mapfile -t files < <(of_kind "$kind")
  for p in "${files[@]}"; do "${MRCTL[@]}" dfs stat --json "$p"; done |
    jq -rs --arg k "$kind" --argjson n "${#files[@]}" \
      '"\($k): \($n) file(s), \(map(.length) | add) bytes in \(map(.blocks | length) | add) block(s)"'
done
echo "(every file read back byte-identical)"

# ---- jobs: run each, then check its output against a shell pipeline
# The lines of FILE as the jobs read them, each ended by '\n': '\n', "\r\n"
# and a lone '\r' end a line (Hadoop's rule; the Gutenberg books are CRLF),
# and a last line without a terminator gets one, so no line runs on into
# the next file (the jobs read files apart). perl reads records up to '\n',
# so a "\r\n" is never cut in two.
lines_of() { perl -pe 's/\r\n?/\n/g; $_ .= "\n" unless /\n\z/' <"$1"; }
# The lines of the local files tagged KIND, one file after another.
cat_kind() {
  local p
  while IFS= read -r p; do lines_of "${local_of[$p]}"; done < <(of_kind "$1")
}
# `key<TAB>count` for each distinct line of stdin, as the counting jobs write.
count() { sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/'; }

run() {  # run NAME KIND REDUCERS [-p K=V]...: the job on every KIND input, into /demo/out/NAME
  local name="$1" kind="$2" reducers="$3" p args=()
  shift 3
  while IFS= read -r p; do args+=(-i "$p"); done < <(of_kind "$kind")
  echo "running $name on $kind ($(( ${#args[@]} / 2 )) file(s), $reducers reducer(s))"
  local cmd=("${MRCTL[@]}" job run "$name" "${args[@]}" -o "/demo/out/$name" -r "$reducers" "$@" --wait --json)
  "${cmd[@]}" >"$WORK/$name.json" && return 0
  local id
  if id="$(jq -er .id "$WORK/$name.json" 2>/dev/null)"; then  # submitted: its record and log lines
    jq -r '"demo: job \(.id) (\(.job)) \(.state): \(.error)"' "$WORK/$name.json" >&2
    grep -H -e "job $id " -e ' E \[' "$CLUSTER"/logs/*.log | tail -n 30 >&2 || true
  fi
  die "failed: $(printf '%q ' "${cmd[@]}")"
}
check() {  # check NAME HOW EXPECTED: the job's output (sorted unless it is Sort's) must be EXPECTED
  local got="$WORK/$1.got"
  if [[ "$1" == sort ]]; then "${MRCTL[@]}" dfs cat "/demo/out/$1" >"$got"
  else "${MRCTL[@]}" dfs cat "/demo/out/$1" | sort >"$got"; fi
  if ! cmp -s "$3" "$got"; then
    diff "$3" "$got" | head -n 10 >&2 || true
    die "$1: output differs from $2 ($(wc -l <"$3") lines expected, $(wc -l <"$got") got)"
  fi
  echo "  output = $2 ($(wc -l <"$got") lines)"
}

grep_pattern='</?[a-z]+>'  # XML tags without attributes: thousands in a MediaWiki dump
echo
run wordcount text 2
cat_kind text | tr ' \t\n\r\f\v' '[\n*]' | awk 'length' | count >"$WORK/wordcount.want"
check wordcount "tr | sort | uniq -c of the input" "$WORK/wordcount.want"
run grep web 1 -p "pattern=$grep_pattern"
cat_kind web | { grep -aoE "$grep_pattern" || true; } | count >"$WORK/grep.want"
check grep "grep -oE '$grep_pattern' | sort | uniq -c of the input" "$WORK/grep.want"
run sort text 3
cat_kind text | sort >"$WORK/sort.want"
check sort "sort of the input's lines" "$WORK/sort.want"
run permu dna 2
# Permu's triples by awk: three consecutive sequence lines of one record;
# a header ('>'), an empty line or a new file ends the record.
mapfile -t dna < <(of_kind dna)
for p in "${dna[@]}"; do
  lines_of "${local_of[$p]}" | awk '/^$|^>/ { n = 0; next }
                                  { if (n >= 2) print p1 p2 $0; p1 = p2; p2 = $0; n++ }'
done | count >"$WORK/permu.want"
check permu "awk triples | sort | uniq -c of the input" "$WORK/permu.want"

# ---- the table
echo
for name in wordcount grep sort permu; do
  jq -r '[.job, .input_type, .maps_total, .jtt_ms, .vps_locality_rate, .cen_locality_rate,
          .off_cen_rate, .reduce_data_locality_rate, .inter_dc_bytes, .fp_raw, .fp_wire] | @tsv' \
    "$WORK/$name.json"
done | awk -F'\t' '
  function human(b,  u, i) {  # as mrctl prints bytes
    split("B KiB MiB GiB TiB", u, " ")
    for (i = 1; b >= 1024 && i < 5; i++) b /= 1024
    return i == 1 ? sprintf("%d B", b) : sprintf("%.1f %s", b, u[i])
  }
  function rate(x) { x = sprintf("%.2f", x); return x == "-0.00" ? "0.00" : x }
  BEGIN {
    printf "%-10s %-5s %5s %7s %5s %5s %7s %11s %10s %6s %7s\n", "job", "input", "maps", "JTT",
           "VPS", "Cen", "off-Cen", "reduce-data", "INT", "FP raw", "FP wire"
  }
  { printf "%-10s %-5s %5d %6.2fs %5s %5s %7s %11s %10s %6.2f %7.2f\n", $1, $2, $3, $4 / 1000,
           rate($5), rate($6), rate($7), rate($8), human($9), $10, $11 }'
cat <<EOF

VPS / Cen / off-Cen: share of map tasks that read their block on their own worker / from
another worker of their datacenter / from another datacenter. reduce-data: share of shuffle
bytes that stayed inside the reducer's datacenter. INT: bytes that crossed datacenters (map
input, shuffle, output replicas, prefetch). FP: map output / map input, raw and as sent
(after the combiner and compression). JTT: submit to end. Scheduler $scheduler, placement
$placement.

Every output matched its shell pipeline. Stopping the cluster.
EOF
