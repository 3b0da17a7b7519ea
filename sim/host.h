// SimHost: the simulator's scheduler host — the master's JobTracker side of
// scheduler/scheduler.h, driven by simulated time. Start here to see how a
// policy is hosted; sim/simulator.h wraps it into one call.
//
// It owns the ClusterState, the policy, the event queue, the network and the
// DFS's replica map, and keeps the host's side of the contract exactly as
// the master does:
//   - every event updates the state first, then tells the policy (job
//     added, map/reduce finished, task failed, node added/lost, job
//     finished);
//   - each node heartbeats every heartbeat_ms, and at once when one of its
//     tasks ends (Hadoop's out-of-band heartbeat); each heartbeat first
//     records the progress of the node's running maps (bytes read,
//     per-partition output, as Shen Eq. 3 reads them), then calls Assign;
//   - after Assign, the heartbeat offers the node's idle slots to the
//     speculator through sched::SpeculateAt, as the master does; a backup
//     is a second simulated attempt of the task (host_speculation.cc);
//   - a policy with tick_ms() > 0 gets OnTick at every multiple of it;
//   - as the Launcher it checks every launch against the REQUIRES of
//     Launcher (inside Assign, a pending task of a live job, within the
//     node's free slots at the start of the heartbeat, reduces only after
//     slow-start) and every prefetch (a live holder, a live target). A
//     broken REQUIRES is a hard error: nothing is applied and Run() returns
//     FailedPrecondition naming the policy and the call.
//
// Task timing (ServiceSpec, NetworkSpec): a map reads its block locally, or
// waits for a prefetch of it in flight to the node, or reads it from the
// nearest live replica over the links; then computes for its base time
// times the slowdown of its locality level. A reduce fetches every finished
// map's partition over the links (those that finish later, when they
// finish), then computes for its base time plus reduce_ms_per_mb × input.
// Compute runs at the node's speed (sim/speed.h: its base factor and its
// episodes); transfers are the network's.
//
// Speculation: the first attempt of a task to succeed wins (SetProgress 1,
// then FinishMap/FinishReduce with its node); the other is killed at once
// and its slot time counted as wasted. A failed or lost attempt of a task
// with a backup is dropped (DropAttempt) and the other runs on; the policy
// hears nothing. A backup does the same work as the attempt it backs up
// (the same split and compute time), at its own node's speed and locality.
//
// Not thread-safe; one run per object.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "scheduler/cluster_state.h"
#include "scheduler/scheduler.h"
#include "scheduler/speculator.h"
#include "sim/event_queue.h"
#include "sim/metrics.h"
#include "sim/network.h"
#include "sim/scenario.h"
#include "sim/speed.h"
#include "sim/workload.h"

namespace mr::sim {

class SimHost : public sched::Launcher, public sched::BackupLauncher {
 public:
  // Adds the scenario's nodes to a fresh ClusterState. `workload` must have
  // been generated for the same scenario; the host keeps references to both,
  // so both must outlive it (temporaries are refused at compile time).
  SimHost(const Scenario& scenario, const Workload& workload);
  SimHost(const Scenario&&, const Workload&) = delete;
  SimHost(const Scenario&, const Workload&&) = delete;
  SimHost(const Scenario&&, const Workload&&) = delete;
  ~SimHost() override;

  // The cluster the workload is generated on (before Run()).
  const sched::ClusterState& state() const { return state_; }

  // The speculator Run() hosts beside the policy; "none" unless set. Call
  // before Run().
  void SetSpeculator(std::unique_ptr<sched::Speculator> speculator);
  // The nodes' speeds (the scenario's groups and episodes).
  const NodeSpeeds& speeds() const { return speeds_; }

  // Runs the whole simulation with `policy`. FailedPrecondition when the
  // policy breaks the Launcher contract; the result is complete otherwise.
  // With `timed`, wall-clock time inside the policy is measured too.
  Result<RunResult> Run(std::unique_ptr<sched::Scheduler> policy, bool timed);

  // ---- Launcher (the policy calls these) ----
  void LaunchMap(sched::JobId job, int32_t index) override;
  void LaunchReduce(sched::JobId job, int32_t index) override;
  void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) override;
  // ---- BackupLauncher (sched::SpeculateAt calls it, inside a heartbeat) ----
  void LaunchBackup(const sched::BackupChoice& choice) override;

  // Attempts per task so far, for conservation checks: [job][map], [job][reduce].
  const std::vector<std::vector<int>>& map_launches() const { return map_launches_; }
  const std::vector<std::vector<int>>& map_successes() const { return map_successes_; }
  const std::vector<std::vector<int>>& reduce_launches() const { return reduce_launches_; }
  const std::vector<std::vector<int>>& reduce_successes() const { return reduce_successes_; }

 private:
  // A map attempt's timing, and where and how local it ran.
  struct MapRun {
    int32_t attempt = -1;     // sched::Attempt::number
    int64_t launch_ms = 0;
    double read_ms = 0;       // when its input is local (after a transfer or a prefetch)
    double end_ms = 0;        // when it ends (a failing one: when it fails)
    double full_end_ms = 0;   // when it would succeed (its progress is measured against it)
    double work_ms = 0;       // compute at factor 1, before the locality slowdown
    bool fails = false;
    sched::NodeId node = sched::kNoNode;
    sched::Locality level = sched::Locality::kNode;  // at launch, as the master judges it
    int64_t done_ms = -1;     // when it succeeded
  };
  // A reduce attempt's shuffle and compute.
  struct ReduceRun {
    int32_t attempt = -1;
    sched::NodeId node = sched::kNoNode;
    int64_t launch_ms = 0;
    std::vector<bool> fetched;  // per map
    int fetched_count = 0;
    double last_fetch_ms = 0;
    double input_mb = 0;
    bool fails = false;
    bool scheduled = false;     // its end event is queued
    double compute_ms = 0, end_ms = 0;  // its compute phase, once scheduled
  };
  // A task's attempts, mirroring sched::MapTask / ReduceTask: `run` is the
  // attempt on the task's node (once done: the one that won), `backup` the
  // one on its backup_node.
  struct MapSim {
    MapRun run, backup;
  };
  struct ReduceSim {
    ReduceRun run, backup;
    double base_ms = -1;        // the task's compute time, shared by its two attempts
  };
  // A prefetch in flight.
  struct Transfer {
    uint64_t block = 0;
    sched::NodeId to = sched::kNoNode;
  };

  void Handle(const Event& e);
  void OnArrival(int32_t index);
  void OnHeartbeat(sched::NodeId node, int32_t generation);
  void OnTick();
  void OnMapEnd(sched::JobId job, int32_t index, int32_t attempt);
  void OnReduceEnd(sched::JobId job, int32_t index, int32_t attempt);
  void OnPrefetchLanded(int32_t id);
  void OnNodeDown(sched::NodeId node, int32_t failure);
  void OnNodeUp(sched::NodeId node);
  void Sample();
  int64_t SampleMs() const;
  // A task ended on `node`: progress, and the out-of-band heartbeat.
  void EndedOn(sched::NodeId node);

  // Adds (sign 1) or removes (sign -1, its output was lost) a finished map
  // task's last successful run in the locality, load and response figures.
  void CountMap(sched::JobId job, int32_t index, int sign);
  void ScheduleHeartbeat(sched::NodeId node, int64_t at);
  void MaybeFinishJob(sched::JobId job);
  void Fetch(sched::JobId job, ReduceRun& run, int32_t map);
  void MaybeCompleteReduce(sched::JobId job, int32_t reduce, ReduceRun& run);
  // Times a map attempt on `run.node` and queues its end; `backs_up` is the
  // attempt it backs up (its work is reused), else the work is drawn.
  void StartMap(sched::JobId job, int32_t index, MapRun& run, const MapRun* backs_up);
  // Sets up a reduce attempt on `node` and fetches what is already there.
  void StartReduce(sched::JobId job, int32_t index, ReduceRun& run, sched::NodeId node);

  // ---- Speculation and progress (host_speculation.cc) ----
  void InitSpeeds();
  // Reports the progress of every attempt running on `node` (SetProgress).
  void ReportProgress(sched::NodeId node);
  // The running attempt `attempt` of the task, or nullptr (it was killed,
  // dropped or lost: its end event is stale).
  MapRun* RunningMap(sched::JobId job, int32_t index, int32_t attempt);
  ReduceRun* RunningReduce(sched::JobId job, int32_t index, int32_t attempt);
  // The attempt on `winner` succeeded: the other one, if any, is killed.
  // Call before FinishMap/FinishReduce; `run` then holds the winner.
  void SettleRace(sched::JobId job, int32_t index, bool is_map, sched::NodeId winner);
  // The attempt on `node` of a task with a backup failed or was lost: the
  // other runs on alone (ClusterState::DropAttempt, and the mirror here).
  void DropAttempt(sched::JobId job, int32_t index, bool is_map, sched::NodeId node, bool failed);
  // An attempt launched at `launch_ms` ended now (task_ms).
  void AttemptEnded(int64_t launch_ms);
  // Removes (job, index) from a node's list of running tasks.
  static void Remove(std::vector<std::pair<sched::JobId, int32_t>>& v, sched::JobId job, int32_t index);
  // LaunchBackup's REQUIRES, as hard errors (Violation).
  bool CheckBackup(const sched::BackupChoice& c);
  bool CheckLaunch(sched::JobId job, int32_t index, bool is_map);
  void Violation(const std::string& what);
  double PartitionMb(sched::JobId job) const;
  sched::NodeId NearestLiveReplica(const std::vector<sched::NodeId>& replicas, sched::NodeId to);
  // Calls into the policy, timing it when the run is timed.
  template <typename F>
  void CallPolicy(F&& f) {
    if (!timed_) return f();
    const auto start = std::chrono::steady_clock::now();
    f();
    policy_time_ += std::chrono::steady_clock::now() - start;
  }

  const Scenario& sc_;
  const Workload& wl_;
  sched::ClusterState state_;
  std::unique_ptr<sched::Scheduler> policy_;
  std::unique_ptr<sched::Speculator> speculator_;
  NodeSpeeds speeds_;
  std::unique_ptr<Network> net_;
  EventQueue events_;
  Rng rng_;                                  // service draws (retries, failures, ties)
  int64_t now_ = 0;
  RunResult result_;
  std::string error_;

  std::vector<std::vector<sched::NodeId>> replicas_;   // the DFS: block -> holders
  std::unordered_map<uint64_t, std::vector<std::pair<sched::JobId, int32_t>>> block_maps_;
  std::vector<Transfer> transfers_;                    // prefetches, by id
  std::unordered_map<uint64_t, double> in_flight_;     // (block, node) -> landing time
  std::vector<int32_t> hb_generation_;                 // per node
  std::vector<std::vector<MapSim>> maps_;              // per job, per map
  std::vector<std::vector<ReduceSim>> reduces_;        // per job, per reduce
  std::vector<std::vector<int>> map_launches_, map_successes_, reduce_launches_, reduce_successes_;
  std::unordered_map<std::string, std::pair<double, int>> fp_history_;  // JoSS Fig. 4 "H"
  // Tasks with an attempt running on the node (the attempt there is the
  // task's run when task.node is the node, else its backup).
  std::vector<std::vector<std::pair<sched::JobId, int32_t>>> node_maps_;     // per node
  std::vector<std::vector<std::pair<sched::JobId, int32_t>>> node_reduces_;  // per node
  std::vector<Tally> type_tally_;                      // per job type
  size_t arrived_ = 0;
  int64_t unfinished_jobs_ = 0;
  int64_t last_progress_ms_ = 0;
  std::string stopped_;

  // The heartbeat being served (Assign), or kNoNode.
  sched::NodeId current_ = sched::kNoNode;
  bool in_tick_ = false;
  int free_maps_ = 0, free_reduces_ = 0;
  std::chrono::steady_clock::duration policy_time_{};
  bool timed_ = false;
};

}  // namespace mr::sim
