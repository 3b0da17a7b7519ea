// JobTracker: restart recovery, as Hadoop's JobTracker did with
// mapred.jobtracker.restart.recover.
//
// What survives a crash of the master (docs/jobs.md, "the master restarts"):
//   - the job's record in the history, written at submission and rewritten
//     (without its tasks) with every accepted task;
//   - a record per accepted task ("task/..." keys, JobHistory::PutProgress),
//     written before the task's output is committed;
//   - the job's temporary directory /.mr/jobs/<id>/out with the committed
//     parts (the namespace is durable);
//   - finished map outputs on the workers that lost only their master link:
//     they report them when they register again (held_map_outputs).
// Attempts that ran at the crash are gone: workers stop them when they
// register again, and they run again here.
//
// Recovery waits until every worker registered again, or for
// jobs.recovery_wait_ms, so that replicas and held outputs are known;
// nothing is launched meanwhile. Then each job is re-created under its id:
//   reduce i  done iff part-<i> is in the temporary directory (its record was
//             written before the rename);
//   map i     map-only: done iff part-m-<i> is there; otherwise done iff its
//             record names a worker that holds the output of that attempt,
//             or a worker holds the output of its latest attempt (a map that
//             finished while the master was down), or every reduce is done.
// Everything else is pending again; uncommitted attempt files are deleted.
// The policy, created empty, hears of the job as of a new one (OnJobAdded,
// with the done tasks already done), then one OnMapFinished or
// OnReduceFinished per done task.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "master/job_tracker.h"
#include "master/job_tracker_internal.h"

namespace mr::master {
namespace {

// The files a job reads, by the rule Submit applies: a directory stands for
// the files in it, skipping names starting with '_' or '.'.
Result<std::vector<std::pair<std::string, pb::INode>>> InputFiles(const dfs::Namespace& ns,
                                                                   const pb::JobSpec& spec) {
  std::vector<std::pair<std::string, pb::INode>> files;
  for (const std::string& raw : spec.inputs()) {
    MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(raw));
    auto inode = ns.Lookup(path);
    if (!inode.ok()) return Status::NotFound("input '" + path + "' does not exist");
    if (inode->kind() == pb::INode::FILE) {
      files.emplace_back(path, *inode);
      continue;
    }
    MR_ASSIGN_OR_RETURN(auto entries, ns.List(path));
    for (auto& [name, child] : entries) {
      if (child.kind() != pb::INode::FILE || name.starts_with("_") || name.starts_with(".")) continue;
      files.emplace_back((path == "/" ? "" : path) + "/" + name, std::move(child));
    }
  }
  return files;
}

}  // namespace

bool JobTracker::MaybeRecover() {
  if (recovering_.empty()) return false;
  bool all_live = true;
  for (const sched::Node& n : state_.nodes()) {
    all_live = all_live && (n.live || draining_.count(n.name) > 0);
  }
  if (!all_live && Now() < recover_at_) return true;
  std::vector<pb::JobRecord> jobs = std::move(recovering_);
  recovering_.clear();
  for (pb::JobRecord& r : jobs) Recover(std::move(r));
  held_.clear();
  return false;
}

void JobTracker::WorkerRegistered(const pb::RegisterRequest& req, pb::RegisterReply* reply) {
  const std::string& worker = req.worker().id();
  const sched::NodeId node = NodeOf(worker);
  if (node == sched::kNoNode) return;
  std::set<int64_t> over;
  std::vector<pb::TaskReport> held;
  int accepted = 0;
  for (const pb::TaskReport& r : req.held_map_outputs()) {
    if (ActiveJob* job = Find(r.job_id())) {
      accepted += AcceptHeldMap(*job, node, r, /*notify=*/true);
      continue;
    }
    const bool waiting = std::any_of(recovering_.begin(), recovering_.end(),
                                     [&](const pb::JobRecord& j) { return j.id() == r.job_id(); });
    if (waiting) {
      held.push_back(r);
    } else {
      over.insert(r.job_id());
    }
  }
  for (int64_t id : over) reply->add_finished_jobs(id);
  if (req.held_map_outputs_size() > 0) {
    spdlog::info("worker {} holds {} map output(s): {} taken back, {} kept for recovery, {} job(s) over",
                 worker, req.held_map_outputs_size(), accepted, held.size(), over.size());
  }
  if (!recovering_.empty()) held_[worker] = std::move(held);
  MaybeRecover();
}

bool JobTracker::AcceptHeldMap(ActiveJob& job, sched::NodeId node, const pb::TaskReport& r,
                               bool notify) {
  const sched::Job& sj = state_.job(job.sid);
  if (!r.is_map() || job.record.spec().reducers() == 0 || r.index() < 0 ||
      static_cast<size_t>(r.index()) >= sj.maps.size() || !state_.node(node).live) {
    return false;
  }
  const size_t i = static_cast<size_t>(r.index());
  // Its latest attempt, or the one accepted before the output was lost (a
  // backup launched after it has a higher number).
  const bool latest = r.attempt() + 1 >= sj.maps[i].attempts || r.attempt() == sj.maps[i].run.number;
  if (sj.maps[i].state != sched::TaskState::kPending || !latest) {
    return false;  // running or done elsewhere, or a later attempt exists
  }
  sched::Job& mj = state_.mutable_job(job.sid);
  sched::MapTask& m = mj.maps[i];
  m.state = sched::TaskState::kDone;
  m.node = node;
  m.attempts = std::max(m.attempts, r.attempt() + 1);
  m.run.number = r.attempt();
  m.bytes_read = r.bytes_read();
  m.partition_bytes.assign(r.partition_raw_bytes().begin(), r.partition_raw_bytes().end());
  ++mj.finished_maps;
  job.maps[i].output_lost = false;
  job.maps[i].fetch_failures = 0;
  // The record already kept for this very attempt (a worker that came back
  // after the master gave up on it) stands; else one is made, its locality
  // judged against the replicas known now.
  const std::string& name = node_names_[static_cast<size_t>(node)];
  const bool recorded = std::any_of(job.record.maps().begin(), job.record.maps().end(),
                                    [&](const pb::MapTaskRecord& t) {
                                      return t.index() == r.index() && t.node() == name &&
                                             AcceptedAttempt(t) == r.attempt();
                                    });
  if (!recorded) {
    job.maps[i].locality = state_.LocalityOf(node, m.replicas);
    const pb::MapTaskRecord record = MakeMapRecord(job, r, node);
    Persist(job, &record, nullptr);
    KeepRecord(job, record);
  }
  spdlog::info("job {} map {}: the output of attempt {} on {} is kept", job.record.id(), r.index(),
               r.attempt(), name);
  if (notify) {
    scheduler_->OnMapFinished(state_, job.sid, r.index(), Now());
    MaybeFinish(job);
  }
  return true;
}

void JobTracker::Recover(pb::JobRecord record) {
  const int64_t id = record.id();
  const pb::JobSpec& spec = record.spec();
  auto fail = [&](const std::string& why) {
    EndUnrecovered(record, "failed", "the master restarted and cannot resume the job: " + why);
  };
  auto files = InputFiles(*dfs_.ns, spec);
  if (!files.ok()) return fail(files.status().ToString());

  // The job as Submit made it: the same splits, the same reduces.
  auto job = std::make_unique<ActiveJob>();
  sched::Job sj;
  sj.name = spec.job();
  sj.code_hash = record.code_hash();
  sj.pool = spec.pool().empty() ? "default" : spec.pool();
  sj.user = spec.user();
  sj.priority = spec.priority();
  // Its age is kept, so it stays ahead of jobs submitted after it.
  sj.submit_ms = Now() - std::max<int64_t>(0, clock_->WallMs() - record.submit_ms());
  sj.slowstart = config_.jobs.slowstart;
  sj.input_type = record.input_type();
  sj.known_fp = record.known_fp() < 0 ? std::numeric_limits<double>::quiet_NaN() : record.known_fp();
  for (const auto& [path, file] : *files) {
    AddSplits(path, file, sj, *job);
  }
  std::map<int32_t, pb::MapTaskRecord> map_records;
  std::map<int32_t, pb::ReduceTaskRecord> reduce_records;
  for (const pb::MapTaskRecord& t : record.maps()) map_records[t.index()] = t;
  for (const pb::ReduceTaskRecord& t : record.reduces()) reduce_records[t.index()] = t;
  bool same = static_cast<int32_t>(sj.maps.size()) == record.maps_total() &&
              sj.input_bytes == record.input_bytes();
  for (const auto& [index, t] : map_records) {
    same = same && index >= 0 && static_cast<size_t>(index) < sj.maps.size() &&
           t.block_id() == sj.maps[static_cast<size_t>(index)].block;
  }
  if (!same) return fail("its input changed since it was submitted");
  const int32_t reducers = spec.reducers();
  for (int32_t i = 0; i < reducers; ++i) {
    sj.reduces.emplace_back();
    sj.reduces.back().index = i;
  }
  job->reduces.resize(static_cast<size_t>(reducers));

  // What was committed: the parts in the temporary directory, or all of it
  // when the master died between the job's commit and its record.
  std::set<std::string> parts;
  bool committed = false;
  if (auto list = dfs_.ns->List(TempDir(id)); list.ok()) {
    for (const auto& [name, inode] : *list) parts.insert(name);
  } else if (dfs_.ns->Lookup(spec.output()).ok()) {
    committed = true;
  } else {
    return fail("its temporary output " + TempDir(id) + " is gone");
  }
  // Attempt files not committed belong to attempts that are gone.
  dfs_.remove("/.mr/jobs/" + std::to_string(id) + "/attempts", true);

  job->record = std::move(record);
  job->record.clear_maps();
  job->record.clear_reduces();
  for (const sched::MapTask& m : sj.maps) ++active_blocks_[m.block];
  job->sid = state_.AddJob(std::move(sj));
  if (job_ids_.size() <= static_cast<size_t>(job->sid)) job_ids_.resize(static_cast<size_t>(job->sid) + 1);
  job_ids_[static_cast<size_t>(job->sid)] = id;
  ActiveJob& j = *job;
  active_[id] = std::move(job);

  // Done tasks, before the policy hears of the job.
  std::vector<int32_t> done_maps, done_reduces;
  for (int32_t i = 0; i < reducers; ++i) {
    if (!committed && !parts.count(PartName("part-", i, j.record.spec()))) continue;
    pb::ReduceTaskRecord t = reduce_records.count(i) ? reduce_records[i] : pb::ReduceTaskRecord();
    t.set_index(i);
    t.set_attempts(std::max(1, t.attempts()));
    sched::Job& s = state_.mutable_job(j.sid);
    sched::ReduceTask& rt = s.reduces[static_cast<size_t>(i)];
    rt.state = sched::TaskState::kDone;
    rt.node = NodeOf(t.node());
    rt.attempts = t.attempts();
    rt.run.number = AcceptedAttempt(t);
    ++s.finished_reduces;
    KeepRecord(j, t);
    done_reduces.push_back(i);
  }
  const bool maps_needed = !committed && reducers > 0 &&
                           state_.job(j.sid).finished_reduces < reducers;
  auto holds = [&](const std::string& worker, int32_t index, int32_t attempt) -> const pb::TaskReport* {
    auto it = held_.find(worker);
    if (it == held_.end()) return nullptr;
    for (const pb::TaskReport& r : it->second) {
      if (r.job_id() == id && r.index() == index && r.attempt() == attempt) return &r;
    }
    return nullptr;
  };
  for (int32_t i = 0; i < static_cast<int32_t>(j.maps.size()); ++i) {
    auto rec = map_records.find(i);
    const bool has_record = rec != map_records.end();
    const pb::TaskReport* held = nullptr;
    bool done;
    if (reducers == 0) {
      done = committed || parts.count(PartName("part-m-", i, j.record.spec())) > 0;
    } else if (!maps_needed) {
      done = true;
    } else {
      held = has_record ? holds(rec->second.node(), i, AcceptedAttempt(rec->second)) : nullptr;
      done = held != nullptr;
    }
    sched::Job& s = state_.mutable_job(j.sid);
    sched::MapTask& m = s.maps[static_cast<size_t>(i)];
    if (has_record) m.attempts = rec->second.attempts();
    if (!done) {
      // Its recorded run's output is gone: it runs again, and the bytes of
      // that run are retried ones.
      if (has_record) AddRetried(&j.record, rec->second);
      continue;
    }
    pb::MapTaskRecord t = has_record ? rec->second : pb::MapTaskRecord();
    t.set_index(i);
    t.set_attempts(std::max(1, t.attempts()));
    m.state = sched::TaskState::kDone;
    m.node = NodeOf(t.node());
    m.attempts = t.attempts();
    m.run.number = AcceptedAttempt(t);
    if (held != nullptr) {
      m.bytes_read = held->bytes_read();
      m.partition_bytes.assign(held->partition_raw_bytes().begin(), held->partition_raw_bytes().end());
    }
    ++s.finished_maps;
    KeepRecord(j, t);
    done_maps.push_back(i);
  }
  // Maps that finished while the master was down, or whose recorded output
  // is gone but a later attempt's is held.
  int kept_held = 0;
  if (maps_needed) {
    for (const auto& [worker, reports] : held_) {
      for (const pb::TaskReport& r : reports) {
        if (r.job_id() == id && AcceptHeldMap(j, NodeOf(worker), r, /*notify=*/false)) {
          done_maps.push_back(r.index());
          ++kept_held;
        }
      }
    }
  }

  scheduler_->OnJobAdded(state_, j.sid, Now());
  for (int32_t i : done_maps) scheduler_->OnMapFinished(state_, j.sid, i, Now());
  for (int32_t i : done_reduces) scheduler_->OnReduceFinished(state_, j.sid, i, Now());
  spdlog::info("job {} recovered after the master restarted: {} of {} maps ({} from held outputs "
               "without a record) and {} of {} reduces kept; the rest run again",
               id, done_maps.size(), j.maps.size(), kept_held, done_reduces.size(), reducers);
  if (committed) {
    EndJob(j, "succeeded", "");
  } else {
    MaybeFinish(j);
  }
}

}  // namespace mr::master
