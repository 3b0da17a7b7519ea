// MasterMetrics (master/metrics.h): the families and their help texts.
#include "master/metrics.h"

namespace mr::master {

namespace pm = prometheus;

namespace {

// 100 µs .. 5 s, 1-2-5: a pass over every block takes milliseconds per
// hundred thousand, and holds the master's thread that long.
pm::Histogram::BucketBoundaries HousekeepingBuckets() {
  return {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5};
}

}  // namespace

MasterMetrics::MasterMetrics() {
  pm::Registry& r = *registry_;
  heartbeats_ = &pm::BuildCounter()
                     .Name("mr_heartbeats_total")
                     .Help("Worker heartbeats the master handled")
                     .Register(r)
                     .Add({});
  // 1 µs .. ~0.5 s: a policy decides in microseconds on a small cluster,
  // in milliseconds at hundreds of nodes (docs/benchmarks.md).
  decision_ = &pm::BuildHistogram()
                   .Name("mr_scheduler_decision_seconds")
                   .Help("Time the scheduling policy took per heartbeat decision (Assign)")
                   .Register(r)
                   .Add({}, pm::Histogram::BucketBoundaries{1e-6, 4e-6, 1.6e-5, 6.4e-5, 2.56e-4,
                                                            1.024e-3, 4.096e-3, 1.6384e-2,
                                                            6.5536e-2, 0.262144});
  housekeeping_ = &pm::BuildHistogram()
                       .Name("mr_master_housekeeping_seconds")
                       .Help("Time of each housekeeping pass, every heartbeat interval (liveness, "
                             "decommissions, leases, repairs, re-replication)")
                       .Register(r)
                       .Add({}, HousekeepingBuckets());
  housekeeping_steps_ = &pm::BuildHistogram()
                             .Name("mr_master_housekeeping_step_seconds")
                             .Help("Time of each step of a housekeeping pass (step: liveness, "
                                   "decommissions, leases, repairs, replication)")
                             .Register(r);
  for (std::string_view step : kHousekeepingSteps) {
    housekeeping_steps_->Add({{"step", std::string(step)}}, HousekeepingBuckets());
  }
  bytes_ = &pm::BuildCounter()
                .Name("mr_task_bytes_total")
                .Help("Bytes moved by accepted tasks: kind (map_input, shuffle, output), level "
                      "(node, datacenter, inter_datacenter: where the other end was), and the "
                      "datacenter of the node the task ran on")
                .Register(r);
  map_tasks_ = &pm::BuildCounter()
                    .Name("mr_map_tasks_total")
                    .Help("Accepted map tasks by locality level and datacenter")
                    .Register(r);
  reduce_tasks_ = &pm::BuildCounter()
                       .Name("mr_reduce_tasks_total")
                       .Help("Accepted reduce tasks by datacenter")
                       .Register(r);
  attempts_ = &pm::BuildCounter()
                   .Name("mr_task_attempts_total")
                   .Help("Task attempts that ended, by kind (map, reduce) and outcome (succeeded: "
                         "accepted; failed; killed: lost a race or its job ended; lost: its worker "
                         "was lost or no longer ran it)")
                   .Register(r);
  jobs_finished_ = &pm::BuildCounter()
                        .Name("mr_jobs_finished_total")
                        .Help("Jobs that ended, by state (succeeded, failed, killed)")
                        .Register(r);
  for (const char* state : {"succeeded", "failed", "killed"}) jobs_finished_->Add({{"state", state}});
  workers_ = &pm::BuildGauge()
                  .Name("mr_workers")
                  .Help("Known workers by state (live, dead, decommissioning, decommissioned)")
                  .Register(r);
  slots_ = &pm::BuildGauge()
                .Name("mr_slots")
                .Help("Task slots of live workers by kind (map, reduce) and use (used, total)")
                .Register(r);
  heartbeat_age_ = &pm::BuildGauge()
                        .Name("mr_worker_heartbeat_age_seconds")
                        .Help("Seconds since each worker's last heartbeat")
                        .Register(r);
  disk_free_ = &pm::BuildGauge()
                    .Name("mr_worker_disk_free_bytes")
                    .Help("Free bytes of each worker's data directory, from its last heartbeat")
                    .Register(r);
  worker_up_ = &pm::BuildGauge()
                    .Name("mr_worker_up")
                    .Help("1 while the worker is live (heartbeating), 0 once the master declared it dead")
                    .Register(r);
  dfs_used_ = &pm::BuildGauge()
                   .Name("mr_worker_dfs_used_bytes")
                   .Help("Bytes of DFS blocks each worker stores")
                   .Register(r);
  dfs_capacity_ = &pm::BuildGauge()
                       .Name("mr_worker_dfs_capacity_bytes")
                       .Help("Bytes of blocks each worker may store: its capacity_bytes, else what it "
                             "stores plus its disk's free bytes")
                       .Register(r);
  dfs_free_ = &pm::BuildGauge()
                   .Name("mr_worker_dfs_free_bytes")
                   .Help("Bytes of blocks each worker may still store (capacity minus used, at most "
                         "its disk's free bytes)")
                   .Register(r);
  ns_commits_ = &pm::BuildCounter()
                     .Name("mr_namespace_mutations_total")
                     .Help("Namespace mutations made (each durable before its reply)")
                     .Register(r)
                     .Add({});
  ns_syncs_ = &pm::BuildCounter()
                   .Name("mr_namespace_syncs_total")
                   .Help("Synced namespace writes; each makes a group of mutations durable")
                   .Register(r)
                   .Add({});
  files_ = &pm::BuildGauge().Name("mr_dfs_files").Help("Files in the DFS namespace").Register(r).Add({});
  blocks_ = &pm::BuildGauge().Name("mr_dfs_blocks").Help("Blocks of complete files").Register(r).Add({});
  under_replicated_ = &pm::BuildGauge()
                           .Name("mr_dfs_under_replicated_blocks")
                           .Help("Blocks with fewer in-service replicas than their replication")
                           .Register(r)
                           .Add({});
  jobs_running_ = &pm::BuildGauge()
                       .Name("mr_jobs_running")
                       .Help("Jobs running or waiting to be recovered")
                       .Register(r)
                       .Add({});
  job_counters_ = &BuildJobCounters(r);
}

void MasterMetrics::AddBytes(std::string_view kind, const pb::Traffic& t,
                             const std::string& datacenter) {
  const std::string k(kind);
  bytes_->Add({{"kind", k}, {"level", "node"}, {"datacenter", datacenter}})
      .Increment(static_cast<double>(t.local()));
  bytes_->Add({{"kind", k}, {"level", "datacenter"}, {"datacenter", datacenter}})
      .Increment(static_cast<double>(t.same_dc()));
  bytes_->Add({{"kind", k}, {"level", "inter_datacenter"}, {"datacenter", datacenter}})
      .Increment(static_cast<double>(t.other_dc()));
}

void MasterMetrics::HousekeepingStep(std::string_view step, double seconds) {
  housekeeping_steps_->Add({{"step", std::string(step)}}, HousekeepingBuckets()).Observe(seconds);
}

void MasterMetrics::MapDone(const pb::MapTaskRecord& task, const std::string& datacenter) {
  map_tasks_->Add({{"locality", task.locality()}, {"datacenter", datacenter}}).Increment();
  AddBytes("map_input", task.input(), datacenter);
}

void MasterMetrics::ReduceDone(const pb::ReduceTaskRecord& task, const std::string& datacenter) {
  reduce_tasks_->Add({{"datacenter", datacenter}}).Increment();
  AddBytes("shuffle", task.shuffle(), datacenter);
  AddBytes("output", task.output(), datacenter);
}

}  // namespace mr::master
