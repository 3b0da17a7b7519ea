# shellcheck shell=bash
# The cluster file's [speculation] table, for local-cluster.sh and
# testbed.sh. Sourced; reads the caller's $speculation (a speculator's name)
# and speculation_params (an array of 'KEY = VALUE' lines).

# speculation_tables: prints [speculation] and, with parameters, [speculation.params].
speculation_tables() {
  local o
  echo "[speculation]"
  echo "name = \"$speculation\""
  if ((${#speculation_params[@]})); then
    echo
    echo "[speculation.params]"
    for o in "${speculation_params[@]}"; do echo "$o"; done
  fi
}
