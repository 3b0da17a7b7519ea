#include "scheduler/pandas_policy.h"

#include <algorithm>
#include <climits>
#include <tuple>
#include <utility>

namespace mr::sched {
namespace {

// "Rack" in the paper's sense: the rack when racks are configured, else the
// datacenter.
bool SameRack(const ClusterState& state, NodeId a, NodeId b) {
  const Node& x = state.node(a);
  const Node& y = state.node(b);
  if (state.has_racks() && x.rack >= 0 && y.rack >= 0) return x.rack == y.rack;
  return x.datacenter == y.datacenter;
}

bool Pending(const ClusterState& state, JobId job, int32_t index) {
  const Job& j = state.job(job);
  return !j.done && j.maps[static_cast<size_t>(index)].state == TaskState::kPending;
}

// Ties between equally long queues: lowest node id, the unplaced list last.
int64_t Rank(NodeId queue) { return queue == PandasPolicy::kUnplaced ? INT64_MAX : queue; }

Status CheckThreshold(const char* name, double value) {
  if (value == -1 || value >= 0) return Status::OK();
  return Status::InvalidArgument(std::string(name) +
                                 " must be >= 0, or -1 to derive it by Eq. 1, got " +
                                 ParamToString(value));
}

}  // namespace

Status PandasOptions::Validate() const {
  MR_RETURN_IF_ERROR(CheckThreshold("tr", tr));
  MR_RETURN_IF_ERROR(CheckThreshold("ts", ts));
  if (window < 0) {
    return Status::InvalidArgument("window must be >= 0 (0 = every sample), got " +
                                   std::to_string(window));
  }
  return Status::OK();
}

PandasPolicy::PandasPolicy(std::string name, std::unique_ptr<JobOrder> order, PandasOptions options,
                           uint64_t seed)
    : name_(std::move(name)), order_(std::move(order)), options_(options), rng_(seed) {}

// ---- Queues (nodeQueues, nodeTasks) ----

int PandasPolicy::Length(NodeId queue) const {
  if (queue == kUnplaced) return unplaced_.size;
  const size_t i = static_cast<size_t>(queue);
  return queue >= 0 && i < queues_.size() ? queues_[i].size : 0;
}

int PandasPolicy::queue_length(NodeId node) const { return Length(node); }

NodeId PandasPolicy::assigned(JobId job, int32_t index) const {
  const size_t j = static_cast<size_t>(job), i = static_cast<size_t>(index);
  if (job < 0 || j >= placed_.size() || index < 0 || i >= placed_[j].size()) return kNoNode;
  return placed_[j][i].queue;
}

void PandasPolicy::Grow(const ClusterState& state) {
  queues_.resize(state.nodes().size());
  local_.resize(state.nodes().size());
}

PandasPolicy::Placed& PandasPolicy::PlacedOf(const ClusterState& state, JobId job, int32_t index) {
  const size_t j = static_cast<size_t>(job);
  if (j >= placed_.size()) placed_.resize(j + 1);
  if (placed_[j].size() < state.job(job).maps.size()) placed_[j].resize(state.job(job).maps.size());
  return placed_[j][static_cast<size_t>(index)];
}

// Step 1 (Alg. 1): the shortest queue among the map's live local nodes,
// random among the tied ones.
void PandasPolicy::Enqueue(const ClusterState& state, JobId job, int32_t index) {
  Grow(state);
  Placed& p = PlacedOf(state, job, index);
  p.local.clear();
  for (NodeId r : state.job(job).maps[static_cast<size_t>(index)].replicas) {
    if (r >= 0 && static_cast<size_t>(r) < state.nodes().size()) p.local.push_back(r);
  }
  std::sort(p.local.begin(), p.local.end());
  p.local.erase(std::unique(p.local.begin(), p.local.end()), p.local.end());
  std::vector<NodeId> shortest;
  int best = INT_MAX;
  for (NodeId r : p.local) {
    if (!state.node(r).live || state.node(r).map_slots <= 0) continue;
    const int len = Length(r);
    if (len < best) shortest.clear(), best = len;
    if (len == best) shortest.push_back(r);
  }
  if (shortest.empty()) {
    p.queue = kUnplaced;
  } else if (shortest.size() == 1) {
    p.queue = shortest[0];
  } else {
    p.queue = shortest[static_cast<size_t>(rng_() % shortest.size())];
  }
  p.seq = next_seq_++;
  Queue& q = QueueOf(p.queue);
  q.jobs[job][p.seq] = index;
  ++q.size;
  for (NodeId r : p.local) local_[static_cast<size_t>(r)][job].insert(index);
}

void PandasPolicy::Dequeue(const ClusterState& state, JobId job, int32_t index) {
  Placed& p = PlacedOf(state, job, index);
  if (p.queue == kNoNode) return;
  Queue& q = QueueOf(p.queue);
  if (auto it = q.jobs.find(job); it != q.jobs.end()) {
    it->second.erase(p.seq);
    if (it->second.empty()) q.jobs.erase(it);
    --q.size;
  }
  for (NodeId r : p.local) {
    auto& by_job = local_[static_cast<size_t>(r)];
    if (auto it = by_job.find(job); it != by_job.end()) {
      it->second.erase(index);
      if (it->second.empty()) by_job.erase(it);
    }
  }
  p.queue = kNoNode;
  p.local.clear();
}

void PandasPolicy::EnqueueStray(const ClusterState& state) {
  for (JobId id : state.active_jobs()) {
    for (const MapTask& m : state.job(id).maps) {
      if (m.state == TaskState::kPending && PlacedOf(state, id, m.index).queue == kNoNode) {
        Enqueue(state, id, m.index);
      }
    }
  }
}

// ---- Events ----

void PandasPolicy::UpdateOrder(const ClusterState& state, TimeMs now) {
  order_->Update(state, now);
  last_update_ms_ = now;
  updated_ = true;
}

void PandasPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs now) {
  for (const MapTask& m : state.job(job).maps) {
    if (m.state == TaskState::kPending) Enqueue(state, job, m.index);
  }
  tasks_.AddJob(state, job);
  UpdateOrder(state, now);
}

void PandasPolicy::OnJobFinished(const ClusterState& state, JobId job, TimeMs now) {
  for (const MapTask& m : state.job(job).maps) Dequeue(state, job, m.index);
  tasks_.RemoveJob(job);
  UpdateOrder(state, now);
}

// Feeds the sliding window: the samples added to Measurements since the
// last call, each the mean of what they added (exact for one sample).
void PandasPolicy::OnMapFinished(const ClusterState& state, JobId, int32_t, TimeMs) {
  if (options_.window <= 0) return;
  const Measurements& m = state.measurements();
  const size_t cap = static_cast<size_t>(options_.window);
  for (int i = 0; i < 4; ++i) {
    const int64_t added = m.map_samples[i] - seen_samples_[i];
    if (added > 0) {
      const double sum = m.avg_map_ms[i] * static_cast<double>(m.map_samples[i]) -
                         seen_avg_[i] * static_cast<double>(seen_samples_[i]);
      const double each = std::max(0.0, sum / static_cast<double>(added));
      for (int64_t k = 0; k < added && static_cast<size_t>(k) < cap; ++k)
        window_[i].push_back(each);
      while (window_[i].size() > cap) window_[i].pop_front();
    }
    seen_samples_[i] = m.map_samples[i];
    seen_avg_[i] = m.avg_map_ms[i];
  }
}

void PandasPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                                TimeMs) {
  if (!is_map) {
    tasks_.TaskPendingAgain(state, job, index, is_map);
  } else if (Pending(state, job, index) && PlacedOf(state, job, index).queue == kNoNode) {
    Enqueue(state, job, index);
  }
}

// A node that is added or back takes the unplaced maps local to it.
void PandasPolicy::OnNodeAdded(const ClusterState& state, NodeId node, TimeMs) {
  Grow(state);
  if (!state.node(node).live || state.node(node).map_slots <= 0) return;
  std::vector<std::pair<JobId, int32_t>> moved;
  for (const auto& [job, tasks] : unplaced_.jobs) {
    for (const auto& [seq, index] : tasks) {
      const std::vector<NodeId>& local =
          placed_[static_cast<size_t>(job)][static_cast<size_t>(index)].local;
      if (std::binary_search(local.begin(), local.end(), node)) moved.emplace_back(job, index);
    }
  }
  for (const auto& [job, index] : moved) Dequeue(state, job, index);
  for (const auto& [job, index] : moved) Enqueue(state, job, index);
}

// The lost node's queue is redistributed by Alg. 1, in arrival order; the
// maps it gave back (running, or finished output) rejoin by Alg. 1 too.
void PandasPolicy::OnNodeLost(const ClusterState& state, NodeId node, TimeMs) {
  Grow(state);
  std::vector<std::tuple<uint64_t, JobId, int32_t>> moved;
  for (const auto& [job, tasks] : queues_[static_cast<size_t>(node)].jobs) {
    for (const auto& [seq, index] : tasks) moved.emplace_back(seq, job, index);
  }
  std::sort(moved.begin(), moved.end());
  for (const auto& [seq, job, index] : moved) Dequeue(state, job, index);
  for (const auto& [seq, job, index] : moved) {
    if (Pending(state, job, index)) Enqueue(state, job, index);
  }
  EnqueueStray(state);
  tasks_.Refresh(state);
}

// ---- Thresholds (Eq. 1) ----

double PandasPolicy::Sigma(const ClusterState& state,
                           std::initializer_list<Locality> levels) const {
  const Measurements& m = state.measurements();
  double sum = 0;
  int64_t n = 0;
  for (Locality level : levels) {
    const int i = static_cast<int>(level);
    if (options_.window > 0) {
      for (double x : window_[i]) sum += x;
      n += static_cast<int64_t>(window_[i].size());
    } else {
      sum += m.avg_map_ms[i] * static_cast<double>(m.map_samples[i]);
      n += m.map_samples[i];
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : 0;
}

double PandasPolicy::Threshold(const ClusterState& state, double fixed, bool rack) const {
  if (fixed >= 0) return fixed;
  const bool racks = state.has_racks();
  const double local = Sigma(state, {Locality::kNode});
  const double other =
      rack ? Sigma(state, {racks ? Locality::kRack : Locality::kDatacenter})
           : (racks ? Sigma(state, {Locality::kDatacenter, Locality::kOffDatacenter})
                    : Sigma(state, {Locality::kOffDatacenter}));
  if (local <= 0 || other <= 0) return 0;  // unmeasured: serve greedily
  return other / local;
}

double PandasPolicy::rack_threshold(const ClusterState& state) const {
  return Threshold(state, options_.tr, /*rack=*/true);
}

double PandasPolicy::remote_threshold(const ClusterState& state) const {
  return Threshold(state, options_.ts, /*rack=*/false);
}

// ---- Heartbeat (Alg. 2 / Alg. 3) ----

PandasPolicy::Pick PandasPolicy::HeadOfLine(const ClusterState& state, NodeId queue) {
  Queue& q = QueueOf(queue);
  while (q.size > 0) {
    std::vector<JobId> jobs;
    for (const auto& entry : q.jobs) jobs.push_back(entry.first);
    order_->Sort(state, /*for_maps=*/true, &jobs);
    const JobId job = jobs.front();
    const int32_t index = q.jobs[job].begin()->second;
    if (Pending(state, job, index)) return {job, index};
    Dequeue(state, job, index);  // stale: no longer pending
  }
  return {};
}

PandasPolicy::Pick PandasPolicy::LocalQueuedElsewhere(const ClusterState& state, NodeId node) {
  auto& mine = local_[static_cast<size_t>(node)];
  while (!mine.empty()) {
    // The longest queue holding a map local to `node`.
    NodeId longest = kNoNode;
    for (const auto& [job, indexes] : mine) {
      for (int32_t index : indexes) {
        const NodeId q = placed_[static_cast<size_t>(job)][static_cast<size_t>(index)].queue;
        if (longest == kNoNode || Length(q) > Length(longest) ||
            (Length(q) == Length(longest) && Rank(q) < Rank(longest))) {
          longest = q;
        }
      }
    }
    // Of its maps local to `node`: the best job's earliest.
    std::vector<JobId> jobs;
    for (const auto& [job, indexes] : mine) {
      for (int32_t index : indexes) {
        if (placed_[static_cast<size_t>(job)][static_cast<size_t>(index)].queue == longest) {
          jobs.push_back(job);
          break;
        }
      }
    }
    order_->Sort(state, /*for_maps=*/true, &jobs);
    const JobId job = jobs.front();
    Pick pick{job, -1};
    uint64_t first = UINT64_MAX;
    for (int32_t index : mine[job]) {
      const Placed& p = placed_[static_cast<size_t>(job)][static_cast<size_t>(index)];
      if (p.queue == longest && p.seq < first) first = p.seq, pick.index = index;
    }
    if (Pending(state, pick.job, pick.index)) return pick;
    Dequeue(state, pick.job, pick.index);  // stale
  }
  return {};
}

NodeId PandasPolicy::LongestQueue(const ClusterState& state, NodeId node, bool rack) const {
  NodeId longest = kNoNode;
  for (const Node& n : state.nodes()) {
    if (n.id == node || !n.live || SameRack(state, node, n.id) != rack || Length(n.id) == 0) {
      continue;
    }
    if (longest == kNoNode || Length(n.id) > Length(longest)) longest = n.id;
  }
  return longest;
}

PandasPolicy::Pick PandasPolicy::NextMap(const ClusterState& state, NodeId node) {
  // a. Local tasks first.
  if (Pick p = HeadOfLine(state, node); p.job >= 0) return p;
  // b. Local tasks queued elsewhere.
  if (Pick p = LocalQueuedElsewhere(state, node); p.job >= 0) return p;
  // c. Rack-local, above T_r.
  if (NodeId q = LongestQueue(state, node, /*rack=*/true);
      q != kNoNode && Length(q) > rack_threshold(state)) {
    if (Pick p = HeadOfLine(state, q); p.job >= 0) return p;
  }
  // d. Remote, above T_s.
  if (NodeId q = LongestQueue(state, node, /*rack=*/false);
      q != kNoNode && Length(q) > remote_threshold(state)) {
    if (Pick p = HeadOfLine(state, q); p.job >= 0) return p;
  }
  // e. Maps with no live local node.
  return HeadOfLine(state, kUnplaced);
}

void PandasPolicy::AssignReduce(const ClusterState& state, NodeId node, Launcher& launcher) {
  if (state.node(node).free_reduce_slots() <= 0) return;
  tasks_.SyncReduceReady(state);
  std::vector<JobId> jobs = state.active_jobs();
  order_->Sort(state, /*for_maps=*/false, &jobs);
  for (JobId id : jobs) {
    if (!tasks_.MayGiveReduce(id)) continue;  // most jobs: without touching them
    if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
      launcher.LaunchReduce(id, i);
      return;
    }
  }
}

void PandasPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  Grow(state);
  if (!updated_ || hb.now - last_update_ms_ >= kUpdateIntervalMs) UpdateOrder(state, hb.now);
  while (state.node(hb.node).free_map_slots() > 0) {
    const Pick p = NextMap(state, hb.node);
    if (p.job < 0) break;
    Dequeue(state, p.job, p.index);
    launcher.LaunchMap(p.job, p.index);
  }
  AssignReduce(state, hb.node, launcher);
}

// ---- Registry ----

PolicyInfo PandasPolicyInfo(std::string name, std::string paper,
                            std::function<std::unique_ptr<JobOrder>()> make_order) {
  return PolicyInfo{
      name,
      std::move(paper),
      {{"tr", -1.0,
        "rack threshold T_r: a rack-local map is served from the longest queue in the rack "
        "only when it is longer than this; -1 = derive by Eq. 1 from measured run times"},
       {"ts", -1.0,
        "remote threshold T_s: a remote map is served from the longest queue outside the rack "
        "only when it is longer than this; -1 = derive by Eq. 1 from measured run times"},
       {"window", int64_t{0},
        "derive Eq. 1 from the last this-many map run times of each locality (a sliding "
        "window, paper's future work); 0 = every sample"}},
      [name, make_order](const SchedulerParams& params,
                         const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        PandasOptions options;
        options.tr = ParamDouble(params, "tr");
        options.ts = ParamDouble(params, "ts");
        options.window = ParamInt(params, "window");
        MR_RETURN_IF_ERROR(options.Validate());
        return std::unique_ptr<Scheduler>(new PandasPolicy(name, make_order(), options, env.seed));
      }};
}

const PolicyInfo& FifoPandasPolicyInfo() {
  static const PolicyInfo info = PandasPolicyInfo(
      "fifo-pandas", 
      "Pandas: Xie, Pundir, Lu, Abad & Campbell, \"Pandas: Robust Locality-Aware Scheduling With Stochastic Delay Optimality\", IEEE/ACM Transactions on Networking 2017, §IV, Algs. 1-2, Eq. 1; over Hadoop's FIFO job order",
      [] { return std::make_unique<FifoOrder>(); });
  return info;
}

const PolicyInfo& FairPandasPolicyInfo() {
  static const PolicyInfo info = PandasPolicyInfo(
      "fair-pandas",
      "Pandas: Xie, Pundir, Lu, Abad & Campbell, \"Pandas: Robust Locality-Aware Scheduling With Stochastic Delay Optimality\", IEEE/ACM Transactions on Networking 2017, §IV, Algs. 1 and 3, Eq. 1; over the Hadoop Fair "
      "Scheduler's job order",
      [] { return std::make_unique<FairOrder>(); });
  return info;
}

}  // namespace mr::sched
