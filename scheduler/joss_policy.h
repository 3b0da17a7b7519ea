// JossPolicy: JoSS (Lee, Lin & Yahyapour, "Hybrid Job-driven Scheduling for
// Virtual MapReduce Clusters", §4.3), registered twice:
//   joss-t — JoSS-T: the task scheduler (Fig. 4) + the Task-driven Task
//            Assigner (TTA, Fig. 5): fast assignment, queue heads.
//   joss-j — JoSS-J: the task scheduler + the Job-driven Task Assigner (JTA,
//            Fig. 6): a Hadoop-FIFO locality pick inside each queue, for more
//            VPS-locality.
// Classification and queues are in joss.h (§4.1, §4.2, Fig. 4).
//
// Assumptions: the host supplies Job::known_fp, the average filtering
// percentage of earlier runs of the same (code hash, input type) (Fig. 4
// lines 1–3, "H"), and records it when a job completes (§4.3); this policy
// only reads it. Datacenters are ClusterState's (k = datacenters()).
//
// On a job's arrival (OnJobAdded):
//   1. Classify it (JossClassify: Fig. 4 line 4; Eqs. 3, 4, 8) and record
//      the class and the FP and td used (classification()).
//   2. Queue its tasks (JossQueues::Schedule: Fig. 4 lines 4–40).
//
// On a heartbeat from VPS_{c,ℓ} (Fig. 5 = TTA, Fig. 6 = JTA; line numbers
// are the figures'; the two differ only at line 11):
//   1. Line 2, "while VPS_{c,ℓ} has an idle slot": first each free map
//      slot, then each free reduce slot, until a slot finds no task.
//   2. Map slot, lines 6–8: if MQ_FIFO offers a map, take it with the
//      Hadoop FIFO algorithm (job order, then the job's best-placed map).
//   3. Else lines 10–13: I_map = I_map mod (N_map + 1); take from
//      MQ_{c,I_map} — TTA its first map (line 11), JTA the Hadoop FIFO pick
//      (Fig. 6 line 11: the head entry's job, its first map on this VPS,
//      else in this rack, else in this datacenter, else its first); I_map++.
//      N_map counts cen_c's per-job queues, so indexes 0..N_map visit
//      MQ_{c,0} and every MQ_{c,p}.
//   4. Reduce slot, lines 15–17: RQ_FIFO first (Hadoop FIFO order); else
//      lines 19–22, round-robin over RQ_{c,0..N_red} with I_red, taking the
//      first reduce (the same in TTA and JTA).
//
// Line 1 sets I_map and I_red to 0 at each call: each heartbeat (the call
// covers every idle slot of the VPS, line 2) starts at MQ_{c,0} / RQ_{c,0}.
// With one map slot per VPS a large job's queue is then served only when
// MQ_{c,0} has nothing for the VPS. persistent_index = true (not in the
// paper; the code before issue 13) keeps them per datacenter across
// heartbeats instead, so the turn passes to the large jobs' queues; a
// queue dropped ahead of a kept index moves the index down with it
// (OnJobFinished), so no queue loses its turn.
//
// Where the figures are silent (docs/schedulers.md repeats these):
//   - An empty MQ_{c,I} (or one whose reduces are all before slow-start) is
//     passed over: the round robin moves to the next queue, at most one
//     full turn per slot.
//   - "MQ_FIFO / RQ_FIFO is not empty" means "offers this VPS a task now":
//     reduces before their job's slow-start, and tasks that already failed
//     on this VPS (job_tasks.h), do not block the datacenter's queues.
//   - Reduces before slow-start are never launched (scheduler.h); in a
//     queue they are passed over, not waited for (TakeReduce).
//   - A VPS takes only from its own datacenter's queues, so a VPS whose
//     datacenter has nothing queued for it stays idle: §4.2 policy A says
//     the job's tasks "can be executed only by VPSs at cen_w", and that is
//     what keeps policy A's reduce-data locality and policy B's
//     Cen-locality. Two exceptions. (a) Queues of a datacenter with no live
//     VPS with a slot of that kind would never run, so any VPS serves them
//     once its own queues are empty. (b) With idle_steal = true a VPS whose
//     own queues are empty serves every other datacenter's queues. Either
//     way: nearest index first (c+1, c+2, … mod k), each datacenter's
//     queues in order 0, 1, …, with the same TTA / JTA pick, leaving their
//     round-robin indexes alone.
//   - Failed tasks go back to the front of their queue (joss.h).
//
// Thread-compatible like every policy: the host calls it from one thread.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "scheduler/joss.h"
#include "scheduler/scheduler.h"

namespace mr::sched {

struct JossOptions {
  // JTA (Fig. 6, JoSS-J) when true; TTA (Fig. 5, JoSS-T) when false.
  // Default: false.
  bool job_driven = false;
  // The RH/MH threshold of Eq. 3; negative means derive td = k/(k−1)
  // (Eq. 8) from the current number of datacenters. Default: -1 (derive).
  double td = -1;
  // An idle VPS may take tasks queued for other datacenters (not in the
  // paper; see above). Default: false.
  bool idle_steal = false;
  // Keep I_map / I_red per datacenter across heartbeats instead of starting
  // at 0 at each call (Figs. 5–6 line 1). Not in the paper. Default: false.
  bool persistent_index = false;
};

class JossPolicy : public Scheduler {
 public:
  // InvalidArgument for a td that is NaN or infinite.
  static Result<std::unique_ptr<JossPolicy>> Create(const JossOptions& options);

  const char* name() const override { return options_.job_driven ? "joss-j" : "joss-t"; }
  void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) override;
  void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) override;
  void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                    TimeMs now) override;
  void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) override;
  void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) override;

  // How `job` was classified on arrival, or null if it never arrived.
  const JossClassification* classification(JobId job) const;
  // The queues (for tests and status pages).
  const JossQueues& queues() const { return queues_; }

 private:
  explicit JossPolicy(const JossOptions& options) : options_(options) {}
  std::optional<TaskRef> NextMap(const ClusterState& state, NodeId node);
  std::optional<TaskRef> NextReduce(const ClusterState& state, NodeId node);
  // May a VPS of another datacenter take from `dc`'s map (reduce) queues?
  bool OpenToOthers(int32_t dc, bool is_map) const;

  JossOptions options_;
  JossQueues queues_;
  std::vector<std::optional<JossClassification>> classes_;  // by JobId
  std::vector<int> i_map_, i_red_;  // Fig. 5/6 line 1, per datacenter (kept: persistent_index)
  // Per datacenter, set at each heartbeat: has a live VPS with a map
  // (reduce) slot.
  std::vector<char> serves_map_, serves_reduce_;
};

// The registry entries: "joss-t" and "joss-j", parameters td, idle_steal and
// persistent_index.
const PolicyInfo& JossTPolicyInfo();
const PolicyInfo& JossJPolicyInfo();

}  // namespace mr::sched
