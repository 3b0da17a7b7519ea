// JobHistory: the master's durable record of jobs and the JoSS
// filtering-percentage table, in its own RocksDB (<master.data_dir>/history).
//
// Keys (docs/storage-format.md):
//   "job/" + 16 hex digits of the id  → pb::JobRecord (tasks included)
//   "fp/" + code_hash + "/" + input_type → pb::FpRow
//   "next_job_id"                      → decimal text
// Every write is synced: a job's record survives a crash of the master as
// soon as the call returns.
//
// Not thread-safe: the master calls it from its one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/job_figures.h"
#include "proto/job.pb.h"

namespace rocksdb {
class DB;
}

namespace mr::master {

class JobHistory {
 public:
  static Result<std::unique_ptr<JobHistory>> Open(const std::string& dir);
  ~JobHistory();

  // A job id never handed out before.
  Result<int64_t> NextJobId();

  Status Put(const pb::JobRecord& record);
  Result<pb::JobRecord> Get(int64_t id) const;
  // Every job, oldest first.
  std::vector<pb::JobRecord> List() const;

  // The FP row of (code_hash, input_type), if any job of it finished.
  std::optional<pb::FpRow> Fp(const std::string& code_hash, const std::string& input_type) const;
  // Folds one finished job into its row's running averages (JoSS Fig. 4).
  Status AddFp(const std::string& job, const std::string& code_hash,
               const std::string& input_type, double fp_raw, double fp_wire);
  std::vector<pb::FpRow> FpTable() const;

 private:
  JobHistory() = default;
  Status Write(const std::string& key, const std::string& value);

  std::unique_ptr<rocksdb::DB> db_;
  int64_t next_id_ = 1;
};


}  // namespace mr::master
