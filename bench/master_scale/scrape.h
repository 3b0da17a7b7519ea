// The master's /metrics as bench/master_scale reads it: one GET over the
// loopback (Boost.Beast, on the run's own io_context, so the fleet keeps
// beating meanwhile), and the buckets of a histogram out of the text
// exposition format, to compare the master's view of a window with the
// fleet's (docs/benchmarks.md, "Where a heartbeat's p99 goes").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/rpc.h"

namespace mr::bench {

// The body of GET `target` from the HTTP server at `at`.
awaitable<Result<std::string>> HttpGet(const HostPort& at, const std::string& target);

// A Prometheus histogram's cumulative buckets (upper bound, count), its sum
// and its count, as scraped.
struct ScrapedHistogram {
  std::vector<std::pair<double, double>> buckets;  // by upper bound; +Inf last
  double sum = 0;
  double count = 0;

  // What was observed between `before` and this scrape (same buckets).
  ScrapedHistogram Since(const ScrapedHistogram& before) const;
  // The upper bound of the bucket that holds the q-quantile (0 < q <= 1):
  // "at most this"; 0 when nothing was observed, +Inf past the last bound.
  double QuantileAtMost(double q) const;
  // The share of observations above `bound` (one of the bucket bounds).
  double ShareAbove(double bound) const;
};

// The series of family `name` whose labels include `label` (e.g.
// `method="cluster.Heartbeat"`; "" = any, for a family without labels) in
// `text`. Empty when there is none.
ScrapedHistogram ParseHistogram(const std::string& text, const std::string& name,
                                const std::string& label = "");

}  // namespace mr::bench
