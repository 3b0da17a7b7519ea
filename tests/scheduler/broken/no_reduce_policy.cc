// BROKEN ON PURPOSE (a greedy-local base with one bug; see tests/grade.sh): launches maps but never a reduce,
// so no job with reduces ever finishes.
#include <memory>

#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {
namespace {

// The docs' greedy-local policy (docs/schedulers.md, "Write your own"),
// the base of the bug below. Never registered in a default build:
// -DMR_EXTRA_POLICIES registers it (scheduler/CMakeLists.txt, tests/grade.sh).
class GreedyBase : public Scheduler {
 public:
  void OnJobAdded(const ClusterState& s, JobId job, TimeMs) override { index_.AddJob(s, job); }
  void OnJobFinished(const ClusterState&, JobId job, TimeMs) override { index_.RemoveJob(job); }
  void OnTaskFailed(const ClusterState& s, JobId job, int32_t i, bool is_map, TimeMs) override {
    index_.TaskPendingAgain(s, job, i, is_map);
  }
  void OnNodeLost(const ClusterState& s, NodeId, TimeMs) override { index_.Refresh(s); }

 protected:
  // Launches one map on `node` (node-local first, oldest job first); the
  // launched job and index, or false when none is pending.
  bool LaunchOneMap(const ClusterState& s, NodeId node, Launcher& launcher, JobId* job_out,
                    int32_t* index_out) {
    for (Locality level : {Locality::kNode, Locality::kOffDatacenter}) {
      for (JobId job : s.active_jobs()) {
        const int32_t m = index_.ObtainMap(s, job, node, level);
        if (m < 0) continue;
        launcher.LaunchMap(job, m);
        *job_out = job;
        *index_out = m;
        return true;
      }
    }
    return false;
  }
  void LaunchOneReduce(const ClusterState& s, NodeId node, Launcher& launcher) {
    if (s.node(node).free_reduce_slots() == 0) return;
    for (JobId job : s.active_jobs()) {
      const int32_t r = index_.ObtainReduce(s, job, node);
      if (r >= 0) {
        launcher.LaunchReduce(job, r);
        return;
      }
    }
  }

  JobTaskIndex index_;
};


class NoReducePolicy : public GreedyBase {
 public:
  const char* name() const override { return "broken-no-reduce"; }
  void Assign(const ClusterState& s, const Heartbeat& hb, Launcher& launcher) override {
    JobId job = 0;
    int32_t m = 0;
    while (s.node(hb.node).free_map_slots() > 0 && LaunchOneMap(s, hb.node, launcher, &job, &m)) {
    }
    // The bug: no LaunchOneReduce(s, hb.node, launcher).
  }
};

}  // namespace

const PolicyInfo& NoReducePolicyInfo() {
  static const PolicyInfo info{
      "broken-no-reduce", "broken on purpose: never launches a reduce (tests/grade.sh)", {},
      [](const SchedulerParams&, const SchedulerEnv&) -> Result<std::unique_ptr<Scheduler>> {
        return std::unique_ptr<Scheduler>(new NoReducePolicy());
      }};
  return info;
}

}  // namespace mr::sched
