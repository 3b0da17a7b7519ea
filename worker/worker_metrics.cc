// WorkerMetrics (worker_metrics.h): the families and their help texts.
#include "worker/worker_metrics.h"

#include <spdlog/spdlog.h>

#include "common/metrics.h"

namespace mr::worker {

namespace pm = prometheus;

WorkerMetrics::WorkerMetrics() {
  bytes_ = &pm::BuildCounter()
                .Name("mr_worker_task_bytes_total")
                .Help("Bytes this worker's tasks moved, by kind (map_input, shuffle, output) and "
                      "the datacenters of the sending and receiving nodes")
                .Register(*registry_);
  tasks_ = &pm::BuildCounter()
                .Name("mr_worker_tasks_total")
                .Help("Task attempts that ended here, by kind (map, reduce) and outcome")
                .Register(*registry_);
  running_ = &pm::BuildGauge()
                  .Name("mr_worker_tasks_running")
                  .Help("Task attempts running here (slots in use), by kind")
                  .Register(*registry_);
  for (const char* kind : {"map", "reduce"}) running_->Add({{"kind", kind}});
}

void WorkerMetrics::Bytes(const char* kind, const std::string& from_dc, const std::string& to_dc,
                          int64_t bytes) {
  if (bytes <= 0) return;
  bytes_->Add({{"kind", kind}, {"from_datacenter", from_dc}, {"to_datacenter", to_dc}})
      .Increment(static_cast<double>(bytes));
}

void WorkerMetrics::TaskStarted(bool is_map) {
  running_->Add({{"kind", is_map ? "map" : "reduce"}}).Increment();
}

void WorkerMetrics::TaskEnded(bool is_map, const char* outcome) {
  const char* kind = is_map ? "map" : "reduce";
  running_->Add({{"kind", kind}}).Decrement();
  tasks_->Add({{"kind", kind}, {"outcome", outcome}}).Increment();
}

Result<std::unique_ptr<HttpServer>> ServeWorkerMetrics(boost::asio::any_io_executor executor,
                                                       const ClusterConfig& config,
                                                       const WorkerOptions& self,
                                                       WorkerMetrics& metrics) {
  if (self.http_address.port == 0) return std::unique_ptr<HttpServer>();
  HttpServerOptions options;
  options.secret = config.ResolvedSecret();
  options.require_secret = config.master.http_require_secret;
  const std::string id = self.id;
  auto server = std::make_unique<HttpServer>(
      executor, options, "worker " + id + " http", [&metrics, id](const HttpRequest& req) {
        if (req.path == "/metrics") return HttpResponse{200, kMetricsContentType, MetricsText(metrics.registry())};
        if (req.path == "/") {
          return HttpResponse{200, "text/plain; charset=utf-8", "mr-worker " + id + ": see /metrics\n"};
        }
        return HttpResponse{404, "text/plain; charset=utf-8", "not found: " + req.path + "\n"};
      });
  MR_RETURN_IF_ERROR(server->Listen(self.http_address));
  server->Start();
  spdlog::info("metrics on http://{}:{}/metrics", self.http_address.host, server->port());
  return server;
}

}  // namespace mr::worker
