// The three runs of bench/master_scale, each against a real mr-master it
// starts itself, printing one JSON line of figures (docs/benchmarks.md,
// "Master at scale").
#pragma once

#include <string>

#include "bench/master_scale/fleet.h"

namespace mr::bench {

struct ScaleOptions {
  std::string config_path;   // the cluster file the master and the fleet share
  std::string master_binary;
  std::string log_path;
  std::string perf_out;      // perf record -g of the master during the window; "" = none
  FleetOptions fleet;
  // jobs run
  int jobs = 50;
  int maps = 100000;         // in all, spread evenly over the jobs
  int reducers = 5;          // per job
  int warmup_s = 10;         // after the last submit, before the window
  int window_s = 60;
  int stop_workers = 3;      // stopped at the window's start: time to notice them dead
  bool until_done = false;   // after the window, wait for every job to end
  int done_timeout_s = 600;
  // namespace run
  int64_t files = 100000;
  int blocks_per_file = 10;
  int64_t dir_entries = 100000;  // files per directory
  int64_t ops = 20000;        // NNThroughputBenchmark phases: operations per op
  int clients = 4;            // ... and its client connections ("-threads")
  // Connections building the namespace, each writing its share of the files
  // through the real RPCs; more share group commits (0 = `clients`).
  int build_clients = 0;
};

// Runs `jobs` jobs over `maps` maps on the fleet; the figures of the window.
// Exits non-zero (returns false) when a task was launched twice, a
// heartbeat failed, or (until_done) a job did not succeed.
bool RunJobs(const ScaleOptions& o);
// The fleet joins a fresh master: time to register, time until every
// worker's view of the members is the master's, and the members' entries
// the replies carried. Returns false when the views never agree.
bool RunJoin(ScaleOptions o);
// Builds the namespace, times create/open/delete, `dfs ls` of a big
// directory, and the master's restart until every block report is in.
bool RunNamespace(const ScaleOptions& o);

}  // namespace mr::bench
