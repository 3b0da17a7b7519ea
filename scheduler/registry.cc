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
namespace {

std::string Join(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "an int", "a double".
std::string WithArticle(const std::string& type) { return (type[0] == 'i' ? "an " : "a ") + type; }

// Checks `given` against the policy's declared parameters and fills in the
// defaults. An int64 is accepted (and converted) where a double is declared.
Result<SchedulerParams> CompleteParams(const PolicyInfo& info, const SchedulerParams& given) {
  std::vector<std::string> names;
  for (const SchedulerParamSpec& spec : info.params) names.push_back(spec.name);
  const std::string where = "scheduler '" + info.name + "': ";
  for (const auto& [name, value] : given) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return Status::InvalidArgument(where + "unknown parameter '" + name +
                                     "' (parameters: " + Join(names) + ")");
    }
  }
  SchedulerParams complete;
  for (const SchedulerParamSpec& spec : info.params) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      complete[spec.name] = spec.default_value;
      continue;
    }
    ParamValue value = it->second;
    if (std::holds_alternative<double>(spec.default_value) &&
        std::holds_alternative<int64_t>(value)) {
      value = static_cast<double>(std::get<int64_t>(value));
    }
    if (value.index() != spec.default_value.index()) {
      return Status::InvalidArgument(where + "parameter '" + spec.name + "' must be " +
                                     WithArticle(ParamTypeName(spec.default_value)) + ", got " +
                                     WithArticle(ParamTypeName(it->second)) + " (" +
                                     ParamToString(it->second) + ")");
    }
    complete[spec.name] = std::move(value);
  }
  return complete;
}

}  // namespace

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
    return Status::InvalidArgument("unknown scheduler '" + name + "' (valid: " + Join(names) + ")");
  }
  auto complete = CompleteParams(*info, params);
  if (!complete.ok()) return complete.status();
  auto policy = info->make(*complete, env);
  if (!policy.ok()) {
    return Status::InvalidArgument("scheduler '" + name + "': " + policy.status().message());
  }
  return policy;
}

}  // namespace mr::sched
