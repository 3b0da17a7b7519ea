// Internal to sim/: the scenario file's speculation and node-speed keys
// (scenario_speculation.cc documents them), read by ParseScenario
// (scenario_file.cc): [[cluster.speeds]] from ReadCluster, [[run.episodes]]
// from ReadRun, [speculation] and a [[schedulers]] row's `speculation`.
#pragma once

#include "common/status.h"
#include "sim/scenario.h"
#include "sim/scenario_reader.h"

namespace mr::sim {

// InvalidArgument naming the key for an unknown key, a wrong type, an
// out-of-range value or a node that does not exist. REQUIRES: c->nodes read.
Status ReadSpeeds(const scenario_internal::Reader& cluster, ClusterSpec* c);
// Also rejects overlapping episodes of one node.
Status ReadEpisodes(const scenario_internal::Reader& run, const ClusterSpec& c, RunSpec* r);
// A { name, params } table; the name and parameters are checked against
// the speculator registry (its message lists the valid ones).
Status ReadSpeculation(const scenario_internal::Reader& r, SpeculationSpec* s);
// A `params` table of booleans, integers, floats and strings.
Status ReadParams(const scenario_internal::Reader& parent, sched::SchedulerParams* params);

}  // namespace mr::sim
