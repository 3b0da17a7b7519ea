// Runner: a scenario file's whole plan — every combination of its sweep
// axes (the file's [sweep] table, replaced or extended by `mr-sim sweep
// --param`), and for each, every [[schedulers]] entry on the same workload.
// This is what `mr-sim run` and `mr-sim sweep` call.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/metrics.h"
#include "sim/scenario_file.h"

namespace mr::sim {

using SweepAxis = std::pair<std::string, std::vector<std::string>>;

struct PlanOptions {
  std::vector<Override> set;      // applied to every run (--set); a key the file sweeps (or its table) is pinned
  std::vector<SweepAxis> params;  // --param axes; one with a key of the file's replaces it
  bool no_sweep = false;          // ignore the file's [sweep] table
  std::vector<std::string> only;  // run only schedulers with these labels or names; empty = all
  bool timed = false;             // add wall-clock figures
  std::function<void(const std::string&)> progress;  // told before each run
};

// "a=1,2,3" -> {"a", {"1","2","3"}}; InvalidArgument without '=' or values.
Result<SweepAxis> ParseSweepAxis(const std::string& text);

// Runs the plan of the scenario file at `path`.
Result<std::vector<RunResult>> RunScenarioFile(const std::string& path, const PlanOptions& options);

}  // namespace mr::sim
