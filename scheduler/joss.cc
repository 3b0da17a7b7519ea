#include "scheduler/joss.h"

#include <algorithm>
#include <limits>

namespace mr::sched {

const char* JossClassName(JossClass c) {
  switch (c) {
    case JossClass::kNew:
      return "new";
    case JossClass::kSmallReduceHeavy:
      return "A";
    case JossClass::kSmallMapHeavy:
      return "B";
    case JossClass::kLarge:
      return "C";
  }
  return "?";
}

double JossDerivedTd(int k) {
  if (k <= 1) return std::numeric_limits<double>::infinity();
  return static_cast<double>(k) / static_cast<double>(k - 1);  // Eq. 8
}

double JossAvgVpsPerDatacenter(const ClusterState& state) {
  const int k = state.datacenters();
  if (k <= 0) return 0;
  int vps = 0;  // Σ_c N_VPS,c
  for (const Node& n : state.nodes()) vps += n.live ? 1 : 0;
  return static_cast<double>(vps) / static_cast<double>(k);  // Eq. 4's N_avg_VPS
}

JossClassification JossClassify(const ClusterState& state, const Job& job, double td_override) {
  JossClassification c;
  c.k = state.datacenters();
  c.m = static_cast<int>(job.maps.size());
  c.td = td_override >= 0 ? td_override : JossDerivedTd(c.k);
  c.n_avg_vps = JossAvgVpsPerDatacenter(state);
  c.fp = job.known_fp;
  if (!job.has_fp()) return c;                        // Fig. 4 line 4: hash not in H
  c.map_heavy = !(c.fp > c.td);                       // Eq. 3
  c.small = static_cast<double>(c.m) <= c.n_avg_vps;  // Eq. 4
  if (!c.small) {
    c.cls = JossClass::kLarge;
  } else {
    c.cls = c.map_heavy ? JossClass::kSmallMapHeavy : JossClass::kSmallReduceHeavy;
  }
  return c;
}

// ---- JossQueues ----

struct JossQueues::Plan {
  std::vector<int> map_queue, reduce_queue;  // queue id per task, -1 before placement
  std::vector<char> map_queued, reduce_queued;
  std::vector<int> own;  // the job's policy-C queues
};

JossQueues::JossQueues() = default;
JossQueues::~JossQueues() = default;

void JossQueues::EnsureDatacenters(int k) {
  while (static_cast<int>(map_queues_.size()) < k) {
    const auto dc = static_cast<int32_t>(map_queues_.size());
    map_queues_.emplace_back();
    reduce_queues_.emplace_back();
    NewQueue(dc, -1, true);
    NewQueue(dc, -1, false);
  }
}

int JossQueues::NewQueue(int32_t dc, JobId owner, bool is_map) {
  const int id = static_cast<int>(queues_.size());
  auto q = std::make_unique<Queue>();
  q->dc = dc;
  q->owner = owner;
  queues_.push_back(std::move(q));
  (is_map ? map_queues_ : reduce_queues_)[static_cast<size_t>(dc)].push_back(id);
  if (owner >= 0) plans_[static_cast<size_t>(owner)]->own.push_back(id);
  return id;
}

std::vector<int64_t> JossQueues::Unprocessed(const ClusterState& state) const {
  std::vector<int64_t> count(map_queues_.size(), 0);
  for (size_t j = 0; j < plans_.size(); ++j) {
    if (!plans_[j]) continue;
    const Job& job = state.job(static_cast<JobId>(j));
    const Plan& p = *plans_[j];
    for (size_t i = 0; i < job.maps.size(); ++i) {
      if (p.map_queue[i] >= 0 && job.maps[i].state != TaskState::kDone) {
        ++count[static_cast<size_t>(queues_[static_cast<size_t>(p.map_queue[i])]->dc)];
      }
    }
    for (size_t i = 0; i < job.reduces.size(); ++i) {
      if (p.reduce_queue[i] >= 0 && job.reduces[i].state != TaskState::kDone) {
        ++count[static_cast<size_t>(queues_[static_cast<size_t>(p.reduce_queue[i])]->dc)];
      }
    }
  }
  return count;
}

// Policy A's cen_w (Fig. 4 lines 9–10): fewest unprocessed tasks among the
// datacenters with a live VPS (all datacenters if none has one); lowest
// index on ties.
int32_t JossQueues::LeastUnprocessed(const ClusterState& state) const {
  const std::vector<int64_t> count = Unprocessed(state);
  std::vector<char> live(count.size(), 0);
  bool any_live = false;
  for (const Node& n : state.nodes()) {
    if (n.live && static_cast<size_t>(n.datacenter) < live.size()) {
      live[static_cast<size_t>(n.datacenter)] = 1;
      any_live = true;
    }
  }
  int32_t best = -1;
  for (size_t c = 0; c < count.size(); ++c) {
    if (any_live && !live[c]) continue;
    if (best < 0 || count[c] < count[static_cast<size_t>(best)]) best = static_cast<int32_t>(c);
  }
  return best < 0 ? 0 : best;
}

void JossQueues::Push(JobId job, int32_t index, bool is_map, int queue, bool front) {
  Plan& p = *plans_[static_cast<size_t>(job)];
  (is_map ? p.map_queue : p.reduce_queue)[static_cast<size_t>(index)] = queue;
  (is_map ? p.map_queued : p.reduce_queued)[static_cast<size_t>(index)] = 1;
  std::deque<TaskRef>& tasks = queues_[static_cast<size_t>(queue)]->tasks;
  if (front) {
    tasks.push_front({job, index});
  } else {
    tasks.push_back({job, index});
  }
}

void JossQueues::Schedule(const ClusterState& state, JobId job, JossClass cls) {
  const int k = state.datacenters();
  if (cls == JossClass::kNew || k == 0) {  // Fig. 4 lines 4–6
    fifo_jobs_.push_back(job);
    fifo_tasks_.AddJob(state, job);
    return;
  }
  EnsureDatacenters(k);
  const Job& j = state.job(job);
  const size_t m = j.maps.size();
  // Chosen before this job's plan exists, so its own tasks do not count.
  const int32_t least = LeastUnprocessed(state);
  if (static_cast<size_t>(job) >= plans_.size()) plans_.resize(static_cast<size_t>(job) + 1);
  auto plan = std::make_unique<Plan>();
  plan->map_queue.assign(m, -1);
  plan->map_queued.assign(m, 0);
  plan->reduce_queue.assign(j.reduces.size(), -1);
  plan->reduce_queued.assign(j.reduces.size(), 0);
  plans_[static_cast<size_t>(job)] = std::move(plan);

  if (cls == JossClass::kSmallReduceHeavy) {  // policy A, lines 8–12
    for (size_t i = 0; i < m; ++i)
      Push(job, static_cast<int32_t>(i), true, map_queues_[least][0], false);
    for (size_t i = 0; i < j.reduces.size(); ++i) {
      Push(job, static_cast<int32_t>(i), false, reduce_queues_[least][0], false);
    }
    return;
  }

  // Policies B and C, lines 14–40.
  const bool small = cls == JossClass::kSmallMapHeavy;
  // Lines 14–15: L_c, the maps whose block has a live replica in cen_c, in
  // index order (each map once per datacenter).
  std::vector<std::vector<int32_t>> L(static_cast<size_t>(k));
  for (size_t i = 0; i < m; ++i) {
    for (NodeId r : j.maps[i].replicas) {
      const Node& n = state.node(r);
      if (!n.live) continue;
      std::vector<int32_t>& l = L[static_cast<size_t>(n.datacenter)];
      if (l.empty() || l.back() != static_cast<int32_t>(i)) l.push_back(static_cast<int32_t>(i));
    }
  }
  std::vector<char> placed(m, 0);
  int64_t alpha = static_cast<int64_t>(m);  // line 16
  int32_t e = -1;                           // cen_e of lines 32–33
  int e_queue = -1;
  while (alpha > 0) {  // line 17
    size_t d = 0;      // line 18: the *first* largest L_c
    for (size_t c = 1; c < L.size(); ++c) {
      if (L[c].size() > L[d].size()) d = c;
    }
    if (L[d].empty()) break;  // only maps without a live replica are left
    // Line 22 (B) or lines 24–26 (C).
    const int q = small ? map_queues_[d][0] : NewQueue(static_cast<int32_t>(d), job, true);
    if (e < 0) e = static_cast<int32_t>(d), e_queue = q;
    for (int32_t i : L[d]) {
      Push(job, i, true, q, false);
      placed[static_cast<size_t>(i)] = 1;
    }
    alpha -= static_cast<int64_t>(L[d].size());  // line 30, once per cen_d
    for (std::vector<int32_t>& l : L) {          // lines 28–29
      std::erase_if(l, [&](int32_t i) { return placed[static_cast<size_t>(i)] != 0; });
    }
  }
  if (e < 0) e = least;  // no map has a live replica: choose as policy A does
  for (size_t i = 0; i < m; ++i) {
    if (placed[i]) continue;
    if (e_queue < 0) e_queue = small ? map_queues_[e][0] : NewQueue(e, job, true);
    Push(job, static_cast<int32_t>(i), true, e_queue, false);
  }
  if (j.reduces.empty()) return;
  // Line 35 (B) or lines 37–39 (C).
  const int rq = small ? reduce_queues_[e][0] : NewQueue(e, job, false);
  for (size_t i = 0; i < j.reduces.size(); ++i)
    Push(job, static_cast<int32_t>(i), false, rq, false);
}

void JossQueues::RemoveJob(JobId job) {
  if (auto it = std::find(fifo_jobs_.begin(), fifo_jobs_.end(), job); it != fifo_jobs_.end()) {
    fifo_jobs_.erase(it);
    fifo_tasks_.RemoveJob(job);
  }
  if (job < 0 || static_cast<size_t>(job) >= plans_.size() || !plans_[static_cast<size_t>(job)]) {
    return;
  }
  for (int id : plans_[static_cast<size_t>(job)]->own) {
    const int32_t dc = queues_[static_cast<size_t>(id)]->dc;
    std::erase(map_queues_[static_cast<size_t>(dc)], id);
    std::erase(reduce_queues_[static_cast<size_t>(dc)], id);
    queues_[static_cast<size_t>(id)].reset();
  }
  plans_[static_cast<size_t>(job)].reset();
}

void JossQueues::TaskPendingAgain(const ClusterState& state, JobId job, int32_t index,
                                  bool is_map) {
  if (fifo_tasks_.Contains(job)) {
    fifo_tasks_.TaskPendingAgain(state, job, index, is_map);
    return;
  }
  if (job < 0 || static_cast<size_t>(job) >= plans_.size() || !plans_[static_cast<size_t>(job)]) {
    return;
  }
  const Plan& p = *plans_[static_cast<size_t>(job)];
  const auto i = static_cast<size_t>(index);
  if (!IsPending(state, {job, index}, is_map) || (is_map ? p.map_queued[i] : p.reduce_queued[i])) {
    return;
  }
  Push(job, index, is_map, is_map ? p.map_queue[i] : p.reduce_queue[i], /*front=*/true);
}

void JossQueues::Refresh(const ClusterState& state) {
  fifo_tasks_.Refresh(state);
  for (size_t j = 0; j < plans_.size(); ++j) {
    if (!plans_[j]) continue;
    const Job& job = state.job(static_cast<JobId>(j));
    // Highest index first, so the lowest ends up at the front.
    for (size_t i = job.maps.size(); i-- > 0;) {
      TaskPendingAgain(state, job.id, static_cast<int32_t>(i), true);
    }
    for (size_t i = job.reduces.size(); i-- > 0;) {
      TaskPendingAgain(state, job.id, static_cast<int32_t>(i), false);
    }
  }
}

bool JossQueues::IsPending(const ClusterState& state, const TaskRef& t, bool is_map) const {
  if (t.job < 0 || static_cast<size_t>(t.job) >= state.jobs().size()) return false;
  const Job& job = state.job(t.job);
  if (job.done) return false;
  const auto i = static_cast<size_t>(t.index);
  return is_map ? job.maps[i].state == TaskState::kPending
                : job.reduces[i].state == TaskState::kPending;
}

TaskRef JossQueues::Erase(Queue& q, size_t pos, bool is_map) {
  const TaskRef t = q.tasks[pos];
  q.tasks.erase(q.tasks.begin() + static_cast<std::ptrdiff_t>(pos));
  if (static_cast<size_t>(t.job) < plans_.size() && plans_[static_cast<size_t>(t.job)]) {
    Plan& p = *plans_[static_cast<size_t>(t.job)];
    (is_map ? p.map_queued : p.reduce_queued)[static_cast<size_t>(t.index)] = 0;
  }
  return t;
}

int JossQueues::map_queue_count(int32_t dc) const {
  if (dc < 0 || static_cast<size_t>(dc) >= map_queues_.size()) return 0;
  return static_cast<int>(map_queues_[static_cast<size_t>(dc)].size());
}

int JossQueues::reduce_queue_count(int32_t dc) const {
  if (dc < 0 || static_cast<size_t>(dc) >= reduce_queues_.size()) return 0;
  return static_cast<int>(reduce_queues_[static_cast<size_t>(dc)].size());
}

JossQueues::Queue& JossQueues::At(int32_t dc, int q, bool is_map) {
  const std::vector<int>& ids = (is_map ? map_queues_ : reduce_queues_)[static_cast<size_t>(dc)];
  return *queues_[static_cast<size_t>(ids[static_cast<size_t>(q)])];
}

std::optional<TaskRef> JossQueues::TakeMap(const ClusterState& state, int32_t dc, int q,
                                           NodeId node, bool locality) {
  Queue& queue = At(dc, q, /*is_map=*/true);
  size_t best = 0;
  Locality best_loc = Locality::kOffDatacenter;
  bool found = false;
  for (size_t pos = 0; pos < queue.tasks.size();) {
    const TaskRef& t = queue.tasks[pos];
    if (!IsPending(state, t, true)) {
      Erase(queue, pos, true);  // stale: drop, stay at pos
      continue;
    }
    if (!found) {
      found = true;
      best = pos;
      if (!locality) break;  // TTA: the head
      best_loc =
          state.LocalityOf(node, state.job(t.job).maps[static_cast<size_t>(t.index)].replicas);
    } else if (t.job == queue.tasks[best].job) {
      // JTA: the head job's best-placed map; the first on ties.
      const Locality loc =
          state.LocalityOf(node, state.job(t.job).maps[static_cast<size_t>(t.index)].replicas);
      if (loc < best_loc) best = pos, best_loc = loc;
    }
    if (best_loc == Locality::kNode) break;
    ++pos;
  }
  if (!found) return std::nullopt;
  return Erase(queue, best, true);
}

std::optional<TaskRef> JossQueues::TakeReduce(const ClusterState& state, int32_t dc, int q) {
  Queue& queue = At(dc, q, /*is_map=*/false);
  for (size_t pos = 0; pos < queue.tasks.size();) {
    const TaskRef& t = queue.tasks[pos];
    if (!IsPending(state, t, false)) {
      Erase(queue, pos, false);
      continue;
    }
    if (state.job(t.job).reduces_may_start()) return Erase(queue, pos, false);
    ++pos;
  }
  return std::nullopt;
}

// The Hadoop FIFO job order over MQ_FIFO / RQ_FIFO: priority, submit time,
// id (baselines.md §2 "Job order"), recomputed at every call so a priority
// change applies at once.
std::vector<JobId> JossQueues::FifoOrder(const ClusterState& state) const {
  std::vector<JobId> order = fifo_jobs_;
  std::sort(order.begin(), order.end(), [&](JobId a, JobId b) {
    const Job& x = state.job(a);
    const Job& y = state.job(b);
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
    return a < b;
  });
  return order;
}

// Each job in order offers its best-placed map (job_tasks.h ObtainMap).
std::optional<TaskRef> JossQueues::TakeFifoMap(const ClusterState& state, NodeId node) {
  for (JobId id : FifoOrder(state)) {
    if (state.job(id).pending_maps() == 0) continue;
    if (int32_t i = fifo_tasks_.ObtainMap(state, id, node); i >= 0) return TaskRef{id, i};
  }
  return std::nullopt;
}

std::optional<TaskRef> JossQueues::TakeFifoReduce(const ClusterState& state, NodeId node) {
  for (JobId id : FifoOrder(state)) {
    if (state.job(id).pending_reduces() == 0) continue;
    if (int32_t i = fifo_tasks_.ObtainReduce(state, id, node); i >= 0) return TaskRef{id, i};
  }
  return std::nullopt;
}

int32_t JossQueues::HomeOf(JobId job, int32_t index, bool is_map) const {
  if (job < 0 || static_cast<size_t>(job) >= plans_.size() || !plans_[static_cast<size_t>(job)]) {
    return -1;
  }
  const Plan& p = *plans_[static_cast<size_t>(job)];
  const int q = (is_map ? p.map_queue : p.reduce_queue)[static_cast<size_t>(index)];
  return q < 0 ? -1 : queues_[static_cast<size_t>(q)]->dc;
}

}  // namespace mr::sched
