// JoSS's task scheduler (Lee, Lin & Yahyapour, "Hybrid Job-driven
// Scheduling for Virtual MapReduce Clusters", §4.1–4.3, Fig. 4): the job
// classification and the task queues that both assigners (JoSS-T, JoSS-J;
// joss_policy.h) read. The policy owns one JossQueues and calls Classify
// then Schedule when a job arrives.
//
// Classification (§4.1):
//   1. A job whose (code hash, input type) was never run — the host has no
//      average filtering percentage for it, Job::has_fp() is false — is
//      "new" (Fig. 4 line 4) and goes to MQ_FIFO / RQ_FIFO (lines 5–6).
//   2. Otherwise FP_J = Job::known_fp. Reduce-heavy (RH) if FP_J > td, else
//      map-heavy (MH) (Eq. 3, reduced from Eqs. 1–2). td = k/(k−1) with
//      k = ClusterState::datacenters() (Eq. 8, derived from Eqs. 5–7);
//      k = 1 makes td infinite, so every job is MH (Eq. 7 needs k > 1, and
//      with one datacenter there is no inter-datacenter traffic to save).
//      A td parameter ≥ 0 overrides the derived value.
//   3. Small if m ≤ N_avg_VPS, else large (Eq. 4), where m is the number of
//      map tasks and N_avg_VPS = (Σ_c N_VPS,c) / k, "the average datacenter
//      scale": VPSs (nodes) per datacenter on average. We count live nodes,
//      as N_VPS,c is the number of VPSs cen_c provides now. Eq. 4 counts
//      VPSs, not slots (§4 assumes one map slot per VPS); we keep the count
//      of VPSs as written.
//   Policy: small RH → A; small MH → B; large (RH or MH) → C (§4.2).
//
// Queues (§4 opening, §4.2, §4.3): per datacenter c a permanent map queue
// MQ_{c,0} and reduce queue RQ_{c,0} (small jobs), plus MQ_{c,p}/RQ_{c,q},
// p, q ≥ 1, one per large job placed there (policy C); and the global
// MQ_FIFO / RQ_FIFO for new jobs. MQ_FIFO / RQ_FIFO are served with the
// Hadoop FIFO algorithm (§4.3: "the Hadoop FIFO algorithm [1]"): jobs by
// priority, submit time, id; for each job the substrate's locality order
// (job_tasks.h ObtainMap: failed maps, node, rack, datacenter, others).
//
// Schedule (Fig. 4; line numbers are the figure's):
//   A (lines 8–12): cen_w = the datacenter with the fewest unprocessed
//     tasks — tasks waiting in its queues plus tasks running on its VPSs,
//     MQ_FIFO's included (Unprocessed) — among datacenters with a live VPS
//     (ties, where the paper is silent: the first tied datacenter after the
//     previous cen_w, cyclically).
//     All maps → MQ_{w,0}, all reduces → RQ_{w,0}.
//   B / C (lines 14–40): L_c = the job's maps whose block has a live replica
//     in cen_c (lines 14–15). While maps remain (α > 0, line 17): cen_d =
//     the first largest L_c (lowest index among the largest, line 18);
//     append L_d's maps in index order to MQ_{d,0} (B, line 22) or to a new
//     queue MQ_{d,p+1} (C, lines 24–26); delete L_d's blocks from every L_c
//     (lines 28–29); α −= |L_d| (line 30). Then all reduces go to cen_e, the
//     datacenter holding the most unique blocks (lines 32–33), to RQ_{e,0}
//     (B, line 35) or a new RQ_{e,q+1} (C, lines 37–39).
//   Fig. 4 as printed has three slips, resolved by the prose of §4.2–4.3:
//     - line 30 sits inside the `for c` loop, which would subtract |L_d|
//       k times; we subtract once per cen_d.
//     - lines 32–40 sit inside the while loop by their braces, which would
//       queue the reduces once per cen_d; the prose (§4.2 policy B, Fig. 3)
//       queues them once, after the maps.
//     - cen_e must be computed on the original L_c (after line 29 every L_c
//       is empty): the Fig. 3 example sends the reduces to cen_2, the first
//       cen_d. So cen_e = the first cen_d.
//   Where the paper is silent:
//     - Maps whose block has no live replica never enter any L_c, so the
//       loop of line 17 would not end; they join cen_e's map queue (the
//       job's own queue there under C). If no map has a live replica, cen_e
//       is chosen as policy A chooses cen_w.
//     - A failed task, or a finished map that must run again after a node
//       loss, goes back to the *front* of the queue it was scheduled to, so
//       it runs next there (as Hadoop offers failed tasks first).
//     - A large job's queues are dropped when the job finishes (the paper
//       never retires them); RemoveJob says where they were, so that an
//       index kept across calls (JossOptions::persistent_index) is not
//       shifted by the drop.
//
// Speed (a heartbeat must take microseconds with 20,000 queued maps):
//   - A queue is an ordered set, not a deque: each entry carries its
//     position `seq` (a push to the back takes the next number up, a push
//     to the front the next number down), so the head is found, and a
//     taken entry erased from anywhere, in O(log n).
//   - Each queue also keeps its entries grouped by job, in queue order, so
//     JTA's pick (the head job's best-placed map) walks the head job's
//     entries only, stopping at the first on the VPS, instead of the whole
//     queue. Locality is computed from the replicas at that moment, so a
//     replica added mid-job (the master's re-replication) counts at once.
//   - A reduce queue also keeps the entries of jobs past slow-start, in
//     queue order, so TakeReduce does not walk past the reduces that must
//     wait. Whether a job is past slow-start is re-read for the jobs that
//     ClusterState's change log names (any change to a job is logged).
//   - Policy A's waiting counts are kept per datacenter and per job; only
//     the jobs the change log names are recounted. Running tasks are summed
//     over the nodes at each policy-A arrival (O(nodes), once per job).
//   - When a job finishes, the entries it still has (a killed job's) leave
//     its queues at once; an entry found not pending anyway is dropped.
//
// Not thread-safe; no I/O. Who calls what: JossPolicy forwards its events.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/cluster_state.h"
#include "scheduler/job_tasks.h"

namespace mr::sched {

// Which part of Fig. 4 a job took.
enum class JossClass : int8_t {
  kNew = 0,               // FP unknown: MQ_FIFO / RQ_FIFO (lines 4–6)
  kSmallReduceHeavy = 1,  // policy A (lines 8–12)
  kSmallMapHeavy = 2,     // policy B (lines 14–35)
  kLarge = 3,             // policy C (lines 14–39)
};
// "new", "A", "B", "C".
const char* JossClassName(JossClass c);

// What the classification saw, recorded per job.
struct JossClassification {
  JossClass cls = JossClass::kNew;
  double fp = 0;           // FP_J used (Job::known_fp at arrival); NaN when new
  double td = 0;           // the threshold used (Eq. 3); +inf when k = 1
  int k = 0;               // datacenters
  int m = 0;               // map tasks
  double n_avg_vps = 0;    // Eq. 4
  bool small = false;      // m ≤ N_avg_VPS (meaningless when new)
  bool map_heavy = false;  // FP_J ≤ td (meaningless when new)
};

// td = k/(k−1) (Eq. 8); +inf for k ≤ 1.
double JossDerivedTd(int k);
// N_avg_VPS = Σ_c N_VPS,c / k over live nodes (Eq. 4); 0 when k = 0.
double JossAvgVpsPerDatacenter(const ClusterState& state);
// Eqs. 3, 4 and Fig. 4 line 4. `td_override` < 0 means derive td (Eq. 8).
JossClassification JossClassify(const ClusterState& state, const Job& job, double td_override);

struct TaskRef {
  JobId job = 0;
  int32_t index = 0;
};

// A per-job queue dropped when its job finished: it was at `position` in
// its datacenter's map (is_map) or reduce queue list (JossQueues::RemoveJob).
struct JossDroppedQueue {
  int32_t dc = 0;
  int position = 0;
  bool is_map = true;
};

class JossQueues {
 public:
  JossQueues();
  ~JossQueues();
  JossQueues(const JossQueues&) = delete;
  JossQueues& operator=(const JossQueues&) = delete;

  // Fig. 4 for one arriving job (the class from JossClassify). A job of a
  // known class arriving while no datacenter exists goes to the FIFO queues.
  void Schedule(const ClusterState& state, JobId job, JossClass cls);
  // The job finished: forget it and drop its own (policy C) queues. Returns
  // where those queues were, in the order dropped (each position counted
  // in the list as it was when that queue left it), so that a round-robin
  // index kept across calls can stay on the queue it pointed at.
  std::vector<JossDroppedQueue> RemoveJob(JobId job);
  // A task is pending again after a failure: back to the front of its queue.
  void TaskPendingAgain(const ClusterState& state, JobId job, int32_t index, bool is_map);
  // After a node loss: every pending task that is in no queue goes back.
  void Refresh(const ClusterState& state);

  // ---- The assigners' view. A Take* result must be launched at once. ----

  // Hadoop FIFO over MQ_FIFO / RQ_FIFO for `node`, or nullopt.
  std::optional<TaskRef> TakeFifoMap(const ClusterState& state, NodeId node);
  std::optional<TaskRef> TakeFifoReduce(const ClusterState& state, NodeId node);

  // Queues of datacenter `dc`: 1 + the number of its per-job queues (Fig. 5
  // line 3/4 "N_map/N_red" is this − 1). 0 for an unknown datacenter.
  int map_queue_count(int32_t dc) const;
  int reduce_queue_count(int32_t dc) const;
  // The first map of MQ_{dc,q} (TTA, Fig. 5 line 11), or with `locality`
  // the Hadoop FIFO pick inside the queue (JTA, Fig. 6 line 11): the head
  // entry's job, and among its entries the first with the best locality
  // for `node` (node, rack, datacenter, other). O(log n) plus the head
  // job's entries in the queue up to the pick.
  std::optional<TaskRef> TakeMap(const ClusterState& state, int32_t dc, int q, NodeId node,
                                 bool locality);
  // The first reduce of RQ_{dc,q} whose job is past slow-start (Fig. 5/6
  // line 20; a reduce before slow-start cannot be launched, so it is passed
  // over, as Hadoop passes over such jobs).
  std::optional<TaskRef> TakeReduce(const ClusterState& state, int32_t dc, int q);

  // Policy A's "unprocessed tasks" (§4.2), by datacenter c: the tasks
  // waiting in c's queues plus the tasks running on c's VPSs, whichever
  // queue they came from (MQ_FIFO / RQ_FIFO included). Tasks still waiting
  // in MQ_FIFO / RQ_FIFO are not counted: any VPS serves those first (Figs.
  // 5–6 lines 6–8, 15–17), so they would add the same to every datacenter.
  // Recounts only the jobs changed since the last call (all of them if the
  // change log no longer reaches back that far). Valid until the queues or
  // the state change.
  const std::vector<int64_t>& Unprocessed(const ClusterState& state);
  // Datacenter a task was scheduled to, or -1 (new job, or unknown).
  int32_t HomeOf(JobId job, int32_t index, bool is_map) const;

 private:
  // A queue entry at position `seq` (see "Speed" above).
  struct Entry {
    int64_t seq = 0;
    TaskRef task;
  };
  struct ByPosition {
    bool operator()(const Entry& a, const Entry& b) const { return a.seq < b.seq; }
  };
  struct ByJob {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.task.job != b.task.job ? a.task.job < b.task.job : a.seq < b.seq;
    }
  };
  struct Queue {
    int32_t dc = 0;
    JobId owner = -1;                   // -1: a permanent queue MQ_{c,0} / RQ_{c,0}
    std::set<Entry, ByPosition> fifo;   // the queue, head first
    std::set<Entry, ByJob> by_job;      // the same entries, by job, each job's in queue order
    std::set<Entry, ByPosition> ready;  // reduce queues: the entries of jobs past slow-start
    int64_t front = 0;                  // a push to the front gets --front
    int64_t back = 0;                   // a push to the back gets back++
  };
  struct Plan;  // per scheduled job: each task's queue, whether queued, its counts

  void EnsureDatacenters(int k);
  int NewQueue(int32_t dc, JobId owner, bool is_map);
  // Fig. 4 lines 8–12, and lines 14–40 (`least`: policy A's cen_w).
  void PlacePolicyA(const Job& job, int32_t cen_w);
  void PlacePolicyBC(const ClusterState& state, const Job& job, bool small, int32_t least);
  int32_t LeastUnprocessed(const ClusterState& state);
  // Reads the change log from seen_seq_ on, calling Changed for each job
  // it names (every job if the log no longer reaches back that far).
  void CatchUp(const ClusterState& state);
  // `job` may have changed: re-checks its slow-start (Queue::ready) and
  // lists it for Recount.
  void Changed(const ClusterState& state, JobId job);
  // Puts `job`'s reduce entries in or out of Queue::ready.
  void SetReady(JobId job, bool ready);
  // Brings `job`'s share of unprocessed_ up to date with the state.
  void Recount(const ClusterState& state, JobId job);
  Plan* PlanOf(JobId job) const;
  // The distinct queues that `queue_of` (a Plan's per-task queue ids) names.
  static std::vector<int> QueuesIn(const std::vector<int>& queue_of);
  // `job`'s entries in `q`, each job's being one range of q.by_job.
  static std::vector<Entry> EntriesOf(const Queue& q, JobId job);
  void Push(JobId job, int32_t index, bool is_map, int queue, bool front);
  // Erases `e` from `q` and marks its task as out of its queue.
  TaskRef Erase(Queue& q, Entry e, bool is_map);
  // The first entry whose task is pending, dropping the others before it;
  // null if there is none.
  const Entry* Head(const ClusterState& state, Queue& q, bool is_map);
  // JTA's pick (TakeMap) among `job`'s entries of `q`.
  Entry JobDrivenPick(const ClusterState& state, Queue& q, JobId job, NodeId node);
  bool IsPending(const ClusterState& state, const TaskRef& t, bool is_map) const;
  std::vector<JobId> FifoOrder(const ClusterState& state) const;
  // MQ_{dc,q} (is_map) or RQ_{dc,q}.
  Queue& At(int32_t dc, int q, bool is_map);

  std::vector<std::unique_ptr<Queue>> queues_;   // by queue id; null once dropped
  std::vector<std::vector<int>> map_queues_;     // per datacenter: ids, [0] = MQ_{c,0}
  std::vector<std::vector<int>> reduce_queues_;  // per datacenter: ids, [0] = RQ_{c,0}
  std::vector<std::unique_ptr<Plan>> plans_;     // by JobId; null: not in c-queues
  std::vector<JobId> fifo_jobs_;                 // jobs in MQ_FIFO / RQ_FIFO
  JobTaskIndex fifo_tasks_;
  uint64_t seen_seq_ = 0;             // the change log is read up to here
  std::vector<JobId> to_recount_;     // jobs changed since their last Recount
  std::vector<int64_t> unprocessed_;  // Σ of the plans' counts, per datacenter
  std::vector<int64_t> load_;         // unprocessed_ + running tasks (Unprocessed)
  int32_t last_least_ = -1;           // the previous cen_w (LeastUnprocessed ties)
};

}  // namespace mr::sched
