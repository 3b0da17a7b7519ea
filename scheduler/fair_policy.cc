#include "scheduler/fair_policy.h"

namespace mr::sched {

Result<std::unique_ptr<FairPolicy>> FairPolicy::Create(const FairOptions& options,
                                                       TimeMs heartbeat_ms) {
  for (const auto& [name, value] :
       {std::pair{"node_locality_delay_ms", options.node_locality_delay_ms},
        std::pair{"rack_locality_delay_ms", options.rack_locality_delay_ms}}) {
    if (value < -1) {
      return Status::InvalidArgument(std::string(name) + " must be >= 0, or -1 for auto, got " +
                                     std::to_string(value));
    }
  }
  if (options.update_interval_ms < 0) {
    return Status::InvalidArgument("update_interval_ms must be >= 0, got " +
                                   std::to_string(options.update_interval_ms));
  }
  const bool auto_delay_used =
      options.node_locality_delay_ms == -1 || options.rack_locality_delay_ms == -1;
  if (auto_delay_used && heartbeat_ms <= 0) {
    return Status::InvalidArgument("auto locality delays need a heartbeat interval > 0, got " +
                                   std::to_string(heartbeat_ms));
  }
  auto pools = ParsePools(options.pools);
  if (!pools.ok()) return pools.status();

  const TimeMs auto_delay = AutoLocalityDelay(heartbeat_ms);
  DelayOptions delay;
  delay.node_delay_ms =
      options.node_locality_delay_ms < 0 ? auto_delay : options.node_locality_delay_ms;
  delay.rack_delay_ms =
      options.rack_locality_delay_ms < 0 ? auto_delay : options.rack_locality_delay_ms;
  delay.assign_multiple = options.assign_multiple;
  delay.update_interval_ms = options.update_interval_ms;
  delay.topology = options.topology;
  return std::unique_ptr<FairPolicy>(
      new FairPolicy(delay, std::make_unique<FairOrder>(std::move(pools).value())));
}

const PolicyInfo& FairPolicyInfo() {
  static const PolicyInfo info{
      "fair",
      "Apache Hadoop 1.2 Fair Scheduler (contrib/fairscheduler) with delay scheduling: "
      "Zaharia et al., \"Delay Scheduling: A Simple Technique for Achieving Locality and Fairness in Cluster Scheduling\", EuroSys 2010, §3-4",
      {{"node_locality_delay_ms", int64_t{-1},
        "wait for a node-local map before a datacenter-local one "
        "(mapred.fairscheduler.locality.delay.node); -1 = min(15 s, 1.5 x heartbeat)"},
       {"rack_locality_delay_ms", int64_t{-1},
        "further wait before any map (locality.delay.rack); -1 = min(15 s, 1.5 x heartbeat)"},
       {"assign_multiple", true,
        "several tasks per heartbeat up to the free slots (assignmultiple); false = one task"},
       {"pools", std::string(),
        "pools as name[:weight[:min_maps[:min_reduces[:fair|fifo]]]],...; unlisted pools get "
        "weight 1, no min share"},
       {"update_interval_ms", int64_t{500},
        "how often demands and fair shares are refreshed (update.interval); 0 = every heartbeat"},
       {"topology", std::string("rack-as-datacenter"),
        "rack-as-datacenter: node, then the node's rack (when configured) and datacenter, then "
        "others (Hadoop 1.x with a rack per datacenter); blind: a node-local map, else the "
        "job's first map anywhere (Hadoop 0.20.2 with every node in one rack, as in JoSS)"}},
      [](const SchedulerParams& params,
         const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        FairOptions options;
        options.node_locality_delay_ms = ParamInt(params, "node_locality_delay_ms");
        options.rack_locality_delay_ms = ParamInt(params, "rack_locality_delay_ms");
        options.assign_multiple = ParamBool(params, "assign_multiple");
        options.pools = ParamString(params, "pools");
        options.update_interval_ms = ParamInt(params, "update_interval_ms");
        const std::string topology = ParamString(params, "topology");
        if (!ParseTopology(topology, &options.topology)) {
          return Status::InvalidArgument(TopologyError(topology));
        }
        auto policy = FairPolicy::Create(options, env.heartbeat_ms);
        if (!policy.ok()) return policy.status();
        return std::unique_ptr<Scheduler>(std::move(policy).value());
      }};
  return info;
}

}  // namespace mr::sched
