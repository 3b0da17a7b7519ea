// JobHistory: the master's durable record of jobs and the JoSS
// filtering-percentage table, in its own RocksDB (<master.data_dir>/history).
//
// Keys (docs/storage-format.md):
//   "job/" + 16 hex digits of the id  → pb::JobRecord (tasks included)
//   "fp/" + code_hash + "/" + input_type → pb::FpRow
//   "brief/" + 16 hex digits of the id → pb::JobRecord as `job list` shows a
//     finished job (ListEntry, job_summary.h), written with its final record
//   "briefs"                           → "1" once every finished job has its
//     brief (Open writes the missing ones of an older history first)
//   "next_job_id"                      → decimal text
//   "scheduler"                        → pb::SchedulerChoice: the last
//     `mrctl scheduler set` (scheduler_switch.cc)
//   "task/" + 16 hex of the job id + "/m/" (or "/r/") + 8 hex of the index
//                                      → pb::MapTaskRecord (ReduceTaskRecord)
//     a running job's finished tasks, for restart recovery; folded into the
//     job's record and deleted, in one batch, when the job ends
//   "task/" + 16 hex of the job id + "/p/" + 8 hex of its position
//                                      → pb::AttemptPlace: where a running
//     job's attempts ran (record.attempt_places()), kept and folded the same way
// Every write but an unsynced PutProgress is synced: a job's record
// survives a crash of the master as soon as the call returns.
//
// Not thread-safe: the master calls it from its one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/job_figures.h"
#include "proto/job.pb.h"

namespace rocksdb {
class DB;
class WriteBatch;
}

namespace mr::master {

class JobHistory {
 public:
  static Result<std::unique_ptr<JobHistory>> Open(const std::string& dir);
  ~JobHistory();

  // A job id never handed out before.
  Result<int64_t> NextJobId();

  // Writes the record. Once it is no longer "running", its task keys are
  // deleted in the same batch (the record carries the tasks from then on).
  Status Put(const pb::JobRecord& record);
  // The attempt places of a job from position `from` on: those launched
  // since its last PutProgress.
  struct NewPlaces {
    const google::protobuf::RepeatedPtrField<pb::AttemptPlace>* places = nullptr;
    int from = 0;
  };
  // A running job's progress, called by the JobTracker when it accepts a
  // task's success: the job's header (its record without task records and
  // attempt places), the one task's record and the places launched since
  // the last call, in one batch: O(1 + new places), whatever the job's
  // size. `map` or `reduce` is null. Without `sync` the batch survives a
  // crash of the process but maybe not of the machine (the JobTracker uses
  // that for maps whose output stays on a worker).
  Status PutProgress(const pb::JobRecord& header, const pb::MapTaskRecord* map,
                     const pb::ReduceTaskRecord* reduce, NewPlaces places, bool sync);
  // Adds the task records and attempt places PutProgress wrote for
  // `record`'s job to it, after those the record itself carries (the
  // JobTracker's restart recovery calls it for every job still running).
  void LoadTasks(pb::JobRecord* record) const;
  Result<pb::JobRecord> Get(int64_t id) const;
  // Every job, oldest first.
  std::vector<pb::JobRecord> List() const;
  // Every finished job as `job list` shows it (ListEntry), oldest first:
  // small records, whatever the jobs' sizes.
  std::vector<pb::JobRecord> Briefs() const;

  // The FP row of (code_hash, input_type), if any job of it finished.
  std::optional<pb::FpRow> Fp(const std::string& code_hash, const std::string& input_type) const;
  // Folds one finished job into its row's running averages (JoSS Fig. 4).
  Status AddFp(const std::string& job, const std::string& code_hash,
               const std::string& input_type, double fp_raw, double fp_wire);
  std::vector<pb::FpRow> FpTable() const;

  // The policy chosen by the last `mrctl scheduler set`, if any (the
  // JobTracker reads it at start and writes it on every set).
  std::optional<pb::SchedulerChoice> Scheduler() const;
  Status PutScheduler(const pb::SchedulerChoice& choice);

 private:
  JobHistory() = default;
  Status Write(const std::string& key, const std::string& value);
  Status Commit(rocksdb::WriteBatch& batch, bool sync = true);
  // Open: the briefs of an older history's finished jobs.
  Status WriteMissingBriefs();

  std::unique_ptr<rocksdb::DB> db_;
  int64_t next_id_ = 1;
};


}  // namespace mr::master
