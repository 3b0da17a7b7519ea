// Tasks of user-code jobs (plug-ins, jobs::JobInfo::runs_user_code) in a
// child process: the worker's task thread spawns `mr-task` (installed
// beside mr-worker; worker/task_child_main.cc) with posix_spawn, in a
// process group of its own, and talks to it over two pipes (the protocol
// is ChildTask/ChildMessage in proto/job.proto). The child runs the same
// task runner (worker/task_runner.h), loading the plug-in there: a map's
// split is read by the worker (DFS, local block store) and handed over on
// request; its map output stays in the task directory, where the worker
// serves it as usual; a reduce reads the segments the worker fetched and
// writes its output file, which the worker puts into the DFS.
//
// So a plug-in that segfaults, aborts, throws or loops fails one attempt
// with one line (the signal or exit status, and the tail of the child's
// output), and the worker keeps serving. The child's stdin is /dev/null;
// the protocol runs on its descriptors 3 (in) and 4 (out), so its stdout
// and stderr, whatever the plug-in prints, go into the attempt's log
// (ChildOptions::log; docs/logs-and-counters.md).
// Past `timeout_ms` or when `cancel` is set, the child's process group is
// killed.
//
// Thread-safe: each call has its own child.
#pragma once

#include <atomic>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "worker/task_runner.h"

namespace mr::worker {

struct ChildOptions {
  std::string exe;                 // the mr-task executable
  int64_t timeout_ms = 0;          // 0: none
  const std::atomic<bool>* cancel = nullptr;
  std::string cwd;                 // its working directory; "" = ours
  std::vector<std::string> env;    // NAME=VALUE added to its environment
  // Receives the child's stdout and stderr bytes (on a thread of the
  // child's own). Default: none.
  std::function<void(std::string_view)> log;
};

// The mr-task beside this process's executable.
std::string TaskChildPath();

// RunMapTask in a child. Errors as RunMapTask's, plus Aborted when the child
// dies, exits early, is killed at the time limit or cancelled.
Result<MapTaskResult> RunMapInChild(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read,
                                    const ChildOptions& options);

// RunReduceTask in a child over the segment files `segments` (partition
// spec.index of each map output), writing the task's output to `output`.
Result<ReduceTaskResult> RunReduceInChild(const ReduceTaskSpec& spec,
                                          const std::vector<std::string>& segments,
                                          const std::string& output, const std::string& work_dir,
                                          const ChildOptions& options);

}  // namespace mr::worker
