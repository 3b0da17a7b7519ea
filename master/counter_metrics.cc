// MasterMetrics' job counters: mr_job_counts_total{group,name}, the sum
// over finished jobs of their counters (docs/logs-and-counters.md). User
// counters are the user's names, so their label pairs are capped
// (MasterMetrics::kMaxUserCounterSeries) to keep the series bounded.
#include "jobs/counters.h"
#include "master/metrics.h"

namespace mr::master {

prometheus::Family<prometheus::Counter>& BuildJobCounters(prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("mr_job_counts_total")
      .Help("Counters of finished jobs, summed (successful attempts only): group \"framework\" has "
            "MAP_INPUT_RECORDS, CPU_MILLISECONDS, ...; other groups are user counters, at most " +
            std::to_string(MasterMetrics::kMaxUserCounterSeries) +
            " group/name pairs, the rest under _other/_other")
      .Register(registry);
}

void MasterMetrics::JobCounters(const pb::JobRecord& job) {
  for (const pb::Counter& c : job.counters()) {
    if (c.value() <= 0) continue;  // a Prometheus counter only goes up
    std::string group = c.group(), name = c.name();
    if (group != jobs::kFrameworkGroup && !user_counter_series_.contains({group, name})) {
      if (user_counter_series_.size() < kMaxUserCounterSeries) {
        user_counter_series_.insert({group, name});
      } else {
        group = name = "_other";
      }
    }
    job_counters_->Add({{"group", group}, {"name", name}}).Increment(static_cast<double>(c.value()));
  }
}

}  // namespace mr::master
