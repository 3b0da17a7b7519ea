// WorkerMetrics: what mr-worker counts for its own /metrics
// (worker.http_address; docs/status-page.md lists every metric). The task
// threads count bytes by datacenter pair at the sockets (task_bodies.cc,
// the same places that fill the task reports) and tasks by outcome
// (task_tracker.cc); the RPC server counts calls (common/metrics.h).
//
// Thread-safe: task threads and the I/O threads update it concurrently.
#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "common/config.h"
#include "common/http_server.h"

namespace mr::worker {

class WorkerMetrics {
 public:
  WorkerMetrics();

  prometheus::Registry& registry() { return *registry_; }

  // `bytes` of kind map_input, shuffle or output moved from a node in
  // `from_dc` to one in `to_dc` by a task running here.
  void Bytes(const char* kind, const std::string& from_dc, const std::string& to_dc, int64_t bytes);
  // A task attempt started (running +1) or ended (running -1, and
  // mr_worker_tasks_total{kind, outcome} +1; outcome succeeded, failed or
  // killed).
  void TaskStarted(bool is_map);
  void TaskEnded(bool is_map, const char* outcome);

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>* bytes_;
  prometheus::Family<prometheus::Counter>* tasks_;
  prometheus::Family<prometheus::Gauge>* running_;
};

// Starts the worker's HTTP server on self.http_address, serving `metrics`
// at /metrics (a one-line index at /), with master.http_address's rules for
// the secret. Returns null when self.http_address is unset. Called by
// Worker::Start.
Result<std::unique_ptr<HttpServer>> ServeWorkerMetrics(boost::asio::any_io_executor executor,
                                                       const ClusterConfig& config,
                                                       const WorkerOptions& self,
                                                       WorkerMetrics& metrics);

}  // namespace mr::worker
