// JobFiles: the files shipped with a streaming job (jobs/streaming.h), on
// this worker. The first task of a job to need them fetches every file from
// the job's DFS directory (its `files_dir` parameter, under /.mr/jobs/<id>/)
// into <job dir>/files, checks each SHA-256 against the `files` parameter,
// sets the executable bits and only then publishes the directory; other
// tasks of the job wait for it and reuse it. A failed fetch (a digest that
// does not match, an unreadable file) fails the attempt that tried and
// leaves nothing behind; the next attempt tries again. TaskTracker removes
// the directory with the job's other files when the job is over, and
// calls Forget().
//
// Thread-safe: task threads call Ensure concurrently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "jobs/job.h"

namespace mr::worker {

class JobFiles {
 public:
  // Copies DFS file `dfs_path` to local file `local` (created).
  using GetFn = std::function<Status(const std::string& dfs_path, const std::string& local)>;

  // The local directory holding job `job`'s shipped files, fetched with
  // `get` into `job_dir`/files unless an earlier task did. "" when the job
  // ships none. Errors: InvalidArgument for bad `files`/`files_dir`
  // parameters, Corruption for a digest mismatch, or `get`'s error.
  Result<std::string> Ensure(int64_t job, const std::string& job_dir, const jobs::Params& params,
                             const GetFn& get);
  // Forgets job `job` (its directory is being removed).
  void Forget(int64_t job);

 private:
  struct Entry {
    std::mutex mu;      // held while fetching: the job's other tasks wait
    std::string dir;    // set once fetched and checked
  };
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<Entry>> jobs_;
};

}  // namespace mr::worker
