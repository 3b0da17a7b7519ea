#include "scheduler/fifo_delay_policy.h"

#include <string>

#include "scheduler/job_order.h"

namespace mr::sched {

FifoDelayPolicy::FifoDelayPolicy(const DelayOptions& options)
    : DelayPolicy(options, std::make_unique<FifoOrder>()) {}

Result<std::unique_ptr<FifoDelayPolicy>> FifoDelayPolicy::Create(const FifoDelayOptions& options,
                                                                 TimeMs heartbeat_ms) {
  if (options.delay_ms < -1) {
    return Status::InvalidArgument("delay_ms must be >= 0, or -1 for auto, got " +
                                   std::to_string(options.delay_ms));
  }
  if (options.delay_ms == -1 && heartbeat_ms <= 0) {
    return Status::InvalidArgument("an auto delay needs a heartbeat interval > 0, got " +
                                   std::to_string(heartbeat_ms));
  }
  DelayOptions delay;
  delay.node_delay_ms = delay.rack_delay_ms =
      options.delay_ms < 0 ? AutoLocalityDelay(heartbeat_ms) : options.delay_ms;
  delay.assign_multiple = options.assign_multiple;
  return std::unique_ptr<FifoDelayPolicy>(new FifoDelayPolicy(delay));
}

const PolicyInfo& FifoDelayPolicyInfo() {
  static const PolicyInfo info{
      "fifo-delay",
      "FIFO job order with delay scheduling, the baseline of He, Lu & Swanson, \"Matchmaking: A "
      "New MapReduce Scheduling Technique\", IEEE CloudCom 2011, §II-B; Zaharia et al., \"Delay "
      "Scheduling: A Simple Technique for Achieving Locality and Fairness in Cluster "
      "Scheduling\", EuroSys 2010, §3",
      {{"delay_ms", int64_t{-1},
        "D: wait for a node-local map before a datacenter-local one, and again before any; "
        "-1 = min(15 s, 1.5 x heartbeat)"},
       {"assign_multiple", true,
        "several tasks per heartbeat up to the free slots; false = one task"}},
      [](const SchedulerParams& params,
         const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        FifoDelayOptions options;
        options.delay_ms = ParamInt(params, "delay_ms");
        options.assign_multiple = ParamBool(params, "assign_multiple");
        auto policy = FifoDelayPolicy::Create(options, env.heartbeat_ms);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
