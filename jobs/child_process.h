// ChildProcess: one user command (a streaming mapper, reducer or combiner)
// run as `/bin/sh -c COMMAND` in a process group of its own, with pipes on
// its stdin, stdout and stderr. StreamingJob (jobs/streaming.cc) feeds it
// lines and receives its stdout lines; a command that crashes, loops or
// exits non-zero fails only the task attempt that ran it, never the worker
// (the user's code never runs in the worker's address space: Hadoop runs
// tasks in a child JVM for the same reason).
//
// Spawned with posix_spawn (vfork + exec: safe from a multithreaded worker),
// every descriptor but 0-2 closed in the child, signal dispositions and mask
// reset. The caller's thread drives the pipes with poll(); nothing here
// starts threads.
//
// Thread-compatible: one instance is used by one thread.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "jobs/counters.h"

namespace mr::jobs {

class ChildProcess {
 public:
  struct Options {
    std::string command;  // run by /bin/sh -c
    std::string role;     // "mapper", "reducer", "combiner": for messages
    std::string cwd;      // working directory; "" = the caller's
    // NAME=VALUE pairs added to (or replacing in) the caller's environment.
    std::vector<std::string> env;
    // Called with the child's stderr bytes as they come (the task's log),
    // on the caller's thread. Default: none (only a tail is kept, for the
    // error message).
    std::function<void(std::string_view bytes)> on_stderr;
    // Wall-clock limit from the start; 0 = none. The process group is
    // killed with SIGKILL when it passes.
    int64_t timeout_ms = 0;
    const std::atomic<bool>* cancel = nullptr;  // stops the child when set
    // Longest stdout line accepted (without its '\n'). Default: 8 MiB.
    size_t max_line_bytes = 8 << 20;
    // Called with each complete stdout line ("\n" or "\r\n" removed), in
    // order, on the caller's thread, from Write() or Finish().
    std::function<void(std::string_view line)> on_line;
    // Where the stderr lines `reporter:counter:GROUP,NAME,AMOUNT` and
    // `reporter:status:MESSAGE` (Hadoop Streaming's) count; stderr is
    // otherwise kept as before. Default: none (not parsed).
    Counters* reporter = nullptr;
  };

  // Starts the command. IOError when it cannot be spawned (no /bin/sh, a
  // missing cwd): a command that is not found or not executable is started
  // (sh reports it on stderr and exits 127 or 126), and Finish() fails.
  static Result<std::unique_ptr<ChildProcess>> Start(Options options);
  // Kills the process group if it still runs and reaps the child.
  ~ChildProcess();

  // Queues `data` for the child's stdin; pumps the pipes while much is
  // queued. A child that stopped reading (closed stdin) gets no more input,
  // which is not an error by itself. Errors: the child's stdout broke the
  // line limit, the time limit passed, the task was cancelled.
  Status Write(std::string_view data);
  // Closes stdin, reads stdout and stderr to their end and waits for the
  // child. OK only if it exited with status 0; otherwise the error names
  // the command, its exit status or signal, and ends with the last ~2 KiB
  // of its stderr.
  Status Finish();

 private:
  explicit ChildProcess(Options options) : o_(std::move(options)) {}
  // Moves bytes until the input queue is below `keep` bytes (or, with
  // until_eof, until stdout and stderr are closed).
  Status Pump(size_t keep, bool until_eof);
  Status TakeLines();
  Status Failure(const std::string& what);
  void Kill();

  Options o_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string in_buf_;
  size_t in_pos_ = 0;
  std::string out_buf_;
  std::string err_tail_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<ReporterLineSplitter> reporter_lines_;
  bool reaped_ = false;
  int wait_status_ = 0;
};

// The last `n` bytes of `s` (cut to a line start when one is near), with
// newlines shown as " | ": a stderr tail fit for a one-line error.
std::string OneLineTail(std::string_view s, size_t n = 2048);

// Initializes `attr` for a child of a task (a streaming command, mr-task):
// its own process group (so a time-out kills the whole group), default
// signal dispositions and an empty signal mask whatever the worker's
// threads had. The caller destroys it.
void InitChildSpawnAttr(posix_spawnattr_t* attr);

// The caller's environment with `extra` NAME=VALUE pairs added; a pair
// replaces a variable of the same name. For a child's envp.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra);
// posix_spawn's envp for `env`: pointers into it, then nullptr.
std::vector<char*> EnvPointers(const std::vector<std::string>& env);
// Waits for child `pid` as waitpid(pid, status, options) does and, when it
// was reaped, adds its CPU time (user + system, with that of the children
// it waited for: wait4's rusage) to the calling thread's ReapedChildCpuUs().
// Task attempts run on threads of their own, so a task's CPU time is its
// thread's plus what it reaped (docs/logs-and-counters.md, CPU_MILLISECONDS).
pid_t WaitChild(pid_t pid, int* status, int options);
// CPU microseconds of the children this thread reaped with WaitChild.
int64_t ReapedChildCpuUs();
// CPU microseconds the calling thread used (CLOCK_THREAD_CPUTIME_ID).
int64_t ThreadCpuUs();

// One poll() slice of a wait on a child: 100 ms, or less when the time
// limit is nearer; -1 once `timeout_ms` (> 0; 0 = no limit) has passed
// since `start`. Used by ChildProcess (streaming) and worker/task_child.cc
// (mr-task).
int WaitSliceMs(std::chrono::steady_clock::time_point start, int64_t timeout_ms);
// The one line a child killed for its time limit leaves in its attempt.
std::string TimeLimitMessage(int64_t timeout_ms);

}  // namespace mr::jobs
