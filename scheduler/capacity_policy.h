// CapacityPolicy: Hadoop MRv1's Capacity Scheduler (contrib
// CapacityTaskScheduler, baselines.md §4), on the shared substrate of
// job_tasks.h (§1).
//
// Assumptions: every active job is RUNNING (initialised eagerly: no
// job-init poller, maximum-system-jobs or per-user job limits); one slot
// per task (no high-memory jobs, so no reservations); no speculative
// execution (job_tasks.h); no preemption (there is none in 1.x).
//
// Queues come from the `queues` parameter, "name:capacity[:max],...",
// percentages of the cluster's slots (e.g. "prod:70:100,adhoc:30"). The
// capacities must sum to 100 (floor of the sum, as Hadoop checks); max is
// -1 (none) or in [capacity, 100]. A job goes to the queue named by its
// Job::pool; a job whose pool is empty or names no queue goes to the queue
// "default" if there is one, else to the first queue listed (Hadoop would
// refuse the submission; our host cannot, so it is filed, not dropped).
//
// Per heartbeat from node T (§4.2), maps then reduces, each type alone:
//   1. updateAllQueues, over live nodes: capacity = floor(pct × cluster
//      slots / 100); max capacity likewise (none when -1, and — Hadoop's
//      quirk, kept — none when it rounds to 0 slots); occupied = the
//      queue's running tasks; per user, the slots it occupies; active users
//      = users with a job that has pending tasks of the type (reduces: past
//      slow-start).
//   2. Maps, while T has a free map slot:
//      a. order the queues by occupied / capacity, ascending (capacity 0
//         counts as 1.0); ties keep the order of the `queues` parameter;
//      b. skip a queue when occupied + 1 > max capacity; walk its jobs in
//         order (submit time, then id; with supports_priority, priority
//         first), skipping a job without a pending map and a job whose user
//         is at its limit (step 4);
//      c. the job gets a scheduling opportunity (counter + 1), then
//         ObtainMap(T, kDatacenter) — node, rack, datacenter: Hadoop's
//         obtainNewNodeOrRackLocalMapTask with rack = datacenter. Found:
//         LOCAL, and the job's counter goes back to 0;
//      d. else, if no off-switch map was given in this heartbeat and the
//         off-switch gate (step 3) is open, ObtainNonLocalMap: OFF_SWITCH;
//      e. else the next job, then the next queue; nothing anywhere: stop.
//      After a launch the queue's and user's counts go up at once; stop
//      at maximum_tasks_per_heartbeat tasks; after an OFF_SWITCH map no
//      further off-switch map, and at most maximum_tasks_after_offswitch
//      more maps (default 0: an off-switch map ends map assignment).
//   3. Off-switch gate (§4.3, JobInProgress.scheduleOffSwitch): open iff
//      min(maps − finished maps, live nodes) × waitFactor < opportunities.
//      waitFactor is locality_wait_factor, or when that is -1 (auto)
//      min(hosts holding the job's splits / live nodes, 1), fixed when the
//      job is added (Hadoop calibrates it once, at job init). A job whose
//      splits have no location gets 0: its first miss opens the gate.
//      (Hadoop's code uses desiredMaps − finishedMaps, i.e. running maps
//      count too; baselines §4.3 says "pending"; we follow the code.)
//   4. User limit (§4.4, assignSlotsToJob): q = max(capacity, 1);
//      cur = q if occupied < q else occupied + 1;
//      limit = min(max(ceil(cur / active users), ceil(min_user_limit_percent
//      × cur / 100)), floor(q × user_limit_factor)); the job may take a
//      slot iff its user's occupied + 1 ≤ limit. With the default factor
//      1 a user never exceeds its queue's capacity, even on an idle
//      cluster (no elasticity without a factor > 1).
//   5. Reduces: one attempt per heartbeat if T has a free reduce slot:
//      the same queue order (by reduce usage), max-capacity check and user
//      limit; the first job with a reduce (ObtainReduce: none before the
//      job's slow-start) gets it.
//
// A failed map is offered first by the substrate whatever its locality,
// so it comes through step c as LOCAL (as in Hadoop). A job with no
// pending map is not asked and earns no opportunity (Hadoop asks it and
// counts one; that only matters when a lost node makes its maps pending
// again, and then we let it wait for locality again instead of rushing an
// off-switch map). Hadoop sets min-user-limit and user-limit-factor per
// queue; here one value applies to every queue.
//
// Bookkeeping: step 1 is not redone per heartbeat. Per queue and task
// type the policy keeps the running tasks, each user's running tasks and
// jobs with a pending task of the type (active users: those with at least
// one such job), and the queue's jobs with a pending task, in queue order.
// Only logged ClusterState mutations change a job's counts, so each
// heartbeat first brings the tallies up to date from the state's change
// log, O(changed jobs); when the log no longer reaches back (or the state
// is another one) it recounts every active job. Steps 2b and 5 then walk
// only the jobs that have a pending task of the type. Within a heartbeat
// the tallies follow each launch, but step 4 reads the active users as
// they were when map (or reduce) assignment began, as Hadoop's
// once-per-heartbeat updateAllQueues does. A job's queue, user, priority
// and submit time are read once, when it is added: a host that changes
// them must finish the job and add it anew.
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/job_tasks.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct CapacityQueueConfig {
  std::string name;
  double capacity_percent = 0;       // share of the cluster's slots, [0, 100]
  double max_capacity_percent = -1;  // -1 = no limit, else [capacity, 100]
};

// OK, or InvalidArgument for no queues, a duplicate or empty name, a
// capacity outside [0, 100], a max that is neither -1 nor in [capacity,
// 100], or capacities whose sum does not floor to 100.
Status CheckCapacityQueues(const std::vector<CapacityQueueConfig>& queues);

// Parses "name:capacity[:max],..." (whitespace around items is ignored)
// and checks the result with CheckCapacityQueues.
Result<std::vector<CapacityQueueConfig>> ParseCapacityQueues(const std::string& spec);

struct CapacityOptions {
  // The queues (mapred.queue.names with each queue's capacity and
  // maximum-capacity). Default: one queue "default" with 100 %.
  std::vector<CapacityQueueConfig> queues = {{"default", 100, -1}};
  // minimum-user-limit-percent, for every queue. In [1, 100]. Default: 100.
  int minimum_user_limit_percent = 100;
  // user-limit-factor, for every queue. > 0. Default: 1.0.
  double user_limit_factor = 1.0;
  // supports-priority, for every queue: order jobs by priority before
  // submit time. Default: false.
  bool supports_priority = false;
  // mapred.capacity-scheduler.maximum-tasks-per-heartbeat (maps). ≥ 1.
  // Default: 32767 (Short.MAX_VALUE).
  int maximum_tasks_per_heartbeat = 32767;
  // mapred.capacity-scheduler.maximum-tasks-after-offswitch. ≥ 0.
  // Default: 0 (an off-switch map ends map assignment).
  int maximum_tasks_after_offswitch = 0;
  // mapreduce.job.locality.wait.factor for every job: -1 = auto (the
  // job's hosts / the cluster's hosts, capped at 1), else ≥ 0. Default: -1.
  double locality_wait_factor = -1;
  // How a map is looked for (job_tasks.h Topology). kBlind (Hadoop 0.20.2
  // with every node in one rack): the node-or-rack step finds a node-local
  // map, else the job's first map anywhere, so the off-switch gate only
  // ever applies to maps with no location. Default: kRackAsDatacenter.
  Topology topology = Topology::kRackAsDatacenter;
};

class CapacityPolicy : public Scheduler {
 public:
  // InvalidArgument for options out of range (messages name the field).
  static Result<std::unique_ptr<CapacityPolicy>> Create(const CapacityOptions& options);

  const char* name() const override { return "capacity"; }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

  // Introspection for tests and logs. The queue a job was filed in (index
  // into options().queues), and its missed scheduling opportunities.
  const CapacityOptions& options() const { return options_; }
  int queue_of(JobId job) const;
  int64_t scheduling_opportunities(JobId job) const;

 private:
  enum Kind { kMaps = 0, kReduces = 1 };
  // A job's place in its queue: priority (highest first, only with
  // supports_priority), then submit time, then id.
  struct OrderKey {
    int neg_priority = 0;
    TimeMs submit_ms = 0;
    JobId id = 0;
    auto operator<=>(const OrderKey&) const = default;
  };
  // One queue's tallies for one task type, over its active jobs (see
  // "Bookkeeping" above).
  struct QueueTally {
    int occupied = 0;               // running tasks
    std::vector<int> user_running;  // running tasks, by user index
    std::vector<int> user_waiting;  // jobs with a pending task, by user index
    int active_users = 0;           // users whose user_waiting > 0
    std::set<OrderKey> waiting;     // jobs with a pending task, in queue order
  };
  // A queue as one heartbeat sees it: limits from the live slots, and the
  // active users when assignment began.
  struct QueueView {
    int capacity = 0;
    int max_capacity = -1;  // ≤ 0: no limit
    int active_users = 0;
  };
  struct JobInfo {
    int queue = 0;
    int user = 0;  // index into users_
    OrderKey key;
    double wait_factor = 1;
    int64_t opportunities = 0;
    // What the tallies hold for this job, by Kind.
    int counted_running[2] = {0, 0};
    bool counted_waiting[2] = {false, false};
  };

  explicit CapacityPolicy(CapacityOptions options);
  int UserIndex(const std::string& user);
  // Brings the tallies up to date with `state` (see "Bookkeeping").
  void Sync(const ClusterState& state);
  void RecountAll(const ClusterState& state);
  void Recount(const ClusterState& state, JobId id);
  void Count(JobInfo& info, Kind kind, int running, bool waiting);
  std::vector<QueueView> ViewQueues(Kind kind, int slots) const;
  std::vector<int> QueueOrder(Kind kind, const std::vector<QueueView>& views) const;
  bool UserMayTake(const QueueView& view, const QueueTally& tally, int user) const;
  bool ScheduleOffSwitch(const Job& job, const JobInfo& info, int live_nodes) const;
  // One map for `node` (steps 2a–e), or job -1; `off_switch` tells which.
  struct MapChoice {
    JobId job = -1;
    int32_t index = -1;
    bool off_switch = false;
  };
  MapChoice ChooseMap(const ClusterState& state, NodeId node, int live_nodes,
                      const std::vector<QueueView>& views, bool allow_off_switch);
  void AssignMaps(const ClusterState& state, NodeId node, int live_nodes, int slots,
                  Launcher& launcher);
  void AssignReduce(const ClusterState& state, NodeId node, int slots, Launcher& launcher);

  CapacityOptions options_;
  JobTaskIndex tasks_;
  std::vector<JobInfo> jobs_;           // by JobId
  std::map<std::string, int> users_;    // user name → index (tallies are by index)
  std::vector<QueueTally> tallies_[2];  // by Kind, then queue
  // The state and change_seq() the tallies reflect (nullptr: none yet).
  const ClusterState* synced_state_ = nullptr;
  uint64_t synced_seq_ = 0;
};

// The registry entry: name "capacity"; parameters queues,
// minimum_user_limit_percent, user_limit_factor, supports_priority,
// maximum_tasks_per_heartbeat, maximum_tasks_after_offswitch,
// locality_wait_factor.
const PolicyInfo& CapacityPolicyInfo();

}  // namespace mr::sched
