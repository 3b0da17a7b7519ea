// An emulated fleet of workers for bench/master_scale (issue 29): thousands
// of lightweight workers in this one process, each with its own
// authenticated connection to a real mr-master, speaking the real worker
// protocol (cluster.Register with a full block report, cluster.Heartbeat at
// the configured interval with incremental block reports and task reports,
// job.MapOutputs, dfs.Create/CompleteFile for a reduce's output).
//
// What is emulated, and how (docs/benchmarks.md, "Master at scale"):
//   - blocks: a worker "holds" the blocks the master placed on it (the
//     harness tells it, as a pipeline write would); it stores no bytes;
//   - a map "runs" for a time drawn uniformly in [0.5, 1.5] × map_ms,
//     reporting progress and bytes read in proportion, and at its end
//     plausible output sizes (raw output = input, a third after the
//     combiner, spread evenly over the partitions);
//   - a reduce polls job.MapOutputs once per heartbeat interval (on its
//     worker's connection, after the beat) until every map of its job is
//     done, then "merges" for a drawn time (as a map), creates its output
//     file in the DFS (empty: no block), and reports success; map outputs
//     are never fetched: no bytes move between emulated workers;
//   - a worker whose task ended beats at once (the real worker's Wake),
//     else once per interval.
//
// Thread-safety: everything runs on the one io_context given to the Fleet.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/config.h"
#include "common/loop_lag.h"
#include "common/member_view.h"
#include "common/rpc.h"
#include "proto/cluster.pb.h"

namespace mr::bench {

using Steady = std::chrono::steady_clock;

struct FleetOptions {
  int workers = 500;
  int map_slots = 2;
  int reduce_slots = 1;
  int workers_per_rack = 40;
  double map_ms = 20000;     // mean drawn run time of a map
  double reduce_ms = 10000;  // mean drawn merge time of a reduce, after its maps
  int connect_parallelism = 16;  // registrations in flight (the master's handshake cap is 32)
  uint64_t seed = 1;
  // Every worker keeps its view of the members (common/member_view.h), as
  // mr-worker does, so ViewsDiffering can check them: O(workers²) memory.
  bool check_views = false;
};

// What the fleet saw, summed over its workers.
struct FleetStats {
  std::vector<double> beat_ms;     // latency of each heartbeat RPC in the window
  // How late the fleet's own loop ran a timer due every 50 ms, in the window
  // (common/loop_lag.h): a late fleet adds this much to a beat's latency.
  std::vector<double> lag_ms;
  int64_t beats = 0;               // in the window
  int64_t launches = 0;            // tasks launched in the window
  int64_t launches_total = 0;
  int64_t beat_errors = 0;         // failed heartbeats (whole run)
  int64_t register_errors = 0;
  int64_t reregisters = 0;         // the master asked a worker to register again
  int64_t duplicate_launches = 0;  // a task launched again, not after its worker was stopped
  int64_t relaunches_after_loss = 0;
  int64_t maps_done = 0;
  int64_t reduces_done = 0;
  int64_t output_errors = 0;       // a reduce's dfs.Create/CompleteFile failed
  int64_t member_lists = 0;        // heartbeat replies that carried members (whole or a delta)
  int64_t member_deltas = 0;       // ... of which deltas (HeartbeatReply.members_delta)
  int64_t member_entries = 0;      // their entries, summed
  int64_t register_member_entries = 0;  // entries of the registration replies' lists
};

class Fleet {
 public:
  Fleet(asio::io_context& io, const ClusterConfig& config, FleetOptions options);
  ~Fleet();

  // Starts every worker's coroutine (connect, register, beat), and the
  // probe of the fleet's own loop (FleetStats::lag_ms).
  void Start();
  // Workers registered and beating now.
  int Registered() const;
  // The worker named `id` ("w1" ... ) holds `block` from now on (reported
  // in its next heartbeat, and in every registration after).
  void AddBlock(const std::string& id, uint64_t block, int64_t bytes);
  // Stops worker `index` as a crash would: it closes its connection and
  // never beats again. Its tasks are lost.
  void StopWorker(int index);
  std::string WorkerId(int index) const { return "w" + std::to_string(index + 1); }
  // Stops every worker.
  void StopAll();
  // The ids of the workers StopWorker stopped.
  const std::vector<std::string>& stopped_ids() const { return stopped_ids_; }

  // Latency and launch counts accumulate only between these two calls.
  void OpenWindow();
  void CloseWindow();
  // Judges the relaunches not yet explained, then returns the figures.
  const FleetStats& stats();
  // Tasks running on the fleet now.
  int64_t Running() const;
  // REQUIRES: options.check_views. How many registered workers' views
  // differ from the master's list `dead_by_id` (every member's id → whether
  // it is declared dead), in ids or liveness.
  int ViewsDiffering(const std::map<std::string, bool>& dead_by_id) const;

 private:
  class Worker;
  friend class Worker;
  using TaskKey = std::tuple<int64_t, bool, int32_t>;
  // Records a launch (see last_launch_).
  void NoteLaunch(const pb::TaskSpec& spec, int worker);
  // Worker `worker` lost its attempts and map outputs.
  void NoteLoss(int worker) { ++losses_[static_cast<size_t>(worker)]; }

  asio::io_context& io_;
  ClusterConfig config_;
  RpcOptions rpc_;
  FleetOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Each task's latest launch: the worker, and that worker's losses then.
  struct LaunchedOn {
    int worker = 0;
    int losses = 0;
  };
  std::map<TaskKey, LaunchedOn> last_launch_;
  // Per worker: times it lost its attempts (stopped, or told to register
  // again: the master declared it dead). A task launched again is no
  // duplicate when its earlier worker lost its attempts since; the master
  // may relaunch before that worker hears it was declared dead, so a
  // relaunch that is not yet explained waits in `unexplained_` and is
  // judged at the end (stats()).
  std::vector<int> losses_;
  std::vector<std::pair<TaskKey, LaunchedOn>> unexplained_;
  FleetStats stats_;
  std::vector<std::string> stopped_ids_;
  std::unique_ptr<LoopLagProbe> lag_;  // from Start() to StopAll()
  bool window_ = false;
  int connecting_ = 0;  // registrations in flight
  std::mt19937_64 rng_;
};

}  // namespace mr::bench
