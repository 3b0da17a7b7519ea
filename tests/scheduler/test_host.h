// TestHost: the smallest scheduler host, for tests of any policy.
//
// It owns a ClusterState and a policy and plays the host's side of
// scheduler.h: every event updates the state first, then tells the policy.
// As the policy's Launcher it checks each launch against the REQUIRES of
// Launcher (a pending task of a live job, a free slot on the heartbeating
// node, no more launches than the node's free slots at the start of the
// Assign, reduces only after slow-start); a broken one is a gtest failure
// and is not applied, so a bad policy fails a test instead of aborting.
//
// Build a cluster in a few lines:
//   TestHost host(MakePolicy("fifo"));
//   NodeId a = host.AddNode(/*dc=*/0), b = host.AddNode(/*dc=*/1);
//   JobId j = host.AddJob(MakeJob({{a}, {b}}, /*reduces=*/1));
//   std::vector<Launch> got = host.Heartbeat(a);
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/cluster_state.h"
#include "scheduler/scheduler.h"

namespace mr::sched::test {

struct Launch {
  JobId job = 0;
  int32_t index = 0;
  bool is_map = true;
  NodeId node = kNoNode;
  bool operator==(const Launch&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Launch& l) {
  return os << (l.is_map ? "map " : "reduce ") << l.job << "/" << l.index << "@" << l.node;
}

inline Launch Map(JobId job, int32_t index, NodeId node) { return {job, index, true, node}; }
inline Launch Reduce(JobId job, int32_t index, NodeId node) { return {job, index, false, node}; }

// The registered policy `name` (fails the test if it cannot be made).
inline std::unique_ptr<Scheduler> MakePolicy(const std::string& name,
                                             const SchedulerParams& params = {},
                                             uint64_t seed = 1) {
  SchedulerEnv env;
  env.seed = seed;
  auto policy = MakeScheduler(name, params, env);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return policy.ok() ? std::move(policy).value() : nullptr;
}

// A job with one map per entry of `replicas` (the nodes holding its block;
// empty = no location) and `reduces` reduces.
inline Job MakeJob(const std::vector<std::vector<NodeId>>& replicas, int reduces = 1,
                   int priority = 0, TimeMs submit_ms = 0) {
  Job job;
  job.name = "job";
  job.priority = priority;
  job.submit_ms = submit_ms;
  for (size_t i = 0; i < replicas.size(); ++i) {
    MapTask m;
    m.block = i + 1;
    m.bytes = 64 << 20;
    m.replicas = replicas[i];
    job.maps.push_back(m);
  }
  job.reduces.resize(static_cast<size_t>(reduces));
  return job;
}

// Recounts everything from the task states; "" when every count agrees.
inline std::string CheckConsistent(const ClusterState& state) {
  std::vector<int> node_maps(state.nodes().size()), node_reduces(state.nodes().size());
  std::vector<JobId> active;
  int total_maps = 0, total_reduces = 0, backup_maps = 0, backup_reduces = 0;
  for (const Job& job : state.jobs()) {
    int run_m = 0, done_m = 0, run_r = 0, done_r = 0;
    for (const MapTask& m : job.maps) {
      if (m.state == TaskState::kRunning) ++run_m, ++node_maps[static_cast<size_t>(m.node)];
      if (m.state == TaskState::kDone) ++done_m;
      if (m.backup_node == kNoNode) continue;
      if (m.state != TaskState::kRunning || m.backup_node == m.node) return "a stray map backup";
      ++backup_maps, ++node_maps[static_cast<size_t>(m.backup_node)];
    }
    for (const ReduceTask& r : job.reduces) {
      if (r.state == TaskState::kRunning) ++run_r, ++node_reduces[static_cast<size_t>(r.node)];
      if (r.state == TaskState::kDone) ++done_r;
      if (r.backup_node == kNoNode) continue;
      if (r.state != TaskState::kRunning || r.backup_node == r.node) return "a stray reduce backup";
      ++backup_reduces, ++node_reduces[static_cast<size_t>(r.backup_node)];
    }
    const std::string j = "job " + std::to_string(job.id) + ": ";
    if (run_m != job.running_maps) return j + "running_maps";
    if (done_m != job.finished_maps) return j + "finished_maps";
    if (run_r != job.running_reduces) return j + "running_reduces";
    if (done_r != job.finished_reduces) return j + "finished_reduces";
    if (!job.done) active.push_back(job.id);
    total_maps += job.running_maps;
    total_reduces += job.running_reduces;
  }
  if (total_maps != state.running_maps()) return "cluster running_maps";
  if (total_reduces != state.running_reduces()) return "cluster running_reduces";
  if (backup_maps != state.running_backups(true)) return "cluster running_backups(maps)";
  if (backup_reduces != state.running_backups(false)) return "cluster running_backups(reduces)";
  int live = 0, live_maps = 0, live_reduces = 0;
  for (const Node& n : state.nodes()) {
    if (n.live) ++live, live_maps += n.running_maps, live_reduces += n.running_reduces;
  }
  if (live != state.live_nodes()) return "cluster live_nodes";
  if (live_maps != state.live_running_attempts(true)) return "cluster live_running_attempts(maps)";
  if (live_reduces != state.live_running_attempts(false)) return "cluster live_running_attempts(reduces)";
  std::vector<ClusterState::DatacenterTotals> dcs(static_cast<size_t>(state.datacenters()));
  for (const Node& n : state.nodes()) {
    ClusterState::DatacenterTotals& d = dcs[static_cast<size_t>(n.datacenter)];
    d.running_attempts += n.running_maps + n.running_reduces;
    if (!n.live) continue;
    ++d.live_nodes;
    d.live_map_nodes += n.map_slots > 0 ? 1 : 0;
    d.live_reduce_nodes += n.reduce_slots > 0 ? 1 : 0;
  }
  for (int32_t c = 0; c < state.datacenters(); ++c) {
    const ClusterState::DatacenterTotals& want = dcs[static_cast<size_t>(c)];
    const ClusterState::DatacenterTotals& kept = state.datacenter_totals(c);
    if (want.live_nodes != kept.live_nodes || want.live_map_nodes != kept.live_map_nodes ||
        want.live_reduce_nodes != kept.live_reduce_nodes || want.running_attempts != kept.running_attempts) {
      return "datacenter " + std::to_string(c) + " totals";
    }
  }
  for (const Node& n : state.nodes()) {
    const std::string w = "node " + n.name + ": ";
    if (n.running_maps != node_maps[static_cast<size_t>(n.id)]) return w + "running_maps";
    if (n.running_reduces != node_reduces[static_cast<size_t>(n.id)]) return w + "running_reduces";
    if (n.running_maps > n.map_slots || n.running_reduces > n.reduce_slots) return w + "overfull";
  }
  if (active != state.active_jobs()) return "active_jobs";
  return "";
}

class TestHost : public Launcher {
 public:
  explicit TestHost(std::unique_ptr<Scheduler> policy) : policy_(std::move(policy)) {}

  ClusterState& state() { return state_; }
  const Job& job(JobId id) const { return state_.job(id); }
  Scheduler& policy() { return *policy_; }
  // Launcher REQUIRES broken so far (each is also a gtest failure).
  int violations() const { return violations_; }
  // Time passes: a policy with a clock of its own (scheduler.h tick_ms) gets
  // OnTick at every multiple of its period in (now(), now], as a host would.
  void set_now(TimeMs now) {
    if (const TimeMs p = policy_->tick_ms(); p > 0) {
      for (TimeMs t = (now_ / p + 1) * p; t <= now; t += p) policy_->OnTick(state_, t, *this);
    }
    now_ = now;
  }
  // Launcher::Prefetch calls so far, as {block, from, to}.
  const std::vector<std::tuple<uint64_t, NodeId, NodeId>>& prefetches() const {
    return prefetches_;
  }
  TimeMs now() const { return now_; }

  NodeId AddNode(int32_t dc, int map_slots = 2, int reduce_slots = 2, int32_t rack = -1) {
    const std::string name =
        "dc" + std::to_string(dc) + "-n" + std::to_string(state_.nodes().size());
    NodeId id = state_.AddNode(name, dc, rack, map_slots, reduce_slots);
    policy_->OnNodeAdded(state_, id, now_);
    return id;
  }
  std::vector<NodeId> AddNodes(int32_t dc, int count, int map_slots = 2, int reduce_slots = 2) {
    std::vector<NodeId> ids;
    for (int i = 0; i < count; ++i) ids.push_back(AddNode(dc, map_slots, reduce_slots));
    return ids;
  }

  JobId AddJob(Job job) {
    JobId id = state_.AddJob(std::move(job));
    policy_->OnJobAdded(state_, id, now_);
    return id;
  }

  // One heartbeat from `node`: the policy's launches, in order.
  std::vector<Launch> Heartbeat(NodeId node) {
    current_ = node;
    free_maps_ = state_.node(node).free_map_slots();
    free_reduces_ = state_.node(node).free_reduce_slots();
    launches_.clear();
    policy_->Assign(state_, sched::Heartbeat{node, now_}, *this);
    current_ = kNoNode;
    return launches_;
  }

  void FinishMap(JobId job, int32_t index, double run_ms = 1000) {
    state_.FinishMap(job, index, run_ms);
    policy_->OnMapFinished(state_, job, index, now_);
    MaybeFinishJob(job);
  }
  void FinishReduce(JobId job, int32_t index) {
    state_.FinishReduce(job, index);
    policy_->OnReduceFinished(state_, job, index, now_);
    MaybeFinishJob(job);
  }
  void FailMap(JobId job, int32_t index) {
    state_.FailMap(job, index);
    policy_->OnTaskFailed(state_, job, index, /*is_map=*/true, now_);
  }
  void FailReduce(JobId job, int32_t index) {
    state_.FailReduce(job, index);
    policy_->OnTaskFailed(state_, job, index, /*is_map=*/false, now_);
  }

  // The node dies: its running tasks fail, and the finished maps whose
  // output it held run again for unfinished jobs that have reduces (a
  // map-only job's output is already in the DFS, as in Hadoop).
  void LoseNode(NodeId node) {
    state_.SetLive(node, false);
    for (JobId id : std::vector<JobId>(state_.active_jobs())) {
      const Job& job = state_.job(id);
      for (const MapTask& m : job.maps) {
        if (m.node != node) continue;
        if (m.state == TaskState::kRunning) {
          state_.FailMap(id, m.index);
        } else if (m.state == TaskState::kDone && !job.reduces.empty()) {
          state_.RedoMap(id, m.index);
        }
      }
      for (const ReduceTask& r : job.reduces) {
        if (r.node == node && r.state == TaskState::kRunning) state_.FailReduce(id, r.index);
      }
    }
    policy_->OnNodeLost(state_, node, now_);
  }
  // A lost node comes back (empty); the policy hears OnNodeAdded.
  void ReturnNode(NodeId node) {
    state_.SetLive(node, true);
    policy_->OnNodeAdded(state_, node, now_);
  }

  // ---- Launcher ----
  // The copy lands at once: `to` joins the replicas of the active jobs' maps
  // of `block` that `from` holds (MakeJob reuses block ids across jobs).
  void Prefetch(uint64_t block, NodeId from, NodeId to) override {
    prefetches_.emplace_back(block, from, to);
    for (JobId id : state_.active_jobs()) {
      for (MapTask& m : state_.mutable_job(id).maps) {
        auto& r = m.replicas;
        const bool has_from = std::find(r.begin(), r.end(), from) != r.end();
        if (m.block == block && has_from && std::find(r.begin(), r.end(), to) == r.end()) {
          r.push_back(to);
        }
      }
    }
  }
  void LaunchMap(JobId job, int32_t index) override {
    if (!Check(job, index, /*is_map=*/true)) return;
    state_.LaunchMap(job, index, current_);
    launches_.push_back(Map(job, index, current_));
  }
  void LaunchReduce(JobId job, int32_t index) override {
    if (!Check(job, index, /*is_map=*/false)) return;
    state_.LaunchReduce(job, index, current_);
    launches_.push_back(Reduce(job, index, current_));
  }

 private:
  bool Violation(const std::string& what) {
    ++violations_;
    ADD_FAILURE() << policy_->name() << ": " << what;
    return false;
  }

  bool Check(JobId job, int32_t index, bool is_map) {
    const std::string task = std::string(is_map ? "map " : "reduce ") + std::to_string(job) + "/" +
                             std::to_string(index);
    if (current_ == kNoNode) return Violation("launched " + task + " outside Assign");
    if (job < 0 || static_cast<size_t>(job) >= state_.jobs().size()) {
      return Violation("launched " + task + " of an unknown job");
    }
    const Job& j = state_.job(job);
    if (j.done) return Violation("launched " + task + " of a finished job");
    const size_t count = is_map ? j.maps.size() : j.reduces.size();
    if (index < 0 || static_cast<size_t>(index) >= count) {
      return Violation("launched " + task + ", which does not exist");
    }
    const TaskState st = is_map ? j.maps[static_cast<size_t>(index)].state
                                : j.reduces[static_cast<size_t>(index)].state;
    if (st != TaskState::kPending) return Violation("launched " + task + ", which is not pending");
    int& budget = is_map ? free_maps_ : free_reduces_;
    if (budget <= 0) return Violation("launched " + task + " beyond the node's free slots");
    if (!is_map && !j.reduces_may_start()) {
      return Violation("launched " + task + " before slow-start");
    }
    --budget;
    return true;
  }

  void MaybeFinishJob(JobId id) {
    const Job& job = state_.job(id);
    if (job.finished_maps == static_cast<int>(job.maps.size()) &&
        job.finished_reduces == static_cast<int>(job.reduces.size())) {
      state_.FinishJob(id);
      policy_->OnJobFinished(state_, id, now_);
    }
  }

  ClusterState state_;
  std::unique_ptr<Scheduler> policy_;
  TimeMs now_ = 0;
  NodeId current_ = kNoNode;
  int free_maps_ = 0, free_reduces_ = 0;
  std::vector<Launch> launches_;
  std::vector<std::tuple<uint64_t, NodeId, NodeId>> prefetches_;
  int violations_ = 0;
};

}  // namespace mr::sched::test
