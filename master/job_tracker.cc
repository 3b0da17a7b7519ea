// JobTracker: submission, the heartbeat, task ends and faults. The records
// a job keeps are filled in by job_records.cc.
#include "master/job_tracker.h"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "jobs/job.h"
#include "master/job_tracker_internal.h"

namespace mr::master {

// The policy's launches become TaskSpecs in the heartbeat reply, and its
// prefetches copy orders to the worker holding the block.
class JobTracker::HeartbeatLauncher : public sched::Launcher, public sched::BackupLauncher {
 public:
  HeartbeatLauncher(JobTracker& tracker, sched::NodeId node, pb::HeartbeatReply* reply)
      : t_(tracker), node_(node), reply_(reply) {}

  void LaunchMap(sched::JobId sid, int32_t index) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(sid)]);
    t_.state_.LaunchMap(sid, index, node_, t_.Now());
    const sched::MapTask& m = t_.state_.job(sid).maps[static_cast<size_t>(index)];
    job.maps[static_cast<size_t>(index)].locality = t_.state_.LocalityOf(node_, m.replicas);
    Launched(job, true, index, m.run.number);
  }

  void LaunchReduce(sched::JobId sid, int32_t index) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(sid)]);
    t_.state_.LaunchReduce(sid, index, node_, t_.Now());
    Launched(job, false, index, t_.state_.job(sid).reduces[static_cast<size_t>(index)].run.number);
  }

  // A backup attempt of a running task (job_speculation.cc).
  void LaunchBackup(const sched::BackupChoice& c) override {
    ActiveJob& job = *t_.Find(t_.job_ids_[static_cast<size_t>(c.job)]);
    t_.state_.LaunchBackup(c.job, c.is_map, c.index, node_, t_.Now());
    const sched::Job& sj = t_.state_.job(c.job);
    int32_t attempt;
    if (c.is_map) {
      const sched::MapTask& m = sj.maps[static_cast<size_t>(c.index)];
      job.maps[static_cast<size_t>(c.index)].backup_locality = t_.state_.LocalityOf(node_, m.replicas);
      attempt = m.backup.number;
    } else {
      attempt = sj.reduces[static_cast<size_t>(c.index)].backup.number;
    }
    job.record.set_backups_launched(job.record.backups_launched() + 1);
    spdlog::info("job {} {} {}: backup attempt {} on {} ({})", job.record.id(),
                 c.is_map ? "map" : "reduce", c.index, attempt,
                 t_.node_names_[static_cast<size_t>(node_)], t_.speculator_->name());
    Launched(job, c.is_map, c.index, attempt);
  }

  void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) override {
    t_.Prefetch(block, from, to);
  }

 private:
  void Launched(ActiveJob& job, bool is_map, int32_t index, int32_t attempt) {
    if (job.record.start_ms() == 0) job.record.set_start_ms(t_.clock_->WallMs());
    *reply_->add_launches() = t_.MakeSpec(job, is_map, index, attempt);
    // Where its log will be (mrctl job logs; docs/logs-and-counters.md).
    pb::AttemptPlace* place = job.record.add_attempt_places();
    place->set_is_map(is_map), place->set_index(index), place->set_attempt(attempt);
    place->set_node(t_.node_names_[static_cast<size_t>(node_)]);
  }

  JobTracker& t_;
  sched::NodeId node_;
  pb::HeartbeatReply* reply_;
};

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

// ---------------------------------------------------------------- heartbeat

void JobTracker::Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) {
  if (metrics_) metrics_->Heartbeat();
  const sched::NodeId node = NodeOf(req.worker_id());
  if (node == sched::kNoNode || !state_.node(node).live) return;
  UpdateDistances(node, req);
  const bool recovering = MaybeRecover();
  // Attempts the master believes run here but the worker does not list
  // were lost. (The worker starts the launches of a reply before its next
  // beat, so every earlier launch is listed.)
  std::set<std::tuple<int64_t, bool, int32_t, int32_t>> listed;
  for (const pb::TaskReport& r : req.tasks()) {
    listed.emplace(r.job_id(), r.is_map(), r.index(), r.attempt());
    ApplyReport(node, r);
  }
  std::vector<std::tuple<int64_t, bool, int32_t, int32_t>> missing;
  for (auto& [id, job] : active_) {
    for (const RunningAttempt& a : RunningOn(state_, job->sid, node)) {
      if (!listed.count({id, a.is_map, a.index, a.attempt})) missing.emplace_back(id, a.is_map, a.index, a.attempt);
    }
  }
  for (const auto& [id, is_map, index, attempt] : missing) {
    ActiveJob* job = Find(id);
    // Still that attempt (an earlier failure in this loop may have ended the job or the task).
    if (job != nullptr && AttemptOn(state_, job->sid, is_map, index, node) == attempt) {
      TaskFailed(*job, is_map, index, node, "the worker does not run it", false);
    }
  }
  for (auto& ref : kills_[req.worker_id()]) *reply->add_kills() = std::move(ref);
  kills_.erase(req.worker_id());
  for (int64_t id : finished_[req.worker_id()]) reply->add_finished_jobs(id);
  finished_.erase(req.worker_id());
  if (recovering) return;  // nothing launches before the recovered jobs are back

  // A worker that cannot write gets no task: map output, fetched segments
  // and reduce output all go to its disk.
  if (!req.disk_problem().empty()) return;
  // Nor does a decommissioning one (its running tasks may finish).
  if (draining_.count(req.worker_id())) return;
  HeartbeatLauncher launcher(*this, node, reply);
  const auto decision_start = std::chrono::steady_clock::now();  // a measurement, not a rule
  scheduler_->Assign(state_, sched::Heartbeat{node, Now()}, launcher);
  if (metrics_) {
    metrics_->Decision(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
  }
  sched::SpeculateAt(state_, sched::Heartbeat{node, Now()}, *speculator_, *scheduler_, launcher);
}

// Datacenters no worker is in (no index) are left out.
void JobTracker::UpdateDistances(sched::NodeId node, const pb::HeartbeatRequest& req) {
  std::map<int32_t, double> rates;
  for (const pb::LinkRate& l : req.link_rates()) {
    if (auto it = dc_index_.find(l.datacenter()); it != dc_index_.end()) rates[it->second] = l.bytes_per_s();
  }
  if (link_costs_.Report(node, rates)) costs_changed_ = true;
  const bool wanted = std::string_view(scheduler_->name()) == "probabilistic";
  if (!wanted) {
    if (costs_set_) state_.SetDistances({});  // hop counts for every other policy
    costs_set_ = false;
    costs_nodes_ = 0;
    return;
  }
  if (!costs_changed_ && costs_nodes_ == state_.nodes().size()) return;
  costs_changed_ = false;
  costs_nodes_ = state_.nodes().size();
  std::vector<std::vector<double>> matrix = link_costs_.Build(state_);
  if (matrix.empty()) {
    if (costs_set_) state_.SetDistances({});
    costs_set_ = false;
    return;
  }
  costs_set_ = true;
  std::string pairs;
  for (const auto& [name_from, from] : dc_index_) {
    for (const auto& [name_to, to] : dc_index_) {
      const double rate = from == to ? 0 : link_costs_.Rate(state_, from, to);
      if (rate > 0) pairs += fmt::format(" {}->{} {:.1f} MiB/s;", name_from, name_to, rate / 1048576.0);
    }
  }
  state_.SetDistances(std::move(matrix));
  spdlog::info("probabilistic: link costs from measured read rates:{}", pairs);
}

void JobTracker::Tick() {
  if (scheduler_->tick_ms() <= 0) return;
  // The host's tick: launches need a heartbeating node, so a ticking policy
  // may only prefetch here (a Launch* call would be a policy bug).
  struct TickLauncher : sched::Launcher {
    JobTracker& t;
    explicit TickLauncher(JobTracker& tracker) : t(tracker) {}
    void LaunchMap(sched::JobId, int32_t) override { spdlog::error("policy launched a map on a tick"); }
    void LaunchReduce(sched::JobId, int32_t) override {
      spdlog::error("policy launched a reduce on a tick");
    }
    void Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) override {
      t.Prefetch(block, from, to);
    }
  } launcher(*this);
  scheduler_->OnTick(state_, Now(), launcher);
}

void JobTracker::Prefetch(uint64_t block, sched::NodeId from, sched::NodeId to) {
  const std::string& src = node_names_[static_cast<size_t>(from)];
  const std::string& dst = node_names_[static_cast<size_t>(to)];
  dfs_.copy(block, src, dst);
  // Counted against the job reading the block: its bytes, across
  // datacenters when the two nodes are in different ones.
  for (auto& [id, job] : active_) {
    for (const sched::MapTask& m : state_.job(job->sid).maps) {
      if (m.block != block) continue;
      job->record.set_prefetch_bytes(job->record.prefetch_bytes() + m.bytes);
      if (state_.node(from).datacenter != state_.node(to).datacenter) {
        job->record.set_prefetch_inter_dc_bytes(job->record.prefetch_inter_dc_bytes() + m.bytes);
      }
      return;
    }
  }
}

// The final report of an attempt of a job that has ended (a loser of a
// race killed with its job's end, or one outrun by a kill): its bytes join
// the record kept in the history, so INT stays what the sockets moved.
void JobTracker::CountLateAttempt(const pb::TaskReport& r) {
  const pb::Traffic& in = r.input();
  const pb::Traffic& sh = r.shuffle();
  const pb::Traffic& out = r.output();
  if (in.ByteSizeLong() + sh.ByteSizeLong() + out.ByteSizeLong() == 0) return;
  auto record = history_->Get(r.job_id());
  if (!record.ok()) return;
  AddRetried(&*record, r);
  if (Status s = history_->Put(*record); !s.ok()) {
    spdlog::error("job {}: cannot record a late attempt's bytes: {}", r.job_id(), s.ToString());
  }
}

void JobTracker::ApplyReport(sched::NodeId node, const pb::TaskReport& r) {
  ActiveJob* job = Find(r.job_id());
  if (job == nullptr) {
    // Over: the worker is told to stop it. An attempt that still put its
    // output (a losing backup, or one outrun by a kill) re-created the
    // job's directory, which EndJob had removed: it goes again, whole.
    const std::string dir = "/.mr/jobs/" + std::to_string(r.job_id());
    if (r.state() == pb::TaskReport::SUCCEEDED && r.output_file().starts_with(dir + "/")) {
      dfs_.remove(dir, true);
    }
    if (r.state() != pb::TaskReport::RUNNING) CountLateAttempt(r);
    return;
  }
  const sched::Job& sj = state_.job(job->sid);
  const size_t n = r.is_map() ? sj.maps.size() : sj.reduces.size();
  if (r.index() < 0 || static_cast<size_t>(r.index()) >= n) return;
  // Only an attempt the master runs here counts (the task's original or
  // its backup); a stale attempt's output file is deleted.
  const bool current = AttemptOn(state_, job->sid, r.is_map(), r.index(), node) == r.attempt();
  if (!current) {
    if (r.state() == pb::TaskReport::SUCCEEDED && !r.output_file().empty()) {
      dfs_.remove(r.output_file(), false);
    }
    // An attempt the master no longer runs (it lost a race, or was given
    // up on) still moved bytes: they are retried ones, and INT's.
    if (r.state() != pb::TaskReport::RUNNING) AddRetried(&job->record, r);
    return;
  }
  switch (r.state()) {
    case pb::TaskReport::RUNNING: {
      state_.SetProgress(job->sid, r.is_map(), r.index(), node, r.progress(), Now());
      // The original attempt's sizes (Shen Eq. 3); a backup's stay its own.
      if (r.is_map() && sj.maps[static_cast<size_t>(r.index())].node == node) {
        sched::MapTask& m = state_.mutable_job(job->sid).maps[static_cast<size_t>(r.index())];
        m.bytes_read = r.bytes_read();
        m.partition_bytes.assign(r.partition_raw_bytes().begin(), r.partition_raw_bytes().end());
      }
      break;
    }
    case pb::TaskReport::SUCCEEDED:
      if (r.is_map()) {
        MapSucceeded(*job, r, node);
      } else {
        ReduceSucceeded(*job, r, node);
      }
      break;
    case pb::TaskReport::FAILED:
    case pb::TaskReport::KILLED:
      // The map waited jobs.block_wait_ms for its block; if the block still
      // has no live replica, more attempts would only wait again.
      if (r.is_map() && r.input_unavailable() &&
          sj.maps[static_cast<size_t>(r.index())].backup_node == sched::kNoNode &&
          dfs_.replicas(sj.maps[static_cast<size_t>(r.index())].block).empty()) {
        spdlog::warn("job {} map {}: {}", r.job_id(), r.index(), r.error());
        EndJob(*job, "failed", "map " + std::to_string(r.index()) + ": " + r.error());
        break;
      }
      AddRetried(&job->record, r);  // what the attempt moved before it ended
      TaskFailed(*job, r.is_map(), r.index(), node, r.error().empty() ? "killed" : r.error(), true);
      break;
    default:
      break;
  }
}

// The task's record is written to the history before its output is
// committed, so a restarted master finds a record for every committed part
// (a record without its part is ignored: the task runs again).
void JobTracker::MapSucceeded(ActiveJob& job, const pb::TaskReport& r, sched::NodeId node) {
  const bool map_only = job.record.spec().reducers() == 0;
  const pb::MapTaskRecord record = MakeMapRecord(job, r, node);
  Persist(job, &record, nullptr);
  if (map_only && !CommitOutput(job, r.output_file(), PartName("part-m-", r.index()))) {
    AddRetried(&job.record, r);
    TaskFailed(job, true, r.index(), node, "cannot commit its output", true);
    return;
  }
  KeepRecord(job, record);
  if (metrics_) metrics_->MapDone(record, node_info_[static_cast<size_t>(NodeOf(record.node()))].datacenter());
  // The final sizes, which the probabilistic policy's reduce cost reads
  // (Shen Eq. 3) for as long as the job runs.
  sched::MapTask& m = state_.mutable_job(job.sid).maps[static_cast<size_t>(r.index())];
  m.bytes_read = r.bytes_read();
  m.partition_bytes.assign(r.partition_raw_bytes().begin(), r.partition_raw_bytes().end());
  SettleRace(job, true, r.index(), node);
  state_.SetProgress(job.sid, true, r.index(), node, 1.0, Now());
  state_.FinishMap(job.sid, r.index(), static_cast<double>(r.run_ms()), node);
  scheduler_->OnMapFinished(state_, job.sid, r.index(), Now());
  MaybeFinish(job);
}

void JobTracker::ReduceSucceeded(ActiveJob& job, const pb::TaskReport& r, sched::NodeId node) {
  const pb::ReduceTaskRecord record = MakeReduceRecord(job, r, node);
  Persist(job, nullptr, &record);
  if (!CommitOutput(job, r.output_file(), PartName("part-", r.index()))) {
    AddRetried(&job.record, r);
    TaskFailed(job, false, r.index(), node, "cannot commit its output", true);
    return;
  }
  KeepRecord(job, record);
  if (metrics_) metrics_->ReduceDone(record, node_info_[static_cast<size_t>(NodeOf(record.node()))].datacenter());
  SettleRace(job, false, r.index(), node);
  state_.SetProgress(job.sid, false, r.index(), node, 1.0, Now());
  state_.FinishReduce(job.sid, r.index(), node);
  scheduler_->OnReduceFinished(state_, job.sid, r.index(), Now());
  MaybeFinish(job);
}

// Task commit: the attempt's file becomes the part file. Exactly one
// attempt gets here per task (the master thread decides), so the output
// never holds duplicates.
bool JobTracker::CommitOutput(ActiveJob& job, const std::string& file, const std::string& part) {
  const std::string to = TempDir(job.record.id()) + "/" + part;
  Status s = file.empty() ? Status::InvalidArgument("no output file reported")
                          : dfs_.ns->Rename(file, to);
  if (!s.ok()) spdlog::warn("job {}: cannot commit {} as {}: {}", job.record.id(), file, part, s.ToString());
  return s.ok();
}

void JobTracker::TaskFailed(ActiveJob& job, bool is_map, int32_t index, sched::NodeId node,
                            const std::string& why, bool counts) {
  const int64_t id = job.record.id();
  const sched::Job& sj = state_.job(job.sid);
  const bool backed_up = is_map ? sj.maps[static_cast<size_t>(index)].backup_node != sched::kNoNode
                                : sj.reduces[static_cast<size_t>(index)].backup_node != sched::kNoNode;
  if (backed_up) {
    DropAttempt(job, is_map, index, node, counts);
  } else if (is_map) {
    state_.FailMap(job.sid, index);
  } else {
    state_.FailReduce(job.sid, index);
  }
  spdlog::warn("job {} {} {}: attempt failed: {} (on {}{})", id, is_map ? "map" : "reduce", index,
               why, node_names_[static_cast<size_t>(node)],
               backed_up ? "; its other attempt runs on" : "");
  if (counts) {
    job.record.set_failed_attempts(job.record.failed_attempts() + 1);
    int& failures = is_map ? job.maps[static_cast<size_t>(index)].failures
                           : job.reduces[static_cast<size_t>(index)].failures;
    if (++failures >= config_.jobs.max_attempts) {
      EndJob(job, "failed",
             std::string(is_map ? "map " : "reduce ") + std::to_string(index) + " failed " +
                 std::to_string(failures) + " times; last: " + why);
      return;
    }
  }
  if (!backed_up) scheduler_->OnTaskFailed(state_, job.sid, index, is_map, Now());
}

void JobTracker::MaybeFinish(ActiveJob& job) {
  const sched::Job& sj = state_.job(job.sid);
  if (sj.finished_maps < static_cast<int>(sj.maps.size()) ||
      sj.finished_reduces < static_cast<int>(sj.reduces.size())) {
    return;
  }
  // Job commit: one rename makes the whole output visible.
  Status s = dfs_.ns->Rename(TempDir(job.record.id()), job.record.spec().output());
  if (!s.ok()) {
    EndJob(job, "failed", "cannot commit the output: " + s.ToString());
    return;
  }
  EndJob(job, "succeeded", "");
}

// ---------------------------------------------------------------- reducers

Status JobTracker::MapOutputs(const pb::MapOutputsRequest& req, pb::MapOutputsReply* reply) const {
  ActiveJob* job = Find(req.job_id());
  if (job == nullptr) {
    reply->set_job_over(true);
    return Status::OK();
  }
  const sched::Job& sj = state_.job(job->sid);
  reply->set_maps(static_cast<int32_t>(sj.maps.size()));
  for (const sched::MapTask& m : sj.maps) {
    if (m.state != sched::TaskState::kDone || m.node == sched::kNoNode) continue;
    const pb::WorkerInfo& info = node_info_[static_cast<size_t>(m.node)];
    pb::MapOutputLocation* loc = reply->add_outputs();
    loc->set_map_index(m.index);
    loc->set_attempt(m.run.number);
    loc->set_worker_id(info.id());
    loc->set_address(info.address());
    loc->set_datacenter(info.datacenter());
  }
  return Status::OK();
}

Status JobTracker::FetchFailed(const pb::FetchFailedRequest& req) {
  ActiveJob* job = Find(req.job_id());
  if (job == nullptr) return Status::OK();
  const sched::Job& sj = state_.job(job->sid);
  if (req.map_index() < 0 || static_cast<size_t>(req.map_index()) >= sj.maps.size()) {
    return Status::InvalidArgument("no map " + std::to_string(req.map_index()));
  }
  const sched::MapTask& m = sj.maps[static_cast<size_t>(req.map_index())];
  if (m.state != sched::TaskState::kDone || m.run.number != req.attempt()) return Status::OK();
  int& reports = job->maps[static_cast<size_t>(req.map_index())].fetch_failures;
  ++reports;
  const bool lost = !state_.node(m.node).live;
  spdlog::warn("job {}: reduce {} cannot fetch map {} from {} ({} report(s)): {}", req.job_id(),
               req.reduce_index(), req.map_index(), node_names_[static_cast<size_t>(m.node)],
               reports, req.reason());
  if (lost || reports >= config_.jobs.fetch_failures_to_rerun) {
    reports = 0;
    state_.RedoMap(job->sid, req.map_index());
    scheduler_->OnTaskFailed(state_, job->sid, req.map_index(), true, Now());
  }
  return Status::OK();
}

}  // namespace mr::master
