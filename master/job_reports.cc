// JobTracker, the reporting side: what the workers' task reports say
// happened (progress, success, failure), task commit, a job's end, and the
// reducers' questions (where the map outputs are, a fetch that failed).
#include "master/job_tracker.h"

#include <spdlog/spdlog.h>

#include "master/job_tracker_internal.h"

namespace mr::master {

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
      // Bad compressed data is in the file itself: every attempt would
      // read the same bytes.
      if (r.is_map() && r.input_corrupt()) {
        spdlog::warn("job {} map {}: {}", r.job_id(), r.index(), r.error());
        AddRetried(&job->record, r);
        EndJob(*job, "failed", "map " + std::to_string(r.index()) + ": " + r.error());
        break;
      }
      AddRetried(&job->record, r);  // what the attempt moved before it ended
      TaskFailed(*job, r.is_map(), r.index(), node, r.error().empty() ? "killed" : r.error(),
                 r.state() == pb::TaskReport::KILLED ? AttemptEnd::kKilled : AttemptEnd::kFailed);
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
  if (map_only && !CommitOutput(job, r.output_file(), PartName("part-m-", r.index(), job.record.spec()))) {
    AddRetried(&job.record, r);
    TaskFailed(job, true, r.index(), node, "cannot commit its output", AttemptEnd::kFailed);
    return;
  }
  KeepRecord(job, record);
  if (metrics_) metrics_->AttemptEnded(true, "succeeded");
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
  if (!CommitOutput(job, r.output_file(), PartName("part-", r.index(), job.record.spec()))) {
    AddRetried(&job.record, r);
    TaskFailed(job, false, r.index(), node, "cannot commit its output", AttemptEnd::kFailed);
    return;
  }
  KeepRecord(job, record);
  if (metrics_) metrics_->AttemptEnded(false, "succeeded");
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
                            const std::string& why, AttemptEnd end) {
  const int64_t id = job.record.id();
  const bool counts = end != AttemptEnd::kLost;  // toward max_attempts
  KeepEndedAttempt(job, is_map, index, node, end, why);
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
