#!/usr/bin/env bash
# Writes a help2man include file with a COMMANDS section for a program with
# subcommands (mrctl): every leaf command's --help, found by following the
# "Subcommands:" lists of --help down from the top, so the man page always
# matches the binary. Used by deploy/CMakeLists.txt at build time.
#   man-commands.sh PROGRAM NAME OUT.h2m   (NAME: the name to show, "mrctl")
set -euo pipefail
program=$1
name=$2
out=$3

subcommands() { awk '/^Subcommands:/ {on = 1; next} on && !NF {exit} on {print $1}'; }

# roff-safe: backslashes, and lines starting with . or '.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

emit() {
  local help subs
  help=$("$program" "$@" --help)
  subs=$(subcommands <<<"$help")
  if [[ -n $subs ]]; then
    for s in $subs; do emit "$@" "$s"; done
    return
  fi
  printf '.SS "%s %s"\n' "$name" "$*"
  head -n 1 <<<"$help" | roff
  printf '.PP\n.nf\n'
  tail -n +2 <<<"$help" | sed -e "s|^Usage: [^ ]*|Usage: $name|" | roff
  printf '.fi\n'
}

{
  echo "[COMMANDS]"
  for s in $("$program" --help | subcommands); do emit "$s"; done
} >"$out.tmp"
mv "$out.tmp" "$out"
