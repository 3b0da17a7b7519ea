// Decision latency per heartbeat, for every registered scheduling policy.
//
//   build/bench/scheduler_latency [--benchmark_filter=fifo]
//
// Setup (issue 4): 500 nodes (2 map and 1 reduce slot each) spread over K
// datacenters (K = 2 and 10), about 2,000 jobs of 10 maps and 1 reduce
// (20,000 pending maps), 2 replicas per block on random nodes. Each
// iteration is one heartbeat of the next node in turn: first its running
// tasks finish (the host's bookkeeping, not timed), then Assign() is timed
// alone. Finished jobs are replaced so about 20,000 maps stay pending.
// Reported per policy: median and p99 of the Assign() time, in µs.
// Target: median ≤ 20 µs and p99 ≤ 200 µs for every policy.
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "scheduler/cluster_state.h"
#include "scheduler/scheduler.h"

namespace mr::sched {
namespace {

constexpr int kNodes = 500;
constexpr int kJobs = 2000;
constexpr int kMapsPerJob = 10;
constexpr TimeMs kHeartbeatMs = 1000;

// The smallest host that keeps ClusterState honest: launches go to the
// heartbeating node; a node's tasks finish at its next heartbeat.
class BenchHost : public Launcher {
 public:
  BenchHost(const std::string& policy, int datacenters) : rng_(42) {
    for (int n = 0; n < kNodes; ++n) {
      state_.AddNode("n" + std::to_string(n), n % datacenters, -1, 2, 1);
    }
    SchedulerEnv env;
    env.seed = 7;
    env.heartbeat_ms = kHeartbeatMs;
    policy_ = std::move(MakeScheduler(policy, {}, env)).value();
    for (NodeId n = 0; n < kNodes; ++n) policy_->OnNodeAdded(state_, n, 0);
    running_.resize(kNodes);
    for (int j = 0; j < kJobs; ++j) AddJob();
  }

  // One heartbeat of the next node; returns the Assign() time in ns.
  int64_t Beat() {
    const NodeId node = next_node_;
    next_node_ = (next_node_ + 1) % kNodes;
    now_ += kHeartbeatMs / kNodes;
    FinishTasksOf(node);
    if (policy_->tick_ms() > 0 && now_ >= next_tick_) {
      policy_->OnTick(state_, now_, *this);
      next_tick_ = now_ + policy_->tick_ms();
    }
    node_ = node;
    const auto start = std::chrono::steady_clock::now();
    policy_->Assign(state_, Heartbeat{node, now_}, *this);
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
  }

  void LaunchMap(JobId job, int32_t index) override {
    state_.LaunchMap(job, index, node_);
    running_[node_].push_back({job, index, true});
  }
  void LaunchReduce(JobId job, int32_t index) override {
    state_.LaunchReduce(job, index, node_);
    running_[node_].push_back({job, index, false});
  }

 private:
  struct Running {
    JobId job;
    int32_t index;
    bool map;
  };

  void AddJob() {
    Job job;
    job.name = "bench";
    job.code_hash = "h" + std::to_string(jobs_added_ % 5);
    job.input_type = "text";
    job.pool = "default";
    job.submit_ms = now_;
    job.known_fp = jobs_added_ % 3 == 0 ? 3.0 : 1.0;
    for (int m = 0; m < kMapsPerJob; ++m) {
      MapTask t;
      t.index = m;
      t.block = next_block_++;
      t.bytes = 64 << 20;
      const NodeId a = static_cast<NodeId>(rng_() % kNodes);
      NodeId b = static_cast<NodeId>(rng_() % kNodes);
      if (b == a) b = (a + 1) % kNodes;
      t.replicas = {a, b};
      t.partition_bytes.assign(1, 0);
      job.maps.push_back(std::move(t));
    }
    job.reduces.push_back(ReduceTask{});
    job.input_bytes = int64_t{kMapsPerJob} * (64 << 20);
    const JobId id = state_.AddJob(std::move(job));
    policy_->OnJobAdded(state_, id, now_);
    ++jobs_added_;
  }

  void FinishTasksOf(NodeId node) {
    for (const Running& r : running_[node]) {
      if (r.map) {
        state_.FinishMap(r.job, r.index, 1000.0);
        policy_->OnMapFinished(state_, r.job, r.index, now_);
      } else {
        state_.FinishReduce(r.job, r.index);
        policy_->OnReduceFinished(state_, r.job, r.index, now_);
      }
      const Job& j = state_.job(r.job);
      if (!j.done && j.finished_maps == static_cast<int>(j.maps.size()) &&
          j.finished_reduces == static_cast<int>(j.reduces.size())) {
        state_.FinishJob(r.job);
        policy_->OnJobFinished(state_, r.job, now_);
        AddJob();  // keep about 20,000 maps pending
      }
    }
    running_[node].clear();
  }

  ClusterState state_;
  std::unique_ptr<Scheduler> policy_;
  std::vector<std::vector<Running>> running_;
  std::mt19937_64 rng_;
  NodeId node_ = 0;
  NodeId next_node_ = 0;
  TimeMs now_ = 0;
  TimeMs next_tick_ = 0;
  uint64_t next_block_ = 1;
  int64_t jobs_added_ = 0;
};

void BM_Assign(benchmark::State& state, std::string policy, int datacenters) {
  BenchHost host(policy, datacenters);
  for (int i = 0; i < 2 * kNodes; ++i) host.Beat();  // warm up: fill the slots
  std::vector<int64_t> samples;
  for (auto _ : state) {
    const int64_t ns = host.Beat();
    state.SetIterationTime(static_cast<double>(ns) * 1e-9);
    samples.push_back(ns);
  }
  std::sort(samples.begin(), samples.end());
  auto pct = [&](double p) {
    return samples.empty() ? 0.0
                           : static_cast<double>(samples[static_cast<size_t>(p * (samples.size() - 1))]) / 1e3;
  };
  state.counters["median_us"] = pct(0.5);
  state.counters["p99_us"] = pct(0.99);
}

int Register() {
  for (const PolicyInfo* p : RegisteredPolicies()) {
    for (int k : {2, 10}) {
      benchmark::RegisterBenchmark((p->name + "/dcs:" + std::to_string(k)).c_str(), BM_Assign,
                                   p->name, k)
          ->UseManualTime()
          ->Iterations(20000)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return 0;
}
const int kRegistered = Register();

}  // namespace
}  // namespace mr::sched

BENCHMARK_MAIN();
