// SimHost, the speculation half: node speeds, progress reports, backup
// attempts (sched::SpeculateAt calls LaunchBackup inside a heartbeat, after
// the policy's Assign) and the end of a race between a task's two
// attempts — the same steps as the master's JobTracker (job_tracker.cc,
// job_speculation.cc). See host.h for the model.
#include <algorithm>
#include <cmath>

#include "sim/host.h"

namespace mr::sim {

using sched::JobId;
using sched::NodeId;
using sched::TaskState;

void SimHost::SetSpeculator(std::unique_ptr<sched::Speculator> speculator) {
  speculator_ = std::move(speculator);
}

// Called by the constructor: the scenario's speed groups, in order (a
// later group overrides an earlier one), then its episodes.
void SimHost::InitSpeeds() {
  const size_t n = state_.nodes().size();
  speeds_ = NodeSpeeds(n);
  Rng rng(StreamSeed(sc_.seed, "speeds"));
  for (const SpeedGroup& g : sc_.cluster.speeds) {
    std::vector<NodeId> nodes(g.nodes.begin(), g.nodes.end());
    if (nodes.empty()) {
      // round(fraction × n) distinct nodes: a partial Fisher-Yates shuffle.
      std::vector<NodeId> all(n);
      for (size_t i = 0; i < n; ++i) all[i] = static_cast<NodeId>(i);
      const size_t k = std::min(n, static_cast<size_t>(std::llround(g.fraction * static_cast<double>(n))));
      for (size_t i = 0; i < k; ++i) std::swap(all[i], all[i + UniformIndex(rng, n - i)]);
      nodes.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (NodeId id : nodes) {
      if (id >= 0 && static_cast<size_t>(id) < n) speeds_.SetBase(id, g.factor);
    }
  }
  for (const SpeedEpisode& e : sc_.run.episodes) {
    if (e.node >= 0 && static_cast<size_t>(e.node) < n) {
      speeds_.AddEpisode(e.node, static_cast<double>(e.at_ms), static_cast<double>(e.for_ms), e.factor);
    }
  }
}

void SimHost::AttemptEnded(int64_t launch_ms) { result_.task_ms += static_cast<double>(now_ - launch_ms); }

// At each heartbeat of `node` (OnHeartbeat, before Assign), as a
// TaskTracker reports: every attempt there reports its progress score —
// a map the fraction of its input processed (NodeSpeeds::Progress: its
// read over the links, then its compute at the node's speed), a reduce
// a third for the copy (the fraction of the job's map outputs it has
// fetched) and two thirds for its compute (the sim does not split sort from
// reduce). A map's original attempt also reports its bytes read and output
// (Shen Eq. 3); a backup's stay its own, as in the master.
void SimHost::ReportProgress(NodeId node) {
  const double now = static_cast<double>(now_);
  for (const auto& [job_id, index] : node_maps_[static_cast<size_t>(node)]) {
    const sched::Job& job = state_.job(job_id);
    const bool original = job.maps[static_cast<size_t>(index)].node == node;
    const MapSim& s = maps_[static_cast<size_t>(job_id)][static_cast<size_t>(index)];
    const MapRun& r = original ? s.run : s.backup;
    const double progress =
        speeds_.Progress(node, static_cast<double>(r.launch_ms), r.read_ms, r.full_end_ms, now);
    state_.SetProgress(job_id, true, index, node, progress, now_);
    if (job.reduces.empty() || !original) continue;
    const double frac = speeds_.Fraction(node, r.read_ms, r.end_ms, now);  // as before speculation
    sched::MapTask& m = state_.mutable_job(job_id).maps[static_cast<size_t>(index)];
    m.bytes_read = static_cast<int64_t>(frac * static_cast<double>(m.bytes));
    m.partition_bytes.assign(job.reduces.size(),
                             static_cast<int64_t>(frac * PartitionMb(job_id) * 1048576.0));
  }
  for (const auto& [job_id, index] : node_reduces_[static_cast<size_t>(node)]) {
    const sched::Job& job = state_.job(job_id);
    const ReduceSim& s = reduces_[static_cast<size_t>(job_id)][static_cast<size_t>(index)];
    const ReduceRun& r = job.reduces[static_cast<size_t>(index)].node == node ? s.run : s.backup;
    double progress;
    if (!r.scheduled || now < r.compute_ms) {
      const double maps = static_cast<double>(job.maps.size());
      progress = (maps > 0 ? r.fetched_count / maps : 1.0) / 3.0;
    } else {
      progress = 1.0 / 3.0 + 2.0 / 3.0 * speeds_.Fraction(node, r.compute_ms, r.end_ms, now);
    }
    state_.SetProgress(job_id, false, index, node, progress, now_);
  }
}

SimHost::MapRun* SimHost::RunningMap(JobId job, int32_t index, int32_t attempt) {
  const sched::MapTask& m = state_.job(job).maps[static_cast<size_t>(index)];
  if (m.state != TaskState::kRunning) return nullptr;
  MapSim& s = maps_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  if (m.run.number == attempt && s.run.attempt == attempt) return &s.run;
  if (m.backup_node != sched::kNoNode && m.backup.number == attempt && s.backup.attempt == attempt) {
    return &s.backup;
  }
  return nullptr;
}

SimHost::ReduceRun* SimHost::RunningReduce(JobId job, int32_t index, int32_t attempt) {
  const sched::ReduceTask& r = state_.job(job).reduces[static_cast<size_t>(index)];
  if (r.state != TaskState::kRunning) return nullptr;
  ReduceSim& s = reduces_[static_cast<size_t>(job)][static_cast<size_t>(index)];
  if (r.run.number == attempt && s.run.attempt == attempt) return &s.run;
  if (r.backup_node != sched::kNoNode && r.backup.number == attempt && s.backup.attempt == attempt) {
    return &s.backup;
  }
  return nullptr;
}

namespace {

// The end of a race in the mirror: the winner becomes the task's `run`.
template <typename Sim>
void Settle(Sim& s, bool backup_won) {
  if (backup_won) s.run = std::move(s.backup);
  s.backup = {};
}

}  // namespace

// Called by OnMapEnd/OnReduceEnd before FinishMap/FinishReduce (which frees
// the loser's slot). The loser is killed at once: its end event goes stale.
void SimHost::SettleRace(JobId job, int32_t index, bool is_map, NodeId winner) {
  const sched::Job& j = state_.job(job);
  auto settle = [&](const auto& t, auto& s, auto& lists) {
    if (t.backup_node == sched::kNoNode) return;
    const bool backup_won = winner == t.backup_node;
    const NodeId loser = backup_won ? t.node : t.backup_node;
    const int64_t lost_launch = (backup_won ? s.run : s.backup).launch_ms;
    Remove(lists[static_cast<size_t>(loser)], job, index);
    AttemptEnded(lost_launch);
    result_.wasted_ms += static_cast<double>(now_ - lost_launch);
    ++result_.attempts_killed;
    if (backup_won) ++result_.backups_won;
    Settle(s, backup_won);
  };
  if (is_map) {
    settle(j.maps[static_cast<size_t>(index)], maps_[static_cast<size_t>(job)][static_cast<size_t>(index)],
           node_maps_);
  } else {
    settle(j.reduces[static_cast<size_t>(index)],
           reduces_[static_cast<size_t>(job)][static_cast<size_t>(index)], node_reduces_);
  }
}

// The caller has taken the attempt off its node's list.
void SimHost::DropAttempt(JobId job, int32_t index, bool is_map, NodeId node, bool failed) {
  const sched::Job& j = state_.job(job);
  const bool original = is_map ? j.maps[static_cast<size_t>(index)].node == node
                               : j.reduces[static_cast<size_t>(index)].node == node;
  state_.DropAttempt(job, is_map, index, node, failed);
  if (is_map) {
    Settle(maps_[static_cast<size_t>(job)][static_cast<size_t>(index)], original);
  } else {
    Settle(reduces_[static_cast<size_t>(job)][static_cast<size_t>(index)], original);
  }
}

bool SimHost::CheckBackup(const sched::BackupChoice& c) {
  const std::string task = std::string(c.is_map ? "map " : "reduce ") + std::to_string(c.job) + "/" +
                           std::to_string(c.index);
  auto bad = [&](const std::string& why) {
    Violation(std::string("speculator ") + speculator_->name() + ": backup of " + task + " " + why);
    return false;
  };
  if (current_ == sched::kNoNode) return bad("outside a heartbeat");
  if (c.job < 0 || static_cast<size_t>(c.job) >= state_.jobs().size()) return bad("of an unknown job");
  const sched::Job& j = state_.job(c.job);
  const size_t count = c.is_map ? j.maps.size() : j.reduces.size();
  if (j.done || c.index < 0 || static_cast<size_t>(c.index) >= count) return bad("that does not run");
  const bool may = c.is_map ? sched::MayBackUp(j.maps[static_cast<size_t>(c.index)], current_)
                            : sched::MayBackUp(j.reduces[static_cast<size_t>(c.index)], current_);
  if (!may) return bad("that does not run, has a backup or runs on the node");
  const sched::Node& n = state_.node(current_);
  if ((c.is_map ? n.free_map_slots() : n.free_reduce_slots()) <= 0 || n.draining) {
    return bad("beyond the node's free slots");
  }
  return true;
}

void SimHost::LaunchBackup(const sched::BackupChoice& c) {
  if (!error_.empty() || !CheckBackup(c)) return;
  const NodeId node = current_;
  state_.LaunchBackup(c.job, c.is_map, c.index, node, now_);
  ++result_.backups_launched;
  last_progress_ms_ = now_;
  const sched::Job& j = state_.job(c.job);
  if (c.is_map) {
    ++map_launches_[static_cast<size_t>(c.job)][static_cast<size_t>(c.index)];
    ++result_.map_launches;
    MapSim& s = maps_[static_cast<size_t>(c.job)][static_cast<size_t>(c.index)];
    s.backup = MapRun{};
    s.backup.attempt = j.maps[static_cast<size_t>(c.index)].backup.number;
    s.backup.node = node;
    StartMap(c.job, c.index, s.backup, &s.run);
  } else {
    ++reduce_launches_[static_cast<size_t>(c.job)][static_cast<size_t>(c.index)];
    ++result_.reduce_launches;
    StartReduce(c.job, c.index, reduces_[static_cast<size_t>(c.job)][static_cast<size_t>(c.index)].backup,
                node);
  }
}

}  // namespace mr::sim
