// MatchmakingPolicy: the Matchmaking scheduling technique of He, Lu and
// Swanson (paper 003, §III, Algorithms 1 and 2 in Tables 1 and 2), over a
// pluggable job order, on the shared substrate of job_tasks.h
// (baselines.md §1). "fifo-matchmaking" composes it with Hadoop's FIFO
// order, as the paper's "FIFO with matchmaking".
//
// Idea (§III): every node gets a fair chance to grab its local maps before
// any node gets a non-local one. Local maps are preferred over non-local
// ones whichever job they belong to (the job order is relaxed, as in delay
// scheduling), and a per-node locality marker decides when a node that
// finds nothing local may take a non-local map. No parameter to tune.
//
// "Local" is node-local, the paper's definition (a task "executed on a
// node that contains its input data"). Rack- and datacenter-local maps are
// non-local to the marker; when a non-local map is handed out, the
// substrate still prefers the node's rack, then its datacenter, then other
// datacenters, then maps with no location.
//
// Marker values: null (never missed, or cleared), 0 (marked: missed once,
// and every miss since), n ≥ 1 (n local maps since the last miss).
//
// The job order is a JobOrder component (job_order.h): FifoOrder gives the
// paper's "FIFO with matchmaking", FairOrder its "Fair with matchmaking"
// (one job queue, fair sharing among jobs, §IV-A). The policy calls
// order->Update on job arrival and completion and, at heartbeats, when
// 500 ms have passed since the last call (Hadoop's fair-scheduler update
// interval); Sort is asked before every launch.
//
// Per heartbeat from node T (Algorithm 1):
//   1. While T has a free map slot and some active job has a pending map
//      (with none there is nothing to match, so it is not a miss; the
//      paper is silent):
//      a. order the active jobs (JobOrder::Sort for maps; re-asked on
//         every pass, so a fair order sees the launch just made);
//      b. the first job in that order with a node-local map for T
//         (ObtainMap(T, kNode)) gives it; marker = (null or 0 → 1, else
//         + 1); next pass;
//      c. none: a miss. If the marker was 0 (T already missed on its
//         previous try), T gets one non-local map — ObtainMap(T, any level)
//         of the first job in the order with a pending map — and map
//         assignment ends (at most one non-local map per heartbeat, §III
//         "Third"); the marker stays 0, so T's next miss again gets one.
//         Otherwise the marker becomes 0 and map assignment ends with
//         nothing more (first miss: "the node gets no map task for this
//         heartbeat interval").
//   2. When a job is added, every marker is cleared (Algorithm 2), as is a
//      node's marker when it is added or comes back.
//   3. Reduces (the paper is silent; as Hadoop's FIFO scheduler, which the
//      paper modified): at most one per heartbeat, from the first job in
//      the order (asked with maps = false) that has one to give
//      (ObtainReduce: none before the job's slow-start).
//
// Algorithm 1 as printed cannot reach its non-local branch: after a miss
// previousMarker == LocalityMarker, so it always takes the "mark and
// break" branch, and "else if LocalityMarker == 0" follows a local find
// (marker ≥ 1). We implement the prose of §III ("first time in a row" →
// nothing; "second time in a row" → one non-local task), which is what
// the pseudo-code means with the test on previousMarker == 0.
//
// Unlike FIFO, Matchmaking applies no load-factor cap and no padding:
// Algorithm 1 fills every free slot it can. A failed map is offered first
// by the substrate whatever its locality (Hadoop's findNewMapTask step 0),
// so it comes through step 1b and counts as a local find.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/job_order.h"
#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

class MatchmakingPolicy : public Scheduler {
 public:
  // `name` is what name() reports (the registry key); `order` is the job
  // order it relaxes. REQUIRES: order != nullptr.
  MatchmakingPolicy(std::string name, std::unique_ptr<JobOrder> order);

  const char* name() const override { return name_.c_str(); }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeAdded(const ClusterState& state, NodeId node, TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

  const JobOrder& order() const { return *order_; }
  // The node's locality marker: kNullMarker, 0 (marked) or the local maps
  // since its last miss. For tests and logs.
  static constexpr int kNullMarker = -1;
  int marker(NodeId node) const;

 private:
  int& Marker(NodeId node);
  void AssignMaps(const ClusterState& state, NodeId node, Launcher& launcher);
  void AssignReduce(const ClusterState& state, NodeId node, Launcher& launcher);
  std::vector<JobId> Ordered(const ClusterState& state, bool maps) const;

  void UpdateOrder(const ClusterState& state, TimeMs now);

  static constexpr TimeMs kUpdateIntervalMs = 500;  // mapred.fairscheduler.update.interval

  std::string name_;
  std::unique_ptr<JobOrder> order_;
  TimeMs last_update_ms_ = 0;
  bool updated_ = false;
  JobTaskIndex tasks_;
  std::vector<int> markers_;  // by NodeId
};

// A registry entry for Matchmaking over the order `make_order` returns (a
// new one for each policy made); no parameters. This is how an ordering
// component becomes a policy in one line.
PolicyInfo MatchmakingPolicyInfo(std::string name, std::string paper,
                                 std::function<std::unique_ptr<JobOrder>()> make_order);

// "fifo-matchmaking": Matchmaking over FifoOrder.
const PolicyInfo& FifoMatchmakingPolicyInfo();
// "fair-matchmaking": Matchmaking over FairOrder with no configured pools
// (each Job::pool is a pool of weight 1, "" = "default").
const PolicyInfo& FairMatchmakingPolicyInfo();

}  // namespace mr::sched
