// The registry: every policy by name. To add a policy, write its file pair,
// declare it with mr_add_policy() in scheduler/CMakeLists.txt and list its
// PolicyInfo below; the conformance suite then covers it.
#include <algorithm>
#include <string>

#include "scheduler/capacity_policy.h"
#include "scheduler/extra_policies.h"  // generated: MR_EXTRA_POLICIES, empty by default
#include "scheduler/fair_policy.h"
#include "scheduler/fifo_delay_policy.h"
#include "scheduler/fifo_policy.h"
#include "scheduler/joint_policy.h"
#include "scheduler/matchmaking_policy.h"
#include "scheduler/joss_policy.h"
#include "scheduler/pandas_policy.h"
#include "scheduler/probabilistic_policy.h"
#include "scheduler/scheduler.h"

namespace mr::sched {
const std::vector<const PolicyInfo*>& RegisteredPolicies() {
  static const std::vector<const PolicyInfo*> policies = [] {
    std::vector<const PolicyInfo*> all = {
        &FifoPolicyInfo(),
        &FairPolicyInfo(),
        &FifoDelayPolicyInfo(),
        &JointPolicyInfo(),
        &CapacityPolicyInfo(),
        &FifoMatchmakingPolicyInfo(),
        &FairMatchmakingPolicyInfo(),
        &JossTPolicyInfo(),
        &JossJPolicyInfo(),
        &ProbabilisticPolicyInfo(),
        &FifoPandasPolicyInfo(),
        &FairPandasPolicyInfo(),
        MR_EXTRA_POLICY_INFOS  // test-only builds (scheduler/CMakeLists.txt)
    };
    std::sort(all.begin(), all.end(),
              [](const PolicyInfo* a, const PolicyInfo* b) { return a->name < b->name; });
    return all;
  }();
  return policies;
}

Result<std::unique_ptr<Scheduler>> MakeScheduler(const std::string& name,
                                                 const SchedulerParams& params,
                                                 const SchedulerEnv& env) {
  const PolicyInfo* info = nullptr;
  std::vector<std::string> names;
  for (const PolicyInfo* p : RegisteredPolicies()) {
    names.push_back(p->name);
    if (p->name == name) info = p;
  }
  if (info == nullptr) {
    return Status::InvalidArgument("unknown scheduler '" + name + "' (valid: " + JoinNames(names) + ")");
  }
  auto complete = CompleteParams("scheduler '" + info->name + "'", info->params, params);
  if (!complete.ok()) return complete.status();
  auto policy = info->make(*complete, env);
  if (!policy.ok()) {
    return Status::InvalidArgument("scheduler '" + name + "': " + policy.status().message());
  }
  return policy;
}

}  // namespace mr::sched
