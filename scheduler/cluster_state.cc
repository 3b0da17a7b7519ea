// ClusterState: the host's mutations keep every count consistent with the
// task states (tests/scheduler/cluster_state_test.cc checks them after each
// transition). A broken precondition is a bug in the host, not a runtime
// condition, so it aborts with a message naming the call.
#include "scheduler/cluster_state.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace mr::sched {
namespace {

[[noreturn]] void Die(const char* call, const std::string& why) {
  std::cerr << "ClusterState::" << call << ": " << why << " (a bug in the scheduler host)\n";
  std::abort();
}

std::string Task(JobId job, int32_t index) {
  return "job " + std::to_string(job) + " task " + std::to_string(index);
}

}  // namespace

const char* LocalityName(Locality l) {
  switch (l) {
    case Locality::kNode:
      return "node";
    case Locality::kRack:
      return "rack";
    case Locality::kDatacenter:
      return "datacenter";
    case Locality::kOffDatacenter:
      return "off-datacenter";
  }
  return "unknown";
}

// Hop counts unless the host set a matrix; a node added after the matrix
// (outside it) falls back to hop counts.
double ClusterState::Distance(NodeId from, NodeId to) const {
  const size_t f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (f < distances_.size() && t < distances_[f].size()) return distances_[f][t];
  if (from == to) return 0;
  const Node& a = node(from);
  const Node& b = node(to);
  if (a.datacenter != b.datacenter) return 4;
  if (a.rack >= 0 && a.rack == b.rack) return 1;
  return 2;
}

// The best level over the replicas. A split with no replicas is
// off-datacenter, as Hadoop counts a map with no location as off-switch.
Locality ClusterState::LocalityOf(NodeId id, const std::vector<NodeId>& replicas) const {
  const Node& n = node(id);
  Locality best = Locality::kOffDatacenter;
  for (NodeId r : replicas) {
    if (r == id) return Locality::kNode;
    const Node& m = node(r);
    if (n.rack >= 0 && m.rack == n.rack) {
      best = Locality::kRack;
    } else if (m.datacenter == n.datacenter && best == Locality::kOffDatacenter) {
      best = Locality::kDatacenter;
    }
  }
  return best;
}

// Slots of live nodes only (Hadoop's ClusterStatus counts live trackers),
// kept by AddNode, SetLive and SetSlots — the only writers of a node's
// live flag and slots — so a policy may read them at every heartbeat.
void ClusterState::CountSlots(const Node& n, int sign) {
  if (!n.live) return;
  live_map_slots_ += sign * n.map_slots;
  live_reduce_slots_ += sign * n.reduce_slots;
  live_nodes_ += sign;
  live_attempts_[0] += sign * n.running_maps;
  live_attempts_[1] += sign * n.running_reduces;
  DatacenterTotals& dc = dc_totals_[static_cast<size_t>(n.datacenter)];
  dc.live_nodes += sign;
  dc.live_map_nodes += n.map_slots > 0 ? sign : 0;
  dc.live_reduce_nodes += n.reduce_slots > 0 ? sign : 0;
}

void ClusterState::AddRunning(Node& n, bool is_map, int delta) {
  (is_map ? n.running_maps : n.running_reduces) += delta;
  if (n.live) live_attempts_[is_map ? 0 : 1] += delta;
  dc_totals_[static_cast<size_t>(n.datacenter)].running_attempts += delta;
}

bool ClusterState::ChangedJobsSince(uint64_t seq, std::span<const JobId>* ids) const {
  if (seq < log_base_ || seq > change_seq()) return false;
  *ids = std::span<const JobId>(log_).subspan(static_cast<size_t>(seq - log_base_));
  return true;
}

// Amortized O(1): when the log doubles past its floor, the older half goes.
void ClusterState::Changed(JobId id) {
  constexpr size_t kKeep = size_t{1} << 16;
  if (log_.size() >= 2 * kKeep) {
    const size_t drop = log_.size() - kKeep;
    log_.erase(log_.begin(), log_.begin() + static_cast<ptrdiff_t>(drop));
    log_base_ += drop;
  }
  log_.push_back(id);
}

// Rack ids are cluster-wide: a rack lies in one datacenter.
NodeId ClusterState::AddNode(const std::string& name, int32_t datacenter, int32_t rack,
                             int map_slots, int reduce_slots) {
  if (datacenter < 0) Die("AddNode", name + ": negative datacenter");
  if (map_slots < 0 || reduce_slots < 0) Die("AddNode", name + ": negative slots");
  if (rack < -1) Die("AddNode", name + ": rack must be -1 (none) or a rack index");
  for (const Node& other : nodes_) {
    if (rack >= 0 && other.rack == rack && other.datacenter != datacenter) {
      Die("AddNode", name + ": rack " + std::to_string(rack) + " is already in datacenter " +
                         std::to_string(other.datacenter));
    }
  }
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.name = name;
  n.datacenter = datacenter;
  n.rack = rack;
  n.map_slots = map_slots;
  n.reduce_slots = reduce_slots;
  nodes_.push_back(std::move(n));
  datacenters_ = std::max(datacenters_, datacenter + 1);
  dc_totals_.resize(static_cast<size_t>(datacenters_));
  CountSlots(nodes_.back(), +1);
  if (rack >= 0) has_racks_ = true;
  return nodes_.back().id;
}

// Only the flag: the host fails the node's tasks (FailMap, FailReduce,
// RedoMap) itself, then tells the policy (OnNodeLost).
void ClusterState::SetLive(NodeId id, bool live) {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size()) Die("SetLive", "unknown node");
  Node& n = nodes_[static_cast<size_t>(id)];
  CountSlots(n, -1);
  n.live = live;
  CountSlots(n, +1);
}

void ClusterState::SetDraining(NodeId id, bool draining) {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size()) Die("SetDraining", "unknown node");
  nodes_[static_cast<size_t>(id)].draining = draining;
}

void ClusterState::SetSlots(NodeId id, int map_slots, int reduce_slots) {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size()) Die("SetSlots", "unknown node");
  Node& n = nodes_[static_cast<size_t>(id)];
  if (n.live) Die("SetSlots", n.name + " is live");
  if (map_slots < 0 || reduce_slots < 0) Die("SetSlots", n.name + ": negative slots");
  n.map_slots = map_slots;
  n.reduce_slots = reduce_slots;
}

void ClusterState::SetDistances(std::vector<std::vector<double>> matrix) {
  for (const auto& row : matrix) {
    if (row.size() != matrix.size()) Die("SetDistances", "the matrix must be square");
  }
  distances_ = std::move(matrix);
}

JobId ClusterState::AddJob(Job job) {
  job.id = static_cast<JobId>(jobs_.size());
  if (job.done || job.finished_maps || job.finished_reduces || job.running_maps ||
      job.running_reduces) {
    Die("AddJob", "job " + job.name + " must be new (no counts, not done)");
  }
  for (size_t i = 0; i < job.maps.size(); ++i) {
    MapTask& m = job.maps[i];
    m.index = static_cast<int32_t>(i);
    if (m.state != TaskState::kPending || m.node != kNoNode) Die("AddJob", "maps must be pending");
    for (NodeId r : m.replicas) {
      if (r < 0 || static_cast<size_t>(r) >= nodes_.size()) {
        Die("AddJob", Task(job.id, m.index) + " names unknown replica node " + std::to_string(r));
      }
    }
  }
  for (size_t i = 0; i < job.reduces.size(); ++i) {
    ReduceTask& r = job.reduces[i];
    r.index = static_cast<int32_t>(i);
    if (r.state != TaskState::kPending || r.node != kNoNode) {
      Die("AddJob", "reduces must be pending");
    }
  }
  active_.push_back(job.id);
  jobs_.push_back(std::move(job));
  Changed(jobs_.back().id);
  return jobs_.back().id;
}

namespace {

Job& CheckJob(std::vector<Job>& jobs, const char* call, JobId id) {
  if (id < 0 || static_cast<size_t>(id) >= jobs.size()) Die(call, "unknown job");
  Job& j = jobs[static_cast<size_t>(id)];
  if (j.done) Die(call, "job " + std::to_string(id) + " is finished");
  return j;
}

template <typename T>
T& CheckTask(std::vector<T>& tasks, const char* call, JobId job, int32_t index, TaskState want) {
  if (index < 0 || static_cast<size_t>(index) >= tasks.size()) {
    Die(call, Task(job, index) + " does not exist");
  }
  T& t = tasks[static_cast<size_t>(index)];
  static const char* kNames[] = {"pending", "running", "done"};
  if (t.state != want) {
    Die(call, Task(job, index) + " is " + kNames[static_cast<int>(t.state)] + ", not " +
                  kNames[static_cast<int>(want)]);
  }
  return t;
}

void AddFailedOn(std::vector<NodeId>& failed_on, NodeId node) {
  if (std::find(failed_on.begin(), failed_on.end(), node) == failed_on.end()) {
    failed_on.push_back(node);
  }
}

Node& CheckNode(std::vector<Node>& nodes, const char* call, NodeId id) {
  if (id < 0 || static_cast<size_t>(id) >= nodes.size()) Die(call, "unknown node");
  return nodes[static_cast<size_t>(id)];
}

Attempt NewAttempt(int number, TimeMs now) {
  Attempt a;
  a.number = number;
  a.start_ms = now;
  a.progress_ms = now;
  return a;
}

}  // namespace

template <typename T>
int ClusterState::SettleBackup(T& t, bool is_map, NodeId winner, const char* call) {
  if (t.backup_node == kNoNode) {
    if (winner != kNoNode && winner != t.node) Die(call, "the winner runs no attempt of the task");
    return 0;
  }
  if (winner == kNoNode) winner = t.node;
  if (winner != t.node && winner != t.backup_node) Die(call, "the winner runs no attempt of the task");
  const NodeId loser = winner == t.node ? t.backup_node : t.node;
  AddRunning(loser, is_map, -1);
  if (winner == t.backup_node) {
    t.node = t.backup_node;
    t.run = t.backup;
  }
  t.backup_node = kNoNode;
  t.backup = Attempt{};
  return 1;
}

void ClusterState::LaunchMap(JobId job_id, int32_t index, NodeId node_id, TimeMs now) {
  Job& job = CheckJob(jobs_, "LaunchMap", job_id);
  MapTask& m = CheckTask(job.maps, "LaunchMap", job_id, index, TaskState::kPending);
  Node& n = CheckNode(nodes_, "LaunchMap", node_id);
  if (n.free_map_slots() <= 0) Die("LaunchMap", n.name + " has no free map slot (or is not live)");
  m.state = TaskState::kRunning;
  m.node = node_id;
  m.run = NewAttempt(m.attempts++, now);
  m.bytes_read = 0;
  m.partition_bytes.clear();
  ++job.running_maps;
  AddRunning(n, true, +1);
  ++running_maps_;
  Changed(job_id);
}

void ClusterState::LaunchReduce(JobId job_id, int32_t index, NodeId node_id, TimeMs now) {
  Job& job = CheckJob(jobs_, "LaunchReduce", job_id);
  ReduceTask& r = CheckTask(job.reduces, "LaunchReduce", job_id, index, TaskState::kPending);
  if (!job.reduces_may_start()) Die("LaunchReduce", Task(job_id, index) + " before slow-start");
  Node& n = CheckNode(nodes_, "LaunchReduce", node_id);
  if (n.free_reduce_slots() <= 0) {
    Die("LaunchReduce", n.name + " has no free reduce slot (or is not live)");
  }
  r.state = TaskState::kRunning;
  r.node = node_id;
  r.run = NewAttempt(r.attempts++, now);
  ++job.running_reduces;
  AddRunning(n, false, +1);
  ++running_reduces_;
  Changed(job_id);
}

// The locality is the node the map ran on against its replicas at the end.
void ClusterState::FinishMap(JobId job_id, int32_t index, double run_ms, NodeId winner) {
  Job& job = CheckJob(jobs_, "FinishMap", job_id);
  MapTask& m = CheckTask(job.maps, "FinishMap", job_id, index, TaskState::kRunning);
  if (!(run_ms >= 0)) Die("FinishMap", "run_ms must be >= 0");
  backup_maps_ -= SettleBackup(m, true, winner, "FinishMap");
  m.run.progress = 1;
  m.state = TaskState::kDone;
  --job.running_maps;
  ++job.finished_maps;
  AddRunning(m.node, true, -1);
  --running_maps_;
  Changed(job_id);
  const int level = static_cast<int>(LocalityOf(m.node, m.replicas));
  const int64_t n = ++measurements_.map_samples[level];
  measurements_.avg_map_ms[level] +=
      (run_ms - measurements_.avg_map_ms[level]) / static_cast<double>(n);
}

void ClusterState::FinishReduce(JobId job_id, int32_t index, NodeId winner) {
  Job& job = CheckJob(jobs_, "FinishReduce", job_id);
  ReduceTask& r = CheckTask(job.reduces, "FinishReduce", job_id, index, TaskState::kRunning);
  backup_reduces_ -= SettleBackup(r, false, winner, "FinishReduce");
  r.run.progress = 1;
  r.state = TaskState::kDone;
  --job.running_reduces;
  ++job.finished_reduces;
  AddRunning(r.node, false, -1);
  --running_reduces_;
  Changed(job_id);
}

void ClusterState::FailMap(JobId job_id, int32_t index) {
  Job& job = CheckJob(jobs_, "FailMap", job_id);
  MapTask& m = CheckTask(job.maps, "FailMap", job_id, index, TaskState::kRunning);
  if (m.backup_node != kNoNode) Die("FailMap", Task(job_id, index) + " has a backup: DropAttempt");
  AddFailedOn(m.failed_on, m.node);
  AddRunning(m.node, true, -1);
  --job.running_maps;
  --running_maps_;
  m.state = TaskState::kPending;
  m.node = kNoNode;
  Changed(job_id);
}

void ClusterState::FailReduce(JobId job_id, int32_t index) {
  Job& job = CheckJob(jobs_, "FailReduce", job_id);
  ReduceTask& r = CheckTask(job.reduces, "FailReduce", job_id, index, TaskState::kRunning);
  if (r.backup_node != kNoNode) Die("FailReduce", Task(job_id, index) + " has a backup: DropAttempt");
  AddFailedOn(r.failed_on, r.node);
  AddRunning(r.node, false, -1);
  --job.running_reduces;
  --running_reduces_;
  r.state = TaskState::kPending;
  r.node = kNoNode;
  Changed(job_id);
}

// Not a failure of the map itself: failed_on is left alone.
void ClusterState::RedoMap(JobId job_id, int32_t index) {
  Job& job = CheckJob(jobs_, "RedoMap", job_id);
  MapTask& m = CheckTask(job.maps, "RedoMap", job_id, index, TaskState::kDone);
  --job.finished_maps;
  m.state = TaskState::kPending;
  m.node = kNoNode;
  Changed(job_id);
}

// A job may finish with tasks outstanding (the host killed it): their
// attempts are gone, so they free their slots and read as pending.
void ClusterState::FinishJob(JobId job_id) {
  Job& job = CheckJob(jobs_, "FinishJob", job_id);
  for (MapTask& m : job.maps) {
    if (m.state != TaskState::kRunning) continue;
    backup_maps_ -= SettleBackup(m, true, kNoNode, "FinishJob");
    AddRunning(m.node, true, -1);
    m.state = TaskState::kPending;
    m.node = kNoNode;
  }
  for (ReduceTask& r : job.reduces) {
    if (r.state != TaskState::kRunning) continue;
    backup_reduces_ -= SettleBackup(r, false, kNoNode, "FinishJob");
    AddRunning(r.node, false, -1);
    r.state = TaskState::kPending;
    r.node = kNoNode;
  }
  running_maps_ -= job.running_maps;
  running_reduces_ -= job.running_reduces;
  job.running_maps = 0;
  job.running_reduces = 0;
  job.done = true;
  active_.erase(std::find(active_.begin(), active_.end(), job_id));
  Changed(job_id);
}

// ---------------------------------------------------------------- backups

namespace {

// The running task (map or reduce) `index` of `job`, for the calls below.
template <typename T>
T& RunningTask(std::vector<T>& tasks, const char* call, JobId job, int32_t index) {
  return CheckTask(tasks, call, job, index, TaskState::kRunning);
}

}  // namespace

void ClusterState::LaunchBackup(JobId job_id, bool is_map, int32_t index, NodeId node_id,
                                TimeMs now) {
  Job& job = CheckJob(jobs_, "LaunchBackup", job_id);
  Node& n = CheckNode(nodes_, "LaunchBackup", node_id);
  auto launch = [&](auto& t, int free) {
    if (t.backup_node != kNoNode) Die("LaunchBackup", Task(job_id, index) + " has a backup already");
    if (t.node == node_id) Die("LaunchBackup", Task(job_id, index) + " runs on " + n.name + " already");
    if (free <= 0) Die("LaunchBackup", n.name + " has no free slot (or is not live)");
    t.backup_node = node_id;
    t.backup = NewAttempt(t.attempts++, now);
  };
  if (is_map) {
    launch(RunningTask(job.maps, "LaunchBackup", job_id, index), n.free_map_slots());
    AddRunning(n, true, +1);
    ++backup_maps_;
  } else {
    launch(RunningTask(job.reduces, "LaunchBackup", job_id, index), n.free_reduce_slots());
    AddRunning(n, false, +1);
    ++backup_reduces_;
  }
  Changed(job_id);
}

void ClusterState::DropAttempt(JobId job_id, bool is_map, int32_t index, NodeId node_id,
                               bool failed) {
  Job& job = CheckJob(jobs_, "DropAttempt", job_id);
  auto drop = [&](auto& t) {
    if (t.backup_node == kNoNode || (node_id != t.node && node_id != t.backup_node)) {
      Die("DropAttempt", Task(job_id, index) + " has no second attempt on that node");
    }
    if (failed) AddFailedOn(t.failed_on, node_id);
    // The other attempt wins the task's place: SettleBackup frees the
    // dropped one's slot.
    SettleBackup(t, is_map, node_id == t.node ? t.backup_node : t.node, "DropAttempt");
  };
  if (is_map) {
    drop(RunningTask(job.maps, "DropAttempt", job_id, index));
    --backup_maps_;
  } else {
    drop(RunningTask(job.reduces, "DropAttempt", job_id, index));
    --backup_reduces_;
  }
  Changed(job_id);
}

void ClusterState::SetProgress(JobId job_id, bool is_map, int32_t index, NodeId node,
                               double progress, TimeMs now) {
  if (job_id < 0 || static_cast<size_t>(job_id) >= jobs_.size()) return;
  Job& job = jobs_[static_cast<size_t>(job_id)];
  auto set = [&](auto& tasks) {
    if (index < 0 || static_cast<size_t>(index) >= tasks.size()) return;
    auto& t = tasks[static_cast<size_t>(index)];
    if (t.state != TaskState::kRunning) return;
    Attempt* a = node == t.node ? &t.run : node == t.backup_node ? &t.backup : nullptr;
    if (a == nullptr) return;
    a->progress = std::clamp(progress, 0.0, 1.0);
    a->progress_ms = now;
  };
  if (is_map) {
    set(job.maps);
  } else {
    set(job.reduces);
  }
}

}  // namespace mr::sched
