// Workload: the blocks of the simulated DFS and the jobs that read them,
// generated once per (scenario, seed) before any scheduler runs, so every
// policy of a comparison sees the same jobs, blocks and base task times
// (common random numbers).
//
// Blocks (DataSpec): placed uniformly, HDFS-like (second replica on another
// rack, third beside the second) or round-robin; either one block per map,
// placed when the job is generated (Pandas §VII-A1c), or a fixed database
// of pool_blocks blocks that jobs pick from (Matchmaking §IV-A, Joint §6).
// Skewed popularity sends hot_probability of the accesses to a hot set of
// nodes or racks (the first hot_fraction of them).
//
// Jobs (WorkloadSpec): explicit classes (JoSS Tables 6-7, Matchmaking
// Table 4, Shen Table II), a trace file, or generated sizes and types;
// arrivals Poisson (by mean gap, load or task rate), lognormal, fixed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/cluster_state.h"
#include "sim/random.h"
#include "sim/scenario.h"

namespace mr::sim {

struct SimJob {
  int id = 0;                         // 1, 2, ... in submit order
  int64_t submit_ms = 0;
  int type = 0;                       // index into Scenario::job_types
  int datacenter = -1;                // the job's datacenter (placement job-datacenter), else -1
  std::string batch;                  // of its class; "" for generated and trace jobs
  std::vector<uint64_t> blocks;       // one per map
  std::vector<double> map_ms;         // base compute time per map
  std::vector<double> reduce_ms;      // base compute time per reduce (without per-MB time)
};

struct Workload {
  std::vector<std::vector<sched::NodeId>> replicas;  // by block id
  std::vector<SimJob> jobs;                          // by submit time
  double job_rate_per_s = 0;          // the arrival rate used (0 for explicit times)
  double mean_maps = 0;               // E[maps per job] the rate was derived from
  double mean_map_ms = 0;             // E[map compute] the load was derived from
};

// One job of a workload as both worlds run it: mr-sim (sim/simulator.h
// PlanJobs) and the live runner (mr-workload) print and run this list.
struct PlannedJob {
  int id = 0;                         // 1, 2, ... in submit order
  std::string type;                   // a [[job_types]] name
  int maps = 0;
  int reduces = 0;
  int64_t submit_ms = 0;              // simulated time; the live runner divides it by live.time_scale
  int datacenter = -1;                // job-datacenter placement: its datacenter index, else -1
  std::string batch;
};

// The concrete job list of a generated workload.
std::vector<PlannedJob> JobList(const Scenario& scenario, const Workload& workload);

// The list as CSV with a header: id,type,maps,reduces,submit_ms,datacenter,batch
// (what `mr-sim jobs` and `mr-workload run --dry-run` print).
std::string JobListCsv(const std::vector<PlannedJob>& jobs);

// Places `replicas` copies of one block over `candidates` by `placement`
// (uniform | hdfs | round-robin; `counter` numbers round-robin blocks;
// job-datacenter places like uniform, over the job datacenter's nodes the
// caller passes).
std::vector<sched::NodeId> PlaceBlock(const sched::ClusterState& state,
                                      const std::vector<sched::NodeId>& candidates,
                                      const std::string& placement, int replicas, uint64_t counter,
                                      Rng& rng);

// Generates the workload for `scenario` on the nodes of `state`: explicit
// jobs when the scenario gives classes or a trace, generated ones otherwise.
// InvalidArgument (one line naming the key, or FILE:LINE for a trace) for
// an unknown job type or batch, an unreadable, malformed or empty trace, a
// generated mix of total weight 0, a load without map slots, an
// inter-arrival gap that is not finite and >= 0 (or is 0 when only
// duration_ms bounds the jobs), more than 10,000,000 jobs, or more than
// 1,000,000 maps or reduces in one job.
Result<Workload> GenerateWorkload(const Scenario& scenario, const sched::ClusterState& state);

}  // namespace mr::sim
