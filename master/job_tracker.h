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
//   Faults    a failed attempt runs again (up to jobs.max_attempts, preferably
//             elsewhere); a lost worker's running tasks, and its finished
//             maps whose output unfinished reduces still need, run again; a
//             reducer that cannot fetch a map output reports it, and the map
//             runs again after jobs.fetch_failures_to_rerun reports.
//   Records   per task and per job (history, JoSS Eqs. 9–11, INT, FP), kept
//             in JobHistory; finished jobs update the FP table (JoSS Fig. 4).
//
// Threading: the master's one thread calls everything.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/config.h"
#include "dfs/namespace.h"
#include "master/job_history.h"
#include "proto/cluster.pb.h"
#include "proto/job.pb.h"
#include "scheduler/scheduler.h"

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
};

class JobTracker {
 public:
  // Opens the history in <master.data_dir>/history; jobs it shows running
  // were cut off by a master restart and are marked failed.
  static Result<std::unique_ptr<JobTracker>> Create(const ClusterConfig& config,
                                                    std::unique_ptr<sched::Scheduler> scheduler,
                                                    DfsAccess dfs);
  ~JobTracker();

  const sched::Scheduler& scheduler() const { return *scheduler_; }

  // Membership, from the master's registration and liveness checks.
  void WorkerUp(const std::string& worker);
  void WorkerLost(const std::string& worker);

  // The job half of a heartbeat: reports in, launches out.
  void Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply);
  // The policy's clock (the Joint Scheduler routes blocks on it).
  void Tick();
  // True while a running job reads `block` (its extra replicas are kept).
  bool IsActiveInput(uint64_t block) const;
  // A new replica of a block (a copy landed, a prefetch among them): map
  // tasks reading it see the new location.
  void ReplicaAdded(uint64_t block, const std::string& worker);

  // RPC handlers.
  Status Submit(const pb::JobSpec& spec, pb::SubmitJobReply* reply);
  Status Show(int64_t id, pb::JobRecord* record) const;
  Status List(pb::JobListReply* reply) const;
  Status Kill(int64_t id);
  Status History(pb::HistoryReply* reply) const;
  Status MapOutputs(const pb::MapOutputsRequest& req, pb::MapOutputsReply* reply) const;
  Status FetchFailed(const pb::FetchFailedRequest& req);

 private:
  struct ActiveJob;
  class HeartbeatLauncher;
  using Clock = std::chrono::steady_clock;

  JobTracker(const ClusterConfig& config, std::unique_ptr<sched::Scheduler> scheduler,
             DfsAccess dfs, std::unique_ptr<JobHistory> history);

  sched::TimeMs Now() const;
  sched::NodeId NodeOf(const std::string& worker) const;
  ActiveJob* Find(int64_t id) const;

  void ApplyReport(sched::NodeId node, const pb::TaskReport& report);
  void MapSucceeded(ActiveJob& job, const pb::TaskReport& report);
  void ReduceSucceeded(ActiveJob& job, const pb::TaskReport& report);
  void TaskFailed(ActiveJob& job, bool is_map, int32_t index, const std::string& why,
                  bool counts);
  bool CommitOutput(ActiveJob& job, const std::string& file, const std::string& part);
  void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to);
  void MaybeFinish(ActiveJob& job);
  // Ends the job (erasing it: `job` is gone on return).
  void EndJob(ActiveJob& job, const std::string& state, const std::string& error);

  // job_records.cc
  void RecordMap(ActiveJob& job, const pb::TaskReport& report);
  void RecordReduce(ActiveJob& job, const pb::TaskReport& report);
  // The record with its counters brought up to date.
  pb::JobRecord Snapshot(const ActiveJob& job) const;
  pb::TaskSpec MakeSpec(const ActiveJob& job, bool is_map, int32_t index) const;

  ClusterConfig config_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  DfsAccess dfs_;
  std::unique_ptr<JobHistory> history_;
  sched::ClusterState state_;
  std::vector<std::string> node_names_;               // NodeId → worker id
  std::unordered_map<std::string, sched::NodeId> nodes_;
  std::map<int64_t, std::unique_ptr<ActiveJob>> active_;  // by job id
  std::vector<int64_t> job_ids_;                      // sched::JobId → job id
  std::unordered_map<uint64_t, int> active_blocks_;   // block → running jobs reading it
  // Per worker: task attempts to stop, jobs whose map outputs to delete.
  std::unordered_map<std::string, std::vector<pb::TaskRef>> kills_;
  std::unordered_map<std::string, std::vector<int64_t>> finished_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace mr::master
