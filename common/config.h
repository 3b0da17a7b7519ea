// The cluster file: one TOML file holds everything a cluster needs.
//
// The structs below map one to one onto the file's tables and keys;
// docs/config.md is written from them. Every field says its effect and its
// default. LoadClusterConfig() rejects unknown keys, wrong types, duplicate
// worker ids or addresses, any non-loopback listener (master or worker)
// without a secret, and a heartbeat interval over half of rpc_timeout_ms, with
// one line naming the offending key.
//
// Thread-compatible plain data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace mr {

// "host:port", or "[v6-address]:port". Parsed by ParseHostPort().
struct HostPort {
  std::string host;  // a name, IPv4 or IPv6 address; never bracketed
  uint16_t port = 0;
  // "host:port"; an IPv6 host is bracketed ("[::1]:7000").
  std::string ToString() const {
    bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  bool operator==(const HostPort&) const = default;
};
// Accepts "host:port" (a host name or IPv4 address) and "[ipv6]:port", with a
// port in 1..65535. Fails with InvalidArgument naming `text`.
Result<HostPort> ParseHostPort(const std::string& text);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// A worker id: letters, digits, '-', '_' and '.', not "." or "..", not
// empty (ids name directories). Used by the cluster file, mr-worker's --id
// and the master's Register.
bool IsValidWorkerId(const std::string& id);

// [cluster]
struct ClusterOptions {
  // A label for logs and status output. Default: "mr".
  std::string name = "mr";
  // The shared secret every connection proves knowledge of (HMAC-SHA256
  // challenge-response). Default: none; then `secret_env` is consulted.
  std::string secret;
  // Name of an environment variable holding the secret, read when `secret` is
  // empty. Default: none.
  std::string secret_env;
  // How often workers heartbeat the master. Default: 1000 ms.
  int heartbeat_interval_ms = 1000;
  // A worker is declared dead after this many heartbeat intervals of silence.
  // Default: 10.
  int dead_after_missed_heartbeats = 10;
  // Deadline for every network wait (connect, read, write of one frame).
  // Default: 30000 ms.
  int rpc_timeout_ms = 30000;
  // A bulk transfer (shuffle fetch, remote block read, write pipeline hop)
  // that moves no byte for this long is abandoned (Unavailable, naming the
  // peer) and its usual recovery runs: another replica, a fetch failure
  // reported to the master, the pipeline without that hop. Waits a peer
  // may spend working (its first data frame, a pipeline's commit) get
  // rpc_timeout_ms instead; a peer hung there is let go when the master
  // declares it dead. 100 ms or more, below rpc_timeout_ms; not shared
  // between processes. Default: 5000 ms, or half of rpc_timeout_ms when
  // that is less and this key is absent.
  int transfer_stall_ms = 5000;
  // Hard maximum size of one frame (header + bulk bytes). Larger frames close
  // the connection. Default: 4 MiB. Must be at least
  // 2 × dfs.transfer_chunk_bytes + 64 KiB.
  int64_t max_frame_bytes = 4 << 20;
  // The largest reply a client takes from a server it authenticated, and a
  // server sends (Hadoop's ipc.maximum.response.length): the record of a
  // job of 10,000 maps is past max_frame_bytes. Default: 128 MiB; at least
  // max_frame_bytes.
  int64_t max_reply_bytes = 128 << 20;
  // How long a server gives a new connection to complete the handshake
  // (Hello, AuthProof, AuthOk) before closing it; a larger rpc_timeout_ms
  // does not extend it, a smaller one shortens it. Default: 5000 ms.
  int handshake_timeout_ms = 5000;
  // Most connections a server holds that have not authenticated yet; one more
  // is closed as soon as it is accepted. Default: 64.
  int max_unauthenticated_connections = 64;
  // Most unauthenticated connections a server holds from one source address.
  // Default: 32. At most max_unauthenticated_connections.
  int max_unauthenticated_per_address = 32;
  // Path of a file holding the secret (trailing whitespace ignored). The
  // file must exist, be non-empty and not be accessible by others (mode &
  // 007 == 0, e.g. 0640 root:mr); otherwise loading the cluster file fails.
  // Read when the cluster file is loaded. Set at most one of `secret`,
  // `secret_env` and `secret_file`. Default: none.
  std::string secret_file;
  // Which connections use TLS 1.3 with mutual certificate authentication
  // (docs/tls.md): "off", "inter-dc" (those whose two ends are in different
  // datacenters) or "all". Default: "inter-dc" when master.address or any
  // worker's address is not loopback, else "off" (resolved at load).
  std::string tls;
  // PEM file of the cluster CA's certificate. Required unless tls is "off".
  std::string tls_ca;
  // This process's certificate and private key (PEM); "{name}" is replaced by
  // the process's name (a worker id, "master", mrctl's --tls-name). The key
  // file must pass CheckPrivateFile (common/private_file.h). Required unless
  // tls is "off".
  std::string tls_cert;
  std::string tls_key;
  // zstd level of the bytes that cross datacenters (docs/wire-format.md,
  // "Compression between datacenters"): a DFS block frame sent between two
  // nodes of different datacenters (dn.ReadBlock, each dn.WriteBlock hop)
  // is zstd-compressed at this level, and a shuffle segment fetched from
  // another datacenter is recompressed at it when it is above the stored
  // level (1). Transfers within a datacenter, or to a node whose datacenter
  // is unknown, are sent as today. 0 = off (every transfer as stored).
  // 1..19. Default: 3 (docs/benchmarks.md, "Bytes across datacenters").
  int inter_dc_zstd_level = 3;
  // Shuffle segments recompressed for another datacenter (above) also use
  // zstd's long-distance matching with a window of up to 2^this bytes (never
  // more than the segment): Permu's segments repeat each line in three keys
  // far apart. Costs the reducer up to that much memory per segment it
  // merges, and the mapper CPU. 0 = off (the level's own window), else
  // 10..27. Default: 0 (docs/benchmarks.md, "Bytes across datacenters").
  int inter_dc_zstd_window_log = 0;
};

// [master]
struct MasterOptions {
  // Where the master listens for workers and clients. Required.
  HostPort address;
  // Directory for the master's RocksDB (namespace, later job history) and log.
  // Default: "./mr-data/master".
  std::string data_dir = "./mr-data/master";
  // Where the master listens, when that differs from `address` (behind NAT:
  // "0.0.0.0:7000" while others connect to the public address). Port 0 (the
  // key absent) = listen on `address`. Default: none.
  HostPort bind;
  // The address to listen on: `bind` when set, else `address`.
  const HostPort& listen_address() const { return bind.port != 0 ? bind : address; }
  // The master's datacenter label, for cluster.tls = "inter-dc" only: links
  // to and from the master are plaintext only within it. Default: none (every
  // link to the master counts as inter-datacenter).
  std::string datacenter;
  // Where the master serves its status pages and /metrics over HTTP
  // (docs/status-page.md). Port 0 (the key absent) = no HTTP server. Off a
  // loopback address every request must carry the cluster secret
  // (`Authorization: Bearer <secret>`). Default: none (off).
  HostPort http_address;
  // Require the secret on a loopback http_address too (a machine shared
  // with other users). Default: false.
  bool http_require_secret = false;
};

// [dfs.skewed]: parameters of the `skewed` placement policy.
struct SkewedPlacementOptions {
  // Fraction of nodes that are hot spots. Default: 0.2.
  double hot_node_fraction = 0.2;
  // Fraction of replicas placed on the hot nodes. Default: 0.8.
  double hot_block_fraction = 0.8;
};

// [dfs]
struct DfsOptions {
  // Default block size of new files (bytes); `dfs put --block-size` overrides.
  // Must be a positive multiple of 64 KiB. Default: 64 MiB.
  int64_t block_size = 64 << 20;
  // Default replication of new files; `dfs put --replication` overrides.
  // Default: 2.
  int replication = 2;
  // Replica placement policy: "random", "hdfs", "spread" or "skewed".
  // Default: "hdfs".
  std::string placement = "hdfs";
  SkewedPlacementOptions skewed;
  // Bytes of block data per frame when streaming blocks. A multiple of 64 KiB.
  // Smaller frames let a reader verify and consume a frame before its socket
  // buffer overflows; 128 KiB measured best on loopback (docs/benchmarks.md).
  // Default: 128 KiB.
  int64_t transfer_chunk_bytes = 128 << 10;
  // fsync block files before acknowledging a write. Default: false.
  bool fsync = false;
  // Seed of the placement policy's random generator; 0 = seeded from the
  // clock at master start. Default: 0.
  uint64_t placement_seed = 0;
  // The highest replication a file may ask for (HDFS: dfs.replication.max);
  // the master refuses more. At least `replication`. Default: 512.
  int max_replication = 512;
  // Workers only. Seconds between the starts of two full passes of the block
  // scrubber, which verifies every replica's checksums in the background
  // (HDFS's block scanner period); 0 = no scrubber. The first pass starts
  // when the worker starts. Default: 1814400 (3 weeks).
  int64_t scrub_interval_s = 21 * 24 * 3600;
  // Workers only. Bytes per second the scrubber reads, at most. Default:
  // 1 MiB (HDFS's dfs.block.scanner.volume.bytes.per.second).
  int64_t scrub_bytes_per_second = 1 << 20;
};

// A scheduler parameter value as written in the cluster file.
using ParamValue = std::variant<bool, int64_t, double, std::string>;

// [scheduler]
struct SchedulerOptions {
  // Registry name of the scheduling policy. Default: "fifo".
  std::string name = "fifo";
  // [scheduler.params]: free-form key = value pairs, validated by the policy.
  std::map<std::string, ParamValue> params;
  // Seed of the policy's random generator (SchedulerEnv::seed), recorded in
  // every job's record; the same seed and the same events give the same
  // decisions. Policies that draw nothing ignore it. Default: 1.
  int64_t seed = 1;
};

// [speculation]: speculative execution (scheduler/speculator.h), chosen by
// name like the policy; `mrctl schedulers` lists the speculators.
struct SpeculationOptions {
  // Registry name: "none", "hadoop" or "late". Default: "late"
  // (docs/schedulers.md, "Speculative execution", says which benchmarks
  // chose it).
  std::string name = "late";
  // [speculation.params]: free-form key = value pairs, validated by the
  // speculator.
  std::map<std::string, ParamValue> params;
};

// [[worker]]: one entry per worker process (a VPS in the JoSS setting).
struct WorkerOptions {
  // Unique id, e.g. "w1". Required.
  std::string id;
  // The worker's advertised address: where clients and other workers
  // connect (block transfers, shuffle). Optional in an allow-list entry
  // (port 0 = absent; the worker's --advertise gives it); when present the
  // master admits the worker only from this address. Unique across workers.
  HostPort address;
  // Datacenter label. Required.
  std::string datacenter;
  // Rack label within the datacenter. Default: none (no racks).
  std::string rack;
  // Concurrent map tasks. Default: 2.
  int map_slots = 2;
  // Concurrent reduce tasks. Default: 1.
  int reduce_slots = 1;
  // Directory for blocks, block metadata (RocksDB), spills and the log.
  // Default: "./mr-data/<id>".
  std::string data_dir;
  // Bytes of block data this worker accepts; placement skips full workers.
  // 0 = unlimited. Default: 0.
  int64_t capacity_bytes = 0;
  // Free bytes its data directory's file system must keep (HDFS's
  // dfs.datanode.du.reserved). Below it, or after a local write failed until
  // a probe write succeeds, the worker tells the master it cannot write: no
  // new blocks, copies or tasks are placed there. Default: 64 MiB.
  int64_t min_free_bytes = 64 << 20;
  // Where the worker serves its own /metrics over HTTP (docs/status-page.md);
  // the secret rules of master.http_address apply. Port 0 (absent) = off.
  // Default: none (off).
  HostPort http_address;
  // Not a cluster-file key: mr-worker's --bind, where it listens when that
  // differs from `address` (NAT). Port 0 = listen on `address`.
  HostPort bind;
  const HostPort& listen_address() const { return bind.port != 0 ? bind : address; }
};

// [jobs]: how the master runs jobs and workers run tasks.
struct JobOptions {
  // Memory for a map task's buffered output before it spills to disk
  // (per running map). Each record takes its key and value bytes plus 32
  // bytes of index, so a 64 MiB block of text lines (56 bytes on average)
  // needs ~100 MiB to be sorted in one pass without a spill and a merge.
  // Default: 128 MiB.
  int64_t sort_buffer_bytes = 128 << 20;
  // Reduces of a job may start once this fraction of its maps finished
  // (Hadoop's mapred.reduce.slowstart.completed.maps). Default: 0.05.
  double slowstart = 0.05;
  // Launches of one task before the job fails (Hadoop's
  // mapred.map.max.attempts). Default: 4.
  int max_attempts = 4;
  // Map outputs a reduce task fetches at once (Hadoop's
  // mapred.reduce.parallel.copies). Default: 5.
  int parallel_fetches = 5;
  // Most reduce tasks one job may ask for: a submission asking for more is
  // refused with one line. Each reduce is a task, an output file and a
  // fetch of every map's segment, so a mistyped -r 100000 would hold the
  // cluster for hours. Default: 10000.
  int max_reduces = 10000;
  // Segment files a reduce task merges at once (Hadoop's io.sort.factor):
  // with more maps than this, it first merges groups of this many into
  // intermediate files on local disk (worker/segment_merge.h), so it never
  // holds more than this many files open however many maps the job has.
  // Default: 100.
  int merge_factor = 100;
  // How often a reduce task asks the master for map outputs it has not
  // fetched yet, while none came in its last ask. The job's end waits for
  // the reduces' last ask after the last map (on average half of this).
  // Default: 100.
  int map_outputs_poll_ms = 100;
  // Replicas of each block of a job's output (`mrctl job run
  // --output-replication` overrides). 0, the default: [dfs] replication, as
  // Hadoop writes job output with dfs.replication, so the output outlives
  // the worker that wrote it. 1 writes one replica, on the reducer's node
  // (Hadoop's TeraSort does; no output bytes cross datacenters).
  int output_replication = 0;
  // Reports from reducers that could not fetch one map output before the
  // map runs again (it also runs again as soon as its worker is declared
  // dead). Default: 3.
  int fetch_failures_to_rerun = 3;
  // How long a map task waits, retrying with backoff, for a block of its
  // input none of whose replicas can be read (holders restarting, say)
  // before it fails; the job then fails naming the block and file if the
  // block still has no live replica. Default: 180000 ms.
  int64_t block_wait_ms = 180000;
  // After a restart, the longest the master waits for every worker to
  // register again before it recovers the jobs that were running (it
  // recovers as soon as all did; nothing is launched meanwhile).
  // Default: 10000.
  int recovery_wait_ms = 10000;
  // Wall-clock limit of one run of a user command (a streaming mapper,
  // reducer or combiner): past it the command's process group is killed and
  // the attempt fails. A job's `timeout_ms` parameter overrides it.
  // 0 = none. Default: 600000 (10 min, Hadoop's mapreduce.task.timeout).
  int64_t task_timeout_ms = 600000;
};

// [task_logs]: each task attempt's log on the worker that ran it (the
// user code's stderr, a plug-in's stdout and stderr, and the framework's
// lines for the attempt; docs/logs-and-counters.md).
struct TaskLogOptions {
  // Bytes kept of one attempt's log: the first half and the last half of
  // it, with one line saying how much was left out between them (Hadoop's
  // mapreduce.task.userlog.limit.kb keeps the tail only). Default: 1024 KiB.
  int64_t limit_kb = 1024;
  // A finished job's logs are removed once it ended this long ago...
  // Default: 24 hours.
  int64_t keep_hours = 24;
  // ...or once this many newer jobs have logs on the worker. Default: 100.
  int keep_jobs = 100;
};

// [log]
struct LogOptions {
  // "trace", "debug", "info", "warn", "error". Default: "info".
  std::string level = "info";
  // When logging to a file: the size at which the file is rotated
  // (<file> -> <file>.1 -> <file>.2 ...); 0 = never (rotate with logrotate
  // and SIGHUP instead). At least 64 KiB when set. Default: 64 MiB.
  int64_t max_file_bytes = 64 << 20;
  // Rotated files kept besides the current one; the oldest is deleted.
  // 1..100. Default: 5.
  int max_files = 5;
};

struct ClusterConfig {
  ClusterOptions cluster;
  MasterOptions master;
  DfsOptions dfs;
  SchedulerOptions scheduler;
  SpeculationOptions speculation;
  JobOptions jobs;
  TaskLogOptions task_logs;
  LogOptions log;
  std::vector<WorkerOptions> workers;

  // The secret, from `cluster.secret` or the environment variable named by
  // `cluster.secret_env`. Empty when neither is set. (A `cluster.secret_file`
  // is read when the file is loaded and its contents kept in `cluster.secret`.)
  std::string ResolvedSecret() const;
  // The worker entry with this id, or nullptr.
  const WorkerOptions* FindWorker(const std::string& id) const;
};

// Parses and validates a cluster file. On failure the Status message is one
// line naming the file (base name) and the offending key by its full path
// (worker entries count from 0), e.g.
//   "cluster.toml: unknown key 'dfs.blocksize'"
//   "cluster.toml: 'worker[2].map_slots' must be an integer"
//   "cluster.toml:3:7: <TOML syntax error>"
// Validation errors are InvalidArgument; an unreadable file is NotFound
// (missing) or IOError. Zero [[worker]] entries is not an error.
Result<ClusterConfig> LoadClusterConfig(const std::string& path);
// Same, from TOML text (used by tests). `origin` names the source in errors.
Result<ClusterConfig> ParseClusterConfig(const std::string& toml_text,
                                         const std::string& origin);

}  // namespace mr
