// The simulator in one call: one scenario, one policy, one RunResult. Start
// here to use mr-sim as a library (tests/sim/ do); sim/host.h is the engine,
// sim/runner.h runs a scenario file's schedulers and sweeps.
#pragma once

#include "common/status.h"
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/workload.h"

namespace mr::sim {

// Generates the scenario's workload (the same for every policy).
Result<Workload> MakeWorkload(const Scenario& scenario);

// The scenario's concrete job list: MakeWorkload's jobs, as mr-sim runs
// them and as mr-workload runs them live (the same seed, the same list).
Result<std::vector<PlannedJob>> PlanJobs(const Scenario& scenario);

// Runs `run` (a registered policy and its parameters) over `workload`.
// InvalidArgument for an unknown policy or parameter; FailedPrecondition
// when the policy breaks the Launcher contract (sim/host.h). With `timed`,
// wall-clock figures are added (and the output is no longer reproducible).
Result<RunResult> RunOne(const Scenario& scenario, const Workload& workload,
                         const SchedulerRun& run, bool timed = false);

}  // namespace mr::sim
