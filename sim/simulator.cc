// RunOne: a policy from the registry, hosted by a fresh SimHost.
#include "sim/simulator.h"

#include "sim/host.h"
#include "scheduler/speculator.h"

namespace mr::sim {
namespace {

// The given parameters over the declared defaults, as text.
std::map<std::string, std::string> CompleteParamText(const std::vector<sched::SchedulerParamSpec>& specs,
                                                     const sched::SchedulerParams& given) {
  std::map<std::string, std::string> out;
  for (const sched::SchedulerParamSpec& spec : specs) {
    auto it = given.find(spec.name);
    out[spec.name] = sched::ParamToString(it != given.end() ? it->second : spec.default_value);
  }
  return out;
}

}  // namespace

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
  const SpeculationSpec& spec = run.speculation ? *run.speculation : scenario.speculation;
  auto speculator = sched::MakeSpeculator(spec.name, spec.params);
  if (!speculator.ok()) return speculator.status();
  SimHost host(scenario, workload);
  host.SetSpeculator(std::move(speculator).value());
  auto result = host.Run(std::move(policy).value(), timed);
  if (!result.ok()) return result.status().WithContext(scenario.name + " / " + run.label);
  result->scenario = scenario.name;
  result->scheduler = run.name;
  result->label = run.label.empty() ? run.name : run.label;
  result->seed = scenario.seed;
  // The complete parameters: the given ones over the declared defaults.
  for (const sched::PolicyInfo* info : sched::RegisteredPolicies()) {
    if (info->name == run.name) result->params = CompleteParamText(info->params, run.params);
  }
  result->speculation = scenario.speculation_given;
  result->speculator = spec.name;
  for (const sched::SpeculatorInfo* info : sched::RegisteredSpeculators()) {
    if (info->name == spec.name) result->speculator_params = CompleteParamText(info->params, spec.params);
  }
  return result;
}

}  // namespace mr::sim
