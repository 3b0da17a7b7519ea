// FifoPolicy: Hadoop MRv1's default scheduler, JobQueueTaskScheduler
// (baselines.md §2), on the shared substrate of job_tasks.h (§1).
//
// Assumptions: every active job is RUNNING (jobs are initialised eagerly,
// as with Hadoop's EagerTaskInitializationListener); the host hands out no
// setup or cleanup tasks; speculative execution is the host's speculator's
// (speculator.h), not this policy's.
//
// Job order (§2 "Job order"): priority, highest first; then submit time;
// then job id. Kept by a FifoOrder (job_order.h), which re-sorts only when
// the set of active jobs changed: the key never changes after arrival, so a
// host that changes a job's priority must finish and re-add it (Hadoop
// re-inserts it into the JobQueue too).
//
// Cost per heartbeat (bench/scheduler_latency): the load sums and padding
// sums are kept per job from the events (OnJobAdded, OnMapFinished,
// OnReduceFinished, OnTaskFailed, OnJobFinished; every job on OnNodeLost),
// which the host must forward as scheduler.h says; the reduce walk visits,
// in queue order, only the jobs with a pending reduce past slow-start (an
// ordered set kept from the same events and from the policy's own
// launches): the others would yield none.
//
// Per heartbeat from node T (§2 "Per-heartbeat procedure"):
//   1. Load factors over the active jobs: mapLoad = Σ(maps − finished maps)
//      / cluster map slots; reduceLoad likewise, counting only jobs past
//      slow-start. Cluster slots and running tasks are those of live nodes,
//      taken once at the start of the heartbeat.
//   2. T's map cap = min(ceil(mapLoad × T.map_slots), T.map_slots);
//      available = cap − T.running_maps. This spreads maps when the cluster
//      is under-loaded.
//   3. If available > 0: exceededMapPadding (below).
//   4. Up to `available` times, walk the queue from its head:
//      a. ObtainMap(T, kDatacenter) — node, then rack (with racks), then
//         datacenter: Hadoop's obtainNewNodeOrRackLocalMapTask with rack =
//         datacenter. Found: launch; if padding is exceeded, stop maps;
//         else take the next slot, again from the head of the queue.
//      b. Else ObtainNonLocalMap on the same job. Found: launch and stop
//         maps for this heartbeat (at most one off-datacenter map, so T
//         does not steal other nodes' local work).
//      c. Else the next job. Consequences: strict FIFO — a head job with
//         only remote work takes a remote slot before a later job gets a
//         local one; T gets k local maps, or k local maps and 1 remote.
//      A failed map is offered first by the substrate whatever its
//      locality, so it comes through step a and does not end the loop (as
//      in Hadoop).
//   5. At most one reduce: available = min(min(ceil(reduceLoad ×
//      T.reduce_slots), T.reduce_slots) − T.running_reduces, 1). If > 0,
//      walk the jobs that have reduces, asking ObtainReduce (none before
//      the job's slow-start); the first found is launched. A job that
//      yields none while reduce padding is exceeded ends the walk, so under
//      padding pressure only the head job is tried.
//
// Padding (§2 "Padding"): walk the queue accumulating needed += the job's
// maps (or reduces); padding = min(T's slots of that kind, floor(needed ×
// capacity_pad)) when more than min_cluster_size_for_padding nodes are
// live, else 0; exceeded if running + padding ≥ capacity at any prefix.
// Hadoop's quirk is reproduced on purpose: the walk skips jobs with no
// reduces *for the map computation too*, so map-only jobs never count
// toward map padding (and a queue of only map-only jobs never pads).
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "scheduler/job_order.h"
#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct FifoOptions {
  // Fraction of the queued jobs' tasks kept free for failures beyond the
  // head job (mapred.jobtracker.taskalloc.capacitypad). In [0, 1].
  // Default: 0.01.
  double capacity_pad = 0.01;
  // Padding applies only with more live nodes than this
  // (MIN_CLUSTER_SIZE_FOR_PADDING). ≥ 0. Default: 3.
  int min_cluster_size_for_padding = 3;
  // How step 4 reads the topology (job_tasks.h Topology). kBlind: step a
  // is a node-local map, else the job's first map anywhere (Hadoop 0.20.2
  // with every node in one rack: no map is off-switch, so step b only ever
  // finds maps with no location). Default: kRackAsDatacenter.
  Topology topology = Topology::kRackAsDatacenter;
};

class FifoPolicy : public Scheduler {
 public:
  // InvalidArgument for options out of range.
  static Result<std::unique_ptr<FifoPolicy>> Create(const FifoOptions& options);

  const char* name() const override { return "fifo"; }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnMapFinished(const ClusterState& state, JobId job, int32_t index, TimeMs now) override;
  void OnReduceFinished(const ClusterState& state, JobId job, int32_t index, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

 private:
  // Cluster figures for one heartbeat, taken before any launch.
  struct Snapshot {
    int live_nodes = 0;
    int map_capacity = 0, reduce_capacity = 0;
    int running_maps = 0, running_reduces = 0;
  };

  explicit FifoPolicy(const FifoOptions& options) : options_(options) {}
  // A job's share of the load sums, as of its last event.
  struct Load {
    bool active = false;
    int64_t remaining_maps = 0;     // maps − finished maps
    int64_t remaining_reduces = 0;  // reduces − finished, past slow-start only
    bool reducible = false;         // in reducible_
  };
  // FIFO key of a job: (−priority, submit time, id) ascending = queue order.
  using Key = std::tuple<int, TimeMs, JobId>;
  void SortQueue(const ClusterState& state);
  void RefreshLoad(const ClusterState& state, JobId job);
  void DropLoad(const ClusterState& state, JobId job);
  void UpdateReducible(const ClusterState& state, JobId job);
  bool ExceededPadding(const ClusterState& state, const Snapshot& cluster, bool maps,
                       int node_slots) const;
  void AssignMaps(const ClusterState& state, const Snapshot& cluster, NodeId node,
                  Launcher& launcher);
  void AssignReduce(const ClusterState& state, const Snapshot& cluster, NodeId node,
                    Launcher& launcher);

  FifoOptions options_;
  JobTaskIndex tasks_;
  FifoOrder order_;
  std::vector<JobId> queue_;  // active jobs in FIFO order, from order_
  std::vector<Load> loads_;   // by JobId
  int64_t remaining_maps_ = 0, remaining_reduces_ = 0;  // Σ over active jobs
  // Padding sums over the active jobs that have reduces (Hadoop's quirk).
  int64_t padding_jobs_ = 0, padding_maps_ = 0, padding_reduces_ = 0;
  // Active jobs with reduces that may offer one (a pending reduce, past
  // slow-start), in queue order; the others would yield none.
  std::set<Key> reducible_;
};

// The registry entry: name "fifo", parameters capacity_pad,
// min_cluster_size_for_padding and topology.
const PolicyInfo& FifoPolicyInfo();

}  // namespace mr::sched
