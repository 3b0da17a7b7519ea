// mr-workload report DIR: the report of bench/live_policies.sh (issue 12
// point 5, docs/testbed.md "Benchmarking policies live"). Reads the runs of
// one workload file under several policies, DIR/<policy>/rep<N>/{jobs.json,
// records.json, meta.json, counters.json}, and mr-sim's runs of the same
// file, DIR/sim/<policy>.json (`mr-sim run --json`), and writes
//
//   DIR/runs.csv     one row per policy x repetition x job type ("all" =
//                    the whole workload) x metric: the measured value;
//   DIR/summary.csv  the same per policy x type x metric: median, min, max
//                    over the repetitions;
//   DIR/report.md    tables of the medians [min–max] beside mr-sim's
//                    numbers, the kernel's inter-datacenter bytes against
//                    INT, and the paper's claims for the scenario judged on
//                    the live medians and on mr-sim's runs with the code of
//                    `mr-sim report` (sim/claims.h);
//   DIR/live-*.svg   charts (sim/svg.h).
//
// Called once per process by mr-workload's `report` subcommand; not
// thread-safe (writes files in DIR).
#pragma once

#include <string>

#include "common/status.h"

namespace mr::sim {

// `workload` is the scenario file the runs used (for its name, job types
// and policy labels). Fails when DIR holds no run or a file is not the
// JSON it should be; a repetition without a file is left out, and said so
// in the report.
Status WriteLiveReport(const std::string& dir, const std::string& workload);

}  // namespace mr::sim
