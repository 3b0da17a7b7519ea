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

void FifoPolicy::RefreshLoad(const ClusterState& state, JobId job) {
  if (static_cast<size_t>(job) >= loads_.size()) loads_.resize(static_cast<size_t>(job) + 1);
  Load& l = loads_[static_cast<size_t>(job)];
  const Job& j = state.job(job);
  if (!l.active) {
    l.active = true;
    if (!j.reduces.empty()) {
      ++padding_jobs_;
      padding_maps_ += static_cast<int64_t>(j.maps.size());
      padding_reduces_ += static_cast<int64_t>(j.reduces.size());
    }
  }
  remaining_maps_ -= l.remaining_maps;
  remaining_reduces_ -= l.remaining_reduces;
  l.remaining_maps = static_cast<int64_t>(j.maps.size()) - j.finished_maps;
  l.remaining_reduces =
      j.reduces_may_start() ? static_cast<int64_t>(j.reduces.size()) - j.finished_reduces : 0;
  remaining_maps_ += l.remaining_maps;
  remaining_reduces_ += l.remaining_reduces;
  UpdateReducible(state, job);
}

void FifoPolicy::UpdateReducible(const ClusterState& state, JobId job) {
  Load& l = loads_[static_cast<size_t>(job)];
  const Job& j = state.job(job);
  const bool want = l.active && !j.reduces.empty() && j.pending_reduces() > 0 &&
                    j.reduces_may_start();
  if (want == l.reducible) return;
  const Key key{-j.priority, j.submit_ms, job};
  if (want) {
    reducible_.insert(key);
  } else {
    reducible_.erase(key);
  }
  l.reducible = want;
}

void FifoPolicy::DropLoad(const ClusterState& state, JobId job) {
  if (job < 0 || static_cast<size_t>(job) >= loads_.size()) return;
  Load& l = loads_[static_cast<size_t>(job)];
  if (!l.active) return;
  remaining_maps_ -= l.remaining_maps;
  remaining_reduces_ -= l.remaining_reduces;
  if (l.reducible) {
    const Job& j = state.job(job);
    reducible_.erase(Key{-j.priority, j.submit_ms, job});
  }
  l = Load{};
}

void FifoPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs) {
  tasks_.AddJob(state, job);
  RefreshLoad(state, job);
}

void FifoPolicy::OnJobFinished(const ClusterState& state, JobId job, TimeMs) {
  tasks_.RemoveJob(job);
  if (job >= 0 && static_cast<size_t>(job) < loads_.size() &&
      loads_[static_cast<size_t>(job)].active) {
    const Job& j = state.job(job);
    if (!j.reduces.empty()) {
      --padding_jobs_;
      padding_maps_ -= static_cast<int64_t>(j.maps.size());
      padding_reduces_ -= static_cast<int64_t>(j.reduces.size());
    }
  }
  DropLoad(state, job);
}

void FifoPolicy::OnMapFinished(const ClusterState& state, JobId job, int32_t, TimeMs) {
  if (tasks_.Contains(job)) RefreshLoad(state, job);
}

void FifoPolicy::OnReduceFinished(const ClusterState& state, JobId job, int32_t, TimeMs) {
  if (tasks_.Contains(job)) RefreshLoad(state, job);
}

void FifoPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                              TimeMs) {
  tasks_.TaskPendingAgain(state, job, index, is_map);
  RefreshLoad(state, job);
}

void FifoPolicy::OnNodeLost(const ClusterState& state, NodeId, TimeMs) {
  tasks_.Refresh(state);
  // Finished maps of unfinished jobs are pending again: every job's load.
  for (JobId id : state.active_jobs()) {
    if (tasks_.Contains(id)) RefreshLoad(state, id);
  }
}

// Hadoop's JobQueueJobInProgressListener order: priority, start time, id.
void FifoPolicy::SortQueue(const ClusterState& state) {
  queue_ = state.active_jobs();
  order_.Sort(state, /*for_maps=*/true, &queue_);
}

// Hadoop's exceededPadding, quirk included: jobs without reduces are
// skipped for maps too. Hadoop tests every prefix of the queue; `needed`
// only grows along it, so the padding does too and the whole queue (the
// sums kept from the events) decides.
bool FifoPolicy::ExceededPadding(const ClusterState&, const Snapshot& cluster, bool maps,
                                 int node_slots) const {
  if (padding_jobs_ == 0) return false;  // no prefix is tested
  const int running = maps ? cluster.running_maps : cluster.running_reduces;
  const int capacity = maps ? cluster.map_capacity : cluster.reduce_capacity;
  const int64_t needed = maps ? padding_maps_ : padding_reduces_;
  int padding = 0;
  if (cluster.live_nodes > options_.min_cluster_size_for_padding) {
    const auto pad = static_cast<int64_t>(static_cast<double>(needed) * options_.capacity_pad);
    padding = static_cast<int>(std::min<int64_t>(node_slots, pad));
  }
  return running + padding >= capacity;
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
  const int64_t remaining = remaining_maps_;
  const Node& n = state.node(node);
  const int available = LoadCap(remaining, cluster.map_capacity, n.map_slots) - n.running_maps;
  if (available <= 0) return;
  const bool exceeded_padding = ExceededPadding(state, cluster, /*maps=*/true, n.map_slots);

  for (int slot = 0; slot < available; ++slot) {
    bool launched = false;
    for (JobId id : queue_) {
      if (state.job(id).pending_maps() == 0) continue;
      // a. Node, rack or datacenter local (or a failed map).
      if (int32_t i = tasks_.ObtainMap(state, id, node, Locality::kDatacenter, options_.topology);
          i >= 0) {
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
  const int64_t remaining = remaining_reduces_;
  const Node& n = state.node(node);
  const int available =
      std::min(LoadCap(remaining, cluster.reduce_capacity, n.reduce_slots) - n.running_reduces, 1);
  if (available <= 0) return;
  const bool exceeded_padding = ExceededPadding(state, cluster, /*maps=*/false, n.reduce_slots);
  // Hadoop walks the jobs with reduces in queue order; a job that yields
  // none ends the walk under padding pressure. Jobs outside reducible_
  // yield none, so: under pressure only the first job with reduces is
  // tried; else the reducible ones, in order.
  auto launch = [&](JobId id) {
    if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
      launcher.LaunchReduce(id, i);
      UpdateReducible(state, id);
      return true;
    }
    return false;
  };
  if (exceeded_padding) {
    for (JobId id : queue_) {
      if (state.job(id).reduces.empty()) continue;
      if (static_cast<size_t>(id) < loads_.size() && loads_[static_cast<size_t>(id)].reducible) {
        launch(id);
      }
      return;
    }
    return;
  }
  for (const Key& key : reducible_) {
    if (launch(std::get<2>(key))) return;
  }
}

void FifoPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  SortQueue(state);
  // O(1): a sum over the nodes here made each beat O(nodes), 5 % of the
  // master at 4,000 workers (issue 29).
  Snapshot cluster;
  cluster.live_nodes = state.live_nodes();
  cluster.map_capacity = state.total_map_slots();
  cluster.reduce_capacity = state.total_reduce_slots();
  cluster.running_maps = state.live_running_attempts(true);
  cluster.running_reduces = state.live_running_attempts(false);
  AssignMaps(state, cluster, hb.node, launcher);
  AssignReduce(state, cluster, hb.node, launcher);
}

const PolicyInfo& FifoPolicyInfo() {
  static const PolicyInfo info{
      "fifo",
      "Apache Hadoop 1.2 default scheduler (JobQueueTaskScheduler): jobs by priority, then "
      "submit time",
      {{"capacity_pad", 0.01,
        "fraction of the queued jobs' tasks kept free beyond the head job "
        "(mapred.jobtracker.taskalloc.capacitypad); in [0, 1]"},
       {"min_cluster_size_for_padding", int64_t{3},
        "padding applies only with more live nodes than this (MIN_CLUSTER_SIZE_FOR_PADDING)"},
       {"topology", std::string("rack-as-datacenter"),
        "rack-as-datacenter: node, then the node's rack (when configured) and datacenter, then "
        "others (Hadoop 1.x with a rack per datacenter); blind: a node-local map, else the "
        "job's first map anywhere (Hadoop 0.20.2 with every node in one rack, as in JoSS)"}},
      [](const SchedulerParams& params, const SchedulerEnv&) -> Result<std::unique_ptr<Scheduler>> {
        FifoOptions options;
        options.capacity_pad = ParamDouble(params, "capacity_pad");
        const int64_t min_size = ParamInt(params, "min_cluster_size_for_padding");
        if (min_size < 0 || min_size > std::numeric_limits<int>::max()) {
          return Status::InvalidArgument("min_cluster_size_for_padding must be >= 0, got " +
                                         std::to_string(min_size));
        }
        options.min_cluster_size_for_padding = static_cast<int>(min_size);
        const std::string topology = ParamString(params, "topology");
        if (!ParseTopology(topology, &options.topology)) {
          return Status::InvalidArgument(TopologyError(topology));
        }
        auto policy = FifoPolicy::Create(options);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
