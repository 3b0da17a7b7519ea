// The scheduler seam: one interface every policy implements, hosted by the
// master and by mr-sim alike. Start here to write a policy
// (docs/schedulers.md, "Write your own").
//
// Contract:
//   - A policy does no I/O, reads no clock, never sleeps and starts no
//     thread; time comes in as `now`, randomness from the generator in its
//     SchedulerEnv. The build enforces it: a policy's target links only
//     mr_scheduler_api (this header's target; scheduler/CMakeLists.txt,
//     mr_add_policy), and the test scheduler_purity checks the sources.
//   - The host calls every method from one thread; policies need no locks.
//   - The host updates ClusterState *before* telling the policy about an
//     event, and a launch changes the state at once (see Launcher).
//   - Assign() may launch at most node.free_map_slots() maps and
//     free_reduce_slots() reduces on the heartbeating node, each a pending
//     task. The conformance suite (tests/scheduler/conformance_test.cc) holds
//     every registered policy to this.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "scheduler/cluster_state.h"

namespace mr::sched {

// How a policy acts during a heartbeat or tick.
class Launcher {
 public:
  virtual ~Launcher() = default;
  // Launches map `index` of `job` on the heartbeating node; the state shows
  // it running on return. REQUIRES: pending, and a free map slot there.
  virtual void LaunchMap(JobId job, int32_t index) = 0;
  // Likewise for a reduce. REQUIRES: job.reduces_may_start().
  virtual void LaunchReduce(JobId job, int32_t index) = 0;
  // Copies `block` from `from` to `to` ahead of a task (the Joint
  // Scheduler's routing). The host counts the bytes as map-input traffic and
  // adds `to` to the block's replicas when the copy lands.
  virtual void Prefetch(uint64_t block, NodeId from, NodeId to) { (void)block, (void)from, (void)to; }
};

struct Heartbeat {
  NodeId node = kNoNode;
  TimeMs now = 0;
};

// A running task a speculator picked for a backup attempt (speculator.h).
struct BackupChoice {
  JobId job = 0;
  bool is_map = true;
  int32_t index = 0;
  bool operator==(const BackupChoice&) const = default;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;

  // Events, after the host updated the state. Defaults do nothing.
  virtual void OnJobAdded(const ClusterState& state, JobId job, TimeMs now) {}
  virtual void OnJobFinished(const ClusterState& state, JobId job, TimeMs now) {}
  virtual void OnMapFinished(const ClusterState& state, JobId job, int32_t index, TimeMs now) {}
  virtual void OnReduceFinished(const ClusterState& state, JobId job, int32_t index, TimeMs now) {}
  // A failed or lost attempt; the task is pending again.
  virtual void OnTaskFailed(const ClusterState& state, JobId job, int32_t index, bool is_map,
                            TimeMs now) {}
  virtual void OnNodeAdded(const ClusterState& state, NodeId node, TimeMs now) {}
  // The node's running tasks (and finished maps of unfinished jobs) are
  // already pending again when this is called.
  virtual void OnNodeLost(const ClusterState& state, NodeId node, TimeMs now) {}

  // The decision: `hb.node` reports free slots. Launch through `launcher`.
  virtual void Assign(const ClusterState& state, const Heartbeat& hb, Launcher& launcher) = 0;

  // Speculative execution (speculator.h): may `hb.node` take a backup of
  // `choice`, a running task the speculator picked? Asked only for a slot
  // this policy's Assign left idle at the same heartbeat. The policy
  // decides where backups run as it decides where tasks run; the default
  // takes every backup the speculator offers.
  virtual bool TakeBackup(const ClusterState& state, const Heartbeat& hb,
                          const BackupChoice& choice) {
    return true;
  }

  // Policies that act on a clock of their own (the Joint Scheduler's
  // routing) return a period > 0; the host then calls OnTick that often.
  virtual TimeMs tick_ms() const { return 0; }
  virtual void OnTick(const ClusterState& state, TimeMs now, Launcher& launcher) {}
};

// ---- Registry: policies by name, with their parameters. ----

using ParamValue = std::variant<bool, int64_t, double, std::string>;
using SchedulerParams = std::map<std::string, ParamValue>;

struct SchedulerParamSpec {
  std::string name;
  ParamValue default_value;
  std::string help;
};

// What a policy gets at construction besides its parameters.
struct SchedulerEnv {
  uint64_t seed = 1;               // for the policy's own std::mt19937_64
  TimeMs heartbeat_ms = 1000;      // the cluster's heartbeat interval
};

struct PolicyInfo {
  std::string name;                // registry key, e.g. "fifo"
  std::string paper;               // what it implements, e.g. "Hadoop MRv1 JobQueueTaskScheduler (baselines.md §2)"
  std::vector<SchedulerParamSpec> params;
  // Makes the policy; InvalidArgument for a bad parameter value. Params are
  // complete (defaults filled in) and of the declared types.
  std::function<Result<std::unique_ptr<Scheduler>>(const SchedulerParams&, const SchedulerEnv&)> make;
};

// Typed reads of a complete parameter map, for a PolicyInfo's `make` (the
// registry has filled in defaults and checked types, so a missing name or a
// wrong type aborts: a bug in the policy). ParamDouble also reads an int64.
bool ParamBool(const SchedulerParams& params, const std::string& name);
int64_t ParamInt(const SchedulerParams& params, const std::string& name);
double ParamDouble(const SchedulerParams& params, const std::string& name);
const std::string& ParamString(const SchedulerParams& params, const std::string& name);
// "bool", "int", "double" or "string".
const char* ParamTypeName(const ParamValue& value);
// The value as the cluster file would write it: true, 3, 0.01, "text".
std::string ParamToString(const ParamValue& value);

// Every policy, sorted by name (scheduler/registry.cc lists them).
const std::vector<const PolicyInfo*>& RegisteredPolicies();

// Checks `given` against the declared parameters of the policy or
// speculator `what` ("scheduler 'fifo'") and fills in the defaults; an
// int64 is accepted (and converted) where a double is declared.
Result<SchedulerParams> CompleteParams(const std::string& what,
                                       const std::vector<SchedulerParamSpec>& specs,
                                       const SchedulerParams& given);
// "a, b, c", or "none" for an empty list.
std::string JoinNames(const std::vector<std::string>& names);

// Makes the policy `name` with `params` (unknown names or parameters, and
// values of the wrong type, are InvalidArgument listing the valid ones; an
// int64 is accepted where a double is declared).
Result<std::unique_ptr<Scheduler>> MakeScheduler(const std::string& name,
                                                 const SchedulerParams& params,
                                                 const SchedulerEnv& env);

}  // namespace mr::sched
