// mr-workload: runs a scenario file's workload on a live cluster — the same
// job list mr-sim runs (PlanJobs, same seed), with the real jobs, input
// types and scale of the file's [live] table (docs/workloads.md).
//
// A run: optionally switch the master's policy (`mrctl scheduler set`);
// generate each job's input locally (common/datagen.h: maps × live.block_mb
// of the job's input type) and put it into the DFS with the scenario's
// replication (and `--datacenter` of the job's datacenter under
// job-datacenter placement); then submit every job at its submit time ÷
// live.time_scale, wait for all, and write OUT/jobs.csv and OUT/jobs.json,
// one row per job from its record (with `verify`, after comparing each
// output with mr-local's), and every record whole to OUT/records.json. It
// drives the cluster through `mrctl` processes, as a user would, so it
// needs no RPC code of its own.
//
// Not thread-safe; one run at a time per process.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/scenario_file.h"

namespace mr::sim {

struct LiveRunOptions {
  std::string file;                           // the scenario file
  std::vector<Override> set;                  // --set overrides, as mr-sim's
  std::string mrctl = "mrctl";                // the client binary
  std::string config;                         // --config for mrctl; "" = mrctl's own discovery
  std::string scheduler;                      // switch to this policy first; "" = keep the master's
  std::vector<std::string> scheduler_params;  // k=v
  std::string out_dir = "workload-out";
  std::string dfs_root;      // "" = /workload/<scenario name>/<unix ms>
  bool dry_run = false;      // print the job list, run nothing
  bool commands = false;     // with dry_run: also the mrctl commands
  bool keep_inputs = false;  // keep OUT/inputs/* after the puts
  int64_t timeout_s = 3600;  // for the whole timed phase
  // A shell command run after the puts, just before the timed phase (e.g.
  // bench/live_policies.sh resets the testbed's kernel counters there, so
  // they cover the jobs and not the uploads); "" = none. Its failure fails
  // the run (exit 1).
  std::string before_jobs;
  // A shell command run as soon as every job has ended, before the records
  // are read and outputs verified (bench/live_policies.sh reads the kernel
  // counters there, so they do not count the verification's reads); "" =
  // none. Its failure fails the run (exit 1).
  std::string after_jobs;
  // Compare every succeeded job's output with mr-local's on the same input,
  // reducers, split size and parameters (the oracle); a difference fails
  // the run (exit 1) and is named on `err`. Inputs are kept until then.
  bool verify = false;
  std::string mr_local = "mr-local";  // the oracle binary, for verify
  // With verify: a directory of oracle outputs kept across runs (keyed by the
  // input's bytes and the mr-local arguments); "" = none.
  std::string oracle_cache;
};

// Runs (or with dry_run prints) the workload. Returns the exit status: 0
// every job succeeded; 1 a job failed or the cluster refused something;
// 2 a bad scenario file or option (one line on `err`).
int RunLiveWorkload(const LiveRunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mr::sim
