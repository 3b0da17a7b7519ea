// MasterMetrics: what mr-master counts for /metrics (docs/status-page.md has
// the list with types). Counters and the decision-latency histogram are
// updated as things happen (Master's heartbeat handler, JobTracker's
// scheduling and task ends); gauges (workers, slots, blocks, jobs) are set
// from the master's state just before each scrape (status_http.cc).
//
// Thread-safe (prometheus-cpp's metrics are); the master calls it from its
// one thread anyway.
#pragma once

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "proto/job.pb.h"

namespace mr::master {

// mr_job_counts_total's family, registered in `registry` (counter_metrics.cc).
prometheus::Family<prometheus::Counter>& BuildJobCounters(prometheus::Registry& registry);

class MasterMetrics {
 public:
  MasterMetrics();

  prometheus::Registry& registry() { return *registry_; }

  // cluster.Heartbeat calls that reached the job tracker.
  void Heartbeat() { heartbeats_->Increment(); }
  // One call of the policy's Assign (a heartbeat's decision), in seconds.
  void Decision(double seconds) { decision_->Observe(seconds); }
  // One pass of the master's housekeeping each heartbeat interval (Tick:
  // liveness, decommissions, leases, repairs, re-replication), in seconds.
  void Housekeeping(double seconds) { housekeeping_->Observe(seconds); }
  // One step of that pass (kHousekeepingSteps), in seconds.
  void HousekeepingStep(std::string_view step, double seconds);
  // An accepted map task: its input bytes by level and its locality.
  // `datacenter` is the datacenter of the node it ran on.
  void MapDone(const pb::MapTaskRecord& task, const std::string& datacenter);
  // An accepted reduce task: shuffle and output bytes by level.
  void ReduceDone(const pb::ReduceTaskRecord& task, const std::string& datacenter);

  // A finished job's counters (JobRecord.counters) added to
  // mr_job_counts_total{group,name} (master/counter_metrics.cc). User
  // counters take at most kMaxUserCounterSeries label pairs, the first
  // seen; the rest are summed under group="_other", name="_other".
  void JobCounters(const pb::JobRecord& job);
  static constexpr size_t kMaxUserCounterSeries = 200;
  // The steps of a housekeeping pass, in the order Master::Tick runs them.
  static constexpr std::array<std::string_view, 5> kHousekeepingSteps = {
      "liveness", "decommissions", "leases", "repairs", "replication"};
  // A task attempt ended: kind map or reduce, outcome succeeded (accepted),
  // failed, killed or lost.
  void AttemptEnded(bool is_map, std::string_view outcome) {
    attempts_->Add({{"kind", is_map ? "map" : "reduce"}, {"outcome", std::string(outcome)}}).Increment();
  }
  // A job ended: state succeeded, failed or killed.
  void JobEnded(std::string_view state) { jobs_finished_->Add({{"state", std::string(state)}}).Increment(); }

  // Gauges, set before a scrape.
  prometheus::Family<prometheus::Gauge>& workers() { return *workers_; }
  prometheus::Family<prometheus::Gauge>& slots() { return *slots_; }
  prometheus::Family<prometheus::Gauge>& heartbeat_age() { return *heartbeat_age_; }
  prometheus::Family<prometheus::Gauge>& disk_free() { return *disk_free_; }
  // Per worker: 1 while live, else 0; DFS block bytes stored, the bytes it
  // may store (its capacity_bytes, else used + free disk) and what is left.
  prometheus::Family<prometheus::Gauge>& worker_up() { return *worker_up_; }
  prometheus::Family<prometheus::Gauge>& dfs_used() { return *dfs_used_; }
  prometheus::Family<prometheus::Gauge>& dfs_capacity() { return *dfs_capacity_; }
  prometheus::Family<prometheus::Gauge>& dfs_free() { return *dfs_free_; }
  prometheus::Gauge& files() { return *files_; }
  // Namespace mutations made, and the synced RocksDB writes that made them
  // durable (group commit: fewer), set from the namespace before a scrape.
  void NamespaceWrites(int64_t commits, int64_t syncs) {
    ns_commits_->Increment(static_cast<double>(commits) - ns_commits_->Value());
    ns_syncs_->Increment(static_cast<double>(syncs) - ns_syncs_->Value());
  }
  prometheus::Gauge& blocks() { return *blocks_; }
  prometheus::Gauge& under_replicated() { return *under_replicated_; }
  prometheus::Gauge& jobs_running() { return *jobs_running_; }

 private:
  void AddBytes(std::string_view kind, const pb::Traffic& t, const std::string& datacenter);

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Counter* heartbeats_;
  prometheus::Histogram* decision_;
  prometheus::Histogram* housekeeping_;
  prometheus::Family<prometheus::Histogram>* housekeeping_steps_;
  prometheus::Family<prometheus::Counter>* bytes_;
  prometheus::Family<prometheus::Counter>* map_tasks_;
  prometheus::Family<prometheus::Counter>* reduce_tasks_;
  prometheus::Family<prometheus::Counter>* attempts_;
  prometheus::Family<prometheus::Counter>* jobs_finished_;
  prometheus::Family<prometheus::Gauge>* workers_;
  prometheus::Family<prometheus::Gauge>* slots_;
  prometheus::Family<prometheus::Gauge>* heartbeat_age_;
  prometheus::Family<prometheus::Gauge>* disk_free_;
  prometheus::Family<prometheus::Gauge>* worker_up_;
  prometheus::Family<prometheus::Gauge>* dfs_used_;
  prometheus::Family<prometheus::Gauge>* dfs_capacity_;
  prometheus::Family<prometheus::Gauge>* dfs_free_;
  prometheus::Gauge* files_;
  prometheus::Counter* ns_commits_;
  prometheus::Counter* ns_syncs_;
  prometheus::Gauge* blocks_;
  prometheus::Gauge* under_replicated_;
  prometheus::Gauge* jobs_running_;
  prometheus::Family<prometheus::Counter>* job_counters_;
  std::set<std::pair<std::string, std::string>> user_counter_series_;
};

}  // namespace mr::master
