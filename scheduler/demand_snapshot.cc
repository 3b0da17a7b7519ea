#include "scheduler/demand_snapshot.h"

#include <algorithm>
#include <span>

#include "scheduler/job_order.h"

namespace mr::sched {

void DemandSnapshot::Refresh(const ClusterState& state) {
  ++refresh_;
  reread_.clear();
  const std::vector<JobId>& active = state.active_jobs();
  std::span<const JobId> changed;
  if (&state == state_ && state.ChangedJobsSince(seq_, &changed)) {
    // Only a logged job can have a new demand or have come or gone; active
    // ids ascend (submission order), so membership is a binary search.
    for (JobId id : changed) {
      Reread(state, id, std::binary_search(active.begin(), active.end(), id));
    }
  } else {
    entries_.clear();
    total_maps_ = total_reduces_ = 0;
    for (JobId id : active) Reread(state, id, /*active=*/true);
  }
  active_ = active;
  seq_ = state.change_seq();
  state_ = &state;
}

void DemandSnapshot::Reread(const ClusterState& state, JobId job, bool active) {
  if (job < 0) return;
  const auto j = static_cast<size_t>(job);
  if (entries_.size() <= j) entries_.resize(j + 1);
  Entry& e = entries_[j];
  if (e.mark == refresh_) return;  // logged more than once
  e.mark = refresh_;
  if (e.seen) total_maps_ -= e.maps, total_reduces_ -= e.reduces;
  e.seen = active;
  e.maps = active ? JobDemand(state.job(job), /*for_maps=*/true) : 0;
  e.reduces = active ? JobDemand(state.job(job), /*for_maps=*/false) : 0;
  total_maps_ += e.maps;
  total_reduces_ += e.reduces;
  reread_.push_back(job);
}

}  // namespace mr::sched
