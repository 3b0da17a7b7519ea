// JobTracker: submitting, ending and describing jobs — everything that
// reads or writes a job's record (what `mrctl job show` prints and history
// keeps).
#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "jobs/codec.h"
#include "jobs/job.h"
#include "jobs/streaming.h"
#include "common/job_name.h"
#include "common/job_counters.h"
#include "master/job_tracker.h"
#include "master/job_summary.h"
#include "master/job_tracker_internal.h"

namespace mr::master {
namespace {

const char* LocalityKey(sched::Locality l) {
  switch (l) {
    case sched::Locality::kNode:
      return "node";
    case sched::Locality::kRack:
      return "rack";
    case sched::Locality::kDatacenter:
      return "datacenter";
    case sched::Locality::kOffDatacenter:
      return "off_datacenter";
  }
  return "unknown";
}

// The record of a task at `*position` in `records`, cleared, or a new one
// appended (its position kept in `*position`); the bytes of a cleared one
// are added to `retried`'s. O(1): a scan of the records for the index made
// accepting R reduces O(R²) (issue 28 item 9).
template <typename Records>
auto* TaskRecordAt(Records* records, int* position, pb::JobRecord* retried) {
  if (*position >= 0 && *position < records->size()) {
    auto* t = records->Mutable(*position);
    AddRetried(retried, *t);
    t->Clear();
    return t;
  }
  *position = records->size();
  return records->Add();
}

}  // namespace

// ---------------------------------------------------------------- submit

Status JobTracker::Submit(const pb::JobSpec& request, pb::SubmitJobReply* reply) {
  // A retry of a submission that reached us (the client lost the reply, or
  // we restarted after writing the record): the same job, not a second one.
  if (auto seen = submit_tokens_.find(request.submit_token());
      !request.submit_token().empty() && seen != submit_tokens_.end()) {
    spdlog::info("job {} submitted again (the same submit token): not started twice", seen->second);
    reply->set_job_id(seen->second);
    return Status::OK();
  }
  const jobs::JobInfo* info = jobs::FindJob(request.job());
  if (info == nullptr) {
    std::string names;
    for (const jobs::JobInfo* j : jobs::RegisteredJobs()) names += (names.empty() ? "" : ", ") + j->name;
    return Status::InvalidArgument("unknown job '" + request.job() + "' (jobs: " + names + ")");
  }
  jobs::Params params(request.params().begin(), request.params().end());
  MR_ASSIGN_OR_RETURN(params, jobs::ResolveParams(*info, params));
  // A plug-in's code is never loaded here (it runs in a worker's mr-task).
  if (!info->runs_user_code) MR_RETURN_IF_ERROR(jobs::MakeJob(info->name, params).status());
  if (request.reducers() < 0) {
    return Status::InvalidArgument("reducers must be at least 0, not " + std::to_string(request.reducers()));
  }
  if (request.reducers() > config_.jobs.max_reduces) {
    return Status::InvalidArgument(std::to_string(request.reducers()) + " reducers is more than this "
                                   "cluster allows: at most " + std::to_string(config_.jobs.max_reduces) +
                                   " ([jobs] max_reduces)");
  }
  if (request.output_replication() < 0) {
    return Status::InvalidArgument("output replication must be at least 1 (0 = the cluster's default), not " +
                                   std::to_string(request.output_replication()));
  }
  // Asked for (by the job or [jobs]): checked as `dfs put -r N` is, now
  // rather than at the reduces' end. The DFS's default is never refused.
  const int32_t output_replication = OutputReplicationAsked(request);
  if (output_replication > 0 && dfs_.check_replication) {
    if (Status s = dfs_.check_replication(output_replication); !s.ok()) {
      return Status::InvalidArgument("output " + s.message());
    }
  }
  if (request.inputs().empty()) return Status::InvalidArgument("no input");
  MR_ASSIGN_OR_RETURN(std::string output, dfs::NormalizePath(request.output()));
  if (output == "/" || output.starts_with("/.mr")) {
    return Status::InvalidArgument("cannot write output to '" + output + "'");
  }
  if (dfs_.ns->Lookup(output).ok()) return Status::AlreadyExists("output '" + output + "' already exists");
  for (const auto& [id, job] : active_) {
    if (job->record.spec().output() == output) {
      return Status::AlreadyExists("job " + std::to_string(id) + " is writing '" + output + "'");
    }
  }

  // Input files: a directory stands for the files in it (not its
  // subdirectories), skipping names starting with '_' or '.' as Hadoop does.
  std::vector<std::pair<std::string, pb::INode>> files;
  for (const std::string& raw : request.inputs()) {
    MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(raw));
    auto inode = dfs_.ns->Lookup(path);
    if (!inode.ok()) return Status::NotFound("input '" + path + "' does not exist");
    if (inode->kind() == pb::INode::FILE) {
      files.emplace_back(path, *inode);
      continue;
    }
    MR_ASSIGN_OR_RETURN(auto entries, dfs_.ns->List(path));
    const size_t before = files.size();
    for (auto& [name, child] : entries) {
      if (child.kind() != pb::INode::FILE || name.starts_with("_") || name.starts_with(".")) continue;
      files.emplace_back((path == "/" ? "" : path) + "/" + name, std::move(child));
    }
    // An input with nothing to read is a mistake: the job would "succeed"
    // with 0 maps (Hadoop likewise refuses a pattern that matches no file).
    if (files.size() == before) {
      return Status::InvalidArgument("input '" + path +
                                     "' contains no files (subdirectories and names "
                                     "starting with '_' or '.' are not read)");
    }
  }

  MR_RETURN_IF_ERROR(jobs::ParseOutputCompression(request.output_compression()).status());
  for (const auto& [path, file] : files) {
    if (jobs::CodecOfPath(path) != jobs::Codec::kNone) reply->add_unsplit_inputs(path);
  }

  MR_ASSIGN_OR_RETURN(const int64_t id, history_->NextJobId());
  auto job = std::make_unique<ActiveJob>();
  sched::Job sj;
  sj.name = info->name;
  sj.code_hash = jobs::CodeHashOf(*info, params);
  sj.pool = request.pool().empty() ? "default" : request.pool();
  sj.user = request.user();
  sj.priority = request.priority();
  sj.submit_ms = Now();
  sj.slowstart = config_.jobs.slowstart;
  std::map<std::string, int64_t> bytes_by_type;
  for (const auto& [path, file] : files) {
    bytes_by_type[file.input_type()] += file.length();
    AddSplits(path, file, sj, *job);
  }
  // The job's input type: the type most of its bytes have.
  sj.input_type = "text";
  int64_t most = -1;
  for (const auto& [type, bytes] : bytes_by_type) {
    if (bytes > most) sj.input_type = type, most = bytes;
  }
  const auto fp = history_->Fp(sj.code_hash, sj.input_type);
  sj.known_fp = fp ? fp->fp_raw() : std::numeric_limits<double>::quiet_NaN();
  for (int32_t i = 0; i < request.reducers(); ++i) {
    sj.reduces.emplace_back();
    sj.reduces.back().index = i;
  }
  job->reduces.resize(static_cast<size_t>(request.reducers()));
  MR_RETURN_IF_ERROR(dfs_.ns->Mkdir(TempDir(id), /*parents=*/true, clock_->WallMs()));
  if (Status s = AdoptShippedFiles(id, &params); !s.ok()) {
    dfs_.remove("/.mr/jobs/" + std::to_string(id), true);
    return s;
  }

  pb::JobRecord& r = job->record;
  r.set_id(id);
  *r.mutable_spec() = request;
  r.mutable_spec()->set_output(output);
  r.mutable_spec()->set_pool(sj.pool);
  r.mutable_spec()->mutable_params()->clear();
  for (const auto& [k, v] : params) (*r.mutable_spec()->mutable_params())[k] = v;
  r.set_state("running");
  r.set_scheduler(scheduler_->name());
  r.set_speculator(speculator_->name());
  for (const auto& [k, v] : scheduler_params_) (*r.mutable_scheduler_params())[k] = v;
  r.set_scheduler_seed(static_cast<uint64_t>(config_.scheduler.seed));
  r.set_code_hash(sj.code_hash);
  r.set_input_type(sj.input_type);
  r.set_input_bytes(sj.input_bytes);
  r.set_submit_ms(clock_->WallMs());
  r.set_maps_total(static_cast<int32_t>(sj.maps.size()));
  r.set_reduces_total(request.reducers());
  r.set_output_replication(output_replication > 0 ? output_replication : config_.dfs.replication);
  r.set_known_fp(sj.has_fp() ? sj.known_fp : -1);
  MR_RETURN_IF_ERROR(history_->Put(r));
  if (!request.submit_token().empty()) submit_tokens_[request.submit_token()] = id;

  for (const sched::MapTask& m : sj.maps) ++active_blocks_[m.block];
  job->sid = state_.AddJob(std::move(sj));
  if (job_ids_.size() <= static_cast<size_t>(job->sid)) job_ids_.resize(static_cast<size_t>(job->sid) + 1);
  job_ids_[static_cast<size_t>(job->sid)] = id;
  const sched::JobId sid = job->sid;
  spdlog::info("job {} submitted: {} over {} file(s), {} maps, {} reduces, input type {}, known FP {}",
               id, info->name, files.size(), r.maps_total(), r.reduces_total(), r.input_type(),
               r.known_fp());
  active_[id] = std::move(job);
  scheduler_->OnJobAdded(state_, sid, Now());
  reply->set_job_id(id);
  return Status::OK();
}

// A streaming job's files, which mrctl put under /.mr/staging/<token>/,
// move into the job's directory (/.mr/jobs/<id>/files), so they go when the
// job ends; `files_dir` then names that directory. Every name the `files`
// parameter lists must be there (workers check the digests).
Status JobTracker::AdoptShippedFiles(int64_t id, jobs::Params* params) {
  auto it = params->find("files_dir");
  auto files = params->find("files");
  const bool has_files = files != params->end() && !files->second.empty();
  if (it == params->end() || it->second.empty()) {
    if (has_files) return Status::InvalidArgument("parameter 'files' without 'files_dir'");
    return Status::OK();
  }
  MR_ASSIGN_OR_RETURN(std::string staged, dfs::NormalizePath(it->second));
  if (!staged.starts_with("/.mr/staging/")) {
    return Status::InvalidArgument("parameter 'files_dir' must be under /.mr/staging/ (mrctl job run "
                                   "--file puts the files there), not '" + staged + "'");
  }
  MR_ASSIGN_OR_RETURN(auto shipped, jobs::ParseShippedFiles(has_files ? files->second : ""));
  for (const jobs::ShippedFile& f : shipped) {
    if (!dfs_.ns->Lookup(staged + "/" + f.name).ok()) {
      return Status::NotFound("shipped file '" + staged + "/" + f.name + "' does not exist");
    }
  }
  const std::string dir = "/.mr/jobs/" + std::to_string(id) + "/files";
  MR_RETURN_IF_ERROR(dfs_.ns->Rename(staged, dir).WithContext("moving the shipped files"));
  it->second = dir;
  return Status::OK();
}

// ---------------------------------------------------------------- the end

void JobTracker::EndJob(ActiveJob& job, const std::string& end_state, const std::string& error) {
  const int64_t id = job.record.id();
  const sched::JobId sid = job.sid;
  // Tell workers to stop what still runs, and everyone to drop map outputs.
  for (const auto& [node, a] : RunningAttempts(state_, sid)) {
    KeepEndedAttempt(job, a.is_map, a.index, node, AttemptEnd::kKilled,
                     "the job " + (end_state == "killed" ? "was " + error : end_state));
    pb::TaskRef ref;
    ref.set_job_id(id);
    ref.set_is_map(a.is_map);
    ref.set_index(a.index);
    ref.set_attempt(a.attempt);
    kills_[node_names_[static_cast<size_t>(node)]].push_back(ref);
  }
  for (const std::string& w : node_names_) finished_[w].push_back(id);
  pb::JobRecord record = Snapshot(job);
  record.set_state(end_state);
  record.set_error(error);
  record.set_maps_running(0);
  record.set_reduces_running(0);
  record.clear_running_attempts();
  record.set_end_ms(clock_->WallMs());
  // The temporary directory holds nothing a user wants once the job ended
  // (on success its output was renamed away).
  dfs_.remove("/.mr/jobs/" + std::to_string(id), true);
  const JobFigures f = Figures(record);
  if (end_state == "succeeded" && record.input_bytes() > 0) {
    if (Status s = history_->AddFp(ShownJobName(record.spec()), record.code_hash(), record.input_type(),
                                   f.fp_raw, f.fp_wire);
        !s.ok()) {
      spdlog::error("job {}: cannot update the FP table: {}", id, s.ToString());
    }
  }
  if (Status s = history_->Put(record); !s.ok()) spdlog::error("job {}: {}", id, s.ToString());
  if (metrics_) metrics_->JobCounters(record);
  if (metrics_) metrics_->JobEnded(end_state);
  for (const sched::MapTask& m : state_.job(sid).maps) {
    auto it = active_blocks_.find(m.block);
    if (it != active_blocks_.end() && --it->second == 0) active_blocks_.erase(it);
  }
  state_.FinishJob(sid);
  active_.erase(id);  // `job` is gone from here on
  scheduler_->OnJobFinished(state_, sid, Now());
  spdlog::info("job {} {} in {} ms{}{}: {} maps ({} node-local, {} off-datacenter), INT {} bytes, FP {:.3f}",
               id, end_state, f.jtt_ms, error.empty() ? "" : ": ", error, record.maps_total(),
               record.maps_node_local(), record.maps_off_dc(), f.inter_dc_bytes, f.fp_raw);
}

void JobTracker::EndUnrecovered(pb::JobRecord record, const std::string& end_state,
                                const std::string& error) {
  const int64_t id = record.id();
  for (const std::string& w : node_names_) finished_[w].push_back(id);
  dfs_.remove("/.mr/jobs/" + std::to_string(id), true);
  record.set_state(end_state);
  record.set_error(error);
  record.set_maps_done(record.maps_size());
  record.set_reduces_done(record.reduces_size());
  record.set_maps_running(0);
  record.set_reduces_running(0);
  record.clear_running_attempts();
  record.set_end_ms(clock_->WallMs());
  Summarize(&record);
  if (metrics_) metrics_->JobEnded(end_state);
  if (Status s = history_->Put(record); !s.ok()) spdlog::error("job {}: {}", id, s.ToString());
  if (metrics_) metrics_->JobCounters(record);
  spdlog::warn("job {} {}: {}", id, end_state, error);
}

Status JobTracker::Kill(int64_t id) {
  if (ActiveJob* job = Find(id)) {
    EndJob(*job, "killed", "killed by request");
    return Status::OK();
  }
  for (auto it = recovering_.begin(); it != recovering_.end(); ++it) {
    if (it->id() != id) continue;
    pb::JobRecord record = std::move(*it);
    recovering_.erase(it);
    EndUnrecovered(std::move(record), "killed", "killed by request");
    return Status::OK();
  }
  MR_ASSIGN_OR_RETURN(pb::JobRecord r, history_->Get(id));
  return Status::FailedPrecondition("job " + std::to_string(id) + " already " + r.state());
}

// ---------------------------------------------------------------- records

pb::MapTaskRecord JobTracker::MakeMapRecord(const ActiveJob& job, const pb::TaskReport& r,
                                            sched::NodeId node) const {
  const sched::MapTask& m = state_.job(job.sid).maps[static_cast<size_t>(r.index())];
  const ActiveJob::MapExtra& extra = job.maps[static_cast<size_t>(r.index())];
  pb::MapTaskRecord record;
  pb::MapTaskRecord* t = &record;
  t->set_index(r.index());
  t->set_node(node_names_[static_cast<size_t>(node)]);
  t->set_locality(LocalityKey(node == m.backup_node ? extra.backup_locality : extra.locality));
  t->set_attempt(r.attempt());
  t->set_speculative(node == m.backup_node);
  t->set_input_bytes(r.bytes_read());
  *t->mutable_input() = r.input();
  t->set_raw_output_bytes(r.raw_output_bytes());
  int64_t out = 0;
  for (int64_t b : r.partition_bytes()) out += b;
  t->set_output_bytes(job.record.spec().reducers() == 0 ? r.output_bytes() : out);
  t->set_run_ms(r.run_ms());
  t->set_attempts(m.attempts);
  t->set_block_id(m.block);
  t->set_start_ms(r.start_wall_ms());
  t->set_end_ms(r.end_wall_ms());
  *t->mutable_phase_ms() = r.phase_ms();
  *t->mutable_counters() = TaskCounters(r, job.record.spec().reducers() == 0);
  t->set_status(r.status());
  return record;
}

pb::ReduceTaskRecord JobTracker::MakeReduceRecord(const ActiveJob& job, const pb::TaskReport& r,
                                                  sched::NodeId node) const {
  const sched::ReduceTask& rt = state_.job(job.sid).reduces[static_cast<size_t>(r.index())];
  pb::ReduceTaskRecord record;
  pb::ReduceTaskRecord* t = &record;
  t->set_index(r.index());
  t->set_node(node_names_[static_cast<size_t>(node)]);
  t->set_attempt(r.attempt());
  t->set_speculative(node == rt.backup_node);
  *t->mutable_shuffle() = r.shuffle();
  *t->mutable_output() = r.output();
  t->set_output_bytes(r.output_bytes());
  t->set_run_ms(r.run_ms());
  t->set_attempts(rt.attempts);
  t->set_start_ms(r.start_wall_ms());
  t->set_end_ms(r.end_wall_ms());
  *t->mutable_phase_ms() = r.phase_ms();
  *t->mutable_counters() = TaskCounters(r, false);
  t->set_status(r.status());
  return record;
}

// A task's earlier run, which this record replaces (a map that ran again
// after its output was lost), moved bytes too: they join the retried ones.
void JobTracker::KeepRecord(ActiveJob& job, const pb::MapTaskRecord& task) {
  int* position = &job.maps[static_cast<size_t>(task.index())].record;
  pb::MapTaskRecord* at = TaskRecordAt(job.record.mutable_maps(), position, &job.record);
  *at = task;
}

void JobTracker::KeepRecord(ActiveJob& job, const pb::ReduceTaskRecord& task) {
  int* position = &job.reduces[static_cast<size_t>(task.index())].record;
  pb::ReduceTaskRecord* at = TaskRecordAt(job.record.mutable_reduces(), position, &job.record);
  *at = task;
}

// One map task per block of `file`, in block order, each with the workers
// that hold its block now. A compressed file (jobs/codec.h) cannot be read
// from the middle: it is one map over the whole file, placed by its first
// block.
void JobTracker::AddSplits(const std::string& path, const pb::INode& file, sched::Job& sj,
                           ActiveJob& job) const {
  if (jobs::CodecOfPath(path) != jobs::Codec::kNone && file.blocks_size() > 0) {
    sched::MapTask m;
    m.index = static_cast<int32_t>(sj.maps.size());
    m.block = file.blocks(0).id();
    m.bytes = file.length();
    for (const std::string& w : dfs_.replicas(m.block)) {
      if (sched::NodeId n = NodeOf(w); n != sched::kNoNode) m.replicas.push_back(n);
    }
    sj.maps.push_back(std::move(m));
    job.maps.push_back({{path, file.length(), 0}});
    sj.input_bytes += file.length();
    return;
  }
  int64_t offset = 0;
  for (const pb::BlockRef& b : file.blocks()) {
    sched::MapTask m;
    m.index = static_cast<int32_t>(sj.maps.size());
    m.block = b.id();
    m.bytes = b.bytes();
    for (const std::string& w : dfs_.replicas(b.id())) {
      if (sched::NodeId n = NodeOf(w); n != sched::kNoNode) m.replicas.push_back(n);
    }
    sj.maps.push_back(std::move(m));
    job.maps.push_back({{path, file.length(), offset}});
    offset += b.bytes();
    sj.input_bytes += b.bytes();
  }
}

// A failed write costs only exactness after a restart (the task would run
// again then), so the job goes on. A record that precedes a commit (a
// reduce, a map-only map) is synced; a map whose output stays on its worker
// is not (an fsync per map would slow the master's thread; the record
// survives a crash of the master's process, and if the machine loses it the
// map only runs again).
void JobTracker::Persist(ActiveJob& job, const pb::MapTaskRecord* map,
                         const pb::ReduceTaskRecord* reduce) {
  const bool sync = map == nullptr || job.record.spec().reducers() == 0;
  const JobHistory::NewPlaces places{&job.record.attempt_places(), job.places_kept};
  if (Status s = history_->PutProgress(Header(job), map, reduce, places, sync); !s.ok()) {
    spdlog::error("job {}: cannot record its progress: {}", job.record.id(), s.ToString());
    return;
  }
  job.places_kept = job.record.attempt_places_size();
}

// The record without its task records and attempt places, and so without
// the sums over them (Snapshot's): what PutProgress keeps beside them. O(1)
// in the job's tasks and attempts, where a Snapshot per accepted task made a
// job of R reduces O(R²) (issue 28 item 9), and a copy of the places did
// the same with its attempts (issue 29: 4,000 workers' profile). The lists
// step aside while the rest is copied.
pb::JobRecord JobTracker::Header(ActiveJob& job) const {
  google::protobuf::RepeatedPtrField<pb::MapTaskRecord> maps;
  google::protobuf::RepeatedPtrField<pb::ReduceTaskRecord> reduces;
  google::protobuf::RepeatedPtrField<pb::AttemptPlace> places;
  const auto swap_lists = [&] {
    maps.Swap(job.record.mutable_maps());
    reduces.Swap(job.record.mutable_reduces());
    places.Swap(job.record.mutable_attempt_places());
  };
  swap_lists();
  pb::JobRecord r = job.record;
  swap_lists();
  SetTaskCounts(job, &r);
  return r;
}

void JobTracker::SetTaskCounts(const ActiveJob& job, pb::JobRecord* r) const {
  const sched::Job& sj = state_.job(job.sid);
  r->set_maps_done(sj.finished_maps);
  r->set_reduces_done(sj.finished_reduces);
  r->set_maps_running(sj.running_maps);
  r->set_reduces_running(sj.running_reduces);
}

// The sums over the job's task records, the bytes its maps read so far and
// its running attempts, into `r` (a copy of its record, or its header).
void JobTracker::AddLiveFigures(const ActiveJob& job, pb::JobRecord* r) const {
  SetTaskCounts(job, r);
  Summarize(job.record, r);
  int64_t read = 0;
  for (const pb::MapTaskRecord& m : job.record.maps()) read += m.input_bytes();
  for (const sched::MapTask& m : state_.job(job.sid).maps) {
    if (m.state == sched::TaskState::kRunning) read += m.bytes_read;
  }
  r->set_bytes_read(read);
  r->clear_running_attempts();  // a recovered record's are its last run's
  AddRunningAttempts(job, r);
}

pb::JobRecord JobTracker::Snapshot(const ActiveJob& job) const {
  pb::JobRecord r = job.record;
  AddLiveFigures(job, &r);
  return r;
}

pb::JobRecord JobTracker::Summary(ActiveJob& job) const {
  pb::JobRecord r = Header(job);
  AddLiveFigures(job, &r);
  return r;
}

pb::TaskSpec JobTracker::MakeSpec(const ActiveJob& job, bool is_map, int32_t index,
                                  int32_t attempt) const {
  const pb::JobSpec& spec = job.record.spec();
  const sched::Job& sj = state_.job(job.sid);
  pb::TaskSpec t;
  t.set_job_id(job.record.id());
  t.set_is_map(is_map);
  t.set_index(index);
  t.set_attempt(attempt);
  t.set_job(spec.job());
  *t.mutable_params() = spec.params();
  t.set_reducers(spec.reducers());
  t.set_maps(static_cast<int32_t>(sj.maps.size()));
  if (is_map) {
    const auto& split = job.maps[static_cast<size_t>(index)].split;
    const sched::MapTask& m = sj.maps[static_cast<size_t>(index)];
    t.set_file(split.file);
    t.set_file_length(split.file_length);
    t.set_split_offset(split.offset);
    t.set_split_length(m.bytes);
    t.set_block_id(m.block);
  }
  t.set_output_dir("/.mr/jobs/" + std::to_string(job.record.id()) + "/attempts");
  t.set_output_replication(OutputReplicationAsked(job.record.spec()));
  t.set_output_compression(spec.output_compression());
  return t;
}

int32_t JobTracker::OutputReplicationAsked(const pb::JobSpec& spec) const {
  if (spec.output_replication() > 0) return spec.output_replication();
  return config_.jobs.output_replication;  // 0 unless the cluster file sets it
}

Status JobTracker::Show(int64_t id, bool summary, pb::JobRecord* record) const {
  if (ActiveJob* job = Find(id)) {
    *record = summary ? Summary(*job) : Snapshot(*job);
    return Status::OK();
  }
  MR_ASSIGN_OR_RETURN(*record, history_->Get(id));
  if (summary) ClearTaskRecords(record);
  return Status::OK();
}

// The finished jobs' entries come from the history's brief keys, written
// once at each job's end: a call no longer parses every task record of
// every job it lists (issue 29: 50 jobs of 2,000 maps each were 100,000
// task records per `job list` and per /jobs page, on the master's thread).
Status JobTracker::List(pb::JobListReply* reply) const {
  std::vector<pb::JobRecord> jobs = history_->Briefs();
  for (const auto& [id, job] : active_) jobs.push_back(Summary(*job));
  for (const pb::JobRecord& r : recovering_) jobs.push_back(ListEntry(r));
  std::sort(jobs.begin(), jobs.end(), [](const pb::JobRecord& a, const pb::JobRecord& b) { return a.id() < b.id(); });
  for (pb::JobRecord& r : jobs) {
    r.clear_running_attempts();
    r.clear_ended_attempts();
    r.clear_counters();
    *reply->add_jobs() = std::move(r);
  }
  return Status::OK();
}

Status JobTracker::History(pb::HistoryReply* reply) const {
  for (pb::FpRow& row : history_->FpTable()) *reply->add_rows() = std::move(row);
  return Status::OK();
}

}  // namespace mr::master
