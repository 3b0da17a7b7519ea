#include "scheduler/joss_policy.h"

#include <cmath>

namespace mr::sched {

Result<std::unique_ptr<JossPolicy>> JossPolicy::Create(const JossOptions& options) {
  if (!std::isfinite(options.td)) {
    return Status::InvalidArgument("td must be a finite number (negative: derive k/(k-1)), got " +
                                   ParamToString(options.td));
  }
  return std::unique_ptr<JossPolicy>(new JossPolicy(options));
}

void JossPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs) {
  if (static_cast<size_t>(job) >= classes_.size()) classes_.resize(static_cast<size_t>(job) + 1);
  const JossClassification c = JossClassify(state, state.job(job), options_.td);
  classes_[static_cast<size_t>(job)] = c;
  queues_.Schedule(state, job, c.cls);
}

// A dropped queue ahead of a kept index moves the queues after it down by
// one; the index follows, so the queue it pointed at is still next.
void JossPolicy::OnJobFinished(const ClusterState&, JobId job, TimeMs) {
  for (const JossDroppedQueue& d : queues_.RemoveJob(job)) {
    std::vector<int>& index = d.is_map ? i_map_ : i_red_;
    if (static_cast<size_t>(d.dc) < index.size() && d.position < index[static_cast<size_t>(d.dc)]) {
      --index[static_cast<size_t>(d.dc)];
    }
  }
}

void JossPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                              TimeMs) {
  queues_.TaskPendingAgain(state, job, index, is_map);
}

void JossPolicy::OnNodeLost(const ClusterState& state, NodeId, TimeMs) { queues_.Refresh(state); }

const JossClassification* JossPolicy::classification(JobId job) const {
  if (job < 0 || static_cast<size_t>(job) >= classes_.size()) return nullptr;
  const auto& c = classes_[static_cast<size_t>(job)];
  return c ? &*c : nullptr;
}

// Fig. 5/6 lines 5–13 for one idle map slot.
std::optional<TaskRef> JossPolicy::NextMap(const ClusterState& state, NodeId node) {
  // Lines 6–8: MQ_FIFO first, by the Hadoop FIFO algorithm.
  if (auto t = queues_.TakeFifoMap(state, node)) return t;
  const int32_t c = state.node(node).datacenter;
  // Lines 10–13: round robin over MQ_{c,0..N_map}; an empty queue is passed over.
  const int n = queues_.map_queue_count(c);  // N_map + 1
  int& i_map = i_map_[static_cast<size_t>(c)];
  for (int tried = 0; tried < n; ++tried) {
    i_map %= n;                                                            // line 10
    auto t = queues_.TakeMap(state, c, i_map, node, options_.job_driven);  // lines 11–12
    ++i_map;                                                               // line 13
    if (t) return t;
  }
  // Not in Fig. 5: other datacenters' queues, if unserved or idle_steal (header).
  const int k = state.datacenters();
  for (int off = 1; off < k; ++off) {
    const int32_t d = (c + off) % k;
    if (!OpenToOthers(d, /*is_map=*/true)) continue;
    for (int q = 0; q < queues_.map_queue_count(d); ++q) {
      if (auto t = queues_.TakeMap(state, d, q, node, options_.job_driven)) return t;
    }
  }
  return std::nullopt;
}

// Fig. 5/6 lines 14–22 for one idle reduce slot.
std::optional<TaskRef> JossPolicy::NextReduce(const ClusterState& state, NodeId node) {
  // Lines 15–17: RQ_FIFO first.
  if (auto t = queues_.TakeFifoReduce(state, node)) return t;
  const int32_t c = state.node(node).datacenter;
  // Lines 19–22: round robin over RQ_{c,0..N_red}.
  const int n = queues_.reduce_queue_count(c);  // N_red + 1
  int& i_red = i_red_[static_cast<size_t>(c)];
  for (int tried = 0; tried < n; ++tried) {
    i_red %= n;                                    // line 19
    auto t = queues_.TakeReduce(state, c, i_red);  // lines 20–21
    ++i_red;                                       // line 22
    if (t) return t;
  }
  const int k = state.datacenters();
  for (int off = 1; off < k; ++off) {
    const int32_t d = (c + off) % k;
    if (!OpenToOthers(d, /*is_map=*/false)) continue;
    for (int q = 0; q < queues_.reduce_queue_count(d); ++q) {
      if (auto t = queues_.TakeReduce(state, d, q)) return t;
    }
  }
  return std::nullopt;
}

bool JossPolicy::OpenToOthers(int32_t dc, bool is_map) const {
  return options_.idle_steal || !(is_map ? serves_map_ : serves_reduce_)[static_cast<size_t>(dc)];
}

void JossPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  const Node& n = state.node(hb.node);
  if (!n.live) return;
  const auto k = static_cast<size_t>(state.datacenters());
  if (i_map_.size() < k) i_map_.resize(k, 0), i_red_.resize(k, 0);
  if (!options_.persistent_index) {  // line 1: both indexes start at 0 at each call
    i_map_[static_cast<size_t>(n.datacenter)] = 0;
    i_red_[static_cast<size_t>(n.datacenter)] = 0;
  }
  serves_map_.assign(k, 0);
  serves_reduce_.assign(k, 0);
  for (size_t c = 0; c < k; ++c) {  // O(datacenters), kept by ClusterState
    const ClusterState::DatacenterTotals& dc = state.datacenter_totals(static_cast<int32_t>(c));
    serves_map_[c] = dc.live_map_nodes > 0 ? 1 : 0;
    serves_reduce_[c] = dc.live_reduce_nodes > 0 ? 1 : 0;
  }
  // Line 2: while the VPS has an idle slot — maps first, then reduces.
  for (int slots = n.free_map_slots(); slots > 0; --slots) {
    std::optional<TaskRef> t = NextMap(state, hb.node);
    if (!t) break;
    launcher.LaunchMap(t->job, t->index);
  }
  for (int slots = n.free_reduce_slots(); slots > 0; --slots) {
    std::optional<TaskRef> t = NextReduce(state, hb.node);
    if (!t) break;
    launcher.LaunchReduce(t->job, t->index);
  }
}

namespace {

Result<std::unique_ptr<Scheduler>> MakeJoss(const SchedulerParams& params, bool job_driven) {
  JossOptions options;
  options.job_driven = job_driven;
  options.td = ParamDouble(params, "td");
  options.idle_steal = ParamBool(params, "idle_steal");
  options.persistent_index = ParamBool(params, "persistent_index");
  auto policy = JossPolicy::Create(options);
  if (!policy.ok()) return policy.status();
  return std::unique_ptr<Scheduler>(std::move(policy).value());
}

std::vector<SchedulerParamSpec> JossParams() {
  return {{"td", -1.0,
           "reduce-heavy if a job's filtering percentage exceeds td (JoSS Eq. 3); negative: "
           "derive td = k/(k-1) from the k datacenters (Eq. 8)"},
          {"idle_steal", false,
           "a VPS whose datacenter's queues are empty takes tasks queued for other datacenters "
           "(not in the paper; off keeps policy A/B placement)"},
          {"persistent_index", false,
           "keep the round-robin indexes I_map, I_red per datacenter across heartbeats (not in "
           "the paper: Figs. 5-6 line 1 sets them to 0 at each call)"}};
}

}  // namespace

const PolicyInfo& JossTPolicyInfo() {
  static const PolicyInfo info{
      "joss-t", 
      "JoSS-T: Lee, Lin & Yahyapour, \"Hybrid Job-driven Scheduling for Virtual MapReduce Clusters\", IEEE Transactions on Parallel and Distributed Systems 2016, §4: the JoSS task scheduler (Fig. 4) with the Task-driven Task Assigner (Fig. 5)",
      JossParams(),
      [](const SchedulerParams& params, const SchedulerEnv&) { return MakeJoss(params, false); }};
  return info;
}

const PolicyInfo& JossJPolicyInfo() {
  static const PolicyInfo info{
      "joss-j", 
      "JoSS-J: Lee, Lin & Yahyapour, \"Hybrid Job-driven Scheduling for Virtual MapReduce Clusters\", IEEE Transactions on Parallel and Distributed Systems 2016, §4: the JoSS task scheduler (Fig. 4) with the Job-driven Task Assigner (Fig. 6)",
      JossParams(),
      [](const SchedulerParams& params, const SchedulerEnv&) { return MakeJoss(params, true); }};
  return info;
}

}  // namespace mr::sched
