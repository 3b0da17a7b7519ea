// CountRpcs and MetricsText (common/metrics.h).
#include "common/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/text_serializer.h>

namespace mr {

void CountRpcs(RpcServer& server, prometheus::Registry& registry) {
  auto& family = prometheus::BuildCounter()
                     .Name("mr_rpc_requests_total")
                     .Help("RPC calls handled, by method and outcome (OK or the error code)")
                     .Register(registry);
  server.set_call_observer([&family](const std::string& method, const Status& result) {
    family.Add({{"method", method}, {"outcome", Status::CodeName(result.code())}}).Increment();
  });
}

std::string MetricsText(const prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

}  // namespace mr
