// What mrctl's command files share: the cluster an invocation talks to, and
// how a command reports failure. (mrctl.cc: main, cluster, registry and gen
// commands; mrctl_dfs.cc and mrctl_dfs_verbs.cc: dfs; mrctl_jobs.cc: job
// and history commands.)
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/config.h"
#include "common/rpc.h"
#include "dfs/client.h"
#include "jobs/local_streaming.h"

namespace mr::tools {

// Prints "mrctl: <message>" to stderr and returns `code` (the exit code:
// 1 the operation failed, 2 bad usage or configuration).
int Fail(const Status& s, int code = 1);

// The cluster this invocation talks to.
struct Target {
  std::string config_flag;
  std::string master_flag;
  HostPort master;
  RpcOptions rpc;
  int64_t chunk_bytes = DfsOptions{}.transfer_chunk_bytes;
  int inter_dc_zstd_level = ClusterOptions{}.inter_dc_zstd_level;
  std::string tls_name;    // --tls-name: "{name}" in the TLS paths (default "mrctl")
  std::string datacenter;  // --datacenter: where mrctl runs (default unknown)
  std::string node;        // --node: the worker mrctl runs beside (default unknown)
  std::string rack;        // --rack: mrctl's rack in its datacenter (default none)

  // --config, or the discovered cluster file, gives address and secret;
  // --master alone (no --config) means a remote cluster: the secret comes
  // from $MR_SECRET and no local cluster file is consulted.
  Status Resolve();
};

// Runs `body` with a connected client; maps failures to exit codes. The
// client's location is the one --node/--datacenter/--rack give.
int WithClient(Target& target, std::function<awaitable<Status>(dfs::DfsClient&)> body);

// For commands that move block bytes (dfs put/get/cat, job run's sample):
// with --node alone, takes that worker's datacenter and rack (InvalidArgument
// for an unknown id); when neither --node nor --datacenter was given, asks the master for the
// workers and takes the location of those whose address is this client's
// own address to the master: the node when exactly one matches, the
// datacenter when all that match share one. Several datacenters on one
// address (a local cluster on 127.0.0.1) leave it unknown. Errors of the
// master are returned; finding nothing is not an error.
awaitable<Status> InferLocation(dfs::DfsClient& client);

// `mrctl job run|list|show|kill` and `mrctl history`.
struct JobCommandOptions {
  std::string name;
  std::vector<std::string> inputs;
  std::string output;
  int reducers = 1;
  std::vector<std::string> params;   // k=v
  std::string pool;
  int priority = 0;
  int output_replication = 0;  // 0: the cluster's default
  std::string submit_token;    // job run --submit-token; "" = a fresh one
  std::string output_compression;  // --output-compression: none, gzip, zstd
  bool wait = false;
  bool json = false;
  int64_t id = 0;
  jobs::StreamingFlags streaming;    // --mapper, --reducer, --combiner, --file
  bool tasks = false;  // job show --tasks (mrctl_tasks.h)
  bool why = false;    // job show --why (common/job_why.h)
  bool csv = false;    // job show --tasks --csv, job list --csv, history --csv
};
void AddJobCommands(CLI::App& app, Target& target, JobCommandOptions& o,
                    std::function<int()>* action);

// `mrctl dfs ...` (mrctl_dfs.cc, mrctl_dfs_verbs.cc).
void AddDfsCommands(CLI::App& app, Target& target, std::function<int()>* action);

// `mrctl cert init|issue` (mrctl_cert.cc).
void AddCertCommands(CLI::App& app, std::function<int()>* action);

// `mrctl scheduler set|show` (mrctl_scheduler.cc).
void AddSchedulerCommands(CLI::App& app, Target& target, std::function<int()>* action);

}  // namespace mr::tools
