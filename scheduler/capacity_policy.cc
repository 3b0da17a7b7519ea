#include "scheduler/capacity_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

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

// Each queue's active jobs in queue order: submit time, then id; with
// supports_priority, priority (highest first) before both.
void CapacityPolicy::FileJobs(const ClusterState& state) {
  if (&state == filed_state_ && state.active_jobs() == filed_active_) return;
  filed_state_ = &state;
  filed_active_ = state.active_jobs();
  queue_jobs_.assign(options_.queues.size(), {});
  for (JobId id : state.active_jobs()) {
    queue_jobs_[static_cast<size_t>(jobs_[static_cast<size_t>(id)].queue)].push_back(id);
  }
  for (std::vector<JobId>& jobs : queue_jobs_) {
    std::sort(jobs.begin(), jobs.end(), [&](JobId a, JobId b) {
      const Job& x = state.job(a);
      const Job& y = state.job(b);
      if (options_.supports_priority && x.priority != y.priority) return x.priority > y.priority;
      if (x.submit_ms != y.submit_ms) return x.submit_ms < y.submit_ms;
      return a < b;
    });
  }
}

// updateAllQueues for one task type.
std::vector<CapacityPolicy::Usage> CapacityPolicy::ComputeUsage(const ClusterState& state,
                                                                bool maps) const {
  const int slots = maps ? state.total_map_slots() : state.total_reduce_slots();
  std::vector<Usage> usage(options_.queues.size());
  for (size_t q = 0; q < usage.size(); ++q) {
    const CapacityQueueConfig& c = options_.queues[q];
    usage[q].capacity = static_cast<int>(c.capacity_percent * slots / 100);
    if (c.max_capacity_percent > 0) {
      usage[q].max_capacity = static_cast<int>(c.max_capacity_percent * slots / 100);
    }
    for (JobId id : queue_jobs_[q]) {
      const Job& job = state.job(id);
      const int running = maps ? job.running_maps : job.running_reduces;
      const bool pending =
          maps ? job.pending_maps() > 0 : job.reduces_may_start() && job.pending_reduces() > 0;
      if (running > 0) {  // a 0 entry reads as a missing one (UserMayTake)
        usage[q].occupied += running;
        usage[q].by_user[job.user] += running;
      }
      if (pending) usage[q].active_users.insert(job.user);
    }
  }
  return usage;
}

// Queues by occupied / capacity ascending (capacity 0 counts as full);
// ties in the order of the `queues` parameter.
std::vector<int> CapacityPolicy::QueueOrder(const std::vector<Usage>& usage) const {
  std::vector<double> ratio(usage.size());
  std::vector<int> order(usage.size());
  for (size_t q = 0; q < usage.size(); ++q) {
    order[q] = static_cast<int>(q);
    ratio[q] =
        usage[q].capacity == 0 ? 1.0 : static_cast<double>(usage[q].occupied) / usage[q].capacity;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ratio[static_cast<size_t>(a)] < ratio[static_cast<size_t>(b)];
  });
  return order;
}

// assignSlotsToJob's user limit, for one slot.
bool CapacityPolicy::UserMayTake(const Usage& usage, const std::string& user) const {
  const int q = std::max(usage.capacity, 1);
  const int cur = usage.occupied < q ? q : usage.occupied + 1;
  const int users = std::max(1, static_cast<int>(usage.active_users.size()));
  const int limit =
      std::min(std::max(CeilDiv(cur, users),
                        CeilDiv(int64_t{options_.minimum_user_limit_percent} * cur, 100)),
               static_cast<int>(q * options_.user_limit_factor));
  auto it = usage.by_user.find(user);
  const int occupied = it == usage.by_user.end() ? 0 : it->second;
  return occupied + 1 <= limit;
}

// JobInProgress.scheduleOffSwitch.
bool CapacityPolicy::ScheduleOffSwitch(const Job& job, const JobInfo& info, int live_nodes) const {
  const int remaining = static_cast<int>(job.maps.size()) - job.finished_maps;
  const double required = std::min(remaining, live_nodes);
  return required * info.wait_factor < static_cast<double>(info.opportunities);
}

void CapacityPolicy::AssignMaps(const ClusterState& state, NodeId node, int live_nodes,
                                Launcher& launcher) {
  std::vector<Usage> usage = ComputeUsage(state, /*maps=*/true);
  bool assign_off_switch = true;
  int after_off_switch = options_.maximum_tasks_after_offswitch;
  int assigned = 0;
  while (state.node(node).free_map_slots() > 0) {
    JobId chosen = -1;
    int32_t index = -1;
    int chosen_queue = -1;
    bool off_switch = false;
    for (int q : QueueOrder(usage)) {
      Usage& u = usage[static_cast<size_t>(q)];
      if (u.max_capacity > 0 && u.occupied + 1 > u.max_capacity) continue;
      for (JobId id : queue_jobs_[static_cast<size_t>(q)]) {
        const Job& job = state.job(id);
        if (job.pending_maps() == 0 || !UserMayTake(u, job.user)) continue;
        JobInfo& info = jobs_[static_cast<size_t>(id)];
        ++info.opportunities;
        index = tasks_.ObtainMap(state, id, node, Locality::kDatacenter);
        if (index >= 0) {
          info.opportunities = 0;  // a local map: the job waits afresh
        } else if (assign_off_switch && ScheduleOffSwitch(job, info, live_nodes)) {
          index = tasks_.ObtainNonLocalMap(state, id, node);
          off_switch = index >= 0;
        }
        if (index >= 0) {
          chosen = id;
          chosen_queue = q;
          break;
        }
      }
      if (chosen >= 0) break;
    }
    if (chosen < 0) return;  // nothing anywhere

    const std::string& user = state.job(chosen).user;
    launcher.LaunchMap(chosen, index);
    Usage& u = usage[static_cast<size_t>(chosen_queue)];
    ++u.occupied;
    ++u.by_user[user];
    if (++assigned >= options_.maximum_tasks_per_heartbeat) return;
    if (off_switch) assign_off_switch = false;
    if (!assign_off_switch) {
      if (after_off_switch == 0) return;
      --after_off_switch;
    }
  }
}

void CapacityPolicy::AssignReduce(const ClusterState& state, NodeId node, Launcher& launcher) {
  if (state.node(node).free_reduce_slots() <= 0) return;
  std::vector<Usage> usage = ComputeUsage(state, /*maps=*/false);
  for (int q : QueueOrder(usage)) {
    const Usage& u = usage[static_cast<size_t>(q)];
    if (u.max_capacity > 0 && u.occupied + 1 > u.max_capacity) continue;
    for (JobId id : queue_jobs_[static_cast<size_t>(q)]) {
      const Job& job = state.job(id);
      // No pending reduce, or before slow-start: the substrate would find
      // none (checked first: it is cheaper than the user limit).
      if (job.reduces.empty() || job.pending_reduces() == 0 || !job.reduces_may_start()) continue;
      if (!UserMayTake(u, job.user)) continue;
      if (int32_t i = tasks_.ObtainReduce(state, id, node); i >= 0) {
        launcher.LaunchReduce(id, i);
        return;
      }
    }
  }
}

void CapacityPolicy::Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) {
  if (!state.node(hb.node).live) return;
  int live_nodes = 0;
  for (const Node& n : state.nodes()) live_nodes += n.live ? 1 : 0;
  FileJobs(state);
  AssignMaps(state, hb.node, live_nodes, launcher);
  AssignReduce(state, hb.node, launcher);
}

const PolicyInfo& CapacityPolicyInfo() {
  static const PolicyInfo info{
      "capacity",
      "Hadoop MRv1 Capacity Scheduler, CapacityTaskScheduler (baselines.md §4)",
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
        "opportunities; -1 = auto (the job's hosts / the cluster's hosts)"}},
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
        auto policy = CapacityPolicy::Create(options);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
