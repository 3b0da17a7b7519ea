// JobOrder: the order in which a policy asks jobs for a task — the one thing
// FIFO, Fair and their locality add-ons (delay scheduling, Matchmaking,
// Pandas, the probabilistic scheduler) differ in. A policy composes an order
// instead of copying another policy (docs/schedulers.md, "Write your own").
//
// Shape (Mesos' Sorter, reduced to two calls):
//   - Update(state, now): recompute what the order caches (demands, fair
//     shares). Hadoop's Fair Scheduler does this in its update thread every
//     500 ms and on job arrival; call it then. Orders without a cache ignore
//     it. Sort never requires it: a job unseen at the last Update is
//     weighed by its live demand.
//   - Sort(state, for_maps, &jobs): reorder `jobs` (active job ids) best
//     first, for map or reduce slots. Cheap enough to call once per task
//     launched (Hadoop re-sorts before every assignment); reads running
//     counts live, so a launch is seen by the next Sort.
// Every order is total: ties end on the job id, so the result does not
// depend on the input order.
//
// FifoOrder — Hadoop's JobQueueJobInProgressListener and the Fair
// Scheduler's FifoComparator (baselines.md §2 "Job order"): priority,
// highest first; then submit time; then job id.
//
// FairOrder — the Hadoop 1.x Fair Scheduler (baselines.md §3.1–3.3):
//   1. Pools: a job's pool is Job::pool ("" = "default"). Pools named in
//      the spec get its weight, min shares and mode; any other pool is made
//      on demand with weight 1, min shares 0, FAIR (Hadoop's PoolManager).
//   2. Demand (§3.1): a job's map demand is its unfinished maps (pending +
//      running); its reduce demand is its unfinished reduces once
//      slow-start has passed, else 0. A pool's demand is the sum. No
//      speculation, so no extra attempts count; no pool caps (maxMaps).
//   3. Update (§3.2 step 2–3): fair shares by ComputeFairShares, for pools
//      over the live cluster's slots, then inside each FAIR pool for its
//      jobs over the pool's share (job min share 0); FIFO pools give their
//      jobs share 0. The shares are for reading (metrics, tests, future
//      preemption): Hadoop's comparator does not use them. Update records
//      their inputs; they are computed on first read.
//   4. Sort (§3.3 "FairShareComparator"): pools first, then each pool's
//      jobs, concatenated. With minShare = min(min share, demand), a
//      schedulable is needy when running < minShare; needy ones come first,
//      ordered by running / max(minShare, 1); the others by running /
//      weight. Ties: start time, then name — pools have start time 0 (as in
//      Hadoop's PoolSchedulable), so pools tie on name; jobs on submit time,
//      then id (Hadoop's job name is its id). Jobs have min share 0, so a
//      job is never needy; a job's weight is its priority factor 2^priority
//      (VERY_HIGH 4, HIGH 2, NORMAL 1, LOW 0.5, VERY_LOW 0.25; priorities
//      outside [-2, 2] are clamped). Jobs of a FIFO pool are in FifoOrder.
// Not modelled (defaults in Hadoop too): size-based weight, the new-job
// weight booster, maxRunningJobs limits (every job is runnable), pool caps.
//
// Not thread-safe (one host thread); no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/cluster_state.h"
#include "scheduler/demand_snapshot.h"

namespace mr::sched {

class JobOrder {
 public:
  virtual ~JobOrder() = default;
  virtual const char* name() const = 0;
  // Refreshes cached demands and shares from `state`. Default: nothing.
  virtual void Update(const ClusterState& state, TimeMs now) { (void)state, (void)now; }
  // Reorders `jobs` (ids of active jobs, any order) best first for map
  // (`for_maps`) or reduce slots.
  virtual void Sort(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const = 0;
};

// FifoOrder's key (priority, submit time, id) never changes after a job
// arrives, so Sort keeps its last answer: when asked again for the same set
// of jobs (the usual case: state.active_jobs() between arrivals and
// completions) it copies the cached order, O(n) with no comparisons; when
// the set changed it drops the jobs that left and merges in the new ones,
// O(n + k log k). A host that changes a job's priority (or submit time)
// after the order has seen it must make the order forget it: call Sort
// once without that job, then with it again (or use a fresh FifoOrder).
class FifoOrder : public JobOrder {
 public:
  const char* name() const override { return "fifo"; }
  void Sort(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const override;
  // True when `a` goes before `b` (priority desc, submit time, id).
  static bool Before(const Job& a, const Job& b);

 private:
  // The last Sort's input and answer, and scratch marks by JobId.
  mutable const ClusterState* cached_state_ = nullptr;
  mutable std::vector<JobId> cached_input_;
  mutable std::vector<JobId> cached_order_;
  mutable std::vector<uint8_t> mark_;
  mutable std::vector<JobId> added_, merged_;
};

// One schedulable for ComputeFairShares.
struct ShareInput {
  double weight = 1;  // > 0
  double min_share = 0;
  double demand = 0;
};

// Hadoop's SchedulingAlgorithms.computeFairShares: finds R such that
// share_i = clamp(weight_i × R, min_share_i, demand_i) sums to
// min(Σ demand, total_slots): R doubles from 1 until enough, then 25
// bisection steps; the shares use the upper end. Returns one share per
// input, in order.
std::vector<double> ComputeFairShares(const std::vector<ShareInput>& inputs, double total_slots);

// A job's demand for map or reduce slots (point 2 above).
int JobDemand(const Job& job, bool for_maps);
// The Fair Scheduler's job weight: 2^priority, priority clamped to [-2, 2].
double PriorityWeight(int priority);

struct PoolSpec {
  std::string name;
  double weight = 1.0;  // > 0
  int min_maps = 0;     // ≥ 0, guaranteed map slots (minMaps)
  int min_reduces = 0;  // ≥ 0 (minReduces)
  bool fifo = false;    // schedulingMode FIFO (default FAIR)
};

// Parses "name[:weight[:min_maps[:min_reduces[:fair|fifo]]]],...", e.g.
// "prod:2:10:5,adhoc:1:0:0:fifo" (spaces around fields are ignored; "" =
// no pools). InvalidArgument naming the bad entry for an empty or repeated
// name, a weight ≤ 0, a negative or non-integer min share, or an unknown
// mode.
Result<std::vector<PoolSpec>> ParsePools(const std::string& spec);

class FairOrder : public JobOrder {
 public:
  explicit FairOrder(std::vector<PoolSpec> pools = {});

  const char* name() const override { return "fair"; }
  void Update(const ClusterState& state, TimeMs now) override;
  void Sort(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const override;

  // The pool a job belongs to ("default" for an empty Job::pool).
  static const std::string& PoolName(const Job& job);
  // Fair shares as of the last Update; 0 for a pool or job it did not see.
  double PoolFairShare(const std::string& pool, bool for_maps) const;
  double JobFairShare(JobId job, bool for_maps) const;

 private:
  struct Shares {
    double map = 0, reduce = 0;
  };
  // Sort's cache, one per slot kind: each pool's jobs in their in-pool
  // order, and the key and demand each job was placed by. A Sort asked for
  // the same jobs as the last one, or for state.active_jobs() when the last
  // one was too, reads only the jobs the state logged as changed since
  // (ClusterState::ChangedJobsSince; also since the demand snapshot the
  // last Sort used, when an Update came between) and re-places those whose
  // key (running count, priority, submit time) changed, lists the new ones
  // and drops the ones that left: O(k log n + k n/w) for k changes (a
  // memmove per move), then O(n) to copy the answer. Otherwise a full pass
  // compares every job's key, drops the jobs that left and merges in the
  // new ones, O(n + k log k). Either way the (few) pools are ordered afresh
  // from their totals. A job's pool must not change once the order has
  // seen it (as for FifoOrder: make the order forget it first).
  struct PoolEntry {
    PoolSpec spec;
    int rank = 0;                 // position in name order
    std::vector<JobId> jobs;      // in-pool order, jobs of the last Sort
    int running = 0, demand = 0;  // this Sort's totals (scratch)
    size_t kept = 0, moved = 0;   // this Sort's counts (scratch)
  };
  struct JobEntry {
    uint64_t epoch = 0;  // the last Sort that was asked (or re-read) this job
    int32_t pool = -1;
    bool in = false;     // in a PoolEntry::jobs
    bool moved = false;  // key changed this Sort: re-place
    int running = 0, priority = 0;
    TimeMs submit_ms = 0;
    int demand = 0;      // counted in its pool's total
  };
  struct OrderCache {
    const ClusterState* state = nullptr;
    uint64_t epoch = 0;
    size_t size = 0;  // jobs in the pools' lists
    // The last Sort: its input, whether that was state.active_jobs(), the
    // log position, and the demand snapshot it read (DemandSnapshot's
    // state, refreshes and seq).
    std::vector<JobId> input;
    bool input_active = false;
    uint64_t log_seq = 0;  // ClusterState::change_seq() when last sorted
    const ClusterState* demand_state = nullptr;
    uint64_t demand_refreshes = 0, demand_seq = 0;
    std::vector<PoolEntry> pools;
    std::map<std::string, int32_t> pool_index;
    std::vector<JobEntry> jobs;  // by JobId
    std::vector<JobId> placed, merged;
    std::vector<int32_t> pool_order;
  };
  const PoolSpec& Spec(const std::string& pool) const;
  int Demand(const ClusterState& state, JobId job, bool for_maps) const;
  // The plain full sort (no cache): for small subsets and repeated ids.
  void SortFresh(const ClusterState& state, bool for_maps, std::vector<JobId>* jobs) const;
  static void ResetCache(OrderCache& c);
  // The in-pool order of cached entries (then pool index, for placing).
  static bool InPoolBefore(const OrderCache& c, JobId a, JobId b);
  // The fast path's step for one logged job (`in_now`: asked this Sort):
  // drop it if it left, queue it for PlaceAndOrder if it is new or its key
  // changed (out of its pool's list), and bring its pool's totals up to
  // date.
  void Reconcile(const ClusterState& state, bool for_maps, OrderCache& c, JobId id, bool in_now,
                 uint64_t epoch) const;
  // Takes a listed job out of its pool's list (found by its cached key).
  static void Unlist(OrderCache& c, JobId id);
  // The cache's pool index for the job's pool, made on first use.
  int32_t CachePool(OrderCache& c, const Job& job) const;
  // Sort's steps: compare every job's key with the cache, recount the pool
  // totals and take out what left or moved (resets `c` on a repeated id);
  // then put the moved and new jobs back, order the pools, write `jobs`.
  void FullPass(const ClusterState& state, bool for_maps, const std::vector<JobId>& input,
                OrderCache& c, uint64_t epoch) const;
  void PlaceAndOrder(bool for_maps, OrderCache& c, std::vector<JobId>* jobs) const;

  std::map<std::string, PoolSpec> specs_;  // configured pools by name
  PoolSpec default_spec_;                  // for pools made on demand
  // Update records what the shares are computed from (the active jobs in
  // order — demand_.active() —, their demands, pools and priorities, and
  // the slots); the shares themselves are computed on first read, as
  // Update would have.
  struct ShareKey {
    int32_t pool = -1;
    int priority = 0;
  };
  int32_t PoolId(JobId id, const Job& job);
  void ComputeShares() const;

  std::map<std::string, int32_t> pool_ids_;  // pool name → index in pool_names_
  std::vector<std::string> pool_names_;
  std::vector<int32_t> job_pool_;            // by JobId, -1 unknown
  std::vector<ShareKey> share_keys_;         // by JobId, as of the last Update
  int share_map_slots_ = 0, share_reduce_slots_ = 0;
  mutable bool shares_stale_ = false;
  mutable std::map<std::string, Shares> pool_shares_;
  mutable std::vector<Shares> job_shares_;  // by JobId
  DemandSnapshot demand_;  // demands as of the last Update
  mutable OrderCache cache_[2];  // [for_maps]
};

}  // namespace mr::sched
