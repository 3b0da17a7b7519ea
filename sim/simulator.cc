// RunOne: a policy from the registry, hosted by a fresh SimHost.
#include "sim/simulator.h"

#include "sim/host.h"

namespace mr::sim {

Result<Workload> MakeWorkload(const Scenario& scenario) {
  const Workload none;  // only the host's cluster is needed; it must outlive the host
  SimHost host(scenario, none);
  return GenerateWorkload(scenario, host.state());
}

Result<std::vector<PlannedJob>> PlanJobs(const Scenario& scenario) {
  MR_ASSIGN_OR_RETURN(Workload w, MakeWorkload(scenario));
  return JobList(scenario, w);
}

Result<RunResult> RunOne(const Scenario& scenario, const Workload& workload,
                         const SchedulerRun& run, bool timed) {
  sched::SchedulerEnv env;
  env.seed = scenario.seed;
  env.heartbeat_ms = scenario.cluster.heartbeat_ms;
  auto policy = sched::MakeScheduler(run.name, run.params, env);
  if (!policy.ok()) return policy.status();
  SimHost host(scenario, workload);
  auto result = host.Run(std::move(policy).value(), timed);
  if (!result.ok()) return result.status().WithContext(scenario.name + " / " + run.label);
  result->scenario = scenario.name;
  result->scheduler = run.name;
  result->label = run.label.empty() ? run.name : run.label;
  result->seed = scenario.seed;
  // The complete parameters: the given ones over the declared defaults.
  for (const sched::PolicyInfo* info : sched::RegisteredPolicies()) {
    if (info->name != run.name) continue;
    for (const sched::SchedulerParamSpec& spec : info->params) {
      auto it = run.params.find(spec.name);
      result->params[spec.name] =
          sched::ParamToString(it != run.params.end() ? it->second : spec.default_value);
    }
  }
  return result;
}

}  // namespace mr::sim
