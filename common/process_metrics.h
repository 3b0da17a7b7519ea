// The families every Prometheus client library's process collector exports
// (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds), read from /proc/self at each scrape, and
// mr_build_info{version, commit, build_type} = 1. MetricsText
// (common/metrics.h) appends them to every daemon's /metrics.
//
// Thread-safe (reads files only). Linux only; a field that cannot be read
// is left out, not reported as 0.
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

namespace mr {

std::vector<prometheus::MetricFamily> ProcessFamilies();

}  // namespace mr
