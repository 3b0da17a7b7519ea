// PandasPolicy: Pandas, the Priority Algorithm for Near-Data Scheduling
// (paper 001, §IV-A "Early Detection of Hot-Spots", §IV-B "Serve the Right
// Remote Task", §VI-C–E Algorithms 1–3, Eq. 1), over a pluggable job order.
// "fifo-pandas" composes it with Hadoop's FIFO order (Alg. 2), "fair-pandas"
// with the Hadoop Fair Scheduler's order (Alg. 3): Pandas is a task-level
// algorithm that "readily takes job priority information" from a job-level
// one (§IV, Fig. 4), so the order is a JobOrder component (job_order.h).
//
// Words (§IV-A): a map is *local* to a node holding a replica of its block,
// *rack-local* to a node in the same rack, *remote* otherwise. "Rack" is the
// rack when racks are configured, else the datacenter (as the Hadoop
// baselines do, baselines.md §1). Only maps are queued; reduces are not in
// the paper.
//
// State: one queue Q_n of pending maps per node (the paper's nodeQueues),
// each map in exactly one queue (its nodeAssigned), and per node the set of
// queued maps local to it (nodeTasks). A queue is ordered by job (JobOrder)
// and, within a job, by arrival. Its length |Q_n| counts queued maps only:
// a map leaves its queue when it launches (Alg. 2 lines 16–17).
//
// 1. Job arrival (Alg. 1, §IV-A "Load Balancing"): each pending map of the
//    job, in index order, joins the shortest queue among its local nodes
//    (live, with map slots). Ties are broken at random, as the prose says
//    (Alg. 1 as printed keeps the first), with the seeded generator of the
//    SchedulerEnv over the tied nodes in id order. A map with no such node
//    (no location, or every replica lost) joins the *unplaced* list (not in
//    the paper; see step 3e).
// 2. Thresholds (Eq. 1): T_r = σ_r/σ_l and T_s = σ_s/σ_l, where σ_l, σ_r,
//    σ_s are the average run times of local, rack-local and remote maps,
//    read from Measurements: σ_l = kNode; with racks σ_r = kRack and σ_s the
//    sample-weighted mean of kDatacenter and kOffDatacenter ("all remote
//    tasks", §IV-B); without racks σ_r = kDatacenter, σ_s = kOffDatacenter.
//    Parameters `tr` / `ts` ≥ 0 fix a threshold instead (the paper fixes
//    them per trace, §VII-A4). With `window` = W > 0 the averages are over
//    the last W samples of each locality (the sliding window the paper
//    leaves to future work, §IV-B). The host does not report a map's run
//    time in OnMapFinished, so the policy recovers each sample from the
//    change in Measurements (count and average) since the previous call;
//    it never reads a clock. While σ_l or the other average is unmeasured,
//    that threshold is 0 (serve greedily, as the Hadoop schedulers the
//    paper measured its slowdowns under, §VII-A4): otherwise no rack-local
//    or remote map would ever run and Eq. 1 could never be evaluated.
// 3. Heartbeat from node m (Alg. 2 / Alg. 3), once per free map slot, the
//    first step that yields a map wins:
//    a. local first: Q_m not empty → its head-of-line map: the best job in
//       Q_m by the JobOrder (Alg. 3 lines 2–4; for FifoOrder this is Alg. 2's
//       FIFO head), that job's earliest-queued map;
//    b. local queued elsewhere: among the queued maps local to m, those in
//       the longest queue (ties: lowest node id; the unplaced list counts as
//       a queue, after every node), and of them the best job's earliest map
//       (Alg. 3 lines 5–13);
//    c. rack-local: the longest queue of another node in m's rack, if its
//       length > T_r: its head-of-line map (lines 14–16);
//    d. remote: the longest queue of a node outside m's rack, if its length
//       > T_s: its head-of-line map (lines 17–19). Ties in c and d: lowest
//       node id;
//    e. unplaced maps (not in the paper): the head-of-line one, with no
//       threshold — it has no local node to wait for, so every node is as
//       good as any other.
//    The launched map leaves its queue and every nodeTasks set.
// 4. Reduces (not in the paper; as Hadoop's schedulers, which Pandas
//    accelerates): at most one per heartbeat, from the first job in the
//    order (asked for reduce slots) with one to give after its slow-start,
//    through the shared substrate (job_tasks.h ObtainReduce: failed reduces
//    first).
// 5. Events (not in the paper, which assumes no failures): a failed map, and
//    every map a lost node gave back (running or finished output), rejoins
//    by step 1. A lost node's queue is redistributed by step 1 over the
//    map's other live local nodes (or the unplaced list). A node that is
//    added or comes back takes, by step 1, the unplaced maps local to it;
//    other queues are not rebalanced (load balancing happens at arrival
//    only, §IV-A).
//
// The order is updated (JobOrder::Update) on job arrival and completion
// and at heartbeats when 500 ms have passed (Hadoop's fair-scheduler update
// interval); Sort is asked for every map served. A failed map is not kept
// off the node it failed on (the paper is silent). The nodeTasks sets hold
// the replicas a map had when it was queued (a later prefetch is not seen).
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/job_order.h"
#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct PandasOptions {
  // Rack threshold T_r (step 3c); -1 = derive by Eq. 1. Default: -1.
  double tr = -1;
  // Remote threshold T_s (step 3d); -1 = derive by Eq. 1. Default: -1.
  double ts = -1;
  // Samples per locality in the sliding window for Eq. 1; 0 = every sample
  // (Measurements' averages). Default: 0.
  int64_t window = 0;

  // InvalidArgument naming the field: tr or ts negative but not -1, window
  // negative.
  Status Validate() const;
};

class PandasPolicy : public Scheduler {
 public:
  // `name` is what name() reports (the registry key); `order` is the job
  // order applied inside each queue; `seed` drives the random tie-break of
  // step 1. REQUIRES: order != nullptr, options.Validate().ok().
  PandasPolicy(std::string name, std::unique_ptr<JobOrder> order, PandasOptions options,
               uint64_t seed);

  const char* name() const override { return name_.c_str(); }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnMapFinished(const ClusterState& state, JobId job, int32_t index, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeAdded(const ClusterState& state, NodeId node, TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

  // For tests and logs.
  static constexpr NodeId kUnplaced = -2;  // the unplaced list
  // |Q_node| (kUnplaced: the unplaced list's length).
  int queue_length(NodeId node) const;
  // The queue map `index` of `job` waits in, kUnplaced, or kNoNode when it
  // is not queued.
  NodeId assigned(JobId job, int32_t index) const;
  // T_r and T_s as step 3 would use them now.
  double rack_threshold(const ClusterState& state) const;
  double remote_threshold(const ClusterState& state) const;

 private:
  struct Queue {
    std::map<JobId, std::map<uint64_t, int32_t>> jobs;  // job → (arrival seq → map index)
    int size = 0;
  };
  struct Placed {
    NodeId queue = kNoNode;     // a node, kUnplaced, or kNoNode (not queued)
    uint64_t seq = 0;           // arrival order in its queue
    std::vector<NodeId> local;  // distinct replicas when queued (nodeTasks keys)
  };
  struct Pick {
    JobId job = -1;
    int32_t index = -1;
  };

  Queue& QueueOf(NodeId queue) { return queue == kUnplaced ? unplaced_ : queues_[queue]; }
  int Length(NodeId queue) const;
  Placed& PlacedOf(const ClusterState& state, JobId job, int32_t index);
  void Grow(const ClusterState& state);
  // Step 1 for one pending, unqueued map.
  void Enqueue(const ClusterState& state, JobId job, int32_t index);
  // Takes the map out of its queue and nodeTasks sets; not queued is fine.
  void Dequeue(const ClusterState& state, JobId job, int32_t index);
  // Queues every pending map of the active jobs that is not queued.
  void EnqueueStray(const ClusterState& state);
  // The best job's earliest map in `q` (step 3a), dropping stale entries.
  Pick HeadOfLine(const ClusterState& state, NodeId queue);
  Pick LocalQueuedElsewhere(const ClusterState& state, NodeId node);
  // The longest queue of a live node n ≠ node with SameRack(node, n) == `rack`.
  NodeId LongestQueue(const ClusterState& state, NodeId node, bool rack) const;
  Pick NextMap(const ClusterState& state, NodeId node);
  void AssignReduce(const ClusterState& state, NodeId node, Launcher& launcher);
  void UpdateOrder(const ClusterState& state, TimeMs now);
  // The mean run time of maps at `levels`, over the window (or
  // Measurements); 0 = unmeasured.
  double Sigma(const ClusterState& state, std::initializer_list<Locality> levels) const;
  double Threshold(const ClusterState& state, double fixed, bool rack) const;

  static constexpr TimeMs kUpdateIntervalMs = 500;  // mapred.fairscheduler.update.interval

  std::string name_;
  std::unique_ptr<JobOrder> order_;
  PandasOptions options_;
  std::mt19937_64 rng_;
  TimeMs last_update_ms_ = 0;
  bool updated_ = false;
  uint64_t next_seq_ = 0;
  JobTaskIndex tasks_;         // reduces only
  std::vector<Queue> queues_;  // nodeQueues, by NodeId
  Queue unplaced_;
  std::vector<std::map<JobId, std::set<int32_t>>> local_;  // nodeTasks, by NodeId
  std::vector<std::vector<Placed>> placed_;                // by JobId, map index
  // Sliding window (options_.window > 0): recent run times per locality,
  // and the Measurements seen at the last OnMapFinished.
  std::deque<double> window_[4];
  int64_t seen_samples_[4] = {0, 0, 0, 0};
  double seen_avg_[4] = {0, 0, 0, 0};
};

// A registry entry for Pandas over the order `make_order` returns (a new one
// for each policy made), with parameters tr, ts and window.
PolicyInfo PandasPolicyInfo(std::string name, std::string paper,
                            std::function<std::unique_ptr<JobOrder>()> make_order);

// "fifo-pandas": Pandas over FifoOrder (Alg. 2).
const PolicyInfo& FifoPandasPolicyInfo();
// "fair-pandas": Pandas over FairOrder with no configured pools (Alg. 3).
const PolicyInfo& FairPandasPolicyInfo();

}  // namespace mr::sched
