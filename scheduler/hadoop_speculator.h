// HadoopSpeculator: Hadoop 1's speculative execution
// (TaskInProgress.hasSpeculativeTask, JobInProgress.findSpeculativeTask).
//
// Rule, per kind (maps, or reduces), at a heartbeat of node N with a free
// slot of that kind:
//   1. Nothing is pending: no active job has a task of the kind that could
//      launch (pending work comes first, as in Hadoop's obtainNewMapTask).
//   2. A job's average progress is the mean progress score over all its
//      tasks of the kind: a done task counts 1, a pending one 0 (Hadoop's
//      mapProgress() / maps).
//   3. A running task qualifies when it has no backup and no attempt on N,
//      has run at least `lag_ms` (SPECULATIVE_LAG, 60 s), and its progress
//      is at least `gap` (SPECULATIVE_GAP, 0.2) below its job's average.
//   4. Order: jobs in submission order; within a job, maps with a replica
//      on N first, then in N's datacenter, then the rest (Hadoop searches
//      its running-task cache from the node outwards); then by index.
// One backup per task at a time (MAX_TASK_EXECS = 1); no cap on how many
// run at once.
#pragma once

#include "scheduler/speculator.h"

namespace mr::sched {

class HadoopSpeculator : public Speculator {
 public:
  // REQUIRES: 0 <= gap <= 1, lag_ms >= 0 (the make function checks).
  HadoopSpeculator(double gap, TimeMs lag_ms) : gap_(gap), lag_ms_(lag_ms) {}
  const char* name() const override { return "hadoop"; }
  std::vector<BackupChoice> Choose(const ClusterState& state, const Heartbeat& hb,
                                   bool maps) override;

 private:
  double gap_;
  TimeMs lag_ms_;
};

const SpeculatorInfo& HadoopSpeculatorInfo();

}  // namespace mr::sched
