// Task logs: what one task attempt said, kept on the worker that ran it
// (docs/logs-and-counters.md, "Task logs").
//
// An attempt's log holds, in the order they came:
//   - the framework's lines for the attempt, "[mr 12:00:01.234] map 3
//     attempt 1: reading /in/x ...", written by the task thread;
//   - the user code's diagnostics: a streaming command's stderr (its stdout
//     is its output records), a plug-in task process's stdout and stderr.
//
// A log is bounded ([task_logs] limit_kb, as Hadoop's
// mapreduce.task.userlog.limit.kb): its first half is written to the file
// as it comes, the last half is kept in memory while the attempt runs, and
// at Close() one line saying how many bytes were left out goes between
// them. Readers address a log by *stream offset* (bytes the attempt wrote,
// counting the ones left out), so `mrctl job logs --follow` can ask for
// "everything after byte N" while the attempt runs and after it ended.
//
// On disk (TaskLogDir): <data_dir>/task-logs/job-<id>/m-3-1.log is map 3
// attempt 1's text, m-3-1.meta one line "head_bytes total_bytes state".
// TaskLogDir::Sweep removes whole jobs' directories past [task_logs]
// keep_hours or keep_jobs.
//
// Thread-safe: a TaskLog is appended to by the task thread (and a plug-in
// child's output drainer) while the worker's RPC threads read it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "worker/background_remover.h"

namespace mr::worker {

// One read of a log from a stream offset.
struct LogSlice {
  std::string data;         // text; may contain the "bytes left out" line
  int64_t next_offset = 0;  // stream offset after `data`
  int64_t total_bytes = 0;  // bytes the attempt wrote so far
  int64_t omitted_bytes = 0;  // of them, left out (0 while under the cap)
  bool done = false;        // the attempt ended: nothing more will come
  bool more = false;        // bytes past next_offset are there now (max_bytes cut)
};

// The line that stands for `omitted` bytes left out of a log.
std::string OmittedLine(int64_t omitted, int64_t limit_bytes);

class TaskLog {
 public:
  // Creates `path` (its directory must exist); "" keeps the log in memory
  // only (the worker could not create its file). `limit_bytes` >= 2.
  static Result<std::shared_ptr<TaskLog>> Create(const std::string& path, int64_t limit_bytes);
  ~TaskLog();

  // Appends bytes of user output as they are.
  void Append(std::string_view bytes);
  // Appends one framework line, "[mr HH:MM:SS.mmm] " + text + "\n".
  void Line(std::string_view text);
  // Writes the kept tail and the .meta file; `state`: succeeded | failed |
  // killed. Later appends are dropped. Idempotent.
  void Close(const std::string& state);

  // Up to `max_bytes` (> 0) of the log from stream offset `from`.
  LogSlice Read(int64_t from, int64_t max_bytes) const;

 private:
  TaskLog(std::string path, int fd, int64_t limit_bytes);
  void AppendLocked(std::string_view bytes);

  const std::string path_;
  const int64_t head_limit_, tail_limit_;
  mutable std::mutex mu_;
  int fd_;              // the .log file while open; -1 after Close
  std::string head_;    // the first head_limit_ bytes (also in the file)
  std::string tail_;    // bytes after the head; only the last tail_limit_ count
  int64_t total_ = 0;
  bool done_ = false;
};

// The task-logs directory of one worker.
class TaskLogDir {
 public:
  // `root`: <data_dir>/task-logs (created on first use).
  TaskLogDir(std::string root, int64_t limit_bytes) : root_(std::move(root)), limit_(limit_bytes) {}

  // "m-3-1": the base name of an attempt's files.
  static std::string AttemptName(bool is_map, int32_t index, int32_t attempt);
  // A new log for an attempt (its job directory created).
  Result<std::shared_ptr<TaskLog>> Create(int64_t job, bool is_map, int32_t index, int32_t attempt) const;
  // Reads a closed log (or one its worker stopped before closing: then
  // done, with the head written so far). NotFound when there is none.
  Result<LogSlice> Read(int64_t job, bool is_map, int32_t index, int32_t attempt, int64_t from,
                        int64_t max_bytes) const;
  // Removes the directories of jobs not in `running` whose logs are older
  // than `keep_ms` (by the directory's modification time, i.e. the last
  // attempt written) or beyond the `keep_jobs` newest. Returns how many
  // jobs' logs went. With a `remover`, they go on its thread (they are
  // out of sight when Sweep returns).
  int Sweep(int64_t keep_ms, int keep_jobs, const std::set<int64_t>& running,
            BackgroundRemover* remover = nullptr) const;

  const std::string& root() const { return root_; }

 private:
  std::string JobDir(int64_t job) const { return root_ + "/job-" + std::to_string(job); }
  const std::string root_;
  const int64_t limit_;
};

}  // namespace mr::worker
