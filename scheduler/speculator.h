// Speculative execution: which running task gets a backup attempt.
//
// A speculator sits beside the scheduling policy, under the same contract
// (scheduler.h): no I/O, no clock, no threads; `now` comes in with the
// heartbeat; the host calls it from one thread, after updating the state.
// It decides *which* task is worth a second attempt; the policy still
// decides *where* work runs: it has every heartbeat's free slots first, for
// pending work, and a backup only goes into a slot it left idle, on a node
// it accepts (Scheduler::TakeBackup). The master and mr-sim host both
// through SpeculateAt() below.
//
// The speculators (speculator_registry.cc; `mrctl schedulers` lists them):
//   none     no backups;
//   hadoop   Hadoop 1's rule (TaskInProgress.hasSpeculativeTask): a task
//            whose progress is more than `gap` (0.2) below its job's
//            average, that has run at least `lag_ms` (60 s), gets one
//            backup when a slot is free and nothing is pending;
//   late     LATE (Zaharia et al., OSDI 2008, §4.2): rank tasks by
//            estimated time left, (1 − progress) / progress rate; back up
//            the longest only on a node that is not slow itself, only
//            tasks slower than SlowTaskThreshold, at most SpeculativeCap of
//            the slots at once (late_speculator.h).
//
// What happens to the two attempts (docs/schedulers.md, "Speculative
// execution"): both run; the first to succeed commits; the host kills the
// other at once and removes its output.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace mr::sched {

class Speculator {
 public:
  virtual ~Speculator() = default;
  virtual const char* name() const = 0;

  // Called at a heartbeat of `hb.node`, after the policy's Assign, while
  // the node has a free slot of the kind (`maps`: map slots, else reduce
  // slots). Returns running tasks of that kind worth a backup on hb.node
  // now, best first; the host launches from the front while the node has
  // free slots and the policy takes them. Each returned task runs, has no
  // backup, and runs no attempt on hb.node.
  virtual std::vector<BackupChoice> Choose(const ClusterState& state, const Heartbeat& hb,
                                           bool maps) = 0;
};

// How the host starts a backup: ClusterState::LaunchBackup and whatever it
// does for a launch (the master: a TaskSpec in the heartbeat reply).
class BackupLauncher {
 public:
  virtual ~BackupLauncher() = default;
  virtual void LaunchBackup(const BackupChoice& choice) = 0;
};

// The host's part, the same in the master and in mr-sim: for maps, then
// reduces, while hb.node has a free slot of the kind, asks `speculator`
// for choices and `policy` whether the node takes each; launches those it
// takes. Returns the number of backups launched.
int SpeculateAt(const ClusterState& state, const Heartbeat& hb, Speculator& speculator,
                Scheduler& policy, BackupLauncher& launcher);

// Helpers every speculator shares (speculator.cc).
// True when some active job has a task of the kind that could launch now:
// a pending map, or a pending reduce past its job's slow-start.
bool AnyPending(const ClusterState& state, bool maps);
// The attempt's progress per second: for a running one, its progress over
// the time since its launch (so a frozen attempt's rate falls); for a done
// one, 1 over its run time (progress_ms is its end).
double ProgressRate(const Attempt& a, TaskState state, TimeMs now);
// Whether the task (map or reduce) can take a backup on `node`: running,
// no backup, no attempt there.
template <typename Task>
bool MayBackUp(const Task& t, NodeId node) {
  return t.state == TaskState::kRunning && t.backup_node == kNoNode && t.node != node;
}

// ---- Registry: speculators by name, with their parameters. ----

struct SpeculatorInfo {
  std::string name;   // "none", "hadoop", "late"
  std::string paper;  // what it implements
  std::vector<SchedulerParamSpec> params;
  std::function<Result<std::unique_ptr<Speculator>>(const SchedulerParams&)> make;
};

// Every speculator, sorted by name.
const std::vector<const SpeculatorInfo*>& RegisteredSpeculators();

// Makes the speculator `name` with `params`: unknown names and parameters,
// and values of the wrong type, are InvalidArgument listing the valid ones.
Result<std::unique_ptr<Speculator>> MakeSpeculator(const std::string& name,
                                                   const SchedulerParams& params);

}  // namespace mr::sched
