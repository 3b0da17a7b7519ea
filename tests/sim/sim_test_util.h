// Small scenarios built in code for the simulator tests (tests/sim/).
#pragma once

#include <cstdlib>
#include <string>

#include "sim/scenario.h"

namespace mr::sim::test {

// `nodes` nodes in `dcs` datacenters (and `racks` racks), one job type
// "job" (fp 1, fixed `map_ms` maps, fixed 5 s reduces, one reduce), and
// `jobs` jobs of `maps` maps arriving every `gap_ms`; network off.
inline Scenario SmallScenario(int nodes = 3, int dcs = 1, int racks = 0, int jobs = 1, int maps = 3,
                              double map_ms = 10000, double gap_ms = 0) {
  Scenario sc;
  sc.name = "small";
  sc.cluster.nodes = nodes;
  sc.cluster.datacenters = dcs;
  sc.cluster.racks = racks;
  sc.cluster.map_slots = 1;
  sc.cluster.reduce_slots = 1;
  sc.cluster.heartbeat_ms = 1000;
  sc.data.replication = 1;
  sc.data.placement = "round-robin";
  JobType t;
  t.name = "job";
  t.map.kind = Dist::Kind::kFixed;
  t.map.mean_ms = map_ms;
  t.reduce.kind = Dist::Kind::kFixed;
  t.reduce.mean_ms = 5000;
  sc.job_types.push_back(t);
  sc.workload.arrival = "fixed";
  sc.workload.mean_interarrival_ms = gap_ms;
  sc.workload.jobs = jobs;
  sc.workload.sizes.kind = SizeDist::Kind::kFixed;
  sc.workload.sizes.fixed = maps;
  return sc;
}

// The source tree: $MR_SOURCE_DIR (ctest sets it), else the path CMake
// compiled in (sim/CMakeLists.txt), so a test binary also runs by hand.
inline std::string SourceDir() {
  if (const char* env = std::getenv("MR_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
#ifdef MR_SIM_SOURCE_DIR
  return MR_SIM_SOURCE_DIR;
#else
  return ".";
#endif
}

inline SchedulerRun Policy(const std::string& name) { return SchedulerRun{name, name, {}}; }

}  // namespace mr::sim::test
