// Scenario: everything one simulation needs, as plain option structs. A
// scenario file (TOML, sim/scenarios/*.toml) maps onto these one to one;
// sim/scenario_file.h parses it. Start with docs/simulator.md, then
// sim/simulator.h (the engine) and this file.
//
// Units: times in milliseconds, sizes in MB, link capacities in MB/s.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "sim/random.h"

namespace mr::sim {

// [[cluster.speeds]]: a group of nodes that compute at `factor` (sim/speed.h:
// 0.25 = a task's compute takes 4 times as long there). The group is
// `nodes`, or else `fraction` of all nodes drawn from the seed's "speeds"
// stream (round(fraction × nodes) distinct nodes). A later group overrides
// an earlier one for a node in both.
struct SpeedGroup {
  std::vector<int> nodes;    // node indexes. Default: empty
  double fraction = 0;       // used when `nodes` is empty. Default: 0
  double factor = 1;         // in (0, 100]. Default: 1
};

struct ClusterSpec {
  int nodes = 10;            // worker nodes, spread evenly over datacenters. Default: 10
  int datacenters = 1;       // Default: 1
  int racks = 0;             // racks in all, spread evenly over datacenters; 0 = none. Default: 0
  int map_slots = 2;         // per node. Default: 2
  int reduce_slots = 1;      // per node. Default: 1
  int64_t heartbeat_ms = 3000;     // regular heartbeat interval of every node. Default: 3000
  // A node heartbeats at once when one of its tasks ends. Hadoop 1.x has it
  // off by default (mapreduce.tasktracker.outofband.heartbeat, baselines.md
  // §1) and 0.20 does not have it: a scenario whose paper had it says so.
  bool out_of_band_heartbeat = false;  // Default: false
  std::vector<SpeedGroup> speeds;      // Default: none (every node at factor 1)
};

// The link model (Joint §3.2, Fig. 2): every node has an up- and a down-link
// (B1), every rack an uplink and a downlink (B2), every datacenter an
// egress and an ingress link. 0 = unlimited. Transfers reserve every link of
// their path in FIFO order; see sim/network.h.
struct NetworkSpec {
  bool enabled = false;        // false: transfers take no time (bytes are still counted). Default: false
  double node_mb_s = 0;        // B1. Default: 0 (unlimited)
  double rack_mb_s = 0;        // B2. Default: 0
  double dc_mb_s = 0;          // each datacenter's link to the others. Default: 0
  double latency_ms = 0;       // added to every transfer between nodes. Default: 0
  // Hand the policies the links' cost matrix (ClusterState::SetDistances,
  // Network::UnitCosts): what one MB costs between two nodes at the fair
  // share of each link of its path, instead of hop counts (Shen §II-B3).
  // Needs enabled and node_mb_s > 0. It also picks the replica a map reads
  // from (the nearest by it), for every policy of the scenario. Default: false
  bool link_costs = false;
};

struct DataSpec {
  double block_mb = 128;       // split size. Default: 128
  int replication = 3;         // replicas per block (capped at the node count). Default: 3
  // uniform | hdfs | round-robin | job-datacenter: every replica of every
  // block of a job inside the job's datacenter (a writer there, as when a
  // client uploads the job's input from it), on distinct random nodes; the
  // job's datacenter is drawn uniformly per job from the seed's
  // "job-datacenter" stream. Needs pool_blocks = 0 and uniform
  // popularity. Default: uniform
  std::string placement = "uniform";
  // 0: every map reads a block of its own, placed when its job arrives
  // (Pandas §VII-A1c "at each task arrival, a set of three nodes are chosen").
  // N: a database of N blocks placed at start; jobs read blocks of it
  // (Matchmaking §IV-A: 100 blocks, 2 replicas; Joint §6). Default: 0
  int pool_blocks = 0;
  // uniform | skewed: a hot set of nodes (or racks) gets hot_probability of
  // the accesses (Pandas §VII-A1c: half the nodes, 0.8; Joint §6: half the
  // racks). Default: uniform
  std::string popularity = "uniform";
  std::string hot_unit = "node";  // node | rack. Default: node
  double hot_fraction = 0.5;      // of the nodes or racks. Default: 0.5
  double hot_probability = 0.8;   // share of accesses to the hot set. Default: 0.8
};

// How long a task takes (sim/service.h). Map: the job type's compute time,
// times the slowdown of its locality level (Pandas Eq. 1's σ_r/σ_l,
// σ_s/σ_l), after reading its block over the links when the network model
// is on and the block is not local (Joint §3: a remote machine "cannot start
// processing the task until the necessary data arrives").
struct ServiceSpec {
  double rack_slowdown = 1.0;     // Default: 1
  double remote_slowdown = 1.0;   // same datacenter, other rack (or no racks). Default: 1
  double off_dc_slowdown = 0;     // another datacenter; 0 = remote_slowdown. Default: 0
};

struct JobType {
  std::string name;               // "wordcount"; also the code hash (JoSS Fig. 4)
  std::string input_type = "text";  // "text", "web", "dna"
  double fp = 1.0;                // raw filtering percentage: map output / map input (JoSS Table 5)
  double fp_wire = -1;            // shuffle bytes / map input; < 0 = fp. Default: -1
  Dist map;                       // compute time of one map (one block)
  Dist reduce;                    // compute time of one reduce, besides the next line
  double reduce_ms_per_mb = 0;    // reduce compute per MB of its input
  int reduces = 1;                // reduce tasks per job, unless the job says otherwise
  double weight = 1;              // share in a generated mix
};

// One line of an explicit job list (a [[workload.classes]] entry or a trace
// line): `count` jobs of `type` with `maps` maps.
struct JobClass {
  std::string type;
  int count = 1;
  int maps = 1;
  int reduces = -1;               // < 0: the type's
  std::string batch;              // run only when workload.batch is "" or equal
  int64_t submit_ms = -1;         // trace: fixed submit time; < 0: from the arrival process
};

struct WorkloadSpec {
  // Arrivals: poisson (exponential gaps; "exponential" is accepted too) |
  // lognormal | fixed | trace. Default: poisson
  std::string arrival = "poisson";
  // Exactly one rate for poisson: mean_interarrival_ms, or load (offered map
  // work ÷ map slots, Pandas' load), or task_rate_per_s (maps per second,
  // Joint §6's λ with a 1 s slot). lognormal and fixed use mean_interarrival_ms.
  double mean_interarrival_ms = 0;
  double sd_interarrival_ms = 0;  // lognormal (JoSS Table 6: 27.70 s / 36.52 s)
  double load = 0;
  double task_rate_per_s = 0;
  // Generated jobs: `jobs` of them, or as many as arrive in `duration_ms`.
  int jobs = 0;
  int64_t duration_ms = 0;
  SizeDist sizes;                 // maps per generated job
  std::vector<std::string> mix;   // job types to draw from, by weight; empty = all
  // Explicit jobs (instead of generated ones), shuffled unless `keep_order`.
  std::vector<JobClass> classes;
  bool keep_order = false;
  std::string batch;              // run only classes of this batch (Shen §III ran three)
  double scale = 1.0;             // multiplies maps and reduces of explicit classes (reduced runs)
  std::string trace;              // CSV file: submit_ms,type,maps,reduces
  double slowstart = 0.05;        // Job::slowstart
  // FP history (JoSS Fig. 4 "H"): false = a job's FP is known only after an
  // earlier job of its (type, input type) finished; true = known from the start.
  bool fp_known_at_start = false;
};

// A node that fails at `at_ms` and (optionally) comes back at `back_ms`.
struct NodeFailure {
  int node = 0;
  int64_t at_ms = 0;
  int64_t back_ms = -1;
};

// [[run.episodes]]: node `node` computes at `factor` from `at_ms` for
// `for_ms` (a noisy neighbour; factor 0 = frozen: no progress and no
// heartbeats, so nothing is launched there and its attempts report nothing;
// the sim does not model heartbeat expiry, so a frozen node is not declared
// dead — a node that dies is a run.failures entry). A node's episodes may
// not overlap.
struct SpeedEpisode {
  int node = 0;              // required
  int64_t at_ms = 0;         // Default: 0
  int64_t for_ms = 0;        // required, > 0
  double factor = 0;         // in [0, 100]; required (0 = frozen)
};

struct RunSpec {
  int64_t end_ms = 0;             // stop here even if work remains; 0 = when every job is done
  int64_t sample_ms = 0;          // backlog sampling period; 0 = 10 heartbeats
  int64_t max_backlog = 0;        // stop when this many maps wait or run; 0 = no limit
  double tail_fraction = 0.05;    // backlog averaged over this last fraction of the run (Joint §6)
  double task_failure_prob = 0;   // an attempt fails (at a uniform point of its run) with this probability
  std::vector<NodeFailure> failures;
  std::vector<SpeedEpisode> episodes;
};

// [live]: how a live cluster runs the same workload (mr-workload,
// docs/workloads.md). mr-sim ignores it.
struct LiveJob {
  std::string type;               // a [[job_types]] name: "wc"
  std::string job;                // the registered job: "wordcount"
  std::string input;              // text | web | dna; "" = the type's input_type
  std::map<std::string, std::string> params;  // job parameters: { pattern = "the" }
};

struct LiveSpec {
  double block_mb = 1;            // live DFS block size; a job's input is maps × this. Default: 1
  double time_scale = 1;          // submit times are divided by this. Default: 1
  std::vector<LiveJob> jobs;      // one per job type the workload uses
  // Datacenter names for the job datacenters 0, 1, ...; empty = the live
  // cluster's datacenters sorted by name. Default: empty
  std::vector<std::string> datacenters;

  const LiveJob* Find(const std::string& type) const {
    for (const LiveJob& j : jobs) {
      if (j.type == type) return &j;
    }
    return nullptr;
  }
};

// [speculation], or a [[schedulers]] row's `speculation`: the speculator
// (scheduler/speculator.h) mr-sim hosts beside the policy, as the master
// does, by registry name and parameters.
struct SpeculationSpec {
  std::string name = "none";      // none | hadoop | late. Default: none
  sched::SchedulerParams params;
};

struct SchedulerRun {
  std::string name;               // registry name
  std::string label;              // shown in reports; default: the name
  sched::SchedulerParams params;
  std::optional<SpeculationSpec> speculation;  // this row's; unset = the scenario's
};

struct Scenario {
  std::string name;               // "joint-skew"
  std::string description;
  std::string dir;                // directory of the file (for trace paths)
  uint64_t seed = 1;
  ClusterSpec cluster;
  NetworkSpec network;
  DataSpec data;
  ServiceSpec service;
  std::vector<JobType> job_types;
  WorkloadSpec workload;
  RunSpec run;
  std::vector<SchedulerRun> schedulers;
  SpeculationSpec speculation;
  // A [speculation] table (or a row's own) was given: the runs report the
  // speculation figures (output.h); without one, the output is as it was
  // before speculation existed.
  bool speculation_given = false;
  // Scenario-level sweep: key (a dotted path in the file) -> values.
  std::vector<std::pair<std::string, std::vector<std::string>>> sweep;
  LiveSpec live;

  int JobTypeIndex(const std::string& name) const;
};

}  // namespace mr::sim
