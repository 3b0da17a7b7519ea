#include "scheduler/joint_policy.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <utility>

namespace mr::sched {
namespace {

using Queue = JointPolicy::Queue;
using Where = JointPolicy::Where;

constexpr Where kNowhere{Queue::kUnplaced, -1};

// A machine that can run maps: a destination and a Q_{m,0} candidate.
bool Runs(const Node& n) { return n.live && n.map_slots > 0; }

bool Holds(const MapTask& m, NodeId node) {
  return std::find(m.replicas.begin(), m.replicas.end(), node) != m.replicas.end();
}

// Machines that can run maps, by switch group, each list by node id.
std::vector<std::vector<NodeId>> Members(const ClusterState& state) {
  std::vector<std::vector<NodeId>> members;
  for (const Node& n : state.nodes()) {
    if (!Runs(n)) continue;
    const auto g = static_cast<size_t>(JointPolicy::GroupOf(n));
    if (members.size() <= g) members.resize(g + 1);
    members[g].push_back(n.id);
  }
  return members;
}

// True when some group has a machine that can run maps: then X_{r,1} has
// a destination (D(X_{r,1}) = every group's X_{r',2}, r' = r included).
bool AnyGroupRuns(const std::vector<std::vector<NodeId>>& members) {
  for (const std::vector<NodeId>& m : members) {
    if (!m.empty()) return true;
  }
  return false;
}

// Uniform in [0, n), from the policy's stream. REQUIRES: n > 0.
size_t Draw(std::mt19937_64& rng, size_t n) { return n == 1 ? 0 : static_cast<size_t>(rng() % n); }

}  // namespace

Result<std::unique_ptr<JointPolicy>> JointPolicy::Create(const JointOptions& options,
                                                         const SchedulerEnv& env) {
  if (options.tick_ms < 0) {
    return Status::InvalidArgument("tick_ms must be >= 0, got " + std::to_string(options.tick_ms));
  }
  if (options.b1 < 1) {
    return Status::InvalidArgument("b1 must be >= 1, got " + std::to_string(options.b1));
  }
  if (options.b2 < 1) {
    return Status::InvalidArgument("b2 must be >= 1, got " + std::to_string(options.b2));
  }
  const TimeMs tick = options.tick_ms > 0 ? options.tick_ms : env.heartbeat_ms;
  if (tick <= 0) {
    const std::string hb = std::to_string(env.heartbeat_ms);
    return Status::InvalidArgument("tick_ms is 0 (the heartbeat interval), and that is " + hb);
  }
  return std::unique_ptr<JointPolicy>(new JointPolicy(options, tick, env.seed));
}

int32_t JointPolicy::GroupOf(const Node& node) {
  return node.rack >= 0 ? 2 * node.rack : 2 * node.datacenter + 1;
}

// ---- Queues ----

const std::deque<JointPolicy::TaskRef>* JointPolicy::Find(Where w) const {
  const auto q = static_cast<int>(w.queue);
  if (w.queue == Queue::kUnplaced) return &unplaced_;
  const auto& queues = q < 3 ? machine_[q] : group_[q - 3];
  if (w.id < 0 || static_cast<size_t>(w.id) >= queues.size()) return nullptr;
  return &queues[static_cast<size_t>(w.id)];
}

std::deque<JointPolicy::TaskRef>* JointPolicy::Find(Where w) {
  return const_cast<std::deque<TaskRef>*>(std::as_const(*this).Find(w));
}

std::deque<JointPolicy::TaskRef>& JointPolicy::Get(Where w) {
  const auto q = static_cast<int>(w.queue);
  if (w.queue == Queue::kUnplaced) return unplaced_;
  auto& queues = q < 3 ? machine_[q] : group_[q - 3];
  if (queues.size() <= static_cast<size_t>(w.id)) queues.resize(static_cast<size_t>(w.id) + 1);
  return queues[static_cast<size_t>(w.id)];
}

int64_t JointPolicy::Length(const ClusterState& state, Where w) const {
  const std::deque<TaskRef>* q = Find(w);
  const auto size = static_cast<int64_t>(q ? q->size() : 0);
  if (w.queue != Queue::kProcessing) return size;
  const Node& n = state.node(w.id);
  if (n.map_slots <= 0) return std::numeric_limits<int64_t>::max();
  return (size + n.running_maps) / n.map_slots;
}

JointPolicy::Slot& JointPolicy::SlotOf(TaskRef t) {
  return slots_[static_cast<size_t>(t.job)][static_cast<size_t>(t.index)];
}

void JointPolicy::Push(TaskRef t, Where to, NodeId origin) {
  Get(to).push_back(t);
  Slot& slot = SlotOf(t);
  slot.where = to.queue == Queue::kUnplaced ? Where{Queue::kUnplaced, 0} : to;
  slot.origin = origin;
}

void JointPolicy::Drain(Where w, std::vector<TaskRef>& out) {
  std::deque<TaskRef>* q = Find(w);
  if (q == nullptr) return;
  for (TaskRef t : *q) {
    out.push_back(t);
    SlotOf(t).where = kNowhere;
  }
  q->clear();
}

JointPolicy::Where JointPolicy::Locate(JobId job, int32_t index) const {
  if (job < 0 || static_cast<size_t>(job) >= slots_.size()) return kNowhere;
  const std::vector<Slot>& maps = slots_[static_cast<size_t>(job)];
  if (index < 0 || static_cast<size_t>(index) >= maps.size()) return kNowhere;
  return maps[static_cast<size_t>(index)].where;
}

std::vector<JointPolicy::TaskRef> JointPolicy::Contents(Queue queue, int32_t id) const {
  const std::deque<TaskRef>* q = Find({queue, id});
  return q ? std::vector<TaskRef>(q->begin(), q->end()) : std::vector<TaskRef>{};
}

// ---- Step 1: task assignment ----

void JointPolicy::Join(const ClusterState& state, TaskRef t) {
  const MapTask& m = state.job(t.job).maps[static_cast<size_t>(t.index)];
  std::vector<NodeId> holders;
  for (NodeId r : m.replicas) {
    if (r >= 0 && static_cast<size_t>(r) < state.nodes().size() && state.node(r).live) {
      holders.push_back(r);
    }
  }
  std::sort(holders.begin(), holders.end());
  holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  // Q_{m,1} has a destination (its own Q_{m,2}, a rack mate's, or X) as
  // soon as any machine can run maps.
  const bool any_runs = std::any_of(state.nodes().begin(), state.nodes().end(), Runs);

  // Q_L in tie-break order: processing queues, then outgoing queues.
  std::vector<Candidate> candidates;
  for (NodeId h : holders) {
    if (Runs(state.node(h))) candidates.push_back({{Queue::kProcessing, h}, 0});
  }
  for (NodeId h : holders) {
    if (any_runs) candidates.push_back({{Queue::kMachineOut, h}, 1});
  }
  const bool located = !candidates.empty();
  if (!located) {  // no live holder: any machine reads it as remotely as another
    for (const Node& n : state.nodes()) {
      if (Runs(n)) candidates.push_back({{Queue::kProcessing, n.id}, 0});
    }
  }
  if (candidates.empty()) {
    Push(t, {Queue::kUnplaced, 0}, kNoNode);
    return;
  }
  const Where best = Shortest(state, candidates);
  Push(t, best, located ? best.id : kNoNode);
}

void JointPolicy::RetryUnplaced(const ClusterState& state) {
  if (unplaced_.empty()) return;
  std::vector<TaskRef> waiting;
  Drain({Queue::kUnplaced, 0}, waiting);
  for (TaskRef t : waiting) Join(state, t);
}

// ---- Events ----

void JointPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs) {
  const Job& j = state.job(job);
  if (slots_.size() <= static_cast<size_t>(job)) slots_.resize(static_cast<size_t>(job) + 1);
  slots_[static_cast<size_t>(job)].assign(j.maps.size(), Slot{kNowhere, kNoNode});
  for (const MapTask& m : j.maps) {
    if (m.state == TaskState::kPending) Join(state, {job, m.index});
  }
}

// The job's maps leave the queues they wait in — those their slots name
// (every queued task's slot says where it is) — each queue keeping the
// order of the rest. A job that finished normally waits nowhere.
void JointPolicy::OnJobFinished(const ClusterState&, JobId job, TimeMs) {
  if (static_cast<size_t>(job) >= slots_.size()) return;
  std::vector<Slot>& slots = slots_[static_cast<size_t>(job)];
  std::vector<Where>& queues = scratch_;
  queues.clear();
  for (const Slot& s : slots) {
    if (s.where != kNowhere && std::find(queues.begin(), queues.end(), s.where) == queues.end()) {
      queues.push_back(s.where);
    }
  }
  for (Where w : queues) {
    if (std::deque<TaskRef>* q = Find(w)) {
      std::erase_if(*q, [job](TaskRef t) { return t.job == job; });
    }
  }
  std::vector<Slot>().swap(slots);
}

void JointPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                               TimeMs) {
  if (!is_map || state.job(job).done) return;
  if (static_cast<size_t>(job) >= slots_.size() || slots_[static_cast<size_t>(job)].empty()) return;
  if (Locate(job, index) != kNowhere) return;
  if (state.job(job).maps[static_cast<size_t>(index)].state != TaskState::kPending) return;
  Join(state, {job, index});
}

void JointPolicy::OnNodeAdded(const ClusterState& state, NodeId, TimeMs) { RetryUnplaced(state); }

void JointPolicy::OnNodeLost(const ClusterState& state, NodeId node, TimeMs) {
  std::vector<TaskRef> displaced;
  for (Queue q : {Queue::kProcessing, Queue::kMachineOut, Queue::kMachineIn}) {
    Drain({q, node}, displaced);
  }
  // Group queues left with nowhere to send.
  const std::vector<std::vector<NodeId>> members = Members(state);
  for (size_t g = 0; g < std::max(group_[0].size(), group_[1].size()); ++g) {
    const bool runs_here = g < members.size() && !members[g].empty();
    if (!AnyGroupRuns(members)) Drain({Queue::kGroupOut, static_cast<int32_t>(g)}, displaced);
    if (!runs_here) Drain({Queue::kGroupIn, static_cast<int32_t>(g)}, displaced);
  }
  for (TaskRef t : displaced) {
    if (state.job(t.job).maps[static_cast<size_t>(t.index)].state == TaskState::kPending) {
      Join(state, t);
    }
  }
  // The node's running and finished maps the host made pending again.
  for (JobId id : state.active_jobs()) {
    if (static_cast<size_t>(id) >= slots_.size() || slots_[static_cast<size_t>(id)].empty()) {
      continue;
    }
    for (const MapTask& m : state.job(id).maps) {
      if (m.state == TaskState::kPending && Locate(id, m.index) == kNowhere) {
        Join(state, {id, m.index});
      }
    }
  }
}

// ---- Step 4 and 5: the heartbeat ----

void JointPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  const Node& n = state.node(hb.node);
  if (!n.live) return;
  int free = n.free_map_slots();
  // An empty Q_{m,0} launches nothing: the paper's idle machine waits for
  // routing to bring it work.
  if (std::deque<TaskRef>* q = Find({Queue::kProcessing, hb.node})) {
    while (free > 0 && !q->empty()) {
      // §6: the job HFS would serve first among those waiting here; HFS
      // re-sorts before every assignment, so the ranks are fresh each time.
      if (ManyJobs(*q)) RankJobs(state);
      const std::vector<size_t> pick = Select(*q, 1);
      const TaskRef t = (*q)[pick.front()];
      q->erase(q->begin() + static_cast<std::ptrdiff_t>(pick.front()));
      SlotOf(t).where = kNowhere;
      if (state.job(t.job).maps[static_cast<size_t>(t.index)].state != TaskState::kPending) {
        continue;
      }
      launcher.LaunchMap(t.job, t.index);
      --free;
    }
  }
  if (n.free_reduce_slots() <= 0) return;
  for (JobId id : state.active_jobs()) {
    const Job& job = state.job(id);
    if (job.pending_reduces() <= 0 || !job.reduces_may_start()) continue;
    for (const ReduceTask& r : job.reduces) {
      if (r.state == TaskState::kPending) {
        launcher.LaunchReduce(id, r.index);
        return;
      }
    }
  }
}

// ---- Steps 2 and 3: routing ----

JointPolicy::Where JointPolicy::Shortest(const ClusterState& state, const std::vector<Candidate>& among) {
  int64_t best = std::numeric_limits<int64_t>::max();
  int tier = std::numeric_limits<int>::max();
  for (const Candidate& c : among) {
    const int64_t l = Length(state, c.where);
    if (l < best || (l == best && c.tier < tier)) best = l, tier = c.tier;
  }
  // The shortest, then the lowest tier; among what still ties, one drawn
  // uniformly from the seeded stream.
  std::vector<Where>& tied = scratch_;
  tied.clear();
  for (const Candidate& c : among) {
    if (c.tier == tier && Length(state, c.where) == best) tied.push_back(c.where);
  }
  return tied[Draw(rng_, tied.size())];
}

void JointPolicy::Route(const ClusterState& state, Where from, const std::vector<Candidate>& dests,
                        int cap, std::vector<Move>& moves) {
  const int64_t length = Length(state, from);
  if (length == 0 || dests.empty()) return;
  const Where best = Shortest(state, dests);
  if (Length(state, best) >= length) return;  // blocked
  moves.push_back({from, best, static_cast<int>(std::min<int64_t>(cap, length))});
}

bool JointPolicy::ManyJobs(const std::deque<TaskRef>& q) {
  for (const TaskRef& t : q) {
    if (t.job != q.front().job) return true;
  }
  return false;
}

void JointPolicy::RankJobs(const ClusterState& state) {
  jobs_scratch_ = state.active_jobs();
  order_.Sort(state, /*for_maps=*/true, &jobs_scratch_);
  for (size_t i = 0; i < jobs_scratch_.size(); ++i) {
    const auto id = static_cast<size_t>(jobs_scratch_[i]);
    if (rank_.size() <= id) rank_.resize(id + 1, 0);
    rank_[id] = static_cast<int64_t>(i);
  }
}

std::vector<size_t> JointPolicy::Select(const std::deque<TaskRef>& q, size_t count) const {
  std::vector<size_t> pos(q.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = i;
  count = std::min(count, pos.size());
  if (!ManyJobs(q)) {
    pos.resize(count);
    return pos;
  }
  auto rank = [&](size_t i) {
    const auto id = static_cast<size_t>(q[i].job);
    return id < rank_.size() ? rank_[id] : std::numeric_limits<int64_t>::max();
  };
  auto before = [&](size_t a, size_t b) {
    const int64_t ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
  };
  std::partial_sort(pos.begin(), pos.begin() + static_cast<std::ptrdiff_t>(count), pos.end(), before);
  pos.resize(count);
  return pos;
}

void JointPolicy::Arrive(const ClusterState& state, TaskRef t, Where from, Where to,
                         Launcher& launcher) {
  const NodeId origin = from.queue == Queue::kMachineOut ? from.id : SlotOf(t).origin;
  Push(t, to, origin);
  // Step 3: the copy starts when the target is known (Q_{m,2} leads only to
  // Q_{m,0}), so it travels while the task waits in Q_{m,2}: the routing
  // hops and the copy are one transfer, as in §3.2 where the queues are
  // the network.
  if (to.queue != Queue::kMachineIn) return;
  const MapTask& m = state.job(t.job).maps[static_cast<size_t>(t.index)];
  if (Holds(m, to.id)) return;
  NodeId source = kNoNode;
  if (origin != kNoNode && state.node(origin).live) {
    source = origin;
  } else {  // the sender died: the nearest live holder, then the lowest id
    for (NodeId h : m.replicas) {
      if (h < 0 || static_cast<size_t>(h) >= state.nodes().size() || !state.node(h).live) continue;
      if (source == kNoNode) {
        source = h;
        continue;
      }
      const double d = state.Distance(h, to.id), best = state.Distance(source, to.id);
      if (d < best || (d == best && h < source)) source = h;
    }
  }
  if (source != kNoNode) launcher.Prefetch(m.block, source, to.id);
}

void JointPolicy::OnTick(const ClusterState& state, TimeMs, Launcher& launcher) {
  RetryUnplaced(state);
  const std::vector<std::vector<NodeId>> members = Members(state);
  auto members_of = [&](size_t g) -> const std::vector<NodeId>& {
    static const std::vector<NodeId> kNone;
    return g < members.size() ? members[g] : kNone;
  };
  const bool any_runs = AnyGroupRuns(members);
  // Every decision reads the lengths before any move (§4.2).
  std::vector<Move> moves;
  std::vector<Candidate> dests;
  for (const Node& n : state.nodes()) {  // Q_{m,1}
    if (!n.live) continue;
    const auto g = static_cast<size_t>(GroupOf(n));
    dests.clear();
    // D(Q_{m,1}) = {X_{r_m,1}} ∪ {Q_{m',2} | m' in M_{r_m}}, m included
    // (§4.1). Ties: another machine of the rack, then m itself, then X.
    for (NodeId other : members_of(g)) dests.push_back({{Queue::kMachineIn, other}, other == n.id ? 1 : 0});
    if (any_runs) dests.push_back({{Queue::kGroupOut, static_cast<int32_t>(g)}, 2});
    Route(state, {Queue::kMachineOut, n.id}, dests, options_.b1, moves);
  }
  for (const Node& n : state.nodes()) {  // Q_{m,2}
    if (Runs(n)) {
      Route(state, {Queue::kMachineIn, n.id}, {{{Queue::kProcessing, n.id}, 0}}, options_.b1, moves);
    }
  }
  const size_t groups = std::max(group_[0].size(), group_[1].size());
  for (size_t g = 0; g < groups; ++g) {  // X_{r,1}: D = {X_{r',2} | r' = 1..R}, r included
    dests.clear();
    for (size_t other = 0; other < members.size(); ++other) {
      if (!members[other].empty()) {  // ties: another group, then r itself
        dests.push_back({{Queue::kGroupIn, static_cast<int32_t>(other)}, other == g ? 1 : 0});
      }
    }
    Route(state, {Queue::kGroupOut, static_cast<int32_t>(g)}, dests, options_.b2, moves);
  }
  for (size_t g = 0; g < groups; ++g) {  // X_{r,2}
    dests.clear();
    for (NodeId m : members_of(g)) dests.push_back({{Queue::kMachineIn, m}, 0});
    Route(state, {Queue::kGroupIn, static_cast<int32_t>(g)}, dests, options_.b2, moves);
  }
  // Which chunks each queue sends: HFS's job order (§6), first come first
  // served within a job. Every sender gives up its tasks before any lands,
  // so no task makes two hops in one slot.
  bool ranked = false;
  std::vector<std::vector<TaskRef>> sent(moves.size());
  for (size_t i = 0; i < moves.size(); ++i) {
    std::deque<TaskRef>& q = Get(moves[i].from);
    if (!ranked && ManyJobs(q)) RankJobs(state), ranked = true;
    std::vector<size_t> pick = Select(q, static_cast<size_t>(moves[i].count));
    for (size_t p : pick) sent[i].push_back(q[p]);
    std::sort(pick.begin(), pick.end());
    for (size_t k = pick.size(); k-- > 0;) q.erase(q.begin() + static_cast<std::ptrdiff_t>(pick[k]));
  }
  for (size_t i = 0; i < moves.size(); ++i) {
    for (TaskRef t : sent[i]) Arrive(state, t, moves[i].from, moves[i].to, launcher);
  }
}

const PolicyInfo& JointPolicyInfo() {
  static const PolicyInfo info{
      "joint",
      "Joint Scheduler: Wang & Ying, \"Data locality in MapReduce: A network perspective\", "
      "Performance Evaluation 96, 2016, Algorithm 1 (§4)",
      {{"tick_ms", int64_t{0},
        "routing period, one time slot of the paper; 0 = the heartbeat interval"},
       {"b1", int64_t{1}, "tasks a machine queue forwards per tick (B1, §3.2; §6 uses 1); >= 1"},
       {"b2", int64_t{5}, "tasks a rack queue forwards per tick (B2, §3.2; §6 uses 5); >= 1"}},
      [](const SchedulerParams& params,
         const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        JointOptions options;
        options.tick_ms = ParamInt(params, "tick_ms");
        for (const char* name : {"b1", "b2"}) {
          const int64_t v = ParamInt(params, name);
          if (v < 1 || v > std::numeric_limits<int>::max()) {
            return Status::InvalidArgument(std::string(name) + " must be >= 1, got " +
                                           std::to_string(v));
          }
        }
        options.b1 = static_cast<int>(ParamInt(params, "b1"));
        options.b2 = static_cast<int>(ParamInt(params, "b2"));
        auto policy = JointPolicy::Create(options, env);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
