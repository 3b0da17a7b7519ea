// FairPolicy: the Hadoop 1.x Fair Scheduler with delay scheduling
// (baselines.md §3, the 0.21/1.x MAPREDUCE-706 rewrite; Zaharia et al.,
// "Delay Scheduling", EuroSys'10 §3–4), on the shared substrate of
// job_tasks.h (§1). It is DelayAssigner (delay_scheduling.h) driven by
// FairOrder (job_order.h); this file holds the options and the registry
// entry.
//
// Assumptions: every active job is runnable (no maxRunningJobs limits);
// no speculative execution, no preemption (Hadoop's default is off), no
// pool caps (maxMaps), no size-based weight or weight booster; the host
// hands out no setup or cleanup tasks.
//
// Per heartbeat from node T (§3.3, with the step numbers of
// delay_scheduling.h and job_order.h):
//   1. Refresh demands and fair shares if update_interval_ms has passed
//      (§3.2: pools' weighted max-min shares with min shares over the
//      cluster's slots, 25 bisection steps; then the jobs' shares inside
//      each FAIR pool). Jobs arriving or leaving refresh at once.
//   2. Add the time since the previous heartbeat (of any node) to the wait
//      W of every job skipped at that heartbeat.
//   3. Caps: T's free slots of each type (assign_multiple), else 1 task.
//   4. Repeat, one task per pass, until both types are rejected (cap
//      reached, nothing runnable left in the cluster, or T above
//      ceil(slots × runnable / cluster slots)):
//      a. type: the open one; MAP if both open and T runs no more maps than
//         reduces;
//      b. order: pools by the FairShareComparator — pools below
//         min(min share, demand) first, by running / that minimum; the rest
//         by running / weight; ties by pool name — and each pool's jobs by
//         running / 2^priority (FIFO pools: priority, submit time), ties by
//         submit time, then job id;
//      c. ask each job in turn: a map at its allowed level (§3.4: NODE;
//         RACK = same datacenter once W ≥ node delay; ANY once W ≥ node +
//         rack delay; at once for a job with a pending map without
//         location), or a reduce after slow-start. The first task found
//         launches; a map sets the job's level to the task's actual level
//         and W = 0.
//   5. Mark every job asked for a map that launched none as skipped.
//
// Choices where Hadoop's sources leave it to the runtime: rack =
// datacenter (racks, when configured, only widen the RACK search to the
// node's rack first); the auto delay uses SchedulerEnv::heartbeat_ms (the
// interval the host announces), min(15 s, 1.5 × heartbeat); pools come
// from one string parameter instead of fair-scheduler.xml.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "scheduler/delay_scheduling.h"
#include "scheduler/job_order.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct FairOptions {
  // Wait for a node-local map before allowing a datacenter-local one
  // (mapred.fairscheduler.locality.delay.node); -1 = auto, min(15 s, 1.5 ×
  // heartbeat). ≥ -1. Default: -1.
  TimeMs node_locality_delay_ms = -1;
  // Further wait before allowing any map (locality.delay.rack); -1 = auto.
  // Default: -1.
  TimeMs rack_locality_delay_ms = -1;
  // Several tasks per heartbeat, up to the free slots
  // (mapred.fairscheduler.assignmultiple); false = one task in total.
  // Default: true.
  bool assign_multiple = true;
  // Pools: "name[:weight[:min_maps[:min_reduces[:fair|fifo]]]],..."
  // (ParsePools). Unlisted pools get weight 1, no min share, FAIR.
  // Default: "" (every pool on demand).
  std::string pools;
  // How often demands and fair shares are refreshed
  // (mapred.fairscheduler.update.interval); 0 = every heartbeat. ≥ 0.
  // Default: 500.
  TimeMs update_interval_ms = 500;
  // How a map is looked for at each allowed level (job_tasks.h Topology).
  // kBlind (Hadoop 0.20.2 with every node in one rack): NODE = the node;
  // RACK and ANY = the node, then the job's first map anywhere. Hadoop
  // 0.20.2's Fair Scheduler, JoSS's baseline, is this with both delays 0
  // (it has no delay scheduling) and assign_multiple = false (baselines.md
  // §3). Default: kRackAsDatacenter.
  Topology topology = Topology::kRackAsDatacenter;
};

class FairPolicy : public DelayPolicy {
 public:
  // InvalidArgument for options out of range or a bad pool spec.
  // `heartbeat_ms` resolves the auto delays.
  static Result<std::unique_ptr<FairPolicy>> Create(const FairOptions& options,
                                                    TimeMs heartbeat_ms);

  const char* name() const override { return "fair"; }

  // For tests and metrics: fair shares (per-job waits: DelayPolicy::delay).
  const FairOrder& order() const { return static_cast<const FairOrder&>(job_order()); }

 private:
  FairPolicy(const DelayOptions& options, std::unique_ptr<FairOrder> order)
      : DelayPolicy(options, std::move(order)) {}
};

// The registry entry: name "fair"; parameters node_locality_delay_ms,
// rack_locality_delay_ms, assign_multiple, pools, update_interval_ms,
// topology.
const PolicyInfo& FairPolicyInfo();

}  // namespace mr::sched
