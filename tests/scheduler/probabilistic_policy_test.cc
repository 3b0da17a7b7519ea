// Tests of the probabilistic network-aware policy (Shen et al., paper 002):
// the cost functions on the paper's Fig. 2 example, Eq. 4, Algorithms 1 and
// 2 one decision at a time (a forced draw decides accept/reject), a seeded
// statistical test of the acceptance rate, and the starvation escape.
#include "scheduler/probabilistic_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::Launch;
using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;

// A policy whose every draw is `u` (counting the draws in `*draws`).
std::unique_ptr<Scheduler> Forced(double u, int* draws, ProbabilisticOptions o = {},
                                  bool fifo = false) {
  std::unique_ptr<JobOrder> order;
  if (fifo) {
    order = std::make_unique<FifoOrder>();
  } else {
    order = std::make_unique<FairOrder>();
  }
  return std::make_unique<ProbabilisticPolicy>(o, std::move(order), [u, draws] {
    ++*draws;
    return u;
  });
}

// The Fig. 2 cluster: D1..D4 with the paper's distance matrix H; sizes in MB.
struct Fig2 {
  explicit Fig2(TestHost& host) : h(host) {
    for (int i = 0; i < 4; ++i) d.push_back(h.AddNode(0, 2, 2));
    h.state().SetDistances({{0, 4, 2, 8}, {4, 0, 10, 4}, {2, 10, 0, 6}, {8, 4, 6, 0}});
    Job job = MakeJob({{d[0]}, {d[1]}}, /*reduces=*/2);  // M1's block on D1, M2's on D2
    for (MapTask& m : job.maps) m.bytes = 128;
    job.slowstart = 0;
    j = h.AddJob(job);
  }
  // The example's map placement (M1 on D3, M2 on D2), finished with the
  // intermediate sizes of matrix I.
  void PlaceMaps() {
    const int64_t i[2][2] = {{10, 5}, {20, 10}};
    const NodeId at[2] = {d[2], d[1]};
    for (int32_t m = 0; m < 2; ++m) {
      h.state().LaunchMap(j, m, at[m]);
      MapTask& t = h.state().mutable_job(j).maps[static_cast<size_t>(m)];
      t.bytes_read = 128;
      t.partition_bytes = {i[m][0], i[m][1]};
      h.state().FinishMap(j, m, 1000);
    }
  }
  TestHost& h;
  std::vector<NodeId> d;
  JobId j = 0;
};

TEST(ProbabilisticCostTest, Fig2MapCosts) {
  int draws = 0;
  TestHost host(Forced(0, &draws));
  Fig2 fig(host);
  const Job& job = host.job(fig.j);
  // §II-B: M1 on D3 reads 128 MB over distance 2; M2 on D2 reads locally.
  EXPECT_EQ(MapCost(host.state(), job.maps[0], fig.d[2]), 256);
  EXPECT_EQ(MapCost(host.state(), job.maps[1], fig.d[1]), 0);
}

TEST(ProbabilisticCostTest, Fig2ReduceCostOfTheExampleAssignment) {
  int draws = 0;
  TestHost host(Forced(0, &draws));
  Fig2 fig(host);
  fig.PlaceMaps();
  const Job& job = host.job(fig.j);
  // R1 on D1: 2×10 + 4×20; R2 on D3: 0×5 + 10×10 (Eq. 3, maps finished).
  const double r1 = ReduceCost(host.state(), job, 0, fig.d[0]);
  const double r2 = ReduceCost(host.state(), job, 1, fig.d[2]);
  EXPECT_EQ(r1, 100);
  EXPECT_EQ(r2, 100);
  EXPECT_EQ(r1 + r2, 200);  // the sum of Fig. 2(b)'s link costs
}

TEST(ProbabilisticCostTest, IntermediateSizesAreEstimatedFromMapProgress) {
  // §II-B2's example: M1 has 5 MB for R1 at 90 % read, M2 1 MB at 10 %.
  int draws = 0;
  TestHost host(Forced(0, &draws));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  host.state().SetDistances({{0, 1}, {1, 0}});
  Job job = MakeJob({{a}, {b}}, /*reduces=*/1);
  for (MapTask& m : job.maps) m.bytes = 100;
  JobId j = host.AddJob(job);
  host.state().LaunchMap(j, 0, a);
  host.state().LaunchMap(j, 1, b);
  MapTask& m1 = host.state().mutable_job(j).maps[0];
  m1.bytes_read = 90;
  m1.partition_bytes = {5};
  MapTask& m2 = host.state().mutable_job(j).maps[1];
  m2.bytes_read = 10;
  m2.partition_bytes = {1};
  // Estimated outputs 5.56 and 10: M2's node is the cheaper one, though
  // the raw sizes (5 vs 1) would say M1's.
  EXPECT_DOUBLE_EQ(ReduceCost(host.state(), host.job(j), 0, a), 10.0);
  EXPECT_DOUBLE_EQ(ReduceCost(host.state(), host.job(j), 0, b), 5.0 * 100 / 90);
}

TEST(ProbabilisticCostTest, PlacementProbabilityIsEq4) {
  // Zero cost is certain (§II-C, "we let P = 1 if C = 0").
  EXPECT_EQ(PlacementProbability(5, 0), 1);
  EXPECT_DOUBLE_EQ(PlacementProbability(1, 1), 1 - std::exp(-1.0));
  EXPECT_DOUBLE_EQ(PlacementProbability(2, 4), 1 - std::exp(-0.5));
}

TEST(ProbabilisticPolicyTest, ALocalMapLaunchesWithoutADraw) {
  int draws = 0;
  TestHost host(Forced(0.999, &draws));
  NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(1, 1, 1);
  JobId j = host.AddJob(MakeJob({{b}, {a}}, 0));
  // Cost 0 on a gives P = 1: launched whatever the draw would say.
  EXPECT_EQ(host.Heartbeat(a), std::vector<Launch>{Map(j, 1, a)});
  EXPECT_EQ(draws, 0);
}

TEST(ProbabilisticPolicyTest, ChoosesTheCheapestMap) {
  int draws = 0;
  TestHost host(Forced(0, &draws));
  NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(0, 0, 1), c = host.AddNode(1, 0, 1);
  JobId j = host.AddJob(MakeJob({{c}, {b}}, 0));
  // Neither is local to a; map 1's replica is 2 hops away, map 0's 4.
  EXPECT_EQ(host.Heartbeat(a), std::vector<Launch>{Map(j, 1, a)});
}

TEST(ProbabilisticPolicyTest, BelowPMinIsSkippedWithoutADraw) {
  int draws = 0;
  ProbabilisticOptions o;
  o.max_skips = 0;
  TestHost host(Forced(0, &draws, o));
  NodeId a = host.AddNode(0, 1, 1);
  host.AddNode(0, 1, 1);
  NodeId c = host.AddNode(1, 1, 1);
  host.AddJob(MakeJob({{a}}, 0));
  // On c: C = 4B, C_avg over the free a, b, c = (0 + 2 + 4)B / 3 = 2B, so
  // P = 1 − e^−0.5 = 0.39 < 0.4: skipped even though the draw would accept.
  EXPECT_TRUE(host.Heartbeat(c).empty());
  EXPECT_EQ(draws, 0);
}

TEST(ProbabilisticPolicyTest, ForcedDrawAbovePRejects) {
  int draws = 0;
  TestHost host(Forced(0.7, &draws));
  NodeId a = host.AddNode(0, /*map_slots=*/0, 1), b = host.AddNode(0, 1, 1);
  host.AddJob(MakeJob({{a}}, 0));
  // Only b has a free map slot, so C_avg = C and P = 1 − e^−1 = 0.632 < 0.7.
  EXPECT_TRUE(host.Heartbeat(b).empty());
  EXPECT_EQ(draws, 1);
}

TEST(ProbabilisticPolicyTest, ForcedDrawBelowPLaunches) {
  int draws = 0;
  TestHost host(Forced(0.6, &draws));
  NodeId a = host.AddNode(0, /*map_slots=*/0, 1), b = host.AddNode(0, 1, 1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  // P = 0.632 > 0.6.
  EXPECT_EQ(host.Heartbeat(b), std::vector<Launch>{Map(j, 0, b)});
}

TEST(ProbabilisticPolicyTest, SeededAcceptanceFrequencyMatchesP) {
  TestHost host(MakePolicy("probabilistic", {{"max_skips", int64_t{0}}}, /*seed=*/7));
  NodeId a = host.AddNode(0, /*map_slots=*/0, 1), b = host.AddNode(0, 1, 1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  constexpr int kTrials = 4000;
  int launched = 0;
  for (int i = 0; i < kTrials; ++i) {
    if (!host.Heartbeat(b).empty()) {
      ++launched;
      host.FailMap(j, 0);  // pending again for the next trial
    }
  }
  // Each heartbeat accepts with P = 1 − e^−1 (σ ≈ 0.008 over 4000 draws).
  EXPECT_NEAR(static_cast<double>(launched) / kTrials, 1 - std::exp(-1.0), 0.03);
}

TEST(ProbabilisticPolicyTest, AStarvedJobLaunchesAfterMaxSkips) {
  int draws = 0;
  ProbabilisticOptions o;
  o.max_skips = 3;
  TestHost host(Forced(0, &draws, o));
  NodeId a = host.AddNode(0, 1, 1);
  host.AddNode(0, 1, 1);
  NodeId c = host.AddNode(1, 1, 1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(host.Heartbeat(c).empty());  // P = 0.39 < P_min
  // Three declined offers in a row: the fourth launches anyway.
  EXPECT_EQ(host.Heartbeat(c), std::vector<Launch>{Map(j, 0, c)});
}

TEST(ProbabilisticPolicyTest, ChoosesTheCheaperReduceByEq3) {
  int draws = 0;
  TestHost host(Forced(0.7, &draws));
  Fig2 fig(host);
  fig.PlaceMaps();
  // On D1: R1 costs 100, R2 2×5 + 4×10 = 50. R2's costs on D1..D4 are 50,
  // 50, 100, 70: C_avg = 67.5, P = 1 − e^−1.35 = 0.74 > 0.7.
  EXPECT_EQ(host.Heartbeat(fig.d[0]), std::vector<Launch>{Reduce(fig.j, 1, fig.d[0])});
}

TEST(ProbabilisticPolicyTest, NeverTwoReducesOfAJobOnANode) {
  int draws = 0;
  TestHost host(Forced(0, &draws));
  NodeId a = host.AddNode(0, 1, /*reduce_slots=*/2);
  Job job = MakeJob({{a}}, /*reduces=*/2);
  job.slowstart = 0;
  JobId j = host.AddJob(job);
  // Two free reduce slots, but Alg. 2 line 1 allows one reduce of j on a.
  EXPECT_EQ(host.Heartbeat(a), (std::vector<Launch>{Map(j, 0, a), Reduce(j, 0, a)}));
}

TEST(ProbabilisticPolicyTest, FifoOrderGivesTheSlotsToTheFirstJob) {
  int draws = 0;
  TestHost host(Forced(0, &draws, {}, /*fifo=*/true));
  NodeId a = host.AddNode(0, 2, 0);
  JobId j0 = host.AddJob(MakeJob({{a}, {a}}, 0));
  host.AddJob(MakeJob({{a}, {a}}, 0));
  EXPECT_EQ(host.Heartbeat(a), (std::vector<Launch>{Map(j0, 0, a), Map(j0, 1, a)}));
}

TEST(ProbabilisticPolicyTest, FairOrderSharesTheSlots) {
  int draws = 0;
  TestHost host(Forced(0, &draws));
  NodeId a = host.AddNode(0, 2, 0);
  JobId j0 = host.AddJob(MakeJob({{a}, {a}}, 0));
  JobId j1 = host.AddJob(MakeJob({{a}, {a}}, 0));
  // The Fair order re-sorts after each launch: j1 has fewer running maps.
  EXPECT_EQ(host.Heartbeat(a), (std::vector<Launch>{Map(j0, 0, a), Map(j1, 0, a)}));
}

TEST(ProbabilisticPolicyTest, ChoosesTheLargestPNotTheCheapest) {
  // Alg. 1 line 9: the map with the largest P, which is not always the
  // cheapest. a and b have a free map slot, d none. Map 0's block is on b
  // (1 from a), map 1's on d (2 from a and from b).
  //   map 0: C = 1B on a, C_avg = (1 + 0)B / 2 = 0.5B: P = 1 − e^−0.5 = 0.39;
  //   map 1: C = 2B on a, C_avg = (2 + 2)B / 2 = 2B:   P = 1 − e^−1   = 0.63.
  // The cheapest (map 0) is below P_min; the largest P (map 1) launches.
  int draws = 0;
  ProbabilisticOptions o;
  o.max_skips = 0;
  TestHost host(Forced(0, &draws, o));
  NodeId a = host.AddNode(0, 1, 1), b = host.AddNode(0, 1, 1), d = host.AddNode(0, 0, 1);
  host.state().SetDistances({{0, 1, 2}, {1, 0, 2}, {2, 2, 0}});
  JobId j = host.AddJob(MakeJob({{b}, {d}}, 0));
  EXPECT_EQ(host.Heartbeat(a), std::vector<Launch>{Map(j, 1, a)});
}

TEST(ProbabilisticPolicyTest, EqualPGoesToTheCheaperMapThenTheLowerIndex) {
  // The paper is silent on ties in P; ours: the cheaper map (§II-C: the
  // largest P "is actually corresponding to the task with the minimum
  // cost"), then the lower index. Free: a, b. Map 0's block on d (cost 4 on
  // a and b: ratio 1), map 1's on e (2 on a and b: ratio 1), map 2's on e
  // too: all P = 1 − e^−1; map 1 is the cheapest of them and before map 2.
  int draws = 0;
  TestHost host(Forced(0, &draws));
  NodeId a = host.AddNode(0, 1, 1);
  host.AddNode(0, 1, 1);
  NodeId d = host.AddNode(0, 0, 1), e = host.AddNode(0, 0, 1);
  host.state().SetDistances({{0, 1, 4, 2}, {1, 0, 4, 2}, {4, 4, 0, 1}, {2, 2, 1, 0}});
  JobId j = host.AddJob(MakeJob({{d}, {e}, {e}}, 0));
  EXPECT_EQ(host.Heartbeat(a), std::vector<Launch>{Map(j, 1, a)});
}

TEST(ProbabilisticPolicyTest, ChoosesTheReduceWithTheLargestP) {
  // Alg. 2 line 10, as line 9 for maps. Free reduce slots on a and b; map
  // 0 ran on m (1 from a, 3 from b) with 30 bytes for R0 and 2 for R1, map 1
  // on b (1 from a) with 0 for R0 and 20 for R1 (both finished).
  //   R0: C = 30 on a, 90 on b, C_avg = 60: P = 1 − e^−2     = 0.86;
  //   R1: C = 22 on a,  6 on b, C_avg = 14: P = 1 − e^−0.64  = 0.47.
  // The cheapest (R1) has the smaller P; a draw of 0.5 launches R0.
  int draws = 0;
  ProbabilisticOptions o;
  o.max_skips = 0;
  TestHost host(Forced(0.5, &draws, o));
  NodeId a = host.AddNode(0, 0, 1), b = host.AddNode(0, 1, 1), m = host.AddNode(0, 1, 0);
  host.state().SetDistances({{0, 1, 1}, {1, 0, 3}, {1, 3, 0}});
  Job job = MakeJob({{m}, {b}}, /*reduces=*/2);
  job.slowstart = 0;
  JobId j = host.AddJob(job);
  const int64_t out[2][2] = {{30, 2}, {0, 20}};  // [map][reduce]
  const NodeId at[2] = {m, b};
  for (int32_t i = 0; i < 2; ++i) {
    host.state().LaunchMap(j, i, at[i]);
    MapTask& t = host.state().mutable_job(j).maps[static_cast<size_t>(i)];
    t.bytes_read = t.bytes;
    t.partition_bytes = {out[i][0], out[i][1]};
    host.state().FinishMap(j, i, 1000);
  }
  // Draw 0.5: below R0's 0.86, above R1's 0.47.
  EXPECT_EQ(host.Heartbeat(a), std::vector<Launch>{Reduce(j, 0, a)});
}

TEST(ProbabilisticPolicyTest, TheReduceAverageSkipsNodesRunningAReduceOfTheJob) {
  // Alg. 2 line 1 makes a node already running a reduce of the job no
  // candidate for it, so its cost is not part of C_avg (N_r counts the
  // nodes the reduce could go to). a, b, c have a free reduce slot; b
  // already runs R0. The one finished map ran on c (distance 2 to a, 8 to
  // b) with 10 bytes for R1.
  //   over a, b, c: C_avg = (20 + 80 + 0) / 3 = 33.3, P = 1 − e^−1.67 = 0.81;
  //   over a, c:    C_avg = (20 + 0) / 2 = 10,      P = 1 − e^−0.5 = 0.39.
  // With P_min = 0.4 the second skips a.
  int draws = 0;
  ProbabilisticOptions o;
  o.max_skips = 0;
  TestHost host(Forced(0, &draws, o));
  NodeId a = host.AddNode(0, 0, 1), b = host.AddNode(0, 0, 2), c = host.AddNode(0, 1, 1);
  host.state().SetDistances({{0, 4, 2}, {4, 0, 8}, {2, 8, 0}});
  Job job = MakeJob({{c}}, /*reduces=*/2);
  job.slowstart = 0;
  JobId j = host.AddJob(job);
  host.state().LaunchMap(j, 0, c);
  MapTask& t = host.state().mutable_job(j).maps[0];
  t.bytes_read = t.bytes;
  t.partition_bytes = {10, 10};
  host.state().FinishMap(j, 0, 1000);
  host.state().LaunchReduce(j, 0, b);
  EXPECT_TRUE(host.Heartbeat(a).empty());
  EXPECT_EQ(draws, 0);
}

TEST(ProbabilisticRegistryTest, TheStarvationEscapeIsOffByDefault) {
  // max_skips is not in the paper: the registered default is 0 (never).
  TestHost host(MakePolicy("probabilistic"));
  NodeId a = host.AddNode(0, 1, 1);
  host.AddNode(0, 1, 1);
  NodeId c = host.AddNode(1, 1, 1);
  host.AddJob(MakeJob({{a}}, 0));
  // P = 0.39 < P_min on c (BelowPMinIsSkippedWithoutADraw): 50 offers, none taken.
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(host.Heartbeat(c).empty()) << "offer " << i;
  EXPECT_EQ(ProbabilisticOptions{}.max_skips, 0);
}

TEST(ProbabilisticRegistryTest, BadParametersAreRejected) {
  EXPECT_FALSE(MakeScheduler("probabilistic", {{"p_min", 1.5}}, {}).ok());
  EXPECT_FALSE(MakeScheduler("probabilistic", {{"max_skips", int64_t{-1}}}, {}).ok());
  auto bad = MakeScheduler("probabilistic", {{"job_order", std::string("lifo")}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "scheduler 'probabilistic': job_order must be \"fair\" or \"fifo\", got \"lifo\"");
  EXPECT_TRUE(MakeScheduler("probabilistic", {{"job_order", std::string("fifo")}}, {}).ok());
}

}  // namespace
}  // namespace mr::sched
