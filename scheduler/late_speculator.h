// LateSpeculator: LATE, "Longest Approximate Time to End" (Zaharia,
// Konwinski, Joseph, Katz, Stoica: "Improving MapReduce Performance in
// Heterogeneous Environments", OSDI 2008, §4 and §4.2).
//
// At a heartbeat of node N with a free slot of a kind (maps, or reduces):
//   0. Nothing is pending (LATE's priorities: failed tasks, then
//      non-running tasks, then speculative ones; §4 "Hadoop's scheduler").
//   1. SpeculativeCap: fewer than max(1, floor(`cap` × live slots of the
//      kind)) backups of the kind run (default 10 %).
//   2. SlowNodeThreshold: N is not slow — its total progress (Σ progress
//      of every task of an active job that ran or runs there: 1 for a done
//      task, the attempt's score for a running one) is not below the
//      `slow_node_percentile` (25th) of the live nodes' totals.
//   3. Candidates: running tasks of the kind with no backup and no attempt
//      on N, that have run at least `min_run_ms`, whose progress rate
//      (progress / time running) is below SlowTaskThreshold: the
//      `slow_task_percentile` (25th) of the rates of their job's tasks of
//      that kind — running ones, and done ones at 1 / run time, so a last
//      straggler is still compared with the tasks that finished.
//   4. Rank by estimated time left, (1 − progress) / rate, longest first
//      (a rate of 0 is the longest of all); ties by job, then index.
//   5. With `require_gain` (ours, on by default; off = the paper's rule):
//      only tasks whose time left exceeds the mean run time of their job's
//      done tasks of the kind (a done reduce's counted from the end of its
//      job's last map, as a backup would not wait for maps) — a fresh
//      attempt would not finish sooner otherwise; and none before a task of
//      the kind is done in the job (no estimate yet: Hadoop 2's speculator
//      waits for one too). It keeps a homogeneous cluster from
//      backing up the slowest of equally fast tasks at every tail.
//   6. Reduces only once every map of their job is done (ours): until then
//      a reduce's copy third waits for maps, not for its node, and every
//      reduce of the job looks equally slow.
// Returns at most cap − running backups choices.
//
// Percentiles interpolate linearly between the closest ranks (numpy's
// default): the 25th of {1, 2, 3, 4} is 1.75.
#pragma once

#include "scheduler/speculator.h"

namespace mr::sched {

struct LateOptions {
  double cap = 0.1;                 // SpeculativeCap, a fraction of the kind's live slots
  double slow_node_percentile = 25; // SlowNodeThreshold
  double slow_task_percentile = 25; // SlowTaskThreshold
  TimeMs min_run_ms = 2000;         // a rate needs a few progress reports
  bool require_gain = true;
};

class LateSpeculator : public Speculator {
 public:
  explicit LateSpeculator(const LateOptions& options) : o_(options) {}
  const char* name() const override { return "late"; }
  std::vector<BackupChoice> Choose(const ClusterState& state, const Heartbeat& hb,
                                   bool maps) override;

 private:
  LateOptions o_;
};

// The p-th percentile (0..100) of `values`, interpolated; 0 when empty.
double Percentile(std::vector<double> values, double p);
// Each live node's total progress (step 2), by NodeId (dead nodes: 0).
std::vector<double> NodeProgress(const ClusterState& state);

const SpeculatorInfo& LateSpeculatorInfo();

}  // namespace mr::sched
