// JobTaskIndex: which pending task a job offers a node — the layer every
// Hadoop-style policy (FIFO, Fair, Capacity, FIFO+delay) shares, as
// Hadoop's schedulers share JobInProgress (baselines.md §1, §8 "Shared
// substrate"). Policies decide *which job* asks; this decides *which task*.
//
// The index (Hadoop's nonRunningMapCache) keeps, per job:
//   - node → pending maps with a replica on that node,
//   - rack → pending maps with a replica in that rack (racks configured),
//   - datacenter → pending maps with a replica in that datacenter,
//   - the maps with no replica at all (Hadoop's nonLocalMaps),
//   - the maps and reduces that failed at least once,
//   - the pending reduces.
// Lists are cleaned lazily: an entry that is no longer pending is dropped
// when a search meets it. Obtain* does not reserve the task it returns;
// launch it, or it is offered again.
//
// ObtainMap(node, max_level) searches in Hadoop's findNewMapTask order:
//   0. failed maps, ignoring locality: most failures first (Hadoop's
//      failComparator), then the lowest index;
//   1. around the node, bottom up, stopping after `max_level`
//      (maxCacheLevel): the node, then its rack (only when racks are
//      configured), then its datacenter; if the cap is reached, -1;
//   2. other datacenters (Hadoop: "breadth-wise over the other racks");
//   3. maps with no location.
// ObtainNonLocalMap (Hadoop's obtainNewNonLocalMapTask, cap -1) does steps
// 0, 2 and 3. Within a step, the lowest task index wins (across all other
// datacenters in step 2). At every step a task that already failed on this
// node is skipped, unless it has failed on as many nodes as are live
// (Hadoop's findTaskFromList).
//
// Caps: kNode = obtainNewNodeLocalMapTask; kDatacenter = Hadoop's
// obtainNewNodeOrRackLocalMapTask in our topology (baselines.md §1: rack =
// datacenter; with racks configured it searches node, rack, datacenter);
// kRack = node and rack (node only when racks are not configured);
// kOffDatacenter = obtainNewMapTask (no cap).
//
// ObtainReduce: none before the job's slow-start; then failed reduces
// (most failures first), then the lowest pending index; skipping reduces
// that failed on this node as above. Reduces have no locality here.
//
// Not here: speculative execution (Hadoop's step 4 and speculative reduces)
// is the speculator's (speculator.h), which the host runs after the
// policy; no per-job tracker blacklist. A task is never offered while it
// runs.
//
// Who calls what: the owning policy forwards its events — AddJob from
// OnJobAdded, RemoveJob from OnJobFinished, TaskPendingAgain from
// OnTaskFailed, Refresh from OnNodeLost (and whenever replicas change) —
// and calls Obtain* from Assign. Obtain* on a job it was not told about
// aborts (a policy bug). Not thread-safe; no I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/cluster_state.h"

namespace mr::sched {

// How a Hadoop-style policy reads the topology (the `topology` parameter of
// fifo, fair and capacity).
enum class Topology : int8_t {
  // Hadoop 1.x with a topology script that makes each datacenter a rack
  // (baselines.md §1): node, rack (when configured), datacenter, others.
  kRackAsDatacenter = 0,
  // Hadoop 0.20.2 as JoSS compares with it (JoSS §1, §3: blind to
  // datacenters): no topology script, every node in /default-rack. A
  // node-local map, else the job's lowest-index map anywhere: every
  // located map is "rack-local", none off-switch.
  kBlind = 1,
};
// "rack-as-datacenter" / "blind" → *out; false for anything else.
bool ParseTopology(const std::string& text, Topology* out);
// The error for a bad value: "topology must be rack-as-datacenter or blind, got '...'".
std::string TopologyError(const std::string& text);

class JobTaskIndex {
 public:
  JobTaskIndex();
  ~JobTaskIndex();
  JobTaskIndex(const JobTaskIndex&) = delete;
  JobTaskIndex& operator=(const JobTaskIndex&) = delete;

  // Indexes every pending task of `job`.
  void AddJob(const ClusterState& state, JobId job);
  // Forgets the job; unknown jobs are not an error.
  void RemoveJob(JobId job);
  bool Contains(JobId job) const;
  // A task of `job` is pending again after a failure (Hadoop's failMap /
  // failReduce). Not an error if it is not pending.
  void TaskPendingAgain(const ClusterState& state, JobId job, int32_t index, bool is_map);
  // Re-indexes every pending task of every indexed job: after a node loss
  // (its tasks and finished maps are pending again) or replica changes.
  void Refresh(const ClusterState& state);

  // The index of a pending map of `job` for `node`, or -1 (order above).
  // With Topology::kBlind the whole cluster is one rack: kNode searches the
  // node; kRack and kDatacenter the node, then every located map (lowest
  // index); kOffDatacenter also the maps with no location.
  int32_t ObtainMap(const ClusterState& state, JobId job, NodeId node,
                    Locality max_level = Locality::kOffDatacenter,
                    Topology topology = Topology::kRackAsDatacenter);
  // Steps 0, 2, 3 only: failed maps, other datacenters, no location.
  int32_t ObtainNonLocalMap(const ClusterState& state, JobId job, NodeId node);
  // The index of a pending reduce of `job` for `node`, or -1 (also before
  // slow-start).
  int32_t ObtainReduce(const ClusterState& state, JobId job, NodeId node);

  // For reduce walks over every job in some order, where most jobs have no
  // reduce to give: SyncReduceReady brings a byte per job ("has a pending
  // reduce past slow-start") up to date from the state's change log, O(changes);
  // then MayGiveReduce(job) false means ObtainReduce(job) would return -1,
  // without touching the job. True promises nothing: ask ObtainReduce.
  // REQUIRES for MayGiveReduce: SyncReduceReady since the state last changed
  // (a launch in between only turns true into "maybe").
  void SyncReduceReady(const ClusterState& state);
  bool MayGiveReduce(JobId job) const {
    const size_t j = static_cast<size_t>(job);
    return j < reduce_ready_.size() && reduce_ready_[j];
  }

 private:
  struct Lists;
  Lists& Get(JobId job, const char* caller);
  void Index(const ClusterState& state, JobId job, Lists& lists, int32_t index);
  int32_t Obtain(const ClusterState& state, JobId job, NodeId node, int cap, bool blind);

  std::vector<std::unique_ptr<Lists>> jobs_;  // by JobId; null when not indexed
  std::vector<uint8_t> reduce_ready_;         // by JobId (SyncReduceReady)
  uint64_t reduce_ready_seq_ = 0;             // ClusterState::change_seq() read up to
};

}  // namespace mr::sched
