// DemandSnapshot: every active job's map and reduce demand (JobDemand in
// job_order.h) as of the last Refresh, and their sums — what the Hadoop
// Fair Scheduler's update thread computes every 500 ms and on job arrival
// and departure (baselines.md §3.1–3.2). FairOrder::Update and
// DelayAssigner::Update call Refresh; between Refreshes the figures stay as
// they were (stale, as in Hadoop).
//
// A Refresh re-reads only the jobs ClusterState logged as changed since the
// previous one (ClusterState::ChangedJobsSince), so it costs O(jobs changed)
// rather than O(active jobs): with thousands of active jobs and a Refresh
// at every arrival and departure (Joint §6's Fair Scheduler at λ = 48 under
// skew), re-reading every job was most of a run's time. The figures are
// exactly those of a re-read of state.active_jobs(): a job's demand is a
// function of the job alone, every change of a job is logged, and a job is
// active exactly between its AddJob and its FinishJob (both logged). The
// first Refresh, one with another state, and one after the log has dropped
// changes this snapshot did not see re-read every active job.
//
// Not thread-safe (one host thread); no I/O.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/cluster_state.h"

namespace mr::sched {

class DemandSnapshot {
 public:
  // Brings the snapshot to `state` now. Afterwards reread() lists every job
  // whose entry was re-read (a caller caching more per-job facts re-reads
  // those too): the changed jobs, once each, or every active job.
  void Refresh(const ClusterState& state);

  // True when `job` was active at the last Refresh.
  bool seen(JobId job) const {
    return job >= 0 && static_cast<size_t>(job) < entries_.size() &&
           entries_[static_cast<size_t>(job)].seen;
  }
  // Its demand then; 0 when not seen.
  int demand(JobId job, bool for_maps) const {
    if (!seen(job)) return 0;
    const Entry& e = entries_[static_cast<size_t>(job)];
    return for_maps ? e.maps : e.reduces;
  }
  // Σ demand over the jobs active at the last Refresh.
  int total(bool for_maps) const { return for_maps ? total_maps_ : total_reduces_; }
  // state.active_jobs() at the last Refresh (ascending ids).
  const std::vector<JobId>& active() const { return active_; }
  const std::vector<JobId>& reread() const { return reread_; }
  // The state of the last Refresh (nullptr before the first), its
  // change_seq() then, and the Refreshes so far: a caller that cached
  // figures read at seq() knows every job whose figures changed since is
  // logged after it.
  const ClusterState* state() const { return state_; }
  uint64_t seq() const { return seq_; }
  uint64_t refreshes() const { return refresh_; }

 private:
  struct Entry {
    bool seen = false;
    int maps = 0, reduces = 0;
    uint64_t mark = 0;  // the Refresh that last re-read it
  };
  // Re-reads one job: drops its old figures from the sums, adds the new.
  void Reread(const ClusterState& state, JobId job, bool active);

  const ClusterState* state_ = nullptr;
  uint64_t seq_ = 0;      // ClusterState::change_seq() at the last Refresh
  uint64_t refresh_ = 0;  // Refreshes so far (Entry::mark)
  std::vector<Entry> entries_;  // by JobId
  std::vector<JobId> active_, reread_;
  int total_maps_ = 0, total_reduces_ = 0;
};

}  // namespace mr::sched
