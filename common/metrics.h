// The parts of /metrics that mr-master and mr-worker share
// (docs/status-page.md lists every metric). Metrics live in a
// prometheus::Registry (prometheus-cpp's core library: counters, gauges and
// histograms, thread-safe); MetricsText turns one into the Prometheus text
// exposition format, which the daemons' HttpServer serves at /metrics.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <prometheus/registry.h>

#include "common/loop_lag.h"
#include "common/rpc.h"

namespace mr {

// The Content-Type of the text exposition format.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Counts every call `server` handles into
// mr_rpc_requests_total{method, outcome} (outcome: "OK" or the Status code
// name, e.g. "NotFound"; calls to unknown methods count as method
// "unknown"), and its handling time into the histogram
// mr_rpc_duration_seconds{method}. `registry` must outlive `server`. Call
// before server.Start().
void CountRpcs(RpcServer& server, prometheus::Registry& registry);

// Starts a LoopLagProbe (common/loop_lag.h) on `executor` every
// kLoopLagPeriod, observing into the histogram mr_loop_lag_seconds of
// `registry`, and warning in the log when the loop was held up for a second
// or more ("`daemon`'s thread was held up ..."). `registry` must outlive
// the probe.
inline constexpr std::chrono::milliseconds kLoopLagPeriod{50};
std::unique_ptr<LoopLagProbe> WatchLoopLag(boost::asio::any_io_executor executor,
                                           prometheus::Registry& registry, const std::string& daemon);

// Everything in `registry`, then the process_* families and mr_build_info
// (common/process_metrics.h), in the text exposition format (version 0.0.4).
std::string MetricsText(const prometheus::Registry& registry);

}  // namespace mr
