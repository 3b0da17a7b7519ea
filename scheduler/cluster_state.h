// ClusterState: everything a scheduling policy may read, owned by its host
// (the master, or mr-sim). Start here, then scheduler.h.
//
// The host creates nodes and jobs, and moves tasks through their states;
// policies read it through `const ClusterState&` and change it only by
// asking the host to launch a task (Scheduler::Assign's Launcher), which
// updates the state at once, so a policy never sees a task it has just
// launched as pending.
//
// Node, job and task ids are dense indexes (vectors, not maps): a heartbeat
// decision over 500 nodes and 20,000 pending tasks must take microseconds.
//
// No I/O, no clock, no threads. Not thread-safe: one host thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace mr::sched {

using NodeId = int32_t;
using JobId = int32_t;
using TimeMs = int64_t;  // host-supplied time; the policy never reads a clock

inline constexpr NodeId kNoNode = -1;

// Locality of a map task placed on a node (JoSS: VPS-locality, Cen-locality,
// off-Cen). kRack only where racks are configured.
enum class Locality : int8_t { kNode = 0, kRack = 1, kDatacenter = 2, kOffDatacenter = 3 };
const char* LocalityName(Locality l);

struct Node {
  NodeId id = kNoNode;
  std::string name;            // worker id from the cluster file
  int32_t datacenter = 0;      // dense datacenter index
  int32_t rack = -1;           // dense rack index, -1 when racks are not configured
  int map_slots = 0;
  int reduce_slots = 0;
  // Attempts running here (backups included), maintained by the host.
  int running_maps = 0;
  int running_reduces = 0;
  bool live = true;
  // Decommissioning: live, but the host launches nothing there (so a task
  // that failed elsewhere is not kept from the nodes that can run it).
  bool draining = false;
  int free_map_slots() const { return live ? map_slots - running_maps : 0; }
  int free_reduce_slots() const { return live ? reduce_slots - running_reduces : 0; }
};

enum class TaskState : int8_t { kPending = 0, kRunning = 1, kDone = 2 };

// One attempt of a task as the host last heard of it: a running task has
// one (on its `node`) and, under speculative execution, at most one more
// (the backup, on `backup_node`).
struct Attempt {
  int32_t number = -1;      // 0 for the task's first launch
  TimeMs start_ms = 0;      // host time of the launch
  // Hadoop's progress score in [0, 1] — a map: the fraction of its split
  // read; a reduce: copy, sort and reduce a third each — and the host time
  // it was reported at (start_ms until the first report). Once the task
  // is done: 1, at the time it ended (the host reports 1 just before
  // FinishMap or FinishReduce). speculator.h's ProgressRate reads them.
  double progress = 0;
  TimeMs progress_ms = 0;
};

struct MapTask {
  int32_t index = 0;
  uint64_t block = 0;          // DFS block id of the split
  int64_t bytes = 0;           // split size
  std::vector<NodeId> replicas;
  TaskState state = TaskState::kPending;
  NodeId node = kNoNode;       // where it runs or ran (kDone: where its output lives)
  int attempts = 0;            // launches so far, backups included
  std::vector<NodeId> failed_on;
  Attempt run;                 // the attempt on `node` (kDone: the one that won)
  NodeId backup_node = kNoNode;  // a running speculative attempt's node, or kNoNode
  Attempt backup;
  // Progress reported by the running attempt (Shen Eq. 3 estimates from it).
  int64_t bytes_read = 0;
  // Output so far in bytes, per reduce partition (the master reports key +
  // value bytes after the combiner: exact once the map is done, an
  // estimate while it runs; mr-sim, the modelled partition sizes).
  std::vector<int64_t> partition_bytes;
};

struct ReduceTask {
  int32_t index = 0;
  TaskState state = TaskState::kPending;
  NodeId node = kNoNode;
  int attempts = 0;            // launches so far, backups included
  std::vector<NodeId> failed_on;
  Attempt run;                 // as in MapTask
  NodeId backup_node = kNoNode;
  Attempt backup;
};

struct Job {
  JobId id = 0;
  std::string name;            // job name: "wordcount"
  std::string code_hash;       // JoSS Fig. 4: identity of the job's code
  std::string input_type;      // "text", "web", "dna"
  std::string pool;            // Fair pool / Capacity queue; "default"
  std::string user;
  int priority = 0;            // higher first (Hadoop VERY_HIGH = 2 … VERY_LOW = -2)
  TimeMs submit_ms = 0;
  int64_t input_bytes = 0;
  // Average filtering percentage of earlier jobs with this (code_hash,
  // input_type) (JoSS Fig. 4 "H"); NaN when unknown.
  double known_fp = std::numeric_limits<double>::quiet_NaN();
  double slowstart = 0.05;     // reduces may start after this fraction of maps finished
  std::vector<MapTask> maps;
  std::vector<ReduceTask> reduces;
  int finished_maps = 0;       // maintained by the host
  int finished_reduces = 0;
  int running_maps = 0;        // tasks running (a task with a backup counts once)
  int running_reduces = 0;
  bool done = false;

  bool has_fp() const { return !std::isnan(known_fp); }
  int pending_maps() const { return static_cast<int>(maps.size()) - finished_maps - running_maps; }
  int pending_reduces() const {
    return static_cast<int>(reduces.size()) - finished_reduces - running_reduces;
  }
  // Hadoop's slow-start rule: reduces may launch once this many maps finished.
  bool reduces_may_start() const {
    return finished_maps >= static_cast<int>(std::ceil(slowstart * static_cast<double>(maps.size())));
  }
};

// Measured statistics a policy may use.
struct Measurements {
  // Average run time of map tasks by locality (Pandas' slowdown, Eq. 1); 0
  // until measured.
  double avg_map_ms[4] = {0, 0, 0, 0};
  int64_t map_samples[4] = {0, 0, 0, 0};
};

class ClusterState {
 public:
  // Topology.
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  int datacenters() const { return datacenters_; }
  bool has_racks() const { return has_racks_; }
  // Cost of moving data from `from` to `to`: 0 same node, 1 same rack, 2
  // same datacenter, 4 another datacenter (hop counts), unless the host set
  // a measured matrix with SetDistances().
  double Distance(NodeId from, NodeId to) const;
  Locality LocalityOf(NodeId node, const std::vector<NodeId>& replicas) const;

  // Jobs, in submission order; finished jobs stay (done == true).
  const std::vector<Job>& jobs() const { return jobs_; }
  const Job& job(JobId id) const { return jobs_[static_cast<size_t>(id)]; }
  // Ids of unfinished jobs, in submission order.
  const std::vector<JobId>& active_jobs() const { return active_; }

  const Measurements& measurements() const { return measurements_; }
  // Slots of live nodes (O(1): kept as nodes come, go and change).
  int total_map_slots() const { return live_map_slots_; }
  int total_reduce_slots() const { return live_reduce_slots_; }
  // Tasks running in the whole cluster (Σ over active jobs), kept by the
  // mutations below.
  int running_maps() const { return running_maps_; }
  int running_reduces() const { return running_reduces_; }
  // Hadoop's ClusterStatus at O(1), kept by every mutation below: the live
  // nodes, and the attempts running on them (a backup counts on its own
  // node, as each node's running_maps counts it).
  int live_nodes() const { return live_nodes_; }
  int live_running_attempts(bool is_map) const { return is_map ? live_attempts_[0] : live_attempts_[1]; }
  // The same per datacenter (JoSS reads them at every heartbeat).
  struct DatacenterTotals {
    int live_nodes = 0;
    int live_map_nodes = 0;     // live nodes with a map slot
    int live_reduce_nodes = 0;  // live nodes with a reduce slot
    int running_attempts = 0;   // maps and reduces on its nodes, live or not
  };
  // REQUIRES: 0 <= dc < datacenters().
  const DatacenterTotals& datacenter_totals(int32_t dc) const { return dc_totals_[static_cast<size_t>(dc)]; }
  // Speculative (backup) attempts running now, by kind.
  int running_backups(bool is_map) const { return is_map ? backup_maps_ : backup_reduces_; }

  // What changed, so that a policy caching per-job facts (an order's keys,
  // a queue's totals) need not re-read every job at every heartbeat. Every
  // mutation of a job below (AddJob, Launch*, Finish*, Fail*, RedoMap,
  // FinishJob, and mutable_job, which may change anything) appends the
  // job's id to a log. A reader keeps change_seq() from when it last looked
  // and later takes the ids appended since, in order, with repeats:
  //   std::span<const JobId> ids;
  //   if (state.ChangedJobsSince(seen, &ids)) { for (JobId id : ids) ... }
  //   else { ... re-read every job ... }
  //   seen = state.change_seq();
  // The log keeps only the recent past (at least the last 64 Ki changes):
  // false when `seq` is older than that (or from the future). The span is
  // valid until the next mutation.
  uint64_t change_seq() const { return log_base_ + log_.size(); }
  bool ChangedJobsSince(uint64_t seq, std::span<const JobId>* ids) const;

  // ---- Mutations: the host only. ----
  // Nodes may be added at any time, also after jobs (workers join a running
  // cluster); a node's datacenter index may be new (datacenters() grows).
  // Policies size per-node and per-datacenter tables on demand.
  NodeId AddNode(const std::string& name, int32_t datacenter, int32_t rack, int map_slots,
                 int reduce_slots);
  void SetLive(NodeId node, bool live);
  void SetDraining(NodeId node, bool draining);
  // A worker that registers again with other slot counts (its flags
  // changed across a restart). REQUIRES: the node is not live (so it runs
  // nothing); the host tells the policy OnNodeAdded when it is live again.
  void SetSlots(NodeId node, int map_slots, int reduce_slots);
  void SetDistances(std::vector<std::vector<double>> matrix);
  JobId AddJob(Job job);  // job.id is assigned
  // `now` (host time) becomes the attempt's start_ms.
  void LaunchMap(JobId job, int32_t index, NodeId node, TimeMs now = 0);
  void LaunchReduce(JobId job, int32_t index, NodeId node, TimeMs now = 0);
  // A task ends with the success of its attempt on `winner` (kNoNode: on
  // `node`). With a backup running, the other attempt's slot is freed too
  // (the host kills it) and `node` becomes the winner's.
  void FinishMap(JobId job, int32_t index, double run_ms, NodeId winner = kNoNode);
  void FinishReduce(JobId job, int32_t index, NodeId winner = kNoNode);
  // A failed or lost attempt: the task is pending again. REQUIRES: no
  // backup (with one, the host calls DropAttempt).
  void FailMap(JobId job, int32_t index);
  void FailReduce(JobId job, int32_t index);

  // ---- Speculative execution (scheduler/speculator.h). ----
  // Starts a backup attempt of a running task on `node`. REQUIRES: running,
  // no backup yet, `node` is not the task's node and has a free slot.
  void LaunchBackup(JobId job, bool is_map, int32_t index, NodeId node, TimeMs now);
  // One of a task's two attempts ended without the task ending (it failed,
  // was killed or its node was lost): the other runs on alone, as the
  // task's attempt. `failed` adds `node` to failed_on. REQUIRES: a backup
  // runs and `node` is the task's node or its backup's.
  void DropAttempt(JobId job, bool is_map, int32_t index, NodeId node, bool failed);
  // The progress the attempt running on `node` reported at `now`. Not a
  // change in the log (policies cache no progress). Ignored when no
  // attempt of the task runs there.
  void SetProgress(JobId job, bool is_map, int32_t index, NodeId node, double progress, TimeMs now);
  // A finished map whose output was on a lost node must run again.
  void RedoMap(JobId job, int32_t index);
  void FinishJob(JobId job);
  Job& mutable_job(JobId id) {
    Changed(id);
    return jobs_[static_cast<size_t>(id)];
  }

 private:
  void Changed(JobId id);
  // Adds (sign +1) or removes (-1) a node's slots and running attempts
  // from the live totals.
  void CountSlots(const Node& n, int sign);
  // A node's running attempts of a kind change by `delta`: the only writer
  // of Node::running_maps and running_reduces after AddNode.
  void AddRunning(Node& n, bool is_map, int delta);
  void AddRunning(NodeId node, bool is_map, int delta) {
    AddRunning(nodes_[static_cast<size_t>(node)], is_map, delta);
  }
  // With a backup running, the attempt on `winner` becomes the task's and
  // the other attempt's slot is freed; returns 1 when a backup was running.
  template <typename T>
  int SettleBackup(T& t, bool is_map, NodeId winner, const char* call);

  std::vector<Node> nodes_;
  std::vector<Job> jobs_;
  std::vector<JobId> active_;
  std::vector<std::vector<double>> distances_;
  Measurements measurements_;
  int datacenters_ = 0;
  bool has_racks_ = false;
  int running_maps_ = 0, running_reduces_ = 0;
  int backup_maps_ = 0, backup_reduces_ = 0;
  int live_map_slots_ = 0, live_reduce_slots_ = 0;
  int live_nodes_ = 0;
  int live_attempts_[2] = {0, 0};  // maps, reduces
  std::vector<DatacenterTotals> dc_totals_;  // by datacenter index
  std::vector<JobId> log_;  // changes log_base_, log_base_ + 1, ...
  uint64_t log_base_ = 0;
};

}  // namespace mr::sched
