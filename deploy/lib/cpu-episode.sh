#!/usr/bin/env bash
# A noisy-neighbour episode, run in the background by cpushare_episode
# (deploy/lib/cpushare.sh), for `testbed.sh episode` and `local-cluster.sh
# episode`. Run, not sourced:
#
#   cpu-episode.sh STATE_DIR NAME PCT AT FOR PIDFILE
#
# Waits AT seconds, caps NAME's cpu group at PCT %, waits FOR seconds, then
# puts back NAME's base share (STATE_DIR/cpu/NAME.base as it is then) and
# removes PIDFILE, which names this process on its command line. TERM ends
# it at once without restoring: whoever sends it sets the share next (`cpu`
# sets its own; `down` removes the group).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=cpushare.sh
source "$(dirname "${BASH_SOURCE[0]}")/cpushare.sh"
state=$1 name=$2 pct=$3 at=$4 for=$5 pidf=$6
napper=""
nap() { sleep "$1" & napper=$!; wait "$napper"; napper=""; }
trap '[[ -n "$napper" ]] && kill "$napper" 2>/dev/null; exit 0' TERM INT
cpushare_load "$state"
nap "$at"
_cpushare_cap "$name" "$pct"
echo "$(date +%T.%N) episode: $name capped at $pct% for ${for}s"
nap "$for"
base="$(cat "$state/cpu/$name.base" 2>/dev/null || echo off)"
_cpushare_cap "$name" "$base"
echo "$(date +%T.%N) episode: $name back to its base share ($base)"
rm -f "$pidf"
