// JointPolicy: the Joint Scheduler of Wang & Ying, "Data locality in
// MapReduce: A network perspective" (Performance Evaluation 2016),
// Algorithm 1, §3.2 and §4. Maps are queued *ahead* of the machines that
// will run them, and the network carries their blocks there in advance, so
// a remote map starts with its data already local.
//
// Queues (§3.2, §4; Fig. 2), over map tasks:
//   Q_{m,0}  machine m's processing queue: maps whose block is on m (or is
//            being copied there) — m runs these and nothing else;
//   Q_{m,1}  m's outgoing queue: maps whose block m sends to another machine;
//   Q_{m,2}  m's incoming queue: maps whose block travels to m;
//   X_{r,1}, X_{r,2}  switch group r's outgoing and incoming queues.
// A switch group is a rack when the node has one, else its datacenter
// (Fig. 1 has two levels: rack switches under one cluster switch; a
// datacenter level above racks is not modelled).
//
// Steps:
//   1. Task assignment (Alg. 1, first loop; §4.1 "Task assignment for new
//      tasks"): when a job is added, each pending map, in index order, joins
//      the shortest queue of Q_L = {Q_{m,0}, Q_{m,1} : m a live holder of its
//      block}. Ties: processing queues before outgoing queues (local work
//      uses no network), then one drawn (see "Ties" below). Failed maps
//      rejoin the same way.
//   2. Routing (Alg. 1, second loop; §4.1 "Routing"; §4.2 service
//      processes), every tick: each non-empty network queue Q finds the
//      shortest D in its destinations D(Q); if |D| < |Q| it sends its
//      min(cap, |Q|) head tasks to D, else it is blocked this tick. cap = B1
//      for machine queues, B2 for group queues (§3.2). All decisions read
//      the lengths at the start of the tick and moves land after them (a
//      move arrives "at the next slot", §4.2), applied in source order:
//      outgoing queues by node id, incoming queues by node id, group
//      outgoing then incoming queues by group id; every sender gives up its
//      tasks before any lands, so no task makes two hops in one tick.
//      Destinations, as §4.1 defines them (the node and the rack itself
//      included: the toy example's D(Q_{1,1}) = {Q_{1,2}, Q_{2,2}, X_{1,1}}):
//        D(Q_{m,1}) = {Q_{m',2} : m' in m's group} ∪ {X_{g(m),1}}
//        D(Q_{m,2}) = {Q_{m,0}}
//        D(X_{r,1}) = {X_{r',2} : every group r'}
//        D(X_{r,2}) = {Q_{m,2} : m in r}
//      Which tasks a queue sends: the job order of step 4, then first come
//      first served.
//   3. Prefetch: a map entering Q_{m,2} whose block m does not hold is
//      prefetched: Launcher::Prefetch(block, from, m), `from` being the
//      machine whose outgoing queue sent it (the replica on its path), or,
//      if that machine is dead, the live holder nearest m (Distance, then
//      lowest id); with no live holder, no prefetch. Q_{m,2} leads only to
//      Q_{m,0}, so this is the first moment the target is known; the copy
//      travels while the task waits in Q_{m,2} — in §3.2 the queues *are*
//      the network, so the hops and the copy are one transfer, not a copy
//      started after the task has already crossed the queues.
//   4. Assign(m): m launches from Q_{m,0}, up to its free map slots, the
//      task of the job the Hadoop Fair Scheduler would serve first
//      (FairOrder: running maps ÷ weight, then submit time, then id; re-
//      sorted before every launch, as HFS does), first come first served
//      within a job. §6: "To make a fair comparison, we let JS prioritize
//      jobs in the same way as HFS."
//      Idle machines (§4.2: "If machine m is idle during time slot t, i.e.,
//      Q_{m,0}(t) = 0", its potential service is simply unused): the Joint
//      Scheduler never hands an idle machine a task from another queue;
//      work reaches it only by routing, which sees its short Q_{m,0} as the
//      destination of Q_{m,2}, and so on upstream. We keep that rule: an
//      empty Q_{m,0} launches nothing.
//   5. Reduces (not in the paper, §1: "reduce tasks are not the
//      bottleneck"): at most one per heartbeat, from the first active job in
//      submission order that is past slow-start, its lowest pending index.
//
// Choices where the paper is silent or fluid:
//   - Slots: the paper's machine serves one task at a time and Q_{m,0}
//     holds the one in service. A machine here runs map_slots maps at once,
//     so |Q_{m,0}| = ⌊(waiting + running maps) / map_slots⌋ — whole rounds
//     of work queued — which is the paper's length at one slot and reads 0
//     exactly when a slot is free, so routing fills free slots. Other
//     queues' lengths are task counts.
//   - Ties (Alg. 1 says only "the shortest queue"): among the shortest,
//     first the lowest tier — step 1: processing queues, then outgoing;
//     from Q_{m,1}: another machine of the group, then m itself (§4.1: a
//     map in Q_{m,1} "means machine m needs to transmit the data chunk ...
//     to another (remote) machine"), then X_{g(m),1} (stay in the rack);
//     from X_{r,1}: another group, then r —, then one of the still tied
//     queues uniformly from the policy's own std::mt19937_64, seeded by
//     SchedulerEnv::seed (deterministic for a seed; a draw is made only
//     when two or more tie). The lowest node id, used before, sent every
//     task routed in a tick inside a rack to the same machine.
//   - Self-loops: a task may go Q_{m,1} → Q_{m,2} → Q_{m,0} (no copy: m
//     holds the block) or X_{r,1} → X_{r,2}, as §4.1's sets allow.
//   - Reachability: dead machines, and machines without map slots, are no
//     destination and no Q_{m,0} candidate (a slotless holder still sends,
//     via Q_{m,1}); X_{r,1} is a destination, and Q_{m,1} a candidate in
//     step 1, only while some live machine has map slots — otherwise a
//     task could wait for ever in a queue with nowhere to go.
//   - Replicas: the paper assumes three; we use the split's live holders,
//     however many. A split with none (no location, or every holder lost)
//     joins the shortest Q_{m,0} over all live machines with map slots and
//     is never routed (there is no copy to make). With no such machine it
//     waits, unplaced, until one is added (retried at each tick too).
//   - Time slot = tick, default the heartbeat interval: §6 scales the slot
//     so one block crosses a rack link per slot (B1 = 1), and a 64–128 MB
//     block on a 1 Gbps link takes about a second.
//   - Prefetch timing: issued when the task enters Q_{m,2} (step 3). A
//     launch does not wait for the copy to land; how a map whose copy is
//     still on its way reads is the host's (mr-sim waits for the copy).
//   - Failures: a failed map rejoins by step 1; its failure history is not
//     consulted. A lost node's three queues, and the maps the host made
//     pending again, rejoin by step 1 (queue order, then job and index);
//     group queues with no destination left rejoin too. Maps in transit
//     whose sender died keep going; their prefetch source falls back as in
//     step 3. A returning or new node starts with empty queues.
//   - A finished (or killed) job's maps leave every queue.
//
// Not thread-safe; the host calls it from one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "common/status.h"
#include "scheduler/job_order.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct JointOptions {
  // Routing period, one time slot of the paper; 0 = the cluster's heartbeat
  // interval (SchedulerEnv::heartbeat_ms). ≥ 0. Default: 0.
  TimeMs tick_ms = 0;
  // Tasks a machine queue (Q_{m,1}, Q_{m,2}) forwards per tick (B1, §3.2;
  // §6 uses 1). ≥ 1. Default: 1.
  int b1 = 1;
  // Tasks a group queue (X_{r,1}, X_{r,2}) forwards per tick (B2, §3.2;
  // §6 uses 5). ≥ 1. Default: 5.
  int b2 = 5;
};

class JointPolicy : public Scheduler {
 public:
  enum class Queue : int8_t {
    kProcessing = 0,  // Q_{m,0}, by node
    kMachineOut = 1,  // Q_{m,1}, by node
    kMachineIn = 2,   // Q_{m,2}, by node
    kGroupOut = 3,    // X_{r,1}, by switch group
    kGroupIn = 4,     // X_{r,2}, by switch group
    kUnplaced = 5,    // no live machine can take it yet (id 0)
  };
  struct TaskRef {
    JobId job = 0;
    int32_t index = 0;
    bool operator==(const TaskRef&) const = default;
  };
  struct Where {
    Queue queue = Queue::kUnplaced;
    int32_t id = -1;  // node or group; -1: in no queue
    bool operator==(const Where&) const = default;
  };

  // InvalidArgument for options out of range. `env.heartbeat_ms` is the
  // tick when options.tick_ms is 0.
  static Result<std::unique_ptr<JointPolicy>> Create(const JointOptions& options,
                                                     const SchedulerEnv& env);

  // A node's switch group: 2 × rack when it has one, else 2 × datacenter + 1.
  static int32_t GroupOf(const Node& node);

  const char* name() const override { return "joint"; }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeAdded(const ClusterState& state, NodeId node, TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;
  TimeMs tick_ms() const override { return tick_ms_; }
  void OnTick(const ClusterState& state, TimeMs now, Launcher& launcher) override;

  // For tests and tools: where map `index` of `job` waits ({kUnplaced, -1}
  // when it waits nowhere: running, done or unknown), and a queue's tasks,
  // head first (empty for a queue never used).
  Where Locate(JobId job, int32_t index) const;
  std::vector<TaskRef> Contents(Queue queue, int32_t id) const;

 private:
  struct Slot {
    Where where;
    NodeId origin = kNoNode;  // the holder whose Q_{m,0} or Q_{m,1} it joined
  };
  struct Move {
    Where from, to;
    int count;
  };
  // A queue a task may join, and its tier for ties (lower first).
  struct Candidate {
    Where where;
    int tier = 0;
  };

  JointPolicy(const JointOptions& options, TimeMs tick_ms, uint64_t seed)
      : options_(options), tick_ms_(tick_ms), rng_(seed) {}

  std::deque<TaskRef>* Find(Where w);
  const std::deque<TaskRef>* Find(Where w) const;
  std::deque<TaskRef>& Get(Where w);
  // The length step 1 and 2 compare (|Q_{m,0}| per slot, see above).
  int64_t Length(const ClusterState& state, Where w) const;
  Slot& SlotOf(TaskRef t);
  void Push(TaskRef t, Where to, NodeId origin);
  // Step 1 for one pending map not in any queue.
  void Join(const ClusterState& state, TaskRef t);
  // Takes every task out of queue `w`, head first, appending to `out`.
  void Drain(Where w, std::vector<TaskRef>& out);
  void RetryUnplaced(const ClusterState& state);
  // The shortest of `among`; of the tied ones, the lowest tier; of what
  // still ties, one drawn uniformly from rng_. REQUIRES: `among` not empty.
  Where Shortest(const ClusterState& state, const std::vector<Candidate>& among);
  // Step 2, one queue: appends its move, if any.
  void Route(const ClusterState& state, Where from, const std::vector<Candidate>& dests, int cap,
             std::vector<Move>& moves);
  // True when `q` holds tasks of more than one job.
  static bool ManyJobs(const std::deque<TaskRef>& q);
  // rank_ := each active job's place in the Fair Scheduler's order now.
  void RankJobs(const ClusterState& state);
  // Positions in `q` of the `count` tasks to serve first: by rank_ of their
  // job (when `q` holds several jobs; call RankJobs first), then position.
  std::vector<size_t> Select(const std::deque<TaskRef>& q, size_t count) const;
  void Arrive(const ClusterState& state, TaskRef t, Where from, Where to, Launcher& launcher);

  JointOptions options_;
  TimeMs tick_ms_;
  std::vector<std::deque<TaskRef>> machine_[3];  // by Queue 0..2, then node
  std::vector<std::deque<TaskRef>> group_[2];    // out, in; by group
  std::deque<TaskRef> unplaced_;
  std::vector<std::vector<Slot>> slots_;  // by job, by map index
  std::mt19937_64 rng_;                   // ties (seeded from SchedulerEnv::seed)
  FairOrder order_;                       // §6: jobs in HFS's order
  std::vector<int64_t> rank_;             // by job, as of the last RankJobs
  std::vector<JobId> jobs_scratch_;
  std::vector<Where> scratch_;
};

// The registry entry: name "joint", parameters tick_ms, b1 and b2.
const PolicyInfo& JointPolicyInfo();

}  // namespace mr::sched
