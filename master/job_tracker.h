// JobTracker: the job half of mr-master. Start here for how jobs run.
//
// It hosts the scheduling policy named in [scheduler] (scheduler/): it owns
// the sched::ClusterState the policy reads, turns every event into a state
// change first and a policy call second (scheduler.h's contract), and turns
// the policy's launches into TaskSpecs for the heartbeating worker.
//
// A job's life (docs/jobs.md):
//   Submit    one map task per block of every input file, R reduce tasks;
//             outputs go to a temporary directory /.mr/jobs/<id>/out.
//   Heartbeat reports first (progress, task ends), then the policy's
//             launches for the worker's free slots.
//   Commit    a task's output file is renamed into the temporary directory
//             when the master accepts the task's success (a later duplicate
//             attempt is deleted), and the directory is renamed to the job's
//             output when every task is done: output appears all at once.
//   Backups   when a heartbeat leaves slots idle and nothing is pending, the
//             speculator ([speculation]) names running tasks worth a second
//             attempt and the policy says whether this node takes each; the
//             first attempt to succeed commits, the other is killed
//             (job_speculation.cc).
//   Faults    a failed attempt runs again (up to jobs.max_attempts, preferably
//             elsewhere); a lost worker's running tasks, and its finished
//             maps whose output unfinished reduces still need, run again; a
//             reducer that cannot fetch a map output reports it, and the map
//             runs again after jobs.fetch_failures_to_rerun reports.
//   Records   per task and per job (history, JoSS Eqs. 9–11, INT, FP), kept
//             in JobHistory; finished jobs update the FP table (JoSS Fig. 4).
//   Restart   every accepted task is written to the history before its output
//             is committed; a restarted master re-creates the jobs that were
//             running, keeping committed reduces and the maps whose outputs
//             re-registering workers still hold (job_recovery.cc).
//
// Threading: the master's one thread calls everything.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/config.h"
#include "dfs/namespace.h"
#include "jobs/job.h"
#include "master/clock.h"
#include "master/job_history.h"
#include "master/link_costs.h"
#include "master/metrics.h"
#include "proto/cluster.pb.h"
#include "proto/job.pb.h"
#include "scheduler/scheduler.h"
#include "scheduler/speculator.h"

namespace mr::master {

// What the JobTracker needs from the NameNode half of the master.
struct DfsAccess {
  dfs::Namespace* ns = nullptr;
  // Live replica holders of a block (worker ids).
  std::function<std::vector<std::string>(uint64_t block)> replicas;
  // Deletes a path and forgets its blocks (as dfs.Delete does).
  std::function<Status(const std::string& path, bool recursive)> remove;
  // Orders a copy of `block` from worker `from` to worker `to` (prefetch).
  std::function<void(uint64_t block, const std::string& from, const std::string& to)> copy;
  // The NameNode's verdict on a replication a new file asks for (as for
  // `dfs put -r N`); unset: anything goes.
  std::function<Status(int replication)> check_replication;
};

class JobTracker {
 public:
  // How an attempt that is not its task's accepted run ended (failed,
  // killed, or lost with its worker): its state in JobRecord.ended_attempts.
  enum class AttemptEnd { kFailed, kKilled, kLost };

  // Opens the history in <master.data_dir>/history; jobs it shows running
  // were cut off by a master restart: they are recovered once every worker
  // registered again, or after jobs.recovery_wait_ms (job_recovery.cc).
  // Until then nothing is launched. Every rule that depends on time reads
  // `clock` (not owned; must outlive this).
  static Result<std::unique_ptr<JobTracker>> Create(const ClusterConfig& config,
                                                    std::unique_ptr<sched::Scheduler> scheduler,
                                                    std::unique_ptr<sched::Speculator> speculator,
                                                    DfsAccess dfs,
                                                    const Clock* clock = SystemClock::Get());
  ~JobTracker();

  const sched::Scheduler& scheduler() const { return *scheduler_; }
  const sched::Speculator& speculator() const { return *speculator_; }
  // The state the policy reads (for tests and status pages).
  const sched::ClusterState& state() const { return state_; }

  // Membership, from the master's registration and liveness checks.
  // AddWorker makes a worker known (at start for the workers the master
  // remembers, and at the first registration of a new one; not live until
  // WorkerUp), or updates a known one's address and slots before its
  // WorkerUp. Its datacenter and rack must not change (the master refuses
  // a worker whose labels changed).
  void AddWorker(const pb::WorkerInfo& info);
  // A decommissioning or decommissioned worker gets no tasks, and job
  // recovery after a restart does not wait for it.
  void SetDraining(const std::string& worker, bool draining);
  // Task attempts running on `worker` now.
  int RunningTasks(const std::string& worker) const;
  // The same by kind: the map and reduce slots in use (cluster.Status).
  void SlotsInUse(const std::string& worker, int* maps, int* reduces) const;
  // Where heartbeats, decisions and accepted tasks are counted (/metrics);
  // nullptr = nowhere. Not owned; must outlive this. Default: nullptr.
  void set_metrics(MasterMetrics* metrics) { metrics_ = metrics; }
  // Jobs running, and cut off by a restart and not yet recovered.
  size_t active_jobs() const { return active_.size() + recovering_.size(); }
  void WorkerUp(const std::string& worker);
  void WorkerLost(const std::string& worker);
  // After WorkerUp, from cluster.Register: the finished map outputs the
  // worker still holds (it lost the master, not its disk). Outputs the
  // master wants become done maps again; outputs of jobs that are over go
  // into reply->finished_jobs.
  void WorkerRegistered(const pb::RegisterRequest& req, pb::RegisterReply* reply);

  // The job half of a heartbeat: reports in, launches out.
  void Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply);
  // The policy's clock (the Joint Scheduler routes blocks on it).
  void Tick();
  // True while a running job reads `block` (its extra replicas are kept).
  bool IsActiveInput(uint64_t block) const;
  // The id of a running job (or one waiting to be recovered) that reads an
  // input file, or writes its output or temporary directory, at `path`,
  // below it or above it; 0 when none. dfs.Rename refuses such a move.
  int64_t JobUsing(const std::string& path) const;
  // A new replica of a block (a copy landed, a prefetch among them): map
  // tasks reading it see the new location.
  void ReplicaAdded(uint64_t block, const std::string& worker);

  // RPC handlers.
  Status Submit(const pb::JobSpec& spec, pb::SubmitJobReply* reply);
  // The job's record; with `summary`, without its task records (JobIdRequest).
  Status Show(int64_t id, bool summary, pb::JobRecord* record) const;
  Status List(pb::JobListReply* reply) const;
  Status Kill(int64_t id);
  Status History(pb::HistoryReply* reply) const;
  Status MapOutputs(const pb::MapOutputsRequest& req, pb::MapOutputsReply* reply) const;
  Status FetchFailed(const pb::FetchFailedRequest& req);

  // scheduler_switch.cc: `mrctl scheduler set|show`. SetScheduler swaps the
  // hosted policy for `req.name()` with `req.params()` (text, typed by the
  // registry's declaration) and persists the choice; FailedPrecondition
  // while any job runs, waits or waits to be recovered, InvalidArgument
  // (listing the valid names or parameters) for an unknown policy,
  // parameter or value. The caller (Master) starts the policy's tick when
  // the new policy has one.
  Status SetScheduler(const pb::SchedulerChoice& req, pb::SchedulerChoice* reply);
  void ShowScheduler(pb::SchedulerChoice* reply) const;

 private:
  struct ActiveJob;
  class HeartbeatLauncher;

  JobTracker(const ClusterConfig& config, std::unique_ptr<sched::Scheduler> scheduler,
             std::unique_ptr<sched::Speculator> speculator, DfsAccess dfs,
             std::unique_ptr<JobHistory> history, const Clock* clock);

  sched::TimeMs Now() const;
  // At start: the last `scheduler set` replaces the file's policy, unless
  // the file's [scheduler] changed since (scheduler_switch.cc).
  Status RestoreScheduler();
  sched::NodeId NodeOf(const std::string& worker) const;
  void AddSplits(const std::string& path, const pb::INode& file, sched::Job& sj,
                 ActiveJob& job) const;
  ActiveJob* Find(int64_t id) const;

  void ApplyReport(sched::NodeId node, const pb::TaskReport& report);
  // Heartbeat: whether the worker's reports cover every attempt running on it.
  bool EveryAttemptListed(sched::NodeId node,
                          const std::set<std::tuple<int64_t, bool, int32_t, int32_t>>& listed) const;
  void CountLateAttempt(const pb::TaskReport& report);
  void MapSucceeded(ActiveJob& job, const pb::TaskReport& report, sched::NodeId node);
  void ReduceSucceeded(ActiveJob& job, const pb::TaskReport& report, sched::NodeId node);
  // The task's attempt on `node` failed or was killed (both count toward
  // max_attempts) or was lost. Without a backup the task is pending again;
  // with one, the other attempt runs on.
  void TaskFailed(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node,
                  const std::string& why, AttemptEnd end);

  // job_speculation.cc
  // The attempt on `winner` succeeded: if the task has a backup, the other
  // attempt is killed and the job's speculation figures count the race.
  // Call before FinishMap / FinishReduce.
  void SettleRace(ActiveJob& job, bool is_map, int32_t index, sched::NodeId winner);
  // One of a task's two attempts ends (ClusterState::DropAttempt), the
  // records following the one that runs on.
  void DropAttempt(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node, bool failed);
  bool CommitOutput(ActiveJob& job, const std::string& file, const std::string& part);
  void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to);
  void MaybeFinish(ActiveJob& job);
  // Submit: moves a streaming job's staged files into its directory.
  Status AdoptShippedFiles(int64_t id, jobs::Params* params);
  // Ends the job (erasing it: `job` is gone on return).
  void EndJob(ActiveJob& job, const std::string& state, const std::string& error);

  // job_attempts.cc: the live view (docs/status-page.md, "Attempts").
  // Keeps the attempt of the task running on `node` in the job's
  // ended_attempts (the last kMaxEndedAttempts) and counts it by outcome.
  // Call before the state forgets the attempt; no-op when none runs there.
  void KeepEndedAttempt(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node,
                        AttemptEnd end, const std::string& why);
  // Every attempt of the job running now, originals and backups, with
  // their progress and progress rate, into `record`'s running_attempts.
  void AddRunningAttempts(const ActiveJob& job, pb::JobRecord* record) const;
  void DescribeAttempt(bool is_map, int32_t index, sched::NodeId node, const sched::Attempt& a,
                       bool backup, pb::AttemptRecord* t) const;
  // A host time (Now()) as wall-clock ms since the epoch.
  int64_t WallOf(sched::TimeMs host_ms) const { return clock_->WallMs() - (Now() - host_ms); }

  // job_recovery.cc
  // True while jobs wait to be recovered; recovers them once every worker
  // registered or the wait is over.
  bool MaybeRecover();
  void Recover(pb::JobRecord record);
  // A finished map output `node` holds becomes the map's output, if the map
  // is pending and the output is of its latest attempt. With `notify`, the
  // policy hears of it and the job may finish (`job` may be gone then).
  bool AcceptHeldMap(ActiveJob& job, sched::NodeId node, const pb::TaskReport& report, bool notify);

  // job_records.cc
  // A task's record from its success report (the task still shows running).
  // `node` runs the attempt that reported.
  pb::MapTaskRecord MakeMapRecord(const ActiveJob& job, const pb::TaskReport& report,
                                  sched::NodeId node) const;
  pb::ReduceTaskRecord MakeReduceRecord(const ActiveJob& job, const pb::TaskReport& report,
                                        sched::NodeId node) const;
  // Puts the task's record into the job's record (replacing an earlier one).
  static void KeepRecord(ActiveJob& job, const pb::MapTaskRecord& task);
  static void KeepRecord(ActiveJob& job, const pb::ReduceTaskRecord& task);
  // Writes the job's progress and one task's record to the history.
  void Persist(ActiveJob& job, const pb::MapTaskRecord* map, const pb::ReduceTaskRecord* reduce);
  // Ends a job that was never recovered (killed while waiting, or its
  // state could not be re-created).
  void EndUnrecovered(pb::JobRecord record, const std::string& state, const std::string& error);
  // The record with its counters brought up to date: a copy of every task
  // record (Snapshot), or none (Summary, O(1) copies in the job's tasks).
  pb::JobRecord Snapshot(const ActiveJob& job) const;
  pb::JobRecord Summary(ActiveJob& job) const;
  // The record without its task records and the sums over them (what
  // PutProgress keeps beside the task records).
  pb::JobRecord Header(ActiveJob& job) const;
  void SetTaskCounts(const ActiveJob& job, pb::JobRecord* r) const;
  void AddLiveFigures(const ActiveJob& job, pb::JobRecord* r) const;
  pb::TaskSpec MakeSpec(const ActiveJob& job, bool is_map, int32_t index, int32_t attempt) const;
  // The replication a job's reduces ask for their output files: its own
  // output_replication, else [jobs] output_replication, else 0 — the DFS's
  // default, which it accepts while fewer workers are known and tops up
  // when more come, as for any file.
  int32_t OutputReplicationAsked(const pb::JobSpec& spec) const;

  ClusterConfig config_;
  MasterMetrics* metrics_ = nullptr;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<sched::Speculator> speculator_;
  // The hosted policy's parameters (complete, as text) and where the choice
  // came from: "file" or "set".
  std::map<std::string, std::string> scheduler_params_;
  std::string scheduler_source_ = "file";
  DfsAccess dfs_;
  std::unique_ptr<JobHistory> history_;
  sched::ClusterState state_;
  std::vector<std::string> node_names_;               // NodeId → worker id
  std::vector<pb::WorkerInfo> node_info_;             // NodeId → its last registration
  std::map<std::string, int32_t> dc_index_, rack_index_;  // labels → dense indexes
  std::set<std::string> draining_;                    // decommissioning or decommissioned
  std::unordered_map<std::string, sched::NodeId> nodes_;
  std::map<int64_t, std::unique_ptr<ActiveJob>> active_;  // by job id
  // JobSpec.submit_token -> job id, of every job in the history (Submit).
  std::unordered_map<std::string, int64_t> submit_tokens_;
  std::vector<int64_t> job_ids_;                      // sched::JobId → job id
  std::unordered_map<uint64_t, int> active_blocks_;   // block → running jobs reading it
  // Per worker: task attempts to stop, jobs whose map outputs to delete.
  std::unordered_map<std::string, std::vector<pb::TaskRef>> kills_;
  std::unordered_map<std::string, std::vector<int64_t>> finished_;
  const Clock* clock_;
  int64_t started_ms_;  // clock_->NowMs() at construction: Now() counts from here
  // Restart recovery: running jobs found in the history (tasks loaded),
  // until MaybeRecover re-creates them; the map outputs each registered
  // worker holds meanwhile; when to stop waiting for workers.
  std::vector<pb::JobRecord> recovering_;
  std::unordered_map<std::string, std::vector<pb::TaskReport>> held_;
  sched::TimeMs recover_at_ = 0;

  // From each heartbeat: the worker's read rates into link_costs_, and
  // while the policy is "probabilistic" its distance matrix from them —
  // rebuilt only when a rate or the node count changed (link_costs.h).
  void UpdateDistances(sched::NodeId node, const pb::HeartbeatRequest& req);
  LinkCosts link_costs_;
  bool costs_changed_ = false;
  size_t costs_nodes_ = 0;  // node count at the last build; 0 = none since the policy became probabilistic
  bool costs_set_ = false;  // a matrix is in state_
};

}  // namespace mr::master
