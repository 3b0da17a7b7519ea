#include "scheduler/random_local_policy.h"

namespace mr::sched {

bool RandomLocalPolicy::LaunchRandomMap(const ClusterState& s, NodeId node, Locality level,
                                        Launcher& launcher) {
  // ObtainMap only finds; it launches nothing, so asking every job is safe.
  std::vector<std::pair<JobId, int32_t>> candidates;
  for (JobId job : s.active_jobs()) {
    const int32_t m = index_.ObtainMap(s, job, node, level);
    if (m >= 0) candidates.emplace_back(job, m);
  }
  if (candidates.empty()) return false;
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  const auto [job, m] = candidates[pick(rng_)];
  launcher.LaunchMap(job, m);
  return true;
}

void RandomLocalPolicy::Assign(const ClusterState& s, const Heartbeat& hb, Launcher& launcher) {
  // LaunchMap takes a slot at once, so this loop ends by itself.
  while (s.node(hb.node).free_map_slots() > 0) {
    if (LaunchRandomMap(s, hb.node, Locality::kNode, launcher)) continue;
    if (!LaunchRandomMap(s, hb.node, Locality::kOffDatacenter, launcher)) break;
  }
  if (s.node(hb.node).free_reduce_slots() == 0) return;
  std::vector<std::pair<JobId, int32_t>> candidates;
  for (JobId job : s.active_jobs()) {
    const int32_t r = index_.ObtainReduce(s, job, hb.node);  // -1 before slow-start
    if (r >= 0) candidates.emplace_back(job, r);
  }
  if (candidates.empty()) return;
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  const auto [job, r] = candidates[pick(rng_)];
  launcher.LaunchReduce(job, r);
}

const PolicyInfo& RandomLocalPolicyInfo() {
  static const PolicyInfo info{
      "random-local", "course lab 2 reference: node-local first, random job (docs/course)", {},
      [](const SchedulerParams&, const SchedulerEnv& env) -> Result<std::unique_ptr<Scheduler>> {
        return std::unique_ptr<Scheduler>(new RandomLocalPolicy(env.seed));
      }};
  return info;
}

}  // namespace mr::sched
