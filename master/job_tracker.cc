// JobTracker: construction, lookups and membership (workers joining,
// draining, lost). The heartbeat is job_heartbeat.cc, task reports
// job_reports.cc, the records a job keeps job_records.cc.
#include "master/job_tracker.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "master/job_tracker_internal.h"

namespace mr::master {

JobTracker::JobTracker(const ClusterConfig& config, std::unique_ptr<sched::Scheduler> scheduler,
                       std::unique_ptr<sched::Speculator> speculator, DfsAccess dfs,
                       std::unique_ptr<JobHistory> history, const Clock* clock)
    : config_(config), scheduler_(std::move(scheduler)), speculator_(std::move(speculator)),
      dfs_(std::move(dfs)), history_(std::move(history)), clock_(clock),
      started_ms_(clock->NowMs()) {}

JobTracker::~JobTracker() = default;

Result<std::unique_ptr<JobTracker>> JobTracker::Create(const ClusterConfig& config,
                                                       std::unique_ptr<sched::Scheduler> scheduler,
                                                       std::unique_ptr<sched::Speculator> speculator,
                                                       DfsAccess dfs, const Clock* clock) {
  MR_ASSIGN_OR_RETURN(auto history, JobHistory::Open(config.master.data_dir + "/history"));
  std::unique_ptr<JobTracker> t(new JobTracker(config, std::move(scheduler), std::move(speculator),
                                               std::move(dfs), std::move(history), clock));
  MR_RETURN_IF_ERROR(t->RestoreScheduler());
  // Jobs that were running when the master stopped are recovered once the
  // workers have registered again (job_recovery.cc).
  for (pb::JobRecord& r : t->history_->List()) {
    if (!r.spec().submit_token().empty()) t->submit_tokens_[r.spec().submit_token()] = r.id();
    if (r.state() != "running") continue;
    t->history_->LoadTasks(&r);
    t->recovering_.push_back(std::move(r));
  }
  if (!t->recovering_.empty()) {
    t->recover_at_ = config.jobs.recovery_wait_ms;
    spdlog::info("{} job(s) were running when the master stopped: recovering them once the "
                 "workers registered again (at most {} ms)",
                 t->recovering_.size(), t->recover_at_);
  }
  return t;
}

sched::TimeMs JobTracker::Now() const { return clock_->NowMs() - started_ms_; }

sched::NodeId JobTracker::NodeOf(const std::string& worker) const {
  auto it = nodes_.find(worker);
  return it == nodes_.end() ? sched::kNoNode : it->second;
}

JobTracker::ActiveJob* JobTracker::Find(int64_t id) const {
  auto it = active_.find(id);
  return it == active_.end() ? nullptr : it->second.get();
}

bool JobTracker::IsActiveInput(uint64_t block) const { return active_blocks_.count(block) > 0; }

int64_t JobTracker::JobUsing(const std::string& path) const {
  // `p` is `path`, or one is an ancestor of the other.
  auto touches = [&path](const std::string& p) {
    auto under = [](const std::string& a, const std::string& b) {
      return b == "/" || a.starts_with(b + "/");
    };
    return p == path || under(p, path) || under(path, p);
  };
  for (const auto& [id, job] : active_) {
    if (touches(job->record.spec().output()) || touches(TempDir(id))) return id;
    for (const auto& m : job->maps) {
      if (touches(m.split.file)) return id;
    }
  }
  for (const pb::JobRecord& r : recovering_) {
    if (touches(r.spec().output()) || touches(TempDir(r.id()))) return r.id();
    for (const std::string& in : r.spec().inputs()) {
      auto normalized = dfs::NormalizePath(in);
      if (normalized.ok() && touches(*normalized)) return r.id();
    }
  }
  return 0;
}

void JobTracker::ReplicaAdded(uint64_t block, const std::string& worker) {
  const sched::NodeId node = NodeOf(worker);
  if (!IsActiveInput(block) || node == sched::kNoNode) return;
  for (auto& [id, job] : active_) {
    for (sched::MapTask& m : state_.mutable_job(job->sid).maps) {
      if (m.block == block && std::find(m.replicas.begin(), m.replicas.end(), node) == m.replicas.end()) {
        m.replicas.push_back(node);
      }
    }
  }
}

// ---------------------------------------------------------------- membership

// Datacenters and racks become dense indexes in the order workers become
// known.
void JobTracker::AddWorker(const pb::WorkerInfo& info) {
  const sched::NodeId known = NodeOf(info.id());
  if (known != sched::kNoNode) {
    const sched::Node& n = state_.node(known);
    if (!n.live && (n.map_slots != info.map_slots() || n.reduce_slots != info.reduce_slots())) {
      state_.SetSlots(known, info.map_slots(), info.reduce_slots());
    }
    node_info_[static_cast<size_t>(known)] = info;
    return;
  }
  const int32_t dc =
      dc_index_.emplace(info.datacenter(), static_cast<int32_t>(dc_index_.size())).first->second;
  const int32_t rack =
      info.rack().empty()
          ? -1
          : rack_index_.emplace(info.datacenter() + "/" + info.rack(), static_cast<int32_t>(rack_index_.size()))
                .first->second;
  const sched::NodeId id = state_.AddNode(info.id(), dc, rack, info.map_slots(), info.reduce_slots());
  state_.SetLive(id, false);  // until it registers
  if (draining_.count(info.id())) state_.SetDraining(id, true);
  nodes_[info.id()] = id;
  node_names_.push_back(info.id());
  node_info_.push_back(info);
}

void JobTracker::SetDraining(const std::string& worker, bool draining) {
  if (draining) {
    draining_.insert(worker);
  } else {
    draining_.erase(worker);
  }
  if (const sched::NodeId node = NodeOf(worker); node != sched::kNoNode) state_.SetDraining(node, draining);
}

int JobTracker::RunningTasks(const std::string& worker) const {
  const sched::NodeId node = NodeOf(worker);
  if (node == sched::kNoNode) return 0;
  return state_.node(node).running_maps + state_.node(node).running_reduces;
}

void JobTracker::SlotsInUse(const std::string& worker, int* maps, int* reduces) const {
  const sched::NodeId node = NodeOf(worker);
  *maps = node == sched::kNoNode ? 0 : state_.node(node).running_maps;
  *reduces = node == sched::kNoNode ? 0 : state_.node(node).running_reduces;
}

void JobTracker::WorkerUp(const std::string& worker) {
  const sched::NodeId node = NodeOf(worker);
  if (node == sched::kNoNode) return;
  if (state_.node(node).live) WorkerLost(worker);  // restarted: its tasks are gone
  state_.SetLive(node, true);
  scheduler_->OnNodeAdded(state_, node, Now());
}

// The worker's running tasks run again elsewhere, and so do its finished
// maps that reduces of unfinished jobs have yet to fetch (Hadoop re-runs all
// of them: it cannot know which reducers fetched what).
void JobTracker::WorkerLost(const std::string& worker) {
  const sched::NodeId node = NodeOf(worker);
  if (node == sched::kNoNode || !state_.node(node).live) return;
  std::vector<ActiveJob*> jobs;
  for (auto& [id, job] : active_) jobs.push_back(job.get());
  for (ActiveJob* job : jobs) {
    const sched::Job& sj = state_.job(job->sid);
    for (const sched::MapTask& m : sj.maps) {
      if (AttemptOn(m, node) >= 0) {
        KeepEndedAttempt(*job, true, m.index, node, AttemptEnd::kLost, "worker " + worker + " lost");
        if (m.backup_node != sched::kNoNode) {
          DropAttempt(*job, true, m.index, node, /*failed=*/false);  // the other runs on
        } else {
          state_.FailMap(job->sid, m.index);
        }
      } else if (m.node == node && m.state == sched::TaskState::kDone &&
                 sj.finished_reduces < static_cast<int>(sj.reduces.size())) {
        state_.RedoMap(job->sid, m.index);
        job->maps[static_cast<size_t>(m.index)].output_lost = true;
      }
    }
    for (const sched::ReduceTask& r : sj.reduces) {
      if (AttemptOn(r, node) < 0) continue;
      KeepEndedAttempt(*job, false, r.index, node, AttemptEnd::kLost, "worker " + worker + " lost");
      if (r.backup_node != sched::kNoNode) {
        DropAttempt(*job, false, r.index, node, /*failed=*/false);
      } else {
        state_.FailReduce(job->sid, r.index);
      }
    }
  }
  state_.SetLive(node, false);
  kills_.erase(worker);
  held_.erase(worker);
  scheduler_->OnNodeLost(state_, node, Now());
  spdlog::info("worker {} lost: its tasks will run again elsewhere", worker);
}
}  // namespace mr::master
