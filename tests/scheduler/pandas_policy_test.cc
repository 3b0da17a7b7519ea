// Tests for scheduler/pandas_policy.h, one decision at a time; each says
// why Pandas (paper 001, §IV, Algs. 1-3, Eq. 1) must decide so.
#include "scheduler/pandas_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PandasPolicy& Pandas(TestHost& host) { return static_cast<PandasPolicy&>(host.policy()); }

// Fixed thresholds, so a test isolates one step of Alg. 2.
SchedulerParams Thresholds(double tr, double ts) { return {{"tr", tr}, {"ts", ts}}; }

// ---- Step 1: load balancing on job arrival (Alg. 1) ----

TEST(PandasPolicyTest, AMapJoinsTheShortestQueueAmongItsLocalNodes) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{a}, {a}, {a, b}}));
  // Q_a holds two maps when map 2 arrives, Q_b none: it joins b.
  EXPECT_EQ(Pandas(host).assigned(j, 2), b);
  EXPECT_EQ(Pandas(host).queue_length(a), 2);
}

TEST(PandasPolicyTest, TiesAreBrokenByTheSeededGenerator) {
  // The same seed makes the same choice (a forced RNG: the policy draws only
  // from its SchedulerEnv seed) ...
  auto choice = [](uint64_t seed) {
    TestHost host(MakePolicy("fifo-pandas", {}, seed));
    NodeId a = host.AddNode(0), b = host.AddNode(0);
    JobId j = host.AddJob(MakeJob({{a, b}}));
    return Pandas(host).assigned(j, 0);
  };
  for (uint64_t seed = 1; seed <= 20; ++seed) EXPECT_EQ(choice(seed), choice(seed)) << seed;
  // ... and over seeds both tied queues are chosen about equally ("ties are
  // broken randomly", §IV-A), not always the first as Alg. 1 prints it.
  int first = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) first += choice(seed) == 0 ? 1 : 0;
  EXPECT_GT(first, 150);
  EXPECT_LT(first, 250);
}

// ---- Step 3: the heartbeat (Alg. 2) ----

TEST(PandasPolicyTest, LocalHeadOfLineComesFirst) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(0, 0)));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{a}, {a}, {a, b}, {b}, {b}}));
  // Q_b (maps 2-4) is longer, but a serves its own head of line first.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(PandasPolicyTest, LocalQueuedElsewhereComesFromTheLongestQueue) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(100, 100)));
  NodeId a = host.AddNode(0, /*map_slots=*/3), b = host.AddNode(0), c = host.AddNode(0);
  // Q_a = {0, 1, 2}; map 3 (local to a) joins b, map 4 (local to a) joins
  // c, whose queue then grows to three.
  JobId j = host.AddJob(MakeJob({{a}, {a}, {a}, {a, b}, {a, c}, {c}, {c}}, /*reduces=*/0));
  ASSERT_EQ(Pandas(host).assigned(j, 3), b);
  ASSERT_EQ(Pandas(host).assigned(j, 4), c);
  host.Heartbeat(a);
  for (int32_t i = 0; i < 3; ++i) host.FinishMap(j, i);
  // Q_a is empty: a takes its local maps queued elsewhere, from the longest
  // queue (|Q_c| = 3) first, then from Q_b; maps 5-6 are not local to a and
  // T_r = 100 keeps them in Q_c.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 4, a), Map(j, 3, a)));
}

TEST(PandasPolicyTest, RackLocalIsServedWhenTheLongestRackQueueExceedsTr) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(1, 100)));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{b}, {b}}));
  // |Q_b| = 2 > T_r = 1: the last map in Q_b would wait longer than the
  // rack slowdown costs (§IV-B), so a takes Q_b's head of line.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(PandasPolicyTest, RackLocalWaitsWhenTheLongestRackQueueIsAtTr) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(1, 100)));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  host.AddJob(MakeJob({{b}}));
  // |Q_b| = 1 is not above T_r = 1: the map is better off waiting for b.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
}

TEST(PandasPolicyTest, RackLocalComesBeforeALongerRemoteQueue) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(0, 0)));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0), c = host.AddNode(1);
  JobId j = host.AddJob(MakeJob({{c}, {c}, {c}, {b}}));
  // Q_c (another datacenter) is longer, but rack-local tasks come first.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 3, a)));
}

TEST(PandasPolicyTest, RemoteIsServedOnlyAboveTs) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(0, 2)));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(1);
  JobId j = host.AddJob(MakeJob({{b}, {b}}));
  // |Q_b| = 2 is not above T_s = 2: a stays idle.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
  // A third map makes |Q_b| = 3 > T_s: a relieves the hot-spot.
  host.AddJob(MakeJob({{b}}));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(PandasPolicyTest, WithRacksAnotherRackIsRemote) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(0, 100)));
  NodeId a = host.AddNode(0, 2, 2, /*rack=*/0), b = host.AddNode(0, 2, 2, /*rack=*/1);
  host.AddJob(MakeJob({{b}, {b}}));
  // Racks are configured, so b (same datacenter, other rack) is remote for
  // a and T_s = 100, not T_r = 0, applies.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
}

TEST(PandasPolicyTest, MapsWithNoLiveLocalNodeRunAnywhere) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(100, 100)));
  NodeId a = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{}}));
  // No local queue to wait in, so no threshold to pass (not in the paper).
  EXPECT_EQ(Pandas(host).assigned(j, 0), PandasPolicy::kUnplaced);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

// ---- Step 2: thresholds (Eq. 1) ----

// Runs one local (a), one rack-local (b) and one remote (c) map of a job on
// a's block and finishes them in 1000, 2000 and 3000 ms.
JobId RunOneOfEachLocality(TestHost& host, NodeId a, NodeId b, NodeId c) {
  JobId j = host.AddJob(MakeJob({{a}, {a}, {a}, {a}}, /*reduces=*/0));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  EXPECT_THAT(host.Heartbeat(b), ElementsAre(Map(j, 1, b)));  // T_r unmeasured: 0
  EXPECT_THAT(host.Heartbeat(c), ElementsAre(Map(j, 2, c)));  // T_s unmeasured: 0
  host.FinishMap(j, 0, 1000);
  host.FinishMap(j, 1, 2000);
  host.FinishMap(j, 2, 3000);
  return j;
}

TEST(PandasPolicyTest, ThresholdsAreTheAverageSlowdownsOfEq1) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(1, 1);
  RunOneOfEachLocality(host, a, b, c);
  // T_r = σ_r / σ_l = 2000 / 1000, T_s = σ_s / σ_l = 3000 / 1000.
  EXPECT_DOUBLE_EQ(Pandas(host).rack_threshold(host.state()), 2.0);
  EXPECT_DOUBLE_EQ(Pandas(host).remote_threshold(host.state()), 3.0);
}

TEST(PandasPolicyTest, FixedThresholdsOverrideEq1) {
  TestHost host(MakePolicy("fifo-pandas", Thresholds(0.25, 0.5)));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(1, 1);
  RunOneOfEachLocality(host, a, b, c);
  // The paper fixes T per trace (§VII-A4); measured slowdowns (2 and 3)
  // do not move it.
  EXPECT_DOUBLE_EQ(Pandas(host).rack_threshold(host.state()), 0.25);
  EXPECT_DOUBLE_EQ(Pandas(host).remote_threshold(host.state()), 0.5);
}

TEST(PandasPolicyTest, ASlidingWindowForgetsOldSamples) {
  TestHost host(MakePolicy("fifo-pandas", {{"window", int64_t{1}}}));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(1, 1);
  JobId j = RunOneOfEachLocality(host, a, b, c);
  ASSERT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 3, a)));
  host.FinishMap(j, 3, 4000);
  // With one sample per locality σ_l is the latest local run, 4000 ms (not
  // the all-time 2500), so T_r = 2000 / 4000.
  EXPECT_DOUBLE_EQ(Pandas(host).rack_threshold(host.state()), 0.5);
}

// ---- The composed job order (Alg. 2 vs Alg. 3) ----

TEST(PandasPolicyTest, FifoServesTheOldestJobInTheQueue) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0, /*map_slots=*/2);
  JobId j0 = host.AddJob(MakeJob({{a}, {a}}, 0, 0, /*submit_ms=*/0));
  host.AddJob(MakeJob({{a}, {a}}, 0, 0, /*submit_ms=*/1));
  // Alg. 2: the queue is FIFO, so the first job takes both slots.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j0, 1, a)));
}

TEST(PandasPolicyTest, FairSortsTheJobsInTheQueueByFairSharing) {
  TestHost host(MakePolicy("fair-pandas"));
  NodeId a = host.AddNode(0, /*map_slots=*/2);
  JobId j0 = host.AddJob(MakeJob({{a}, {a}}, 0, 0, /*submit_ms=*/0));
  JobId j1 = host.AddJob(MakeJob({{a}, {a}}, 0, 0, /*submit_ms=*/1));
  // Alg. 3 lines 3-4: once j0 runs a map, j1 (running none) is further
  // below its share and gets the second slot.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j1, 0, a)));
}

// ---- Reduces and events (not in the paper) ----

TEST(PandasPolicyTest, OneReducePerHeartbeatAfterSlowStart) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0, /*map_slots=*/1, /*reduce_slots=*/2);
  Job job = MakeJob({{a}}, /*reduces=*/2);
  job.slowstart = 0;
  JobId j = host.AddJob(job);
  // As Hadoop's schedulers: at most one reduce per heartbeat.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Reduce(j, 0, a)));
}

TEST(PandasPolicyTest, AFailedMapRejoinsTheShortestLocalQueue) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{b}, {b}, {a, b}}));
  ASSERT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 2, a)));
  host.FailMap(j, 2);
  // Alg. 1 again: Q_a is empty, Q_b holds two.
  EXPECT_EQ(Pandas(host).assigned(j, 2), a);
}

TEST(PandasPolicyTest, ALostNodesQueueIsRedistributedByAlg1) {
  TestHost host(MakePolicy("fifo-pandas"));
  NodeId a = host.AddNode(0), b = host.AddNode(0), c = host.AddNode(0);
  // Q_c = {0, 1}, Q_b = {2}, Q_a = {3, 4}.
  JobId j = host.AddJob(MakeJob({{c}, {c}, {b}, {a, b, c}, {a}}));
  ASSERT_EQ(Pandas(host).assigned(j, 3), a);
  host.LoseNode(a);
  // Map 3 moves to the shorter of its live local queues; map 4 has none.
  EXPECT_EQ(Pandas(host).assigned(j, 3), b);
  EXPECT_EQ(Pandas(host).assigned(j, 4), PandasPolicy::kUnplaced);
  // When a is back, it takes its unplaced map again.
  host.ReturnNode(a);
  EXPECT_EQ(Pandas(host).assigned(j, 4), a);
}

TEST(PandasPolicyTest, BadThresholdsAreRejected) {
  auto got = MakeScheduler("fifo-pandas", {{"ts", -2.0}}, {});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("ts must be >= 0, or -1"));
  EXPECT_FALSE(MakeScheduler("fair-pandas", {{"window", int64_t{-1}}}, {}).ok());
}

}  // namespace
}  // namespace mr::sched
