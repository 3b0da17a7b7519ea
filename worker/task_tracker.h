// TaskTracker: the task half of mr-worker. Start here for how a worker runs
// tasks.
//
// The master's heartbeat reply launches task attempts (pb::TaskSpec); each
// runs on a thread of its own (task_runner.h does the computing):
//   map     reads its split — from this worker's block store when it holds
//           a replica (a short-circuit read), else from the nearest replica
//           over the network — runs map, combiner, sort and spills, and
//           keeps its output here, where reducers fetch it ("shuffle.Fetch").
//           A map-only job's map writes its output into the DFS instead.
//   reduce  asks the master where finished map outputs are
//           ("job.MapOutputs"), fetches its partition of each, at most
//           jobs.parallel_fetches at a time, merges and reduces them, and
//           writes its part file into the DFS (the master commits it).
// Each heartbeat carries every running attempt's progress and each ended
// attempt's report, once; the worker beats at once when a task ends.
//
// Each attempt keeps a log on this worker (task_log.h), served to
// `mrctl job logs` and the master's job page by "tasklog.Read", and runs
// its user code in a working directory of its own (task_env.h).
//
// Traffic is counted at the sockets a task uses (Connection byte counts),
// by where the other end is: this node, this datacenter, another one.
//
// Threading: tasks run on their own threads; the heartbeat side and the
// shuffle server call in from the worker's io threads. One mutex guards the
// tracker's tables; task threads share nothing else.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/config.h"
#include "common/rpc.h"
#include "dfs/block_store.h"
#include "dfs/client.h"
#include "dfs/link_rates.h"
#include "jobs/counters.h"
#include "proto/cluster.pb.h"
#include "proto/job.pb.h"
#include "worker/background_remover.h"
#include "worker/disk_health.h"
#include "worker/job_files.h"
#include "worker/map_output.h"
#include "worker/task_child.h"
#include "worker/task_log.h"
#include "worker/worker_metrics.h"

namespace mr::worker {

class TaskTracker {
 public:
  // `wake` asks for an immediate heartbeat (called from task threads); a
  // failed task has `disk` probe the data directory. Removes task files a
  // previous run of this worker left behind.
  TaskTracker(const ClusterConfig& config, const WorkerOptions& self, dfs::BlockStore& store,
              DiskHealth& disk, std::function<void()> wake);
  // Stops every task and waits for its thread.
  ~TaskTracker();

  // "shuffle.Fetch" and "tasklog.Read".
  void RegisterHandlers(RpcServer& server);
  // Where tasks count their bytes and ends (/metrics); nullptr = nowhere.
  // Not owned; must outlive this. Set before the first task. Default: none.
  void set_metrics(WorkerMetrics* metrics) { metrics_ = metrics; }

  // Heartbeat side. Fill adds free slots, reports and the read-rate
  // estimates from other datacenters (link_rates_); if the beat is not
  // delivered, Unsent puts the ended reports back for the next one.
  void Fill(pb::HeartbeatRequest* beat);
  void Unsent(const pb::HeartbeatRequest& beat);
  void Apply(const pb::HeartbeatReply& reply);
  // Stops every task, forgets every output and deletes the task files (the
  // destructor calls it).
  void Reset();
  // Called before every cluster.Register. The master link broke (the master
  // restarted, or gave up on this worker): running attempts are stopped and
  // undelivered reports dropped (the master runs those tasks again), but
  // finished maps' outputs are kept and returned, as their SUCCEEDED
  // reports, for the registration to offer the master.
  std::vector<pb::TaskReport> Reconnect();
  // Deletes the map outputs of jobs that are over (once their tasks end).
  void ForgetJobs(const google::protobuf::RepeatedField<int64_t>& jobs);

 private:
  struct MapOutput {
    std::string path;
    MapOutputIndex index;
  };
  // A finished map's output served here, with its SUCCEEDED report
  // (Reconnect offers it to a new master).
  struct HeldOutput {
    MapOutput output;
    pb::TaskReport report;
  };
  struct Task {
    pb::TaskSpec spec;
    std::string dir;                      // its local work directory
    std::atomic<bool> cancel{false};
    std::atomic<bool> ended{false};
    std::atomic<int64_t> bytes_read{0};   // progress of a map
    // A reduce's progress score (TaskReport.progress): the copy third by
    // maps fetched; the sort and reduce thirds are one streaming merge here,
    // so 2/3 when it starts, 0.9 while the output goes into the DFS.
    std::atomic<float> reduce_progress{0};
    std::mutex progress_mu;               // guards partition_bytes
    std::vector<int64_t> partition_bytes; // a map's output so far (MapTaskSpec::progress)
    pb::TaskReport report;                // filled by the task's thread
    std::shared_ptr<TaskLog> log;         // set before the thread starts; never null
    jobs::CounterSet counters;            // the attempt's (JobEnv::counters), into its report
    MapOutput output;                     // a finished map's output
    std::thread thread;
  };
  using OutputKey = std::tuple<int64_t, int32_t, int32_t>;  // job, map, attempt

  void Launch(const pb::TaskSpec& spec);
  // REQUIRES: mu_ held.
  void ForgetJobLocked(int64_t job);
  void RunTask(Task* task);
  // The bodies (task_bodies.cc). Both fill task->report.
  Status RunMap(Task& task);
  Status RunReduce(Task& task);
  awaitable<Status> ServeFetch(ServerCall& call);
  // "tasklog.Read" (task_log_service.cc): a running attempt's log from its
  // Task, an ended one's from logs_.
  awaitable<Status> ServeTaskLog(ServerCall& call);
  // The log of a running (or ended, not yet reaped) attempt, or null.
  std::shared_ptr<TaskLog> LiveLog(const pb::TaskRef& ref);
  // Removes old jobs' logs ([task_logs] keep_hours, keep_jobs), at most
  // once a minute unless `now`.
  void SweepLogs(bool now);
  // The task's JobEnv: its cancel flag, the time limit, and the job's
  // shipped files, fetched with `client` (on `io`) by the job's first task.
  Result<jobs::JobEnv> EnvFor(Task& task, asio::io_context& io, dfs::DfsClient& client);
  // How a plug-in's task runs in mr-task (worker/task_child.h).
  ChildOptions ChildOptionsFor(Task& task, const jobs::JobEnv& env) const;
  // A reduce's last step: its local output into the DFS, into the report.
  Status PutReduceOutput(Task& task, dfs::DfsClient& client, asio::io_context& io,
                         const std::string& local, const ReduceTaskResult& result, int64_t write_us);
  // Joins ended threads and deletes the files of jobs that are over;
  // sweeps old logs.
  void Reap();
  // The first and last lines of an attempt's log (the framework's).
  void LogStart(Task& task) const;
  static void LogEnd(Task& task, const Status& s);
  std::string TaskDir(const pb::TaskSpec& spec) const;

  const ClusterConfig config_;
  WorkerMetrics* metrics_ = nullptr;
  const WorkerOptions self_;
  dfs::BlockStore& store_;
  DiskHealth& disk_;
  std::function<void()> wake_;
  const std::string root_;  // <data_dir>/tasks
  // Read rates from other datacenters, shared by every map's DfsClient
  // (thread-safe), so they last as long as the worker.
  const std::shared_ptr<dfs::LinkRates> link_rates_ = std::make_shared<dfs::LinkRates>();

  std::mutex mu_;
  std::vector<std::unique_ptr<Task>> tasks_;        // running, or ended and not yet reaped
  std::vector<pb::TaskReport> ended_;               // reports not yet delivered
  std::map<OutputKey, HeldOutput> outputs_;         // finished maps' outputs served here
  std::set<int64_t> over_;                          // jobs whose files go once their tasks end
  JobFiles job_files_;                              // streaming jobs' shipped files
  const TaskLogDir logs_;                           // <data_dir>/task-logs
  std::chrono::steady_clock::time_point last_sweep_{};  // guarded by mu_
  // Ended jobs' task directories and old task logs go on its thread, not
  // the heartbeat's (a job of 10,000 maps leaves 10,000 directories).
  BackgroundRemover remover_;
};

}  // namespace mr::worker
