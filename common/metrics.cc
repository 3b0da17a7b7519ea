// CountRpcs and MetricsText (common/metrics.h).
#include "common/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/text_serializer.h>

#include "common/process_metrics.h"

namespace mr {

void CountRpcs(RpcServer& server, prometheus::Registry& registry) {
  auto& family = prometheus::BuildCounter()
                     .Name("mr_rpc_requests_total")
                     .Help("RPC calls handled, by method and outcome (OK or the error code)")
                     .Register(registry);
  auto& duration = prometheus::BuildHistogram()
                       .Name("mr_rpc_duration_seconds")
                       .Help("Time from an RPC call's arrival to its handler's end, by method")
                       .Register(registry);
  // 100 µs .. ~26 s by factors of 4: a status call takes microseconds, a
  // block write or a shuffle fetch seconds.
  const prometheus::Histogram::BucketBoundaries buckets{1e-4, 4e-4, 1.6e-3, 6.4e-3, 2.56e-2,
                                                        0.1024, 0.4096, 1.6384, 6.5536, 26.2144};
  server.set_call_observer([&family, &duration, buckets](const std::string& method, const Status& result,
                                                         double seconds) {
    family.Add({{"method", method}, {"outcome", Status::CodeName(result.code())}}).Increment();
    duration.Add({{"method", method}}, buckets).Observe(seconds);
  });
}

std::string MetricsText(const prometheus::Registry& registry) {
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (prometheus::MetricFamily& f : ProcessFamilies()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace mr
