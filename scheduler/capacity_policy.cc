#include "scheduler/capacity_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <span>

#include "scheduler/spec_text.h"

namespace mr::sched {
namespace {

int CeilDiv(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace

Status CheckCapacityQueues(const std::vector<CapacityQueueConfig>& queues) {
  if (queues.empty()) return Status::InvalidArgument("no queues");
  double total = 0;
  for (size_t i = 0; i < queues.size(); ++i) {
    const CapacityQueueConfig& q = queues[i];
    const std::string where = "queue '" + q.name + "': ";
    if (q.name.empty()) return Status::InvalidArgument("empty queue name");
    for (size_t k = 0; k < i; ++k) {
      if (queues[k].name == q.name) return Status::InvalidArgument(where + "duplicate name");
    }
    if (!(q.capacity_percent >= 0 && q.capacity_percent <= 100)) {
      return Status::InvalidArgument(where + "capacity must be in [0, 100], got " +
                                     ParamToString(q.capacity_percent));
    }
    if (q.max_capacity_percent != -1 &&
        !(q.max_capacity_percent >= q.capacity_percent && q.max_capacity_percent <= 100)) {
      return Status::InvalidArgument(where + "max_capacity must be -1 or in [capacity, 100], got " +
                                     ParamToString(q.max_capacity_percent));
    }
    total += q.capacity_percent;
  }
  // Hadoop: floor(sum of capacities) must be 100. The epsilon forgives
  // 33.3 + 33.3 + 33.4 adding up to 99.99999.
  if (std::floor(total + 1e-9) != 100) {
    return Status::InvalidArgument("queue capacities must sum to 100, got " + ParamToString(total));
  }
  return Status::OK();
}

Result<std::vector<CapacityQueueConfig>> ParseCapacityQueues(const std::string& spec) {
  std::vector<CapacityQueueConfig> queues;
  for (const std::string& item : SplitTrimmed(spec, ',')) {
    const std::vector<std::string> f = SplitTrimmed(item, ':');
    const std::string where = "queue '" + item + "': ";
    if (f.size() < 2 || f.size() > 3) {
      return Status::InvalidArgument(where + "expected name:capacity[:max_capacity]");
    }
    CapacityQueueConfig q;
    q.name = f[0];
    if (!ParseNumber(f[1], &q.capacity_percent)) {
      return Status::InvalidArgument(where + "capacity is not a number");
    }
    if (f.size() == 3 && !ParseNumber(f[2], &q.max_capacity_percent)) {
      return Status::InvalidArgument(where + "max_capacity is not a number");
    }
    queues.push_back(std::move(q));
  }
  if (Status s = CheckCapacityQueues(queues); !s.ok()) return s;
  return queues;
}

Result<std::unique_ptr<CapacityPolicy>> CapacityPolicy::Create(const CapacityOptions& options) {
  if (Status s = CheckCapacityQueues(options.queues); !s.ok()) return s;
  if (options.minimum_user_limit_percent < 1 || options.minimum_user_limit_percent > 100) {
    return Status::InvalidArgument("minimum_user_limit_percent must be in [1, 100], got " +
                                   std::to_string(options.minimum_user_limit_percent));
  }
  if (!(options.user_limit_factor > 0) || !std::isfinite(options.user_limit_factor)) {
    return Status::InvalidArgument("user_limit_factor must be > 0, got " +
                                   ParamToString(options.user_limit_factor));
  }
  if (options.maximum_tasks_per_heartbeat < 1) {
    return Status::InvalidArgument("maximum_tasks_per_heartbeat must be >= 1, got " +
                                   std::to_string(options.maximum_tasks_per_heartbeat));
  }
  if (options.maximum_tasks_after_offswitch < 0) {
    return Status::InvalidArgument("maximum_tasks_after_offswitch must be >= 0, got " +
                                   std::to_string(options.maximum_tasks_after_offswitch));
  }
  if (!(options.locality_wait_factor == -1 || options.locality_wait_factor >= 0) ||
      !std::isfinite(options.locality_wait_factor)) {
    return Status::InvalidArgument("locality_wait_factor must be -1 (auto) or >= 0, got " +
                                   ParamToString(options.locality_wait_factor));
  }
  return std::unique_ptr<CapacityPolicy>(new CapacityPolicy(options));
}

CapacityPolicy::CapacityPolicy(CapacityOptions options) : options_(std::move(options)) {
  for (std::vector<QueueTally>& tallies : tallies_) tallies.resize(options_.queues.size());
}

void CapacityPolicy::OnJobAdded(const ClusterState& state, JobId job, TimeMs) {
  tasks_.AddJob(state, job);
  if (static_cast<size_t>(job) >= jobs_.size()) jobs_.resize(static_cast<size_t>(job) + 1);
  JobInfo& info = jobs_[static_cast<size_t>(job)];
  const Job& j = state.job(job);

  // The queue named by the pool; else "default"; else the first queue.
  info.queue = -1;
  int fallback = 0;
  for (size_t q = 0; q < options_.queues.size(); ++q) {
    if (options_.queues[q].name == j.pool) info.queue = static_cast<int>(q);
    if (options_.queues[q].name == "default") fallback = static_cast<int>(q);
  }
  if (info.queue < 0) info.queue = fallback;
  info.user = UserIndex(j.user);
  info.key = {options_.supports_priority ? -j.priority : 0, j.submit_ms, job};

  // Hadoop's calibration at job init: the job's hosts over the cluster's.
  info.opportunities = 0;
  info.wait_factor = options_.locality_wait_factor;
  if (info.wait_factor < 0) {
    std::set<NodeId> hosts;
    for (const MapTask& m : j.maps) hosts.insert(m.replicas.begin(), m.replicas.end());
    int live = 0;
    for (const Node& n : state.nodes()) live += n.live ? 1 : 0;
    info.wait_factor =
        live > 0 ? std::min(static_cast<double>(hosts.size()) / static_cast<double>(live), 1.0)
                 : 1.0;
  }
}

void CapacityPolicy::OnJobFinished(const ClusterState&, JobId job, TimeMs) {
  tasks_.RemoveJob(job);
}

void CapacityPolicy::OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                                  TimeMs) {
  tasks_.TaskPendingAgain(state, job, index, is_map);
}

void CapacityPolicy::OnNodeLost(const ClusterState& state, NodeId, TimeMs) {
  tasks_.Refresh(state);
}

int CapacityPolicy::queue_of(JobId job) const { return jobs_.at(static_cast<size_t>(job)).queue; }

int64_t CapacityPolicy::scheduling_opportunities(JobId job) const {
  return jobs_.at(static_cast<size_t>(job)).opportunities;
}

// Users by index, so that a tally is a vector, not a map of names.
int CapacityPolicy::UserIndex(const std::string& user) {
  auto [it, added] = users_.try_emplace(user, static_cast<int>(users_.size()));
  if (added) {
    for (std::vector<QueueTally>& tallies : tallies_) {
      for (QueueTally& t : tallies) {
        t.user_running.resize(users_.size(), 0);
        t.user_waiting.resize(users_.size(), 0);
      }
    }
  }
  return it->second;
}

// Called at the start of Assign and after each launch: re-reads only the
// jobs the state logged as changed since the last call.
void CapacityPolicy::Sync(const ClusterState& state) {
  std::span<const JobId> changed;
  if (&state == synced_state_ && state.ChangedJobsSince(synced_seq_, &changed)) {
    for (JobId id : changed) Recount(state, id);  // repeats are harmless: counts are absolute
  } else {
    RecountAll(state);
  }
  synced_state_ = &state;
  synced_seq_ = state.change_seq();
}

// From scratch: the first heartbeat, a new state, or a log that no longer
// reaches back to the last Sync.
void CapacityPolicy::RecountAll(const ClusterState& state) {
  for (std::vector<QueueTally>& tallies : tallies_) {
    for (QueueTally& t : tallies) {
      t.occupied = 0;
      std::fill(t.user_running.begin(), t.user_running.end(), 0);
      std::fill(t.user_waiting.begin(), t.user_waiting.end(), 0);
      t.active_users = 0;
      t.waiting.clear();
    }
  }
  for (JobInfo& info : jobs_) {
    info.counted_running[kMaps] = info.counted_running[kReduces] = 0;
    info.counted_waiting[kMaps] = info.counted_waiting[kReduces] = false;
  }
  for (JobId id : state.active_jobs()) Recount(state, id);
}

// Replaces what the tallies hold for job `id` by its current counts; a
// finished job counts nothing (only active jobs are in a queue).
void CapacityPolicy::Recount(const ClusterState& state, JobId id) {
  // A job the host has not told us of yet (OnJobAdded comes right after
  // AddJob, before any heartbeat) has no queue; it is counted when it is.
  if (static_cast<size_t>(id) >= jobs_.size()) return;
  JobInfo& info = jobs_[static_cast<size_t>(id)];
  const Job& job = state.job(id);
  if (job.done) {
    Count(info, kMaps, 0, false);
    Count(info, kReduces, 0, false);
    return;
  }
  Count(info, kMaps, job.running_maps, job.pending_maps() > 0);
  // A reduce to give: one pending and past slow-start (ObtainReduce's test).
  Count(info, kReduces, job.running_reduces, job.pending_reduces() > 0 && job.reduces_may_start());
}

void CapacityPolicy::Count(JobInfo& info, Kind kind, int running, bool waiting) {
  QueueTally& t = tallies_[kind][static_cast<size_t>(info.queue)];
  const size_t user = static_cast<size_t>(info.user);
  t.occupied += running - info.counted_running[kind];
  t.user_running[user] += running - info.counted_running[kind];
  info.counted_running[kind] = running;
  if (waiting == info.counted_waiting[kind]) return;
  info.counted_waiting[kind] = waiting;
  if (waiting) {
    t.waiting.insert(info.key);
    if (t.user_waiting[user]++ == 0) ++t.active_users;
  } else {
    t.waiting.erase(info.key);
    if (--t.user_waiting[user] == 0) --t.active_users;
  }
}

// updateAllQueues' limits from the live cluster's `slots` of the kind; the
// active users as they are now (the caller keeps them for the heartbeat).
std::vector<CapacityPolicy::QueueView> CapacityPolicy::ViewQueues(Kind kind, int slots) const {
  std::vector<QueueView> views(options_.queues.size());
  for (size_t q = 0; q < views.size(); ++q) {
    const CapacityQueueConfig& c = options_.queues[q];
    views[q].capacity = static_cast<int>(c.capacity_percent * slots / 100);
    if (c.max_capacity_percent > 0) {
      views[q].max_capacity = static_cast<int>(c.max_capacity_percent * slots / 100);
    }
    views[q].active_users = tallies_[kind][q].active_users;
  }
  return views;
}

// Queues by occupied / capacity ascending (capacity 0 counts as full);
// ties in the order of the `queues` parameter.
std::vector<int> CapacityPolicy::QueueOrder(Kind kind, const std::vector<QueueView>& views) const {
  std::vector<double> ratio(views.size());
  std::vector<int> order(views.size());
  for (size_t q = 0; q < views.size(); ++q) {
    order[q] = static_cast<int>(q);
    ratio[q] = views[q].capacity == 0
                   ? 1.0
                   : static_cast<double>(tallies_[kind][q].occupied) / views[q].capacity;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ratio[static_cast<size_t>(a)] < ratio[static_cast<size_t>(b)];
  });
  return order;
}

// assignSlotsToJob's user limit, for one slot.
bool CapacityPolicy::UserMayTake(const QueueView& view, const QueueTally& tally, int user) const {
  const int q = std::max(view.capacity, 1);
  const int cur = tally.occupied < q ? q : tally.occupied + 1;
  const int users = std::max(1, view.active_users);
  const int limit =
      std::min(std::max(CeilDiv(cur, users),
                        CeilDiv(int64_t{options_.minimum_user_limit_percent} * cur, 100)),
               static_cast<int>(q * options_.user_limit_factor));
  return tally.user_running[static_cast<size_t>(user)] + 1 <= limit;
}

// JobInProgress.scheduleOffSwitch.
bool CapacityPolicy::ScheduleOffSwitch(const Job& job, const JobInfo& info, int live_nodes) const {
  const int remaining = static_cast<int>(job.maps.size()) - job.finished_maps;
  const double required = std::min(remaining, live_nodes);
  return required * info.wait_factor < static_cast<double>(info.opportunities);
}

CapacityPolicy::MapChoice CapacityPolicy::ChooseMap(const ClusterState& state, NodeId node,
                                                    int live_nodes,
                                                    const std::vector<QueueView>& views,
                                                    bool allow_off_switch) {
  for (int q : QueueOrder(kMaps, views)) {
    const QueueView& view = views[static_cast<size_t>(q)];
    const QueueTally& tally = tallies_[kMaps][static_cast<size_t>(q)];
    if (view.max_capacity > 0 && tally.occupied + 1 > view.max_capacity) continue;
    for (const OrderKey& key : tally.waiting) {  // the jobs with a pending map
      JobInfo& info = jobs_[static_cast<size_t>(key.id)];
      if (!UserMayTake(view, tally, info.user)) continue;
      ++info.opportunities;
      if (int32_t i =
              tasks_.ObtainMap(state, key.id, node, Locality::kDatacenter, options_.topology);
          i >= 0) {
        info.opportunities = 0;  // a local map: the job waits afresh
        return {key.id, i, false};
      }
      if (allow_off_switch && ScheduleOffSwitch(state.job(key.id), info, live_nodes)) {
        if (int32_t i = tasks_.ObtainNonLocalMap(state, key.id, node); i >= 0) {
          return {key.id, i, true};
        }
      }
    }
  }
  return {};
}

void CapacityPolicy::AssignMaps(const ClusterState& state, NodeId node, int live_nodes, int slots,
                                Launcher& launcher) {
  const std::vector<QueueView> views = ViewQueues(kMaps, slots);
  bool assign_off_switch = true;
  int after_off_switch = options_.maximum_tasks_after_offswitch;
  int assigned = 0;
  while (state.node(node).free_map_slots() > 0) {
    const MapChoice choice = ChooseMap(state, node, live_nodes, views, assign_off_switch);
    if (choice.job < 0) return;  // nothing anywhere
    launcher.LaunchMap(choice.job, choice.index);
    Sync(state);  // the queue's and the user's counts go up
    if (++assigned >= options_.maximum_tasks_per_heartbeat) return;
    if (choice.off_switch) assign_off_switch = false;
    if (!assign_off_switch) {
      if (after_off_switch == 0) return;
      --after_off_switch;
    }
  }
}

void CapacityPolicy::AssignReduce(const ClusterState& state, NodeId node, int slots,
                                  Launcher& launcher) {
  if (state.node(node).free_reduce_slots() <= 0) return;
  const std::vector<QueueView> views = ViewQueues(kReduces, slots);
  for (int q : QueueOrder(kReduces, views)) {
    const QueueView& view = views[static_cast<size_t>(q)];
    const QueueTally& tally = tallies_[kReduces][static_cast<size_t>(q)];
    if (view.max_capacity > 0 && tally.occupied + 1 > view.max_capacity) continue;
    for (const OrderKey& key : tally.waiting) {  // the jobs with a reduce to give
      if (!UserMayTake(view, tally, jobs_[static_cast<size_t>(key.id)].user)) continue;
      if (int32_t i = tasks_.ObtainReduce(state, key.id, node); i >= 0) {
        launcher.LaunchReduce(key.id, i);
        return;
      }
    }
  }
}

void CapacityPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  int live_nodes = 0, map_slots = 0, reduce_slots = 0;
  for (const Node& n : state.nodes()) {
    if (!n.live) continue;
    ++live_nodes;
    map_slots += n.map_slots;
    reduce_slots += n.reduce_slots;
  }
  Sync(state);
  AssignMaps(state, hb.node, live_nodes, map_slots, launcher);  // syncs after each launch
  AssignReduce(state, hb.node, reduce_slots, launcher);
}

const PolicyInfo& CapacityPolicyInfo() {
  static const PolicyInfo info{
      "capacity",
      "Apache Hadoop 1.2 Capacity Scheduler (CapacityTaskScheduler, contrib/capacity-scheduler): "
      "queues with capacities, FIFO by priority inside each",
      {{"queues", std::string("default:100"),
        "queues as name:capacity_percent[:max_capacity_percent],...; capacities sum to 100, "
        "max -1 = none; a job's pool picks its queue (unknown pools: 'default', else the first)"},
       {"minimum_user_limit_percent", int64_t{100},
        "minimum-user-limit-percent for every queue; in [1, 100]"},
       {"user_limit_factor", 1.0,
        "user-limit-factor for every queue: a user holds at most this × its queue's capacity; > 0"},
       {"supports_priority", false, "order jobs in a queue by priority before submit time"},
       {"maximum_tasks_per_heartbeat", int64_t{32767},
        "most maps given to one node per heartbeat (maximum-tasks-per-heartbeat); >= 1"},
       {"maximum_tasks_after_offswitch", int64_t{0},
        "maps still given after an off-switch map in the same heartbeat; >= 0"},
       {"locality_wait_factor", -1.0,
        "off-switch gate: a job waits for min(remaining maps, nodes) x this missed "
        "opportunities; -1 = auto (the job's hosts / the cluster's hosts)"},
       {"topology", std::string("rack-as-datacenter"),
        "rack-as-datacenter: node, then the node's rack (when configured) and datacenter, then "
        "others (Hadoop 1.x with a rack per datacenter); blind: a node-local map, else the "
        "job's first map anywhere (Hadoop 0.20.2 with every node in one rack, as in JoSS)"}},
      [](const SchedulerParams& params, const SchedulerEnv&) -> Result<std::unique_ptr<Scheduler>> {
        CapacityOptions options;
        auto queues = ParseCapacityQueues(ParamString(params, "queues"));
        if (!queues.ok()) return queues.status();
        options.queues = std::move(queues).value();
        // Ints are range-checked here so that Create sees no truncation.
        auto to_int = [&](const char* name, int* out) -> Status {
          const int64_t v = ParamInt(params, name);
          if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
            return Status::InvalidArgument(std::string(name) +
                                           " is out of range: " + std::to_string(v));
          }
          *out = static_cast<int>(v);
          return Status::OK();
        };
        for (auto [name, field] :
             {std::pair{"minimum_user_limit_percent", &options.minimum_user_limit_percent},
              std::pair{"maximum_tasks_per_heartbeat", &options.maximum_tasks_per_heartbeat},
              std::pair{"maximum_tasks_after_offswitch", &options.maximum_tasks_after_offswitch}}) {
          if (Status s = to_int(name, field); !s.ok()) return s;
        }
        options.user_limit_factor = ParamDouble(params, "user_limit_factor");
        options.supports_priority = ParamBool(params, "supports_priority");
        options.locality_wait_factor = ParamDouble(params, "locality_wait_factor");
        const std::string topology = ParamString(params, "topology");
        if (!ParseTopology(topology, &options.topology)) {
          return Status::InvalidArgument(TopologyError(topology));
        }
        auto policy = CapacityPolicy::Create(options);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
