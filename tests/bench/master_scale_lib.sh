# Shared by tests/bench/master_scale*_test.sh: the cluster file they give
# bench/master_scale, and the checks on the one JSON line it prints.
#
#   . tests/bench/master_scale_lib.sh
#   scale_config FILE NAME DATA_DIR [CLUSTER_LINES] [DFS_LINES]
#   check JQ_EXPR WHAT     # on $line; fail prints the tail of $WORK/master.log

# A 500 ms heartbeat, a worker dead after 10 missed, replication 3, fifo,
# no speculation; more lines for [cluster] and [dfs] as given.
scale_config() {
  local file="$1" name="$2" data="$3" cluster="${4:-}" dfs="${5:-}" port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  cat >"$file" <<TOML
[cluster]
name = "$name"
secret = "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
heartbeat_interval_ms = 500
dead_after_missed_heartbeats = 10
$cluster

[master]
address = "127.0.0.1:$port"
data_dir = "$data"

[dfs]
replication = 3
$dfs

[scheduler]
name = "fifo"

[speculation]
name = "none"
TOML
}

fail() { echo "FAIL: $*"; tail -20 "$WORK/master.log" 2>/dev/null; exit 1; }
check() { [[ "$(jq -r "$1" <<<"$line")" == true ]] || fail "$2 ($1)"; }
