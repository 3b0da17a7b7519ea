// Delay scheduling as the Hadoop 1.x Fair Scheduler runs it (baselines.md
// §3.3–3.4; Zaharia et al., EuroSys'10, Alg. 2 with the waits W1, W2 as
// time): the per-job wait machine (LocalityDelay) and the heartbeat loop
// (DelayAssigner) over any JobOrder. The `fair` policy runs it with
// FairOrder, `fifo-delay` with FifoOrder ("applicable to any policy that
// orders jobs": Zaharia §3; Matchmaking paper §II-B).
//
// Levels: Hadoop's NODE / RACK / ANY with rack = datacenter (baselines §1:
// node = VPS, rack = datacenter, off-switch = other datacenter). A job at
// RACK searches node, rack (when configured) and datacenter (JobTaskIndex
// cap kDatacenter, Hadoop's obtainNewNodeOrRackLocalMapTask); at NODE only
// the node; at ANY everything (obtainNewMapTask).
//
// LocalityDelay — per job: the level of its last launched map (NODE at
// first) and W, the time it has waited for a local map.
//   1. BeginHeartbeat(now) (updateLocalityWaitTimes): every job marked
//      skipped at the previous heartbeat — of any node: the clock is global
//      — gets W += now − previous heartbeat's now; marks clear. The first
//      heartbeat adds nothing.
//   2. Allowed(job) (getAllowedLocalityLevel): ANY if the job has a pending
//      map with no location; else by the last level:
//        NODE: ANY if W ≥ node + rack delay; RACK if W ≥ node delay; NODE.
//        RACK: ANY if W ≥ rack delay; else RACK.       ANY: ANY.
//      (Hadoop's starved-pool escape needs preemption timeouts, which are
//      ∞ by default; not modelled.)
//   3. Visit(job): the job was asked for a map this heartbeat.
//   4. Launched(job, level): a map of the job launched; its actual level
//      becomes the last level and W = 0 (updateLastMapLocalityLevel). So a
//      job returns to NODE only by launching a node-local map.
//   5. EndHeartbeat(): every visited job that launched no map is marked
//      skipped. Jobs never asked do not accrue wait.
//
// DelayAssigner — FairScheduler.assignTasks for heartbeat node T:
//   0. Refresh the order and the runnable totals (Σ job demand, job_order.h)
//      when update_interval_ms has passed since the last refresh, and on
//      every job arrival and departure (Hadoop's update thread; jobAdded
//      also updates). Between refreshes demands are stale, as in Hadoop.
//   1. LocalityDelay step 1.
//   2. Caps: with assign_multiple, T's free map and reduce slots; without,
//      one task in total.
//   3. Loop, one task per pass. A type is rejected when its cap is reached,
//      when the cluster runs as many tasks of it as are runnable, or when
//      CapBasedLoadManager refuses: T may run at most ceil(T.slots ×
//      min(1, runnable / cluster slots)) (load.max.diff 0). Both rejected,
//      or one task given without assign_multiple: stop. Type: the open one;
//      if both, MAP when T.running_maps ≤ T.running_reduces (counting this
//      heartbeat's launches). Sort the jobs with the order; ask each in
//      turn — maps at LocalityDelay::Allowed (steps 2–4), reduces by
//      JobTaskIndex::ObtainReduce (slow-start, no locality); the first task
//      found is launched. None found: reject the type.
//   4. LocalityDelay step 5.
// Every active job is asked, even one with no pending map (Hadoop's visited
// set), so such a job accrues wait too. Tasks come from the shared
// substrate (job_tasks.h): failed maps first, whatever the level.
//
// Not thread-safe (one host thread); no I/O, no clock: time is
// Heartbeat::now.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/job_order.h"
#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

// Hadoop's LocalityLevel.
enum class DelayLevel : int8_t { kNode = 0, kRack = 1, kAny = 2 };
const char* DelayLevelName(DelayLevel level);
// kNode → NODE; kRack and kDatacenter → RACK; kOffDatacenter → ANY.
DelayLevel DelayLevelOf(Locality locality);
// The JobTaskIndex search cap for a level: kNode, kDatacenter, kOffDatacenter.
Locality SearchCap(DelayLevel level);

// The Fair Scheduler's auto delay: min(15 s, 1.5 × heartbeat interval).
TimeMs AutoLocalityDelay(TimeMs heartbeat_ms);

class LocalityDelay {
 public:
  // REQUIRES: delays ≥ 0.
  LocalityDelay(TimeMs node_delay_ms, TimeMs rack_delay_ms)
      : node_delay_ms_(node_delay_ms), rack_delay_ms_(rack_delay_ms) {}

  // A new job starts at NODE with W = 0. RemoveJob forgets it (unknown
  // jobs are not an error).
  void AddJob(JobId job);
  void RemoveJob(JobId job);

  void BeginHeartbeat(TimeMs now);
  // REQUIRES: AddJob(job). `unlocated_pending`: the job has a pending map
  // with no location.
  DelayLevel Allowed(JobId job, bool unlocated_pending) const;
  void Visit(JobId job);
  void Launched(JobId job, DelayLevel level);
  void EndHeartbeat();

  // For tests and metrics.
  TimeMs waited(JobId job) const { return Get(job).waited; }
  DelayLevel last_level(JobId job) const { return Get(job).last; }
  TimeMs node_delay_ms() const { return node_delay_ms_; }
  TimeMs rack_delay_ms() const { return rack_delay_ms_; }

 private:
  struct JobWait {
    bool known = false;
    DelayLevel last = DelayLevel::kNode;
    TimeMs waited = 0;
    bool skipped = false;   // visited and launched nothing at the last heartbeat
    bool visited = false;   // this heartbeat
    bool launched = false;  // a map, this heartbeat
  };
  const JobWait& Get(JobId job) const;
  JobWait& Mut(JobId job);

  TimeMs node_delay_ms_, rack_delay_ms_;
  std::vector<JobWait> jobs_;  // by JobId
  std::vector<JobId> visited_, skipped_;
  bool had_heartbeat_ = false;
  TimeMs last_heartbeat_ms_ = 0;
};

struct DelayOptions {
  TimeMs node_delay_ms = 1500;      // W1 (locality.delay.node); ≥ 0
  TimeMs rack_delay_ms = 1500;      // W2 (locality.delay.rack); ≥ 0
  bool assign_multiple = true;      // several tasks per heartbeat
  TimeMs update_interval_ms = 500;  // demand/order refresh; 0 = every heartbeat
  // kBlind: one rack holds every node, so a launched map is NODE or RACK,
  // and RACK searches the node, then every located map (job_tasks.h).
  Topology topology = Topology::kRackAsDatacenter;
};

class DelayAssigner {
 public:
  DelayAssigner(const DelayOptions& options, std::unique_ptr<JobOrder> order);

  // The owning policy forwards its events and Assign.
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now);
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now);
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map);
  void OnNodeLost(const ClusterState& state);
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher);

  const JobOrder& order() const { return *order_; }
  const LocalityDelay& delay() const { return delay_; }

 private:
  void Update(const ClusterState& state, TimeMs now);
  bool UnlocatedPending(const ClusterState& state, JobId job) const;
  void NoteUnlocated(const ClusterState& state, JobId job);
  // Asks the sorted jobs for one task of the type; true if one launched.
  bool AssignOne(const ClusterState& state, NodeId node, bool map, Launcher& launcher);

  DelayOptions options_;
  std::unique_ptr<JobOrder> order_;
  JobTaskIndex tasks_;
  LocalityDelay delay_;
  std::vector<char> unlocated_;  // by JobId: some map has no replica
  bool updated_ = false;
  TimeMs last_update_ms_ = 0;
  DemandSnapshot demand_;                         // demands as of the last Update
  int runnable_maps_ = 0, runnable_reduces_ = 0;  // Σ demand at the last Update
  std::vector<JobId> sorted_;                     // scratch
};

// The Scheduler side of a policy that is a DelayAssigner over some order
// (`fair`: FairOrder; `fifo-delay`: FifoOrder): the events and Assign go
// to the assigner; a subclass adds its name, options and registry entry.
class DelayPolicy : public Scheduler {
 public:
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override {
    core_.OnJobAdded(state, job, now);
  }
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override {
    core_.OnJobFinished(state, job, now);
  }
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs) override {
    core_.OnTaskFailed(state, job, index, is_map);
  }
  void OnNodeLost(const ClusterState& state, NodeId, TimeMs) override { core_.OnNodeLost(state); }
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override {
    core_.Assign(state, hb, launcher);
  }

  // For tests and metrics: per-job waits and levels.
  const LocalityDelay& delay() const { return core_.delay(); }

 protected:
  DelayPolicy(const DelayOptions& options, std::unique_ptr<JobOrder> order)
      : core_(options, std::move(order)) {}
  const JobOrder& job_order() const { return core_.order(); }

 private:
  DelayAssigner core_;
};

}  // namespace mr::sched
