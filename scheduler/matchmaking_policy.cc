#include "scheduler/matchmaking_policy.h"

#include <algorithm>
#include <utility>

namespace mr::sched {

MatchmakingPolicy::MatchmakingPolicy(std::string name, std::unique_ptr<JobOrder> order)
    : name_(std::move(name)), order_(std::move(order)) {}

void MatchmakingPolicy::UpdateOrder(const ClusterState& state, TimeMs now) {
  order_->Update(state, now);
  last_update_ms_ = now;
  updated_ = true;
}

// Algorithm 2: a new job may hold local maps for any node, so every node
// gets its fair chance again.
void MatchmakingPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs now) {
  tasks_.AddJob(state, job);
  std::fill(markers_.begin(), markers_.end(), kNullMarker);
  UpdateOrder(state, now);
}

void MatchmakingPolicy::OnJobFinished(const ClusterState& state, JobId job, TimeMs now) {
  tasks_.RemoveJob(job);
  UpdateOrder(state, now);
}

void MatchmakingPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index,
                                     bool is_map, TimeMs) {
  tasks_.TaskPendingAgain(state, job, index, is_map);
}

void MatchmakingPolicy::OnNodeAdded(const ClusterState&, NodeId node, TimeMs) {
  Marker(node) = kNullMarker;
}

void MatchmakingPolicy::OnNodeLost(const ClusterState& state, NodeId, TimeMs) {
  tasks_.Refresh(state);
}

int MatchmakingPolicy::marker(NodeId node) const {
  const size_t i = static_cast<size_t>(node);
  return i < markers_.size() ? markers_[i] : kNullMarker;
}

int& MatchmakingPolicy::Marker(NodeId node) {
  const size_t i = static_cast<size_t>(node);
  if (i >= markers_.size()) markers_.resize(i + 1, kNullMarker);
  return markers_[i];
}

std::vector<JobId> MatchmakingPolicy::Ordered(const ClusterState& state, bool maps) const {
  std::vector<JobId> jobs = state.active_jobs();
  order_->Sort(state, maps, &jobs);
  return jobs;
}

void MatchmakingPolicy::AssignMaps(const ClusterState& state, NodeId node, Launcher& launcher) {
  const std::vector<JobId>& active = state.active_jobs();
  int& marker = Marker(node);
  while (state.node(node).free_map_slots() > 0) {
    if (std::none_of(active.begin(), active.end(),
                     [&](JobId id) { return state.job(id).pending_maps() > 0; })) {
      return;  // nothing to match: not a miss
    }
    const std::vector<JobId> jobs = Ordered(state, /*maps=*/true);
    // b. Any job's node-local map, in job order.
    bool found = false;
    for (JobId id : jobs) {
      if (state.job(id).pending_maps() == 0) continue;
      if (int32_t i = tasks_.ObtainMap(state, id, node, Locality::kNode); i >= 0) {
        launcher.LaunchMap(id, i);
        marker = std::max(marker, 0) + 1;
        found = true;
        break;
      }
    }
    if (found) continue;
    // c. A miss: the second in a row gets one non-local map, the first
    // only marks the node.
    if (marker == 0) {
      for (JobId id : jobs) {
        if (state.job(id).pending_maps() == 0) continue;
        if (int32_t i = tasks_.ObtainMap(state, id, node); i >= 0) {
          launcher.LaunchMap(id, i);
          break;
        }
      }
    }
    marker = 0;
    return;
  }
}

void MatchmakingPolicy::AssignReduce(const ClusterState& state, NodeId node, Launcher& launcher) {
  if (state.node(node).free_reduce_slots() <= 0) return;
  tasks_.SyncReduceReady(state);
  for (JobId id : Ordered(state, /*maps=*/false)) {
    if (!tasks_.MayGiveReduce(id)) continue;  // most jobs: without touching them
    if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
      launcher.LaunchReduce(id, i);
      return;
    }
  }
}

void MatchmakingPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  if (!updated_ || hb.now - last_update_ms_ >= kUpdateIntervalMs) UpdateOrder(state, hb.now);
  AssignMaps(state, hb.node, launcher);
  AssignReduce(state, hb.node, launcher);
}

PolicyInfo MatchmakingPolicyInfo(std::string name, std::string paper,
                                 std::function<std::unique_ptr<JobOrder>()> make_order) {
  return PolicyInfo{name,
                    std::move(paper),
                    {},
                    [name, make_order](const SchedulerParams&,
                                       const SchedulerEnv&) -> Result<std::unique_ptr<Scheduler>> {
                      return std::unique_ptr<Scheduler>(new MatchmakingPolicy(name, make_order()));
                    }};
}

const PolicyInfo& FifoMatchmakingPolicyInfo() {
  static const PolicyInfo info = MatchmakingPolicyInfo(
      "fifo-matchmaking",
      "Matchmaking: He, Lu & Swanson, \"Matchmaking: A New MapReduce Scheduling Technique\", IEEE CloudCom 2011, §III, Algs. 1-2; over "
      "Hadoop's FIFO job order",
      [] { return std::make_unique<FifoOrder>(); });
  return info;
}

const PolicyInfo& FairMatchmakingPolicyInfo() {
  static const PolicyInfo info = MatchmakingPolicyInfo(
      "fair-matchmaking",
      "Matchmaking: He, Lu & Swanson, \"Matchmaking: A New MapReduce Scheduling Technique\", IEEE CloudCom 2011, §III, Algs. 1-2; over "
      "the Hadoop Fair Scheduler's job order",
      [] { return std::make_unique<FairOrder>(); });
  return info;
}

}  // namespace mr::sched
