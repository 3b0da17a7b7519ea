#include "scheduler/fifo_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mr::sched {

Result<std::unique_ptr<FifoPolicy>> FifoPolicy::Create(const FifoOptions& options) {
  if (!(options.capacity_pad >= 0 && options.capacity_pad <= 1)) {
    return Status::InvalidArgument("capacity_pad must be in [0, 1], got " +
                                   ParamToString(options.capacity_pad));
  }
  if (options.min_cluster_size_for_padding < 0) {
    return Status::InvalidArgument("min_cluster_size_for_padding must be >= 0, got " +
                                   std::to_string(options.min_cluster_size_for_padding));
  }
  return std::unique_ptr<FifoPolicy>(new FifoPolicy(options));
}

void FifoPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs) {
  tasks_.AddJob(state, job);
}

void FifoPolicy::OnJobFinished(const ClusterState&, JobId job, TimeMs) { tasks_.RemoveJob(job); }

void FifoPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                              TimeMs) {
  tasks_.TaskPendingAgain(state, job, index, is_map);
}

void FifoPolicy::OnNodeLost(const ClusterState& state, NodeId, TimeMs) { tasks_.Refresh(state); }

// Hadoop's JobQueueJobInProgressListener order: priority, start time, id.
void FifoPolicy::SortQueue(const ClusterState& state) {
  queue_ = state.active_jobs();
  std::sort(queue_.begin(), queue_.end(), [&](JobId a, JobId b) {
    const Job& x = state.job(a);
    const Job& y = state.job(b);
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
    return a < b;
  });
}

// Hadoop's exceededPadding, quirk included: jobs without reduces are
// skipped for maps too.
bool FifoPolicy::ExceededPadding(const ClusterState& state, const Snapshot& cluster, bool maps,
                                 int node_slots) const {
  const int running = maps ? cluster.running_maps : cluster.running_reduces;
  const int capacity = maps ? cluster.map_capacity : cluster.reduce_capacity;
  int64_t needed = 0;
  for (JobId id : queue_) {
    const Job& job = state.job(id);
    if (job.reduces.empty()) continue;
    needed += static_cast<int64_t>(maps ? job.maps.size() : job.reduces.size());
    int padding = 0;
    if (cluster.live_nodes > options_.min_cluster_size_for_padding) {
      const auto pad = static_cast<int64_t>(static_cast<double>(needed) * options_.capacity_pad);
      padding = static_cast<int>(std::min<int64_t>(node_slots, pad));
    }
    if (running + padding >= capacity) return true;
  }
  return false;
}

namespace {

// min(ceil(load × slots), slots): the node's share of the remaining work.
int LoadCap(int64_t remaining, int cluster_slots, int node_slots) {
  const double load =
      cluster_slots > 0 ? static_cast<double>(remaining) / static_cast<double>(cluster_slots) : 0;
  const double cap = std::ceil(load * static_cast<double>(node_slots));
  return cap >= node_slots ? node_slots : static_cast<int>(cap);
}

}  // namespace

void FifoPolicy::AssignMaps(const ClusterState& state, const Snapshot& cluster, NodeId node,
                            Launcher& launcher) {
  int64_t remaining = 0;
  for (JobId id : queue_) {
    const Job& job = state.job(id);
    remaining += static_cast<int64_t>(job.maps.size()) - job.finished_maps;
  }
  const Node& n = state.node(node);
  const int available = LoadCap(remaining, cluster.map_capacity, n.map_slots) - n.running_maps;
  if (available <= 0) return;
  const bool exceeded_padding = ExceededPadding(state, cluster, /*maps=*/true, n.map_slots);

  for (int slot = 0; slot < available; ++slot) {
    bool launched = false;
    for (JobId id : queue_) {
      if (state.job(id).pending_maps() == 0) continue;
      // a. Node, rack or datacenter local (or a failed map).
      if (int32_t i = tasks_.ObtainMap(state, id, node, Locality::kDatacenter); i >= 0) {
        launcher.LaunchMap(id, i);
        if (exceeded_padding) return;
        launched = true;
        break;  // next slot, from the head of the queue
      }
      // b. One off-datacenter map from the same job ends map assignment.
      if (int32_t i = tasks_.ObtainNonLocalMap(state, id, node); i >= 0) {
        launcher.LaunchMap(id, i);
        return;
      }
    }
    // Nothing anywhere: Hadoop would walk the queue again for each
    // remaining slot and find nothing again.
    if (!launched) return;
  }
}

void FifoPolicy::AssignReduce(const ClusterState& state, const Snapshot& cluster, NodeId node,
                              Launcher& launcher) {
  int64_t remaining = 0;
  for (JobId id : queue_) {
    const Job& job = state.job(id);
    if (job.reduces_may_start()) {
      remaining += static_cast<int64_t>(job.reduces.size()) - job.finished_reduces;
    }
  }
  const Node& n = state.node(node);
  const int available =
      std::min(LoadCap(remaining, cluster.reduce_capacity, n.reduce_slots) - n.running_reduces, 1);
  if (available <= 0) return;
  const bool exceeded_padding = ExceededPadding(state, cluster, /*maps=*/false, n.reduce_slots);
  for (JobId id : queue_) {
    if (state.job(id).reduces.empty()) continue;
    if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
      launcher.LaunchReduce(id, i);
      return;
    }
    if (exceeded_padding) return;
  }
}

void FifoPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  SortQueue(state);
  Snapshot cluster;
  for (const Node& n : state.nodes()) {
    if (!n.live) continue;
    ++cluster.live_nodes;
    cluster.map_capacity += n.map_slots;
    cluster.reduce_capacity += n.reduce_slots;
    cluster.running_maps += n.running_maps;
    cluster.running_reduces += n.running_reduces;
  }
  AssignMaps(state, cluster, hb.node, launcher);
  AssignReduce(state, cluster, hb.node, launcher);
}

const PolicyInfo& FifoPolicyInfo() {
  static const PolicyInfo info{
      "fifo",
      "Hadoop MRv1 JobQueueTaskScheduler (baselines.md §2)",
      {{"capacity_pad", 0.01,
        "fraction of the queued jobs' tasks kept free beyond the head job "
        "(mapred.jobtracker.taskalloc.capacitypad); in [0, 1]"},
       {"min_cluster_size_for_padding", int64_t{3},
        "padding applies only with more live nodes than this (MIN_CLUSTER_SIZE_FOR_PADDING)"}},
      [](const SchedulerParams& params, const SchedulerEnv&) -> Result<std::unique_ptr<Scheduler>> {
        FifoOptions options;
        options.capacity_pad = ParamDouble(params, "capacity_pad");
        const int64_t min_size = ParamInt(params, "min_cluster_size_for_padding");
        if (min_size < 0 || min_size > std::numeric_limits<int>::max()) {
          return Status::InvalidArgument("min_cluster_size_for_padding must be >= 0, got " +
                                         std::to_string(min_size));
        }
        options.min_cluster_size_for_padding = static_cast<int>(min_size);
        auto policy = FifoPolicy::Create(options);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
