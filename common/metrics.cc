// CountRpcs and MetricsText (common/metrics.h).
#include "common/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

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

std::unique_ptr<LoopLagProbe> WatchLoopLag(boost::asio::any_io_executor executor,
                                           prometheus::Registry& registry, const std::string& daemon) {
  auto& family = prometheus::BuildHistogram()
                     .Name("mr_loop_lag_seconds")
                     .Help("How late the event loop ran a timer due every 50 ms: how long the "
                           "daemon's thread was held up, and every call arriving meanwhile with it")
                     .Register(registry);
  // 1 ms .. 5 s, 1-2-5: a heartbeat's p99 is judged in tens of milliseconds.
  auto& lag = family.Add({}, prometheus::Histogram::BucketBoundaries{
                                 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5});
  auto probe = std::make_unique<LoopLagProbe>(std::move(executor), kLoopLagPeriod, [&lag, daemon](double s) {
    lag.Observe(s);
    if (s >= 1.0) {
      spdlog::warn("{}'s thread was held up for {:.0f} ms (a long handler, a synced write, or the host): "
                   "every call arriving meanwhile waited",
                   daemon, s * 1000);
    }
  });
  probe->Start();
  return probe;
}

std::string MetricsText(const prometheus::Registry& registry) {
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (prometheus::MetricFamily& f : ProcessFamilies()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace mr
