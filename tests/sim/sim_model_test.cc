// The simulator's models: seeded distributions, the link model, block
// placement and popularity, and arrival rates derived from a load.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/host.h"
#include "sim/network.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "tests/sim/sim_test_util.h"

namespace mr::sim {
namespace {

double SampleMean(const Dist& d, int n = 200000) {
  Rng rng(7);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += d.Sample(rng);
  return sum / n;
}

// Seeded statistical checks: each law's sample mean is within 2 % of Mean().
TEST(SimRandom, SampleMeansMatchTheLaws) {
  Dist e{Dist::Kind::kExponential, 4000};
  EXPECT_NEAR(SampleMean(e), 4000, 80);
  Dist g;
  g.kind = Dist::Kind::kGeometric;
  g.phi = 0.25;
  g.slot_ms = 1000;
  EXPECT_DOUBLE_EQ(g.Mean(), 4000);  // Joint §6: 1/φ slots
  EXPECT_NEAR(SampleMean(g), 4000, 80);
  Dist ln{Dist::Kind::kLognormal, 27700, 36520};  // JoSS Table 6
  EXPECT_NEAR(SampleMean(ln), 27700, 800);
  Dist p{Dist::Kind::kPareto, 10000};
  p.shape = 3;
  EXPECT_NEAR(SampleMean(p), 10000, 200);
}

TEST(SimRandom, GeometricServiceIsWholeSlots) {
  Dist g;
  g.kind = Dist::Kind::kGeometric;
  Rng rng(3);
  for (int i = 0; i < 1000; ++i) {
    const double v = g.Sample(rng);
    EXPECT_GE(v, 1000);
    EXPECT_EQ(std::fmod(v, 1000.0), 0);
  }
}

// Pandas §VII-A1c: truncated Pareto, shape 1.9, sizes in [min, max].
TEST(SimRandom, TruncatedParetoSizes) {
  SizeDist s;
  s.kind = SizeDist::Kind::kPareto;
  s.shape = 1.9;
  s.min = 1;
  s.max = 400;
  Rng rng(11);
  double sum = 0;
  int lo = 1 << 30, hi = 0;
  const int n = 400000;
  for (int i = 0; i < n; ++i) {
    const int v = s.Sample(rng);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(lo, 1);
  EXPECT_LE(hi, 400);
  EXPECT_GT(hi, 100);  // the tail is reached
  EXPECT_NEAR(sum / n, s.Mean(), 0.03 * s.Mean());
}

// Matchmaking Table 4, bins 1-6: shares 39/16/14/9/6/6 of 90, benchmark maps.
TEST(SimRandom, FacebookBins) {
  SizeDist s;
  s.kind = SizeDist::Kind::kFacebook;
  s.facebook_bins = 6;
  const double mean = (39 * 1 + 16 * 2 + 14 * 10 + 9 * 50 + 6 * 100 + 6 * 200) / 90.0;
  EXPECT_NEAR(s.Mean(), mean, 1e-9);
  Rng rng(5);
  std::map<int, int> seen;
  for (int i = 0; i < 90000; ++i) ++seen[s.Sample(rng)];
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_NEAR(seen[1], 39000, 600);
  EXPECT_NEAR(seen[200], 6000, 300);
}

TEST(SimRandom, StreamsAreIndependentAndStable) {
  EXPECT_EQ(StreamSeed(1, "workload"), StreamSeed(1, "workload"));
  EXPECT_NE(StreamSeed(1, "workload"), StreamSeed(1, "service"));
  EXPECT_NE(StreamSeed(1, "workload"), StreamSeed(2, "workload"));
  Rng rng(42);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(UniformIndex(rng, 7), 7u);
}

// ---- Network ----

struct Cluster {
  explicit Cluster(const Scenario& sc) : host(sc, none) {}
  const Workload none;  // declared first: the host refers to it
  SimHost host;
};

// Two racks of two nodes in one datacenter: within a rack a transfer uses
// the two node links (B1); across racks also both rack links (B2).
TEST(SimNetwork, LinksAreFifoServersAtTheirCapacity) {
  Scenario sc = test::SmallScenario(4, 1, 2);
  Cluster c(sc);
  NetworkSpec spec;
  spec.enabled = true;
  spec.node_mb_s = 100;  // 1 s per 100 MB
  spec.rack_mb_s = 50;
  Network net(spec, c.host.state());
  EXPECT_EQ(net.SpanOf(0, 0), Span::kNode);
  EXPECT_EQ(net.SpanOf(0, 1), Span::kRack);
  EXPECT_EQ(net.SpanOf(0, 2), Span::kDatacenter);
  EXPECT_DOUBLE_EQ(net.Transfer(0, 0, 100, 5), 5);       // local: no link
  EXPECT_DOUBLE_EQ(net.Transfer(0, 1, 100, 0), 1000);    // up(0), down(1)
  EXPECT_DOUBLE_EQ(net.Transfer(0, 1, 100, 0), 2000);    // queued behind the first
  EXPECT_DOUBLE_EQ(net.Transfer(2, 3, 100, 500), 1500);  // other links: no wait
  // Across racks the slower rack links decide: 100 MB at 50 MB/s.
  EXPECT_DOUBLE_EQ(net.Transfer(3, 1, 100, 3000), 5000);
}

// network.link_costs (Shen §II-B3): ms per MB at the smallest fair share
// on the path. Two racks of two nodes: a rack uplink of 100 MB/s carries
// two nodes (50 each), slower than a node link of 100.
TEST(SimNetwork, UnitCostsAreTheInverseFairShareOfThePath) {
  Scenario sc = test::SmallScenario(4, 1, 2);
  Cluster c(sc);
  NetworkSpec spec;
  spec.enabled = true;
  spec.node_mb_s = 100;
  spec.rack_mb_s = 100;
  Network net(spec, c.host.state());
  const auto cost = net.UnitCosts();
  ASSERT_EQ(cost.size(), 4u);
  EXPECT_EQ(cost[0][0], 0);
  EXPECT_DOUBLE_EQ(cost[0][1], 10);  // 1000 / 100: the node links
  EXPECT_DOUBLE_EQ(cost[0][2], 20);  // 1000 × 2 / 100: the rack links
  EXPECT_DOUBLE_EQ(cost[3][1], 20);
  // Uplinks as fast as their nodes together: no dearer than a node link.
  spec.rack_mb_s = 200;
  EXPECT_DOUBLE_EQ(Network(spec, c.host.state()).UnitCosts()[0][2], 10);
}

TEST(SimNetwork, DisabledTakesNoTime) {
  Scenario sc = test::SmallScenario(4, 2);
  Cluster c(sc);
  NetworkSpec spec;  // disabled
  Network net(spec, c.host.state());
  EXPECT_EQ(net.SpanOf(0, 3), Span::kOffDatacenter);
  EXPECT_DOUBLE_EQ(net.Transfer(0, 3, 1000, 7), 7);
}

// ---- Placement and popularity ----

TEST(SimWorkload, HdfsPlacementSpreadsRacks) {
  Scenario sc = test::SmallScenario(20, 1, 5);
  Cluster c(sc);
  std::vector<sched::NodeId> all(20);
  for (int i = 0; i < 20; ++i) all[i] = i;
  Rng rng(1);
  for (int b = 0; b < 200; ++b) {
    auto r = PlaceBlock(c.host.state(), all, "hdfs", 3, b, rng);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(std::set<sched::NodeId>(r.begin(), r.end()).size(), 3u);
    const auto& s = c.host.state();
    EXPECT_NE(s.node(r[0]).rack, s.node(r[1]).rack);  // second: another rack
    EXPECT_EQ(s.node(r[1]).rack, s.node(r[2]).rack);  // third: beside the second
  }
}

// Matchmaking §IV-A: 200 replicas evenly over 30 nodes, 6 or 7 each.
TEST(SimWorkload, RoundRobinIsEven) {
  Scenario sc = test::SmallScenario(30);
  sc.data.pool_blocks = 100;
  sc.data.replication = 2;
  sc.data.placement = "round-robin";
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  std::vector<int> per_node(30);
  for (const auto& r : w->replicas) {
    ASSERT_EQ(r.size(), 2u);
    EXPECT_NE(r[0], r[1]);
    for (auto n : r) ++per_node[static_cast<size_t>(n)];
  }
  for (int c : per_node) EXPECT_TRUE(c == 6 || c == 7) << c;
}

// Pandas §VII-A1c: 0.8 of the accesses go to the hot half of the nodes.
TEST(SimWorkload, SkewedPopularitySendsAccessesToTheHotSet) {
  Scenario sc = test::SmallScenario(100);
  sc.data.popularity = "skewed";
  sc.data.replication = 3;
  sc.data.placement = "uniform";
  sc.workload.jobs = 2000;
  sc.workload.sizes.fixed = 5;
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  int hot = 0, all = 0;
  for (const auto& r : w->replicas) {
    const bool h = std::all_of(r.begin(), r.end(), [](auto n) { return n < 50; });
    const bool c = std::all_of(r.begin(), r.end(), [](auto n) { return n >= 50; });
    EXPECT_TRUE(h || c);  // a map's replicas are all in one set
    hot += h;
    ++all;
  }
  EXPECT_NEAR(static_cast<double>(hot) / all, 0.8, 0.02);
}

// A load is offered map work over map slots (Pandas): jobs of 5 maps of
// 10 s on 3 one-slot nodes at load 0.5 arrive every 5*10/(0.5*3) s.
TEST(SimWorkload, LoadSetsTheArrivalRate) {
  Scenario sc = test::SmallScenario(3, 1, 0, 20000, 5);
  sc.workload.arrival = "poisson";
  sc.workload.load = 0.5;
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(w->job_rate_per_s, 1000.0 / (5 * 10000 / 1.5), 1e-12);
  const double span_s = static_cast<double>(w->jobs.back().submit_ms) / 1000.0;
  EXPECT_NEAR(static_cast<double>(w->jobs.size()) / span_s, w->job_rate_per_s, 0.03 * w->job_rate_per_s);
}

TEST(SimWorkload, DurationBoundsArrivals) {
  Scenario sc = test::SmallScenario(3, 1, 0, 0, 5);
  sc.workload.arrival = "fixed";
  sc.workload.mean_interarrival_ms = 1000;
  sc.workload.duration_ms = 10000;
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->jobs.size(), 10u);  // at 0, 1000, ..., 9000
}

// ---- Workloads that cannot be generated are errors, never endless loops ----

Status WorkloadError(const Scenario& sc) { return MakeWorkload(sc).status(); }

// Explicit classes whose batch selects nothing are not "generate jobs".
TEST(SimWorkload, ClassesThatSelectNoJobAreAnError) {
  Scenario sc = test::SmallScenario(3, 1, 0, /*jobs=*/0);
  sc.workload.classes = {JobClass{"job", 2, 3, -1, "grep", -1}};
  sc.workload.batch = "grpe";
  Status s = WorkloadError(sc);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), "'workload.batch' = 'grpe' names no batch of workload.classes (batches: grep)");
}

// arrival = "fixed" with duration_ms and no rate: a 0 ms gap forever.
TEST(SimWorkload, ZeroGapWithOnlyADurationIsAnError) {
  Scenario sc = test::SmallScenario(3, 1, 0, /*jobs=*/0);
  sc.workload.duration_ms = 10000;
  Status s = WorkloadError(sc);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("'workload.duration_ms'"), std::string::npos) << s.message();
  // The same with a load over maps of 0 ms.
  sc.workload.arrival = "poisson";
  sc.workload.load = 0.5;
  sc.job_types[0].map.mean_ms = 0;
  EXPECT_TRUE(WorkloadError(sc).IsInvalidArgument());
  // A zero gap is fine when the count is given: every job arrives at 0.
  sc = test::SmallScenario(3, 1, 0, /*jobs=*/4);
  auto w = MakeWorkload(sc);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->jobs.back().submit_ms, 0);
}

TEST(SimWorkload, TooManyJobsIsAnError) {
  Scenario sc = test::SmallScenario(3, 1, 0, /*jobs=*/0);
  sc.workload.mean_interarrival_ms = 1;
  sc.workload.duration_ms = int64_t{1} << 40;
  Status s = WorkloadError(sc);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("10000000"), std::string::npos) << s.message();
  sc = test::SmallScenario(3, 1, 0, /*jobs=*/0);
  sc.workload.classes = {JobClass{"job", 20'000'000, 1, -1, "", -1}};
  EXPECT_TRUE(WorkloadError(sc).IsInvalidArgument());
}

// Weights of 0 or no map slots would divide by zero.
TEST(SimWorkload, ZeroWeightOrNoSlotsIsAnError) {
  Scenario sc = test::SmallScenario(3, 1, 0, /*jobs=*/5);
  sc.job_types[0].weight = 0;
  Status s = WorkloadError(sc);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("weight"), std::string::npos) << s.message();
  sc = test::SmallScenario(3, 1, 0, /*jobs=*/5);
  sc.cluster.map_slots = 0;
  sc.workload.arrival = "poisson";
  sc.workload.load = 0.5;
  s = WorkloadError(sc);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("'workload.load'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mr::sim
