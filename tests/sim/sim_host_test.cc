// The simulator's host: a hand-computed run, the Launcher REQUIRES as hard
// errors, conservation of tasks under failures for every policy, and
// byte-identical output for the same seed.
#include <gtest/gtest.h>

#include <numeric>
#include <type_traits>

#include "scheduler/scheduler.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

using test::Policy;
using test::SmallScenario;

RunResult MustRun(const Scenario& sc, const std::string& policy) {
  auto w = MakeWorkload(sc);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto r = RunOne(sc, *w, Policy(policy));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : RunResult{};
}

// Three nodes, one map slot each, blocks 0/1/2 on nodes 0/1/2 (round-robin,
// one replica), heartbeats at 0, 333 and 666 ms, one job of three 10 s maps
// and one 5 s reduce at t = 0, FIFO. By hand: map i starts at node i's first
// heartbeat (0, 333, 666 ms), node-local, and ends 10 s later; node 0's
// out-of-band heartbeat at 10000 launches the reduce there (slow-start: 1 of
// 3 maps done). Without a network the fetches take no time: the reduce ends
// at 10666 + 5000.
TEST(SimHost, HandComputedThreeNodes) {
  Scenario sc = SmallScenario();
  RunResult r = MustRun(sc, "fifo");
  EXPECT_EQ(r.stopped, "done");
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].finish_ms, 15666);
  EXPECT_EQ(r.all.maps_total, 3);
  EXPECT_EQ(r.all.maps_level[0], 3);  // all node-local
  EXPECT_EQ(r.node_maps, (std::vector<int64_t>{1, 1, 1}));
  // Map response: (10000 + 10333 + 10666) / 3 from the submit at 0.
  EXPECT_DOUBLE_EQ(r.map_response_ms_sum, 10000 + 10333 + 10666);
  // Shuffle: 128 MB (fp 1) from each map; map 0's on the reducer's node.
  EXPECT_DOUBLE_EQ(r.all.shuffle_mb[static_cast<int>(Span::kNode)], 128);
  EXPECT_DOUBLE_EQ(r.all.shuffle_mb[static_cast<int>(Span::kDatacenter)], 256);
  EXPECT_EQ(InterDcBytes(r.all), 0);
}

// The same run with 10 MB/s node links: the reducer on node 0 fetches
// 128 MB from node 1 at 10333 (up(1) and down(0) each busy 12.8 s, so done
// at 23133) and from node 2 at 10666 (up(2) free, down(0) busy until 23133:
// done at 35933); the reduce computes 5 s more.
TEST(SimHost, HandComputedShuffleOverLinks) {
  Scenario sc = SmallScenario();
  sc.network.enabled = true;
  sc.network.node_mb_s = 10;
  RunResult r = MustRun(sc, "fifo");
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].finish_ms, 35933 + 5000);
}

// A remote map reads its block first: one node holds every block (pool of
// one block), the other two read 128 MB at 64 MB/s (2 s) before 10 s of
// compute, times the remote slowdown 1.5.
TEST(SimHost, RemoteMapsReadThenComputeWithSlowdown) {
  Scenario sc = SmallScenario();
  sc.data.pool_blocks = 1;
  sc.network.enabled = true;
  sc.network.node_mb_s = 64;
  sc.service.remote_slowdown = 1.5;
  sc.job_types[0].reduces = 0;
  RunResult r = MustRun(sc, "fifo");
  EXPECT_EQ(r.all.maps_level[0], 1);
  EXPECT_EQ(r.all.maps_level[2], 2);
  // Node 0 at 0: 10 s. Node 1 at 333: up(0) busy 2 s, then 15 s. Node 2 at
  // 666: up(0) busy until 4333, then 15 s: 19333.
  EXPECT_EQ(r.jobs[0].finish_ms, 19333);
  EXPECT_DOUBLE_EQ(r.all.input_mb[static_cast<int>(Span::kDatacenter)], 256);
}

// ---- Time only runs forward ----

// Pushing an event before the last popped one is a programming error: the
// queue aborts instead of letting time run backwards.
TEST(SimEventQueueDeathTest, PushIntoThePastAborts) {
  EventQueue q;
  q.Push(10, EventKind::kSample);
  q.Push(10, EventKind::kTick);  // the same instant is fine
  EXPECT_EQ(q.Pop().time, 10);
  q.Push(10, EventKind::kSample);
  EXPECT_DEATH(q.Push(9, EventKind::kMapEnd, 3, 4, 1), "EventQueue::Push at 9 ms.*before the current time 10 ms");
}

// The review's reproduction: one node with one map slot, twenty 10 s maps,
// 30 % of attempts failing. A reduce launched early learns its end only when
// its last map finishes; its failure instant must not lie before that.
TEST(SimHost, FailedReduceNeverEndsBeforeItsMaps) {
  Scenario sc = SmallScenario(/*nodes=*/1, 1, 0, /*jobs=*/1, /*maps=*/20);
  sc.run.task_failure_prob = 0.3;
  sc.seed = 2;
  for (const sched::PolicyInfo* info : sched::RegisteredPolicies()) {
    SCOPED_TRACE(info->name);
    RunResult r = MustRun(sc, info->name);
    ASSERT_EQ(r.jobs.size(), 1u);
    EXPECT_EQ(r.stopped, "done");
    EXPECT_GE(r.jobs[0].finish_ms, 20 * 10000);  // the maps alone take 200 s on one slot
  }
}

// A run stopped at end_ms says so, even when the last backlog sample is
// above max_backlog (job 0's 3 maps at the sample at 0, 6 at end_ms).
TEST(SimHost, StoppedAtEndMsIsNotOverwrittenByTheLastSample) {
  Scenario sc = SmallScenario(3, 1, 0, /*jobs=*/2, /*maps=*/3, /*map_ms=*/10000, /*gap_ms=*/2000);
  sc.run.end_ms = 5000;
  sc.run.max_backlog = 3;
  sc.run.sample_ms = 1'000'000;
  RunResult r = MustRun(sc, "fifo");
  EXPECT_EQ(r.stopped, "end_ms");
  EXPECT_EQ(r.end_ms, 5000);
}

// ---- Locality, as the master records it ----

// Launches map 0 on node 1 while prefetching its block (held by node 0) to
// node 1: the copy lands during the map's run, but the map was launched
// without a local replica.
class PrefetchThenLaunch : public sched::Scheduler {
 public:
  const char* name() const override { return "prefetch-then-launch"; }
  void Assign(const sched::ClusterState& s, const sched::Heartbeat& hb, sched::Launcher& l) override {
    if (hb.node != 1 || s.active_jobs().empty()) return;
    const sched::JobId job = s.active_jobs()[0];
    const sched::MapTask& m = s.job(job).maps[0];
    if (m.state != sched::TaskState::kPending) return;
    l.LaunchMap(job, 0);
    l.Prefetch(m.block, 0, 1);
  }
};

TEST(SimHost, LocalityIsJudgedAtLaunch) {
  Scenario sc = SmallScenario(/*nodes=*/2, 1, 0, /*jobs=*/1, /*maps=*/1);
  sc.job_types[0].reduces = 0;
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->replicas[w->jobs[0].blocks[0]], (std::vector<sched::NodeId>{0}));
  SimHost host(sc, *w);
  auto r = host.Run(std::make_unique<PrefetchThenLaunch>(), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->prefetches, 1);
  EXPECT_EQ(r->all.maps_total, 1);
  EXPECT_EQ(r->all.maps_level[static_cast<int>(sched::Locality::kNode)], 0);
  EXPECT_EQ(r->all.maps_level[static_cast<int>(sched::Locality::kDatacenter)], 1);
}

// A finished map whose node is lost runs again; it counts once, by its last
// run. Maps i end on node i at 10000 + 333 i; the reduce (node 0) waits for
// map 2; node 1 is lost at 10500 with map 1's output, which runs again on
// node 0 or 2 with its only replica on the dead node (datacenter-level).
TEST(SimHost, RedoneMapCountsOnceByItsLastRun) {
  Scenario sc = SmallScenario();
  sc.run.failures.push_back(NodeFailure{1, 10500, -1});
  RunResult r = MustRun(sc, "fifo");
  EXPECT_EQ(r.stopped, "done");
  EXPECT_EQ(r.redone_maps, 1);
  EXPECT_EQ(r.map_launches, 4);
  EXPECT_EQ(r.all.maps_total, 3);
  EXPECT_EQ(r.all.maps_level[static_cast<int>(sched::Locality::kNode)], 2);
  EXPECT_EQ(r.all.maps_level[static_cast<int>(sched::Locality::kDatacenter)], 1);
  EXPECT_EQ(r.node_maps[1], 0);
  EXPECT_EQ(std::accumulate(r.node_maps.begin(), r.node_maps.end(), int64_t{0}), 3);
}

// The host keeps references to its scenario and workload: temporaries,
// which would dangle, do not compile.
static_assert(std::is_constructible_v<SimHost, const Scenario&, const Workload&>);
static_assert(!std::is_constructible_v<SimHost, const Scenario&, Workload>);
static_assert(!std::is_constructible_v<SimHost, Scenario, const Workload&>);

// ---- The Launcher REQUIRES are hard errors ----

// A deliberately broken policy: launches the first pending map of the first
// job `per_heartbeat` times per heartbeat (the same task twice if 2), or
// launches from OnTick.
class BrokenPolicy : public sched::Scheduler {
 public:
  BrokenPolicy(int per_heartbeat, bool in_tick) : per_heartbeat_(per_heartbeat), in_tick_(in_tick) {}
  const char* name() const override { return "broken"; }
  void Assign(const sched::ClusterState& s, const sched::Heartbeat&, sched::Launcher& l) override {
    if (s.active_jobs().empty()) return;
    for (int i = 0; i < per_heartbeat_; ++i) l.LaunchMap(s.active_jobs()[0], first_pending(s));
  }
  sched::TimeMs tick_ms() const override { return in_tick_ ? 500 : 0; }
  void OnTick(const sched::ClusterState& s, sched::TimeMs, sched::Launcher& l) override {
    if (!s.active_jobs().empty()) l.LaunchMap(s.active_jobs()[0], 0);
  }

 private:
  int32_t first_pending(const sched::ClusterState& s) const {
    for (const sched::MapTask& m : s.job(s.active_jobs()[0]).maps) {
      if (m.state == sched::TaskState::kPending) return m.index;
    }
    return 0;
  }
  int per_heartbeat_;
  bool in_tick_;
};

Status RunBroken(int per_heartbeat, bool in_tick) {
  Scenario sc = SmallScenario();
  auto w = MakeWorkload(sc);
  SimHost host(sc, *w);
  return host.Run(std::make_unique<BrokenPolicy>(per_heartbeat, in_tick), false).status();
}

TEST(SimHost, LaunchBeyondFreeSlotsIsAHardError) {
  // Two launches on a one-slot node: the second is refused.
  Status s = RunBroken(2, false);
  EXPECT_TRUE(s.IsFailedPrecondition()) << s.ToString();
  EXPECT_NE(s.message().find("broken: launched map 0/"), std::string::npos) << s.message();
}

TEST(SimHost, LaunchOutsideAssignIsAHardError) {
  Status s = RunBroken(0, true);
  EXPECT_TRUE(s.IsFailedPrecondition());
  EXPECT_NE(s.message().find("outside Assign"), std::string::npos) << s.message();
}

TEST(SimHost, LaunchOfARunningTaskIsAHardError) {
  // One launch per heartbeat of map 0 even when it runs: node 1 relaunches it.
  class Again : public BrokenPolicy {
   public:
    Again() : BrokenPolicy(1, false) {}
    void Assign(const sched::ClusterState& s, const sched::Heartbeat&, sched::Launcher& l) override {
      if (!s.active_jobs().empty()) l.LaunchMap(s.active_jobs()[0], 0);
    }
  };
  Scenario sc = SmallScenario();
  auto w = MakeWorkload(sc);
  SimHost host(sc, *w);
  Status s = host.Run(std::make_unique<Again>(), false).status();
  EXPECT_NE(s.message().find("which is not pending"), std::string::npos) << s.ToString();
}

// ---- Conservation, for every registered policy ----

// Six nodes in two datacenters with racks, 40 jobs with reduces, 10 % of
// attempts failing and a node lost for a while: every job finishes, every
// task succeeds at least once, and launches = successes + failed attempts.
TEST(SimHost, EveryTaskRunsOnceUnlessItFailedForEveryPolicy) {
  Scenario sc = SmallScenario(/*nodes=*/6, /*dcs=*/2, /*racks=*/4, /*jobs=*/40, /*maps=*/5,
                              /*map_ms=*/4000, /*gap_ms=*/3000);
  sc.data.replication = 2;
  sc.data.placement = "hdfs";
  sc.job_types[0].reduces = 2;
  sc.cluster.map_slots = 2;
  sc.run.task_failure_prob = 0.1;
  sc.run.failures.push_back(NodeFailure{3, 20000, 60000});
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  for (const sched::PolicyInfo* info : sched::RegisteredPolicies()) {
    SCOPED_TRACE(info->name);
    sched::SchedulerEnv env;
    env.heartbeat_ms = sc.cluster.heartbeat_ms;
    auto policy = sched::MakeScheduler(info->name, {}, env);
    ASSERT_TRUE(policy.ok());
    SimHost host(sc, *w);
    auto r = host.Run(std::move(policy).value(), false);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->stopped, "done");
    EXPECT_EQ(r->all.jobs, 40);
    int64_t launches = 0, successes = 0;
    for (size_t j = 0; j < host.map_launches().size(); ++j) {
      for (size_t i = 0; i < host.map_launches()[j].size(); ++i) {
        EXPECT_GE(host.map_successes()[j][i], 1) << "map " << j << "/" << i;
        launches += host.map_launches()[j][i];
        successes += host.map_successes()[j][i];
      }
      for (size_t i = 0; i < host.reduce_launches()[j].size(); ++i) {
        EXPECT_EQ(host.reduce_successes()[j][i], 1) << "reduce " << j << "/" << i;
        launches += host.reduce_launches()[j][i];
        successes += host.reduce_successes()[j][i];
      }
    }
    EXPECT_GT(r->failed_attempts, 0);
    EXPECT_EQ(launches, successes + r->failed_attempts);
    EXPECT_EQ(successes, 40 * (5 + 2) + r->redone_maps);
    EXPECT_EQ(r->all.maps_total, 40 * 5);  // each map task once, by its last successful run
  }
}

// ---- Determinism ----

TEST(SimHost, SameSeedSameBytesForEveryPolicy) {
  Scenario sc = SmallScenario(8, 2, 4, 30, 6, 3000, 2000);
  sc.data.replication = 2;
  sc.network.enabled = true;
  sc.network.node_mb_s = 100;
  sc.network.dc_mb_s = 50;
  sc.job_types[0].map.kind = Dist::Kind::kExponential;
  sc.workload.arrival = "poisson";
  sc.run.task_failure_prob = 0.05;
  for (const sched::PolicyInfo* info : sched::RegisteredPolicies()) {
    SCOPED_TRACE(info->name);
    std::string first, second;
    for (std::string* out : {&first, &second}) {
      auto w = MakeWorkload(sc);
      auto r = RunOne(sc, *w, Policy(info->name));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      *out = RunsToJson({*r});
    }
    EXPECT_EQ(first, second);
    sc.seed = 2;  // and another seed gives another run
    auto w = MakeWorkload(sc);
    auto other = RunOne(sc, *w, Policy(info->name));
    sc.seed = 1;
    ASSERT_TRUE(other.ok());
    EXPECT_NE(RunsToJson({*other}), first);
  }
}

}  // namespace
}  // namespace mr::sim
