// ProbabilisticPolicy: the probabilistic network-aware task placement of
// Shen, Sarker, Yu and Deng ("Probabilistic Network-Aware Task Placement for
// MapReduce Scheduling", paper 002, §II, Algorithms 1 and 2), over a
// pluggable job order. Registry name "probabilistic".
//
// Idea (§II-C): on a heartbeat, pick the task whose data is cheapest to move
// to this node, and launch it with a probability that is high when this
// node is much cheaper than an average free node and low when it is much
// dearer — instead of waiting for a local slot (delay scheduling).
//
// Costs (§II-B), with d(a, b) = ClusterState::Distance(a, b): hop counts by
// default, or the host's measured matrix — the paper's inverse transfer
// rates of §II-B3 — when it called SetDistances. Data moves from `a` to `b`.
//   - Map M_j on node i (Eq. 1): C = B_j × min over live replicas l of
//     d(l, i); B_j = MapTask::bytes. 0 when i holds a replica.
//   - Reduce R_f on node i (Eqs. 2–3): C = Σ_j d(p_j, i) × Î_jf over the
//     maps j placed (running or done) on node p_j (x_jp = 1), where Î_jf
//     estimates M_j's final output for partition f from its progress:
//     A_jf × B_j / d_read_j (Eq. 3) with A_jf = partition_bytes[f] and
//     d_read_j = bytes_read. A done map's output is final (Î = A); a map
//     that has read nothing yet, or reported nothing, adds A as is (0).
//   - Probability (Eq. 4, Eq. 5): P = 1 − exp(−C_avg / C), P = 1 at C = 0,
//     where C_avg is the same task's cost averaged over the N_m live nodes
//     with a free map slot (Alg. 1 line 6: "N_m be the number of data nodes
//     that have available map slots") — for reduces over the N_r live nodes
//     with a free reduce slot (§II-D). The heartbeating node is one of them.
//
// Per heartbeat from node n (maps, then reduces):
//   1. The job order (JobOrder, param job_order: "fair" default — §III uses
//      Hadoop's Fair Scheduler for the job level, §II-A — or "fifo") is
//      refreshed on job arrival and completion and at heartbeats every
//      500 ms (Hadoop's fair-scheduler update interval), and sorted before
//      every launch.
//   2. While n has a free map slot, each job in order is offered it
//      (Algorithm 1):
//      a. cost every pending map of the job on n (Eq. 1; Alg. 1 lines
//         2–4) and over the free nodes (line 6), and choose the map with
//         the largest P (line 9), compared as C_avg / C (P rises with it).
//         A local map (C = 0, P = 1) wins at once, the first by index.
//         Ties in P (the paper is silent): the cheaper map — §II-C: the
//         largest P "is actually corresponding to the task with the minimum
//         cost" — then the lowest index. Maps with no live replica (no
//         location; the paper has none, HDFS splits always have one) come
//         after every located map, as in Hadoop's findNewMapTask; their
//         cost is the same on every node, so C_avg / C = 1 and P = 1 − e⁻¹;
//      b. P from Eq. 4 (lines 5–7);
//      c. P < p_min: skip (lines 10–12); else launch if a draw U ∈ [0, 1)
//         from the seeded generator has U < P (lines 13–16). No draw is made
//         when P = 1 (it would always launch);
//      d. a launch ends the offer round: re-sort and offer the next free
//         slot. A skip or a rejected draw passes the slot to the next job
//         (Hadoop's assignTasks asks each job in turn). When no job takes
//         the slot, n gets no more maps this heartbeat ("skips the current
//         node D_i", §II-C).
//   3. Reduces likewise (Algorithm 2) for jobs past slow-start, with the
//      reduce cost (Eq. 3), the largest P (line 10, the same ties) and
//      Eq. 5, never on a node already running a reduce of the job (Alg. 2
//      line 1, §II-D: "we avoid running multiple reduce tasks of a job on
//      the same node"). Such a node is no candidate for the job's reduce,
//      so it is not one of the N_r nodes of its C_avg either.
//   4. Starvation escape (not in the paper; off by default): the paper
//      tunes P_min on history "at the time when all jobs finished
//      successfully" (§III) and has no bound on waiting, so a task whose
//      data nodes stay busy while far nodes stay free can wait forever. With
//      max_skips = N > 0, a job that has declined N offers in a row (skips
//      and rejected draws, counted separately for maps and reduces)
//      launches its chosen task at the next offer, whatever P; any launch
//      resets the count. max_skips = 0 (the default) is the paper's rule.
//
// Not modelled: failed tasks are not offered first and may run again on
// the node they failed on (the paper is silent; Hadoop's job_tasks.h
// order is not used because it ranks by locality level, not cost); no
// speculation. Cost of an offer: O(pending maps × replicas) when a map is
// local, else O(pending maps × free nodes × replicas); reduces O(placed
// maps × pending reduces) to sum the estimated outputs by node, then
// O(output nodes × N_r) per distinct column of those sums.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/job_order.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct ProbabilisticOptions {
  // P_min: an offer whose probability is below it is skipped (§III picks
  // 0.4 from history). In [0, 1]. Default: 0.4.
  double p_min = 0.4;
  // Declined offers in a row after which a job launches anyway (point 4,
  // not in the paper); 0 = never, the paper's rule. ≥ 0. Default: 0.
  int64_t max_skips = 0;
};

// Eq. 1: map `m`'s transmission cost on `node` (B_j × min distance over its
// live replicas); -1 when it has no live replica.
double MapCost(const ClusterState& state, const MapTask& m, NodeId node);
// Eq. 3: reduce `f` of `job`'s transmission cost on `node`, with each
// placed map's output estimated from its progress.
double ReduceCost(const ClusterState& state, const Job& job, int32_t f, NodeId node);
// Eq. 4 / Eq. 5: 1 − exp(−c_avg / c); 1 when c ≤ 0.
double PlacementProbability(double c_avg, double c);

class ProbabilisticPolicy : public Scheduler {
 public:
  // `draw` returns U ∈ [0, 1) (Alg. 1 line 13); the registry passes a
  // std::mt19937_64 seeded from SchedulerEnv, tests a fixed sequence.
  // REQUIRES: order and draw non-null, options valid (see
  // ProbabilisticPolicyInfo, which checks them).
  ProbabilisticPolicy(ProbabilisticOptions options, std::unique_ptr<JobOrder> order,
                      std::function<double()> draw);

  const char* name() const override { return "probabilistic"; }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

  const JobOrder& order() const { return *order_; }

 private:
  // What Algorithm 1 or 2 says about one job's offer.
  enum class Offer { kNone, kLaunched, kDeclined };
  Offer OfferMap(const ClusterState& state, JobId job, NodeId node, Launcher& launcher);
  Offer OfferReduce(const ClusterState& state, JobId job, NodeId node, Launcher& launcher);
  // Steps 2c and 4: launch with probability p, or after max_skips declines.
  bool Accept(double p, int64_t& skips);
  std::vector<JobId> Ordered(const ClusterState& state, bool maps) const;
  void UpdateOrder(const ClusterState& state, TimeMs now);
  int64_t& Skips(JobId job, bool maps);

  static constexpr TimeMs kUpdateIntervalMs = 500;  // mapred.fairscheduler.update.interval

  ProbabilisticOptions options_;
  std::unique_ptr<JobOrder> order_;
  std::function<double()> draw_;
  TimeMs last_update_ms_ = 0;
  bool updated_ = false;
  std::vector<int64_t> map_skips_, reduce_skips_;  // by JobId
  std::vector<NodeId> free_nodes_;  // this Assign phase's live nodes with a free slot
};

// "probabilistic": parameters p_min (double, 0.4), max_skips (int, 0) and
// job_order ("fair" or "fifo"); InvalidArgument for p_min outside [0, 1],
// a negative max_skips or an unknown order.
const PolicyInfo& ProbabilisticPolicyInfo();

}  // namespace mr::sched
