#include "scheduler/joss.h"

#include <algorithm>
#include <limits>
#include <span>

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
  const int vps = state.live_nodes();  // Σ_c N_VPS,c
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
  // Kept up to date from the change log (CatchUp):
  bool reduces_ready = false;        // past slow-start: its queued reduces are in Queue::ready
  bool recount = false;              // listed in to_recount_
  std::vector<int64_t> unprocessed;  // per datacenter, at the last Recount
};

JossQueues::JossQueues() = default;
JossQueues::~JossQueues() = default;

void JossQueues::EnsureDatacenters(int k) {
  while (static_cast<int>(map_queues_.size()) < k) {
    const auto dc = static_cast<int32_t>(map_queues_.size());
    map_queues_.emplace_back();
    reduce_queues_.emplace_back();
    unprocessed_.push_back(0);
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

JossQueues::Plan* JossQueues::PlanOf(JobId job) const {
  if (job < 0 || static_cast<size_t>(job) >= plans_.size()) return nullptr;
  return plans_[static_cast<size_t>(job)].get();
}

// Counts the tasks of `job` that wait in a queue (have one and are
// pending), by the queue's datacenter, replacing the job's previous counts
// in the totals. Running tasks are counted where they run (Unprocessed).
void JossQueues::Recount(const ClusterState& state, JobId job) {
  Plan& p = *PlanOf(job);
  for (size_t c = 0; c < p.unprocessed.size(); ++c) unprocessed_[c] -= p.unprocessed[c];
  p.unprocessed.assign(unprocessed_.size(), 0);
  auto count = [&](const std::vector<int>& queue_of, auto&& done) {
    for (size_t i = 0; i < queue_of.size(); ++i) {
      if (queue_of[i] < 0 || done(i)) continue;
      ++p.unprocessed[static_cast<size_t>(queues_[static_cast<size_t>(queue_of[i])]->dc)];
    }
  };
  const Job& j = state.job(job);
  count(p.map_queue, [&](size_t i) { return j.maps[i].state != TaskState::kPending; });
  count(p.reduce_queue, [&](size_t i) { return j.reduces[i].state != TaskState::kPending; });
  for (size_t c = 0; c < p.unprocessed.size(); ++c) unprocessed_[c] += p.unprocessed[c];
}

const std::vector<int64_t>& JossQueues::Unprocessed(const ClusterState& state) {
  CatchUp(state);
  for (JobId id : to_recount_) {
    Plan* p = PlanOf(id);
    if (p == nullptr) continue;  // finished since
    p->recount = false;
    Recount(state, id);
  }
  to_recount_.clear();
  // Running tasks of any job — MQ_FIFO's included — by the datacenter of
  // the VPS that runs them (kept by ClusterState: O(datacenters) a beat).
  load_ = unprocessed_;
  const auto k = std::min(load_.size(), static_cast<size_t>(state.datacenters()));
  for (size_t c = 0; c < k; ++c) {
    load_[c] += state.datacenter_totals(static_cast<int32_t>(c)).running_attempts;
  }
  return load_;
}

void JossQueues::CatchUp(const ClusterState& state) {
  std::span<const JobId> changed;
  if (state.ChangedJobsSince(seen_seq_, &changed)) {
    for (JobId id : changed) Changed(state, id);
  } else {  // the log no longer reaches back to seen_seq_: any job may have changed
    for (size_t j = 0; j < plans_.size(); ++j) Changed(state, static_cast<JobId>(j));
  }
  seen_seq_ = state.change_seq();
}

void JossQueues::Changed(const ClusterState& state, JobId job) {
  Plan* p = PlanOf(job);
  if (p == nullptr) return;  // a FIFO job, or not (or no longer) scheduled
  if (!p->recount) {
    p->recount = true;
    to_recount_.push_back(job);
  }
  const Job& j = state.job(job);
  SetReady(job, !j.done && j.reduces_may_start());
}

void JossQueues::SetReady(JobId job, bool ready) {
  Plan& p = *PlanOf(job);
  if (p.reduces_ready == ready) return;
  p.reduces_ready = ready;
  for (int id : QueuesIn(p.reduce_queue)) {
    Queue& q = *queues_[static_cast<size_t>(id)];
    for (const Entry& e : EntriesOf(q, job)) {
      if (ready) {
        q.ready.insert(e);
      } else {
        q.ready.erase(e);
      }
    }
  }
}

std::vector<int> JossQueues::QueuesIn(const std::vector<int>& queue_of) {
  std::vector<int> ids;
  for (int id : queue_of) {
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

std::vector<JossQueues::Entry> JossQueues::EntriesOf(const Queue& q, JobId job) {
  std::vector<Entry> entries;
  auto it = q.by_job.lower_bound(Entry{std::numeric_limits<int64_t>::min(), {job, 0}});
  for (; it != q.by_job.end() && it->task.job == job; ++it) entries.push_back(*it);
  return entries;
}

// Policy A's cen_w (Fig. 4 lines 9–10): fewest unprocessed tasks among the
// datacenters with a live VPS (all datacenters if none has one). Ties (the
// paper is silent): the first tied datacenter after the previous cen_w
// (set by Schedule when it uses the choice), cyclically — not always the
// lowest index, which would send every reduce-heavy job that finds the
// cluster idle to cen_1.
int32_t JossQueues::LeastUnprocessed(const ClusterState& state) {
  const std::vector<int64_t>& count = Unprocessed(state);
  std::vector<char> live(count.size(), 0);
  bool any_live = false;
  for (size_t c = 0; c < live.size() && c < static_cast<size_t>(state.datacenters()); ++c) {
    live[c] = state.datacenter_totals(static_cast<int32_t>(c)).live_nodes > 0 ? 1 : 0;
    any_live = any_live || live[c];
  }
  const size_t k = count.size();
  int32_t best = -1;
  for (size_t step = 1; step <= k; ++step) {
    const size_t c = (static_cast<size_t>(last_least_ + 1) + step - 1) % k;
    if (any_live && !live[c]) continue;
    if (best < 0 || count[c] < count[static_cast<size_t>(best)]) best = static_cast<int32_t>(c);
  }
  return best < 0 ? 0 : best;
}

void JossQueues::Push(JobId job, int32_t index, bool is_map, int queue, bool front) {
  Plan& p = *plans_[static_cast<size_t>(job)];
  (is_map ? p.map_queue : p.reduce_queue)[static_cast<size_t>(index)] = queue;
  (is_map ? p.map_queued : p.reduce_queued)[static_cast<size_t>(index)] = 1;
  Queue& q = *queues_[static_cast<size_t>(queue)];
  const Entry e{front ? --q.front : q.back++, {job, index}};
  q.fifo.insert(e);
  q.by_job.insert(e);
  if (!is_map && p.reduces_ready) q.ready.insert(e);
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
  // Chosen before this job's plan exists, so its own tasks do not count.
  const int32_t least = LeastUnprocessed(state);
  if (static_cast<size_t>(job) >= plans_.size()) plans_.resize(static_cast<size_t>(job) + 1);
  auto plan = std::make_unique<Plan>();
  plan->map_queue.assign(j.maps.size(), -1);
  plan->map_queued.assign(j.maps.size(), 0);
  plan->reduce_queue.assign(j.reduces.size(), -1);
  plan->reduce_queued.assign(j.reduces.size(), 0);
  plan->reduces_ready = j.reduces_may_start();
  plans_[static_cast<size_t>(job)] = std::move(plan);
  if (cls == JossClass::kSmallReduceHeavy) {
    PlacePolicyA(j, least);
    last_least_ = least;
  } else {
    PlacePolicyBC(state, j, cls == JossClass::kSmallMapHeavy, least);
  }
  Recount(state, job);
}

// Policy A, lines 8–12: everything to cen_w's permanent queues.
void JossQueues::PlacePolicyA(const Job& job, int32_t cen_w) {
  const auto w = static_cast<size_t>(cen_w);
  for (size_t i = 0; i < job.maps.size(); ++i) {
    Push(job.id, static_cast<int32_t>(i), true, map_queues_[w][0], false);
  }
  for (size_t i = 0; i < job.reduces.size(); ++i) {
    Push(job.id, static_cast<int32_t>(i), false, reduce_queues_[w][0], false);
  }
}

// Policies B (`small`) and C, lines 14–40.
void JossQueues::PlacePolicyBC(const ClusterState& state, const Job& j, bool small, int32_t least) {
  const JobId job = j.id;
  const size_t m = j.maps.size();
  // Lines 14–15: L_c, the maps whose block has a live replica in cen_c, in
  // index order (each map once per datacenter).
  std::vector<std::vector<int32_t>> L(static_cast<size_t>(state.datacenters()));
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
  if (e < 0) e = last_least_ = least;  // no map has a live replica: choose as policy A does
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

std::vector<JossDroppedQueue> JossQueues::RemoveJob(JobId job) {
  if (auto it = std::find(fifo_jobs_.begin(), fifo_jobs_.end(), job); it != fifo_jobs_.end()) {
    fifo_jobs_.erase(it);
    fifo_tasks_.RemoveJob(job);
  }
  std::vector<JossDroppedQueue> dropped;
  Plan* p = PlanOf(job);
  if (p == nullptr) return dropped;
  for (size_t c = 0; c < p->unprocessed.size(); ++c) unprocessed_[c] -= p->unprocessed[c];
  // Entries left behind (a killed job's) would never be taken.
  auto drop = [&](const std::vector<int>& queue_of, bool is_map) {
    for (int id : QueuesIn(queue_of)) {
      Queue& q = *queues_[static_cast<size_t>(id)];
      for (const Entry& e : EntriesOf(q, job)) Erase(q, e, is_map);
    }
  };
  drop(p->map_queue, /*is_map=*/true);
  drop(p->reduce_queue, /*is_map=*/false);
  for (int id : p->own) {
    const int32_t dc = queues_[static_cast<size_t>(id)]->dc;
    for (const bool is_map : {true, false}) {
      std::vector<int>& ids = (is_map ? map_queues_ : reduce_queues_)[static_cast<size_t>(dc)];
      if (auto it = std::find(ids.begin(), ids.end(), id); it != ids.end()) {
        dropped.push_back({dc, static_cast<int>(it - ids.begin()), is_map});
        ids.erase(it);
      }
    }
    queues_[static_cast<size_t>(id)].reset();
  }
  plans_[static_cast<size_t>(job)].reset();
  return dropped;
}

void JossQueues::TaskPendingAgain(const ClusterState& state, JobId job, int32_t index,
                                  bool is_map) {
  if (fifo_tasks_.Contains(job)) {
    fifo_tasks_.TaskPendingAgain(state, job, index, is_map);
    return;
  }
  const Plan* p = PlanOf(job);
  if (p == nullptr) return;
  const auto i = static_cast<size_t>(index);
  if (!IsPending(state, {job, index}, is_map) ||
      (is_map ? p->map_queued[i] : p->reduce_queued[i])) {
    return;
  }
  Push(job, index, is_map, is_map ? p->map_queue[i] : p->reduce_queue[i], /*front=*/true);
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

TaskRef JossQueues::Erase(Queue& q, Entry e, bool is_map) {
  q.fifo.erase(e);
  q.by_job.erase(e);
  q.ready.erase(e);
  if (Plan* p = PlanOf(e.task.job)) {
    (is_map ? p->map_queued : p->reduce_queued)[static_cast<size_t>(e.task.index)] = 0;
  }
  return e.task;
}

const JossQueues::Entry* JossQueues::Head(const ClusterState& state, Queue& q, bool is_map) {
  while (!q.fifo.empty()) {
    const Entry& head = *q.fifo.begin();
    if (IsPending(state, head.task, is_map)) return &head;
    Erase(q, head, is_map);
  }
  return nullptr;
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
  const Entry* head = Head(state, queue, /*is_map=*/true);
  if (head == nullptr) return std::nullopt;
  const Entry pick = locality ? JobDrivenPick(state, queue, head->task.job, node) : *head;
  return Erase(queue, pick, /*is_map=*/true);
}

// The first of `job`'s entries with the best locality for `node`, in queue
// order; the head is one of them, so there is one. Only the job's entries
// are read (by_job), and none past the first on `node`.
JossQueues::Entry JossQueues::JobDrivenPick(const ClusterState& state, Queue& q, JobId job,
                                            NodeId node) {
  const std::vector<MapTask>& maps = state.job(job).maps;
  std::optional<Entry> best;
  Locality best_loc = Locality::kOffDatacenter;
  auto it = q.by_job.lower_bound(Entry{std::numeric_limits<int64_t>::min(), {job, 0}});
  while (it != q.by_job.end() && it->task.job == job) {
    const Entry e = *it++;
    if (!IsPending(state, e.task, /*is_map=*/true)) {
      Erase(q, e, /*is_map=*/true);
      continue;
    }
    const Locality loc = state.LocalityOf(node, maps[static_cast<size_t>(e.task.index)].replicas);
    if (!best || loc < best_loc) best = e, best_loc = loc;
    if (loc == Locality::kNode) break;
  }
  return *best;
}

// The first entry, in queue order, whose job is past slow-start: the head
// of Queue::ready once it is up to date.
std::optional<TaskRef> JossQueues::TakeReduce(const ClusterState& state, int32_t dc, int q) {
  CatchUp(state);
  Queue& queue = At(dc, q, /*is_map=*/false);
  while (!queue.ready.empty()) {
    const Entry e = *queue.ready.begin();
    if (IsPending(state, e.task, /*is_map=*/false)) return Erase(queue, e, /*is_map=*/false);
    Erase(queue, e, /*is_map=*/false);
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
