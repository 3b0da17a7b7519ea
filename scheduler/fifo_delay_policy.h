// FifoDelayPolicy: FIFO job order with delay scheduling — the "FIFO with
// delay algorithm" baseline of the Matchmaking paper (He, Lu, Swanson;
// papers/003, §II-B and §IV), which ran Hadoop's Fair Scheduler with one
// pool in FIFO mode. Delay scheduling "is applicable to any scheduling
// policy (e.g., FIFO) that defines an order in which jobs should be given
// resources" (§II-B, after Zaharia et al. EuroSys'10 §3). It is
// DelayAssigner (delay_scheduling.h) driven by FifoOrder (job_order.h);
// this file holds the options and the registry entry.
//
// Assumptions: as FairPolicy (fair_policy.h): every job runnable, no
// speculation, no preemption.
//
// Per heartbeat from node T (delay_scheduling.h has the detail):
//   1. Jobs skipped at the previous heartbeat (of any node) add the time
//      since then to their wait W.
//   2. Repeat, one task per pass, while T has free slots the load cap
//      allows (assign_multiple; else one task in total); a map when T runs
//      no more maps than reduces:
//      a. walk the jobs in strict FIFO order — priority, submit time, id;
//      b. ask each for a map at its allowed level: node-local only while
//         W < D; also datacenter-local once W ≥ D; any once W ≥ 2D (or at
//         once if it has a pending map without location). A job that has
//         none is skipped and the walk goes on, so later jobs' local maps
//         run while the head waits; the first map found launches, sets the
//         job's level to the map's actual level and W = 0;
//      c. a reduce: the first job past slow-start with a pending reduce.
//   3. Jobs asked for a map that launched none are marked skipped.
//
// Choices (the paper is silent or describes a single level):
//   - D = delay_ms is both the node and the rack delay, as Hadoop's
//     mapred.fairscheduler.locality.delay sets both (and as the paper's
//     Hadoop ran it: RACK after D, ANY after 2D). On the paper's one-rack
//     cluster every non-node-local map was rack-local, so "non-local tasks
//     after D" is the same rule; with several datacenters it waits D more
//     before crossing datacenters.
//   - Default D: auto, min(15 s, 1.5 × heartbeat) — the default the paper
//     cites ("1.5 times the slave node's heartbeat interval", 4.5 s with
//     its 3 s heartbeat); its sweep used 0.1–10 × heartbeat (0.3–30 s).
//   - The rest of the Fair Scheduler's loop is kept (assign_multiple, the
//     load cap, the map/reduce alternation): the paper's point that "a node
//     [may] obtain multiple non-local map tasks in a heartbeat" holds here
//     as it did there.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <memory>

#include "common/status.h"
#include "scheduler/delay_scheduling.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct FifoDelayOptions {
  // D: the wait for a node-local map before a datacenter-local one, and
  // again before any map; -1 = auto, min(15 s, 1.5 × heartbeat). ≥ -1.
  // Default: -1.
  TimeMs delay_ms = -1;
  // Several tasks per heartbeat up to the free slots; false = one task in
  // total. Default: true.
  bool assign_multiple = true;
};

class FifoDelayPolicy : public DelayPolicy {
 public:
  // InvalidArgument for options out of range; `heartbeat_ms` resolves auto.
  static Result<std::unique_ptr<FifoDelayPolicy>> Create(const FifoDelayOptions& options,
                                                         TimeMs heartbeat_ms);

  const char* name() const override { return "fifo-delay"; }

 private:
  explicit FifoDelayPolicy(const DelayOptions& options);
};

// The registry entry: name "fifo-delay"; parameters delay_ms,
// assign_multiple.
const PolicyInfo& FifoDelayPolicyInfo();

}  // namespace mr::sched
