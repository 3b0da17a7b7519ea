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
