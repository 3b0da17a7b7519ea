// The conformance suite: every policy in RegisteredPolicies() (a new policy
// is covered as soon as it is registered) must keep the host's contract
// (scheduler.h), as Hadoop's TestJobQueueTaskScheduler holds every
// TaskScheduler to it:
//   - never more launches on a node than its free slots in one Assign, and
//     only pending tasks (the TestHost checks every launch);
//   - a failed task is pending again and is launched again;
//   - a lost node's tasks, and the finished maps of unfinished jobs, run
//     again elsewhere;
//   - under a seeded random stream of arrivals, completions, failures,
//     node losses and returns, every job completes.
// Also: the registry's errors and defaults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "scheduler/scheduler.h"
#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::CheckConsistent;
using test::Launch;
using test::MakeJob;
using test::MakePolicy;
using test::TestHost;
using ::testing::HasSubstr;

constexpr TimeMs kHeartbeatMs = 300;

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const PolicyInfo* p : RegisteredPolicies()) names.push_back(p->name);
  return names;
}

class SchedulerConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  SchedulerConformanceTest() : host(MakePolicy(GetParam())) {}

  // A heartbeat one interval after the previous event: policies that wait
  // (delay scheduling) see time pass.
  std::vector<Launch> Beat(NodeId node) {
    host.set_now(host.now() + kHeartbeatMs);
    return host.Heartbeat(node);
  }
  // Heartbeats the nodes round-robin, finishing every task as soon as it
  // launches, until `done` or `limit` heartbeats; returns every launch.
  template <typename Done>
  std::vector<Launch> RunUntil(const std::vector<NodeId>& nodes, Done done, int limit = 2000) {
    std::vector<Launch> all;
    for (int i = 0; i < limit && !done(); ++i) {
      for (const Launch& l : Beat(nodes[static_cast<size_t>(i) % nodes.size()])) {
        all.push_back(l);
        if (l.is_map) {
          host.FinishMap(l.job, l.index);
        } else {
          host.FinishReduce(l.job, l.index);
        }
      }
    }
    return all;
  }

  TestHost host;
};

TEST_P(SchedulerConformanceTest, NeverOverAssignsAndNeverLaunchesATaskTwice) {
  // Uneven slots in two datacenters and more work than slots.
  std::vector<NodeId> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(host.AddNode(i % 2, 1 + i % 3, i % 3));
  for (int j = 0; j < 4; ++j) {
    std::vector<std::vector<NodeId>> blocks;
    for (int m = 0; m < 15; ++m) blocks.push_back({nodes[static_cast<size_t>((m + j) % 6)]});
    Job job = MakeJob(blocks, /*reduces=*/3);
    job.slowstart = 0;  // reduces compete for slots from the start
    host.AddJob(job);
  }
  std::set<std::tuple<JobId, int32_t, bool>> launched;
  for (int round = 0; round < 20; ++round) {
    for (NodeId n : nodes) {
      for (const Launch& l : Beat(n)) {
        // Nothing finishes or fails, so a second launch would be a duplicate.
        EXPECT_TRUE(launched.insert({l.job, l.index, l.is_map}).second) << l;
      }
      ASSERT_EQ(CheckConsistent(host.state()), "");
    }
  }
  EXPECT_GT(launched.size(), 0u);
  EXPECT_EQ(host.violations(), 0);
  // Every slot is busy: work was left, so an idle slot would be a stall.
  for (NodeId n : nodes) EXPECT_EQ(host.state().node(n).free_map_slots(), 0) << n;
}

TEST_P(SchedulerConformanceTest, AFailedMapIsLaunchedAgain) {
  NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(0, 1, 1);
  JobId j = host.AddJob(MakeJob({{a}, {a}}, /*reduces=*/0));
  std::vector<Launch> on_a, on_b;
  for (int i = 0; i < 100 && on_a.empty(); ++i) on_a = Beat(a);
  // b's search meets a's running map, so a lazily cleaned index forgets it.
  for (int i = 0; i < 100 && on_b.empty(); ++i) on_b = Beat(b);
  ASSERT_EQ(on_a.size(), 1u);
  ASSERT_EQ(on_b.size(), 1u);
  const int32_t failed = on_a[0].index;
  host.FailMap(j, failed);
  EXPECT_EQ(host.job(j).maps[static_cast<size_t>(failed)].state, TaskState::kPending);
  host.FinishMap(j, on_b[0].index);
  RunUntil({a, b}, [&] { return host.job(j).done; });
  EXPECT_TRUE(host.job(j).done);
  EXPECT_EQ(host.job(j).maps[static_cast<size_t>(failed)].attempts, 2);
  EXPECT_EQ(host.violations(), 0);
}

TEST_P(SchedulerConformanceTest, AFailedReduceIsLaunchedAgain) {
  NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(1, 1, 1);
  JobId j = host.AddJob(MakeJob({{a}}, /*reduces=*/1));
  RunUntil({a, b}, [&] { return host.job(j).finished_maps == 1; });
  std::vector<Launch> got;
  for (int i = 0; i < 100 && got.empty(); ++i) got = Beat(i % 2 ? b : a);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_FALSE(got[0].is_map);
  host.FailReduce(j, 0);
  RunUntil({a, b}, [&] { return host.job(j).done; });
  EXPECT_TRUE(host.job(j).done);
  EXPECT_EQ(host.job(j).reduces[0].attempts, 2);
  EXPECT_EQ(host.violations(), 0);
}

TEST_P(SchedulerConformanceTest, ALostNodesTasksAndFinishedMapsRunAgainElsewhere) {
  NodeId a = host.AddNode(0, 4, 1), b = host.AddNode(0, 2, 1), c = host.AddNode(1, 2, 1);
  JobId j = host.AddJob(MakeJob({{a}, {a}, {a}, {a}, {a}, {a}}, /*reduces=*/1));
  // Run maps on a only until one has finished there and one still runs.
  bool finished_one = false;
  for (int i = 0; i < 200; ++i) {
    for (const Launch& l : Beat(a)) {
      if (l.is_map && !finished_one) {
        host.FinishMap(l.job, l.index);
        finished_one = true;
      }
    }
    if (finished_one && host.job(j).running_maps > 0) break;
  }
  ASSERT_TRUE(finished_one);
  ASSERT_GT(host.job(j).running_maps, 0);
  std::vector<int32_t> redo;
  for (const MapTask& m : host.job(j).maps) {
    if (m.node == a) redo.push_back(m.index);
  }
  host.LoseNode(a);
  EXPECT_EQ(host.job(j).finished_maps, 0);  // the output on a is gone
  std::vector<Launch> launches = RunUntil({b, c}, [&] { return host.job(j).done; });
  EXPECT_TRUE(host.job(j).done);
  for (int32_t index : redo) {
    EXPECT_EQ(host.job(j).maps[static_cast<size_t>(index)].attempts, 2) << "map " << index;
    EXPECT_NE(host.job(j).maps[static_cast<size_t>(index)].node, a);
  }
  for (const Launch& l : launches) EXPECT_NE(l.node, a);
  EXPECT_EQ(host.violations(), 0);
}

// Workers join a running cluster (issue 11): a node added while a job runs,
// in a datacenter the cluster did not have, is served like the first ones.
// A later job whose blocks live only on the new node completes with every
// task launched correctly, and the new node runs work.
TEST_P(SchedulerConformanceTest, ANodeThatJoinsARunningClusterTakesWork) {
  NodeId a = host.AddNode(0, 1, 1);
  JobId first = host.AddJob(MakeJob({{a}, {a}, {a}, {a}}, /*reduces=*/1));
  std::vector<Launch> before = RunUntil({a}, [&] { return host.job(first).finished_maps >= 1; });
  ASSERT_FALSE(before.empty());
  NodeId b = host.AddNode(/*dc=*/1, 2, 1);  // a new datacenter
  ASSERT_EQ(host.state().datacenters(), 2);
  JobId second = host.AddJob(MakeJob({{b}, {b}, {b}, {b}, {b}, {b}}, /*reduces=*/1));
  std::vector<Launch> after =
      RunUntil({a, b}, [&] { return host.job(first).done && host.job(second).done; });
  EXPECT_TRUE(host.job(first).done);
  EXPECT_TRUE(host.job(second).done);
  EXPECT_TRUE(std::any_of(after.begin(), after.end(), [&](const Launch& l) { return l.node == b; }));
  EXPECT_EQ(CheckConsistent(host.state()), "");
  EXPECT_EQ(host.violations(), 0);
}

// One random cluster and workload, driven by a seeded stream of events:
// 2–3 datacenters (racks for every third seed), 4–9 nodes, 4–8 jobs
// arriving over the first 1500 steps with 1–40 maps on 1–3 random replicas
// (or none), 0–3 reduces and a random slow-start. Each step is a heartbeat
// from a random live node, a completion, a failure, a node loss or a
// return. Failures and losses stop after kChaosSteps and the lost nodes come
// back; from then on every job must complete within kMaxSteps.
class RandomStream {
 public:
  static constexpr int kMaxSteps = 30000;
  static constexpr int kChaosSteps = 3000;

  RandomStream(const std::string& policy, uint64_t seed)
      : rng_(seed), host_(MakePolicy(policy, {}, seed)) {
    const int dcs = Uniform(2, 3);
    const bool racks = seed % 3 == 0;
    const int node_count = Uniform(4, 9);
    for (int i = 0; i < node_count; ++i) {
      const int dc = i % dcs;
      const int rack = racks ? dc * 2 + (i / dcs) % 2 : -1;
      nodes_.push_back(host_.AddNode(dc, Uniform(1, 3), Uniform(1, 2), rack));
    }
    const int job_count = Uniform(4, 8);
    for (int j = 0; j < job_count; ++j) arrivals_.push_back({Uniform(0, 1500), RandomJob()});
    std::stable_sort(arrivals_.begin(), arrivals_.end(),
                     [](const Arrival& x, const Arrival& y) { return x.step < y.step; });
  }

  // Runs to completion or kMaxSteps; returns the steps taken.
  int Run() {
    for (int step = 0; step < kMaxSteps; ++step) {
      host_.set_now(host_.now() + 100);
      while (next_ < arrivals_.size() && arrivals_[next_].step <= step) {
        arrivals_[next_].job.submit_ms = host_.now();
        host_.AddJob(arrivals_[next_++].job);
      }
      if (next_ == arrivals_.size() && host_.state().active_jobs().empty()) return step;
      Step(step < kChaosSteps);
      EXPECT_EQ(CheckConsistent(host_.state()), "") << "step " << step;
      EXPECT_EQ(host_.violations(), 0) << "step " << step;
      if (::testing::Test::HasFailure()) return step;
    }
    return kMaxSteps;
  }

  const ClusterState& state() { return host_.state(); }

 private:
  struct Arrival {
    int step;
    Job job;
  };
  struct Task {
    JobId job;
    int32_t index;
    bool is_map;
  };

  int Uniform(int lo, int hi) {  // [lo, hi]
    return lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }

  Job RandomJob() {
    std::vector<std::vector<NodeId>> blocks(static_cast<size_t>(Uniform(1, 40)));
    for (std::vector<NodeId>& replicas : blocks) {
      if (Uniform(0, 9) == 0) continue;  // no location
      std::vector<NodeId> pool = nodes_;
      std::shuffle(pool.begin(), pool.end(), rng_);
      replicas.assign(pool.begin(), pool.begin() + Uniform(1, 3));
    }
    Job job = MakeJob(blocks, Uniform(0, 3), Uniform(-1, 1));
    const double slowstarts[] = {0.0, 0.05, 0.5, 1.0};
    job.slowstart = slowstarts[Uniform(0, 3)];
    return job;
  }

  // A random running task, if any.
  std::optional<Task> Running() {
    std::vector<Task> running;
    for (JobId id : host_.state().active_jobs()) {
      for (const MapTask& m : host_.job(id).maps) {
        if (m.state == TaskState::kRunning) running.push_back({id, m.index, true});
      }
      for (const ReduceTask& r : host_.job(id).reduces) {
        if (r.state == TaskState::kRunning) running.push_back({id, r.index, false});
      }
    }
    if (running.empty()) return std::nullopt;
    return running[static_cast<size_t>(Uniform(0, static_cast<int>(running.size()) - 1))];
  }

  void Step(bool chaos) {
    if (!chaos && !dead_.empty()) {  // calm: every lost node comes back
      host_.ReturnNode(dead_.back());
      dead_.pop_back();
    }
    const int r = Uniform(0, 99);
    if (r < 45) {
      std::vector<NodeId> live;
      for (NodeId n : nodes_) {
        if (host_.state().node(n).live) live.push_back(n);
      }
      host_.Heartbeat(live[static_cast<size_t>(Uniform(0, static_cast<int>(live.size()) - 1))]);
    } else if (r < 85 || (r < 92 && !chaos)) {
      if (std::optional<Task> t = Running()) {
        if (t->is_map) {
          host_.FinishMap(t->job, t->index, Uniform(100, 5000));
        } else {
          host_.FinishReduce(t->job, t->index);
        }
      }
    } else if (r < 92) {
      if (std::optional<Task> t = Running()) {
        if (t->is_map) {
          host_.FailMap(t->job, t->index);
        } else {
          host_.FailReduce(t->job, t->index);
        }
      }
    } else if (r < 94 && chaos) {
      NodeId victim = nodes_[static_cast<size_t>(Uniform(0, static_cast<int>(nodes_.size()) - 1))];
      // Keep at least two nodes alive.
      if (host_.state().node(victim).live && dead_.size() + 2 < nodes_.size()) {
        host_.LoseNode(victim);
        dead_.push_back(victim);
      }
    } else if (r < 97 && !dead_.empty()) {
      host_.ReturnNode(dead_.front());
      dead_.erase(dead_.begin());
    }
  }

  std::mt19937_64 rng_;
  TestHost host_;
  std::vector<NodeId> nodes_;
  std::vector<Arrival> arrivals_;
  size_t next_ = 0;
  std::vector<NodeId> dead_;
};

TEST_P(SchedulerConformanceTest, EveryJobCompletesUnderARandomEventStream) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomStream stream(GetParam(), seed);
    EXPECT_LT(stream.Run(), RandomStream::kMaxSteps) << "not every job completed";
    for (const Job& job : stream.state().jobs()) EXPECT_TRUE(job.done) << "job " << job.id;
    if (HasFailure()) return;
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, SchedulerConformanceTest, ::testing::ValuesIn(PolicyNames()),
                         TestName);

// ---- The registry ----

TEST(SchedulerRegistryTest, PoliciesAreSortedNamedAndMakeWithDefaults) {
  const auto& policies = RegisteredPolicies();
  ASSERT_FALSE(policies.empty());
  for (size_t i = 0; i < policies.size(); ++i) {
    const PolicyInfo& p = *policies[i];
    if (i > 0) {
      EXPECT_LT(policies[i - 1]->name, p.name);
    }
    EXPECT_FALSE(p.paper.empty()) << p.name;
    for (const SchedulerParamSpec& spec : p.params) EXPECT_FALSE(spec.help.empty()) << spec.name;
    auto made = MakeScheduler(p.name, {}, {});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ((*made)->name(), p.name);
  }
}

TEST(SchedulerRegistryTest, UnknownNameListsTheValidOnes) {
  auto got = MakeScheduler("lifo", {}, {});
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().IsInvalidArgument());
  EXPECT_THAT(got.status().message(), HasSubstr("unknown scheduler 'lifo' (valid: "));
  EXPECT_THAT(got.status().message(), HasSubstr("fifo"));
}

TEST(SchedulerRegistryTest, UnknownParameterListsTheParameters) {
  auto got = MakeScheduler("fifo", {{"capacitypad", 0.5}}, {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "scheduler 'fifo': unknown parameter 'capacitypad' (parameters: capacity_pad, "
            "min_cluster_size_for_padding, topology)");
}

TEST(SchedulerRegistryTest, WrongTypeIsRejectedAndIntWorksForDouble) {
  auto got = MakeScheduler("fifo", {{"min_cluster_size_for_padding", 2.5}}, {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "scheduler 'fifo': parameter 'min_cluster_size_for_padding' must be an int, got a "
            "double (2.5)");
  auto str = MakeScheduler("fifo", {{"capacity_pad", std::string("x")}}, {});
  ASSERT_FALSE(str.ok());
  EXPECT_THAT(str.status().message(), HasSubstr("must be a double, got a string (\"x\")"));
  EXPECT_TRUE(MakeScheduler("fifo", {{"capacity_pad", int64_t{0}}}, {}).ok());
}

TEST(SchedulerRegistryTest, ParamHelpers) {
  EXPECT_EQ(ParamToString(ParamValue{0.01}), "0.01");
  EXPECT_EQ(ParamToString(ParamValue{1.0}), "1.0");
  EXPECT_EQ(ParamToString(ParamValue{int64_t{3}}), "3");
  EXPECT_EQ(ParamToString(ParamValue{true}), "true");
  EXPECT_EQ(ParamToString(ParamValue{std::string("a\"b")}), "\"a\\\"b\"");
  SchedulerParams p = {{"x", int64_t{2}}};
  EXPECT_EQ(ParamDouble(p, "x"), 2.0);
  EXPECT_EQ(ParamInt(p, "x"), 2);
}

}  // namespace
}  // namespace mr::sched
