// RandomLocalPolicy: the course's lab 2 reference solution
// (docs/course/lab2-policy.md); not registered in the product.
//
// Per heartbeat from node T, for each free map slot of T:
//   1. a node-local map of an active job picked uniformly at random among
//      the jobs that have one;
//   2. else any pending map (Hadoop's search order, JobTaskIndex) of a job
//      picked uniformly at random among the jobs that have one.
// Then at most one reduce: from a job picked uniformly at random among the
// jobs past slow-start with a pending reduce.
//
// Randomness comes from the policy's own std::mt19937_64, seeded with
// SchedulerEnv::seed ([scheduler] seed on a live cluster, the scenario's
// seed in mr-sim), so a run is reproducible. Candidates are collected in
// active_jobs() order, which is the same in every host, before the draw.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

class RandomLocalPolicy : public Scheduler {
 public:
  explicit RandomLocalPolicy(uint64_t seed) : rng_(seed) {}
  const char* name() const override { return "random-local"; }

  void OnJobAdded(const ClusterState& s, JobId job, TimeMs) override { index_.AddJob(s, job); }
  void OnJobFinished(const ClusterState&, JobId job, TimeMs) override { index_.RemoveJob(job); }
  void OnTaskFailed(const ClusterState& s, JobId job, int32_t i, bool is_map, TimeMs) override {
    index_.TaskPendingAgain(s, job, i, is_map);
  }
  void OnNodeLost(const ClusterState& s, NodeId, TimeMs) override { index_.Refresh(s); }

  void Assign(const ClusterState& s, const Heartbeat& hb, Launcher& launcher) override;

 private:
  // Launches one map on `node` at `level` or nearer, from a random job;
  // false when no job has one.
  bool LaunchRandomMap(const ClusterState& s, NodeId node, Locality level, Launcher& launcher);

  JobTaskIndex index_;
  std::mt19937_64 rng_;
};

// The registry's entry: name "random-local", no parameters.
const PolicyInfo& RandomLocalPolicyInfo();

}  // namespace mr::sched
