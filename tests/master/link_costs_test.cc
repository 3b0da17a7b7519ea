// LinkCosts (master/link_costs.h): workers' measured read rates between
// datacenters become the probabilistic policy's distance matrix. Pure: a
// ClusterState built in a few lines, rates as a heartbeat reports them.
#include "master/link_costs.h"

#include <gtest/gtest.h>

namespace mr::master {
namespace {

constexpr double kMiB = 1048576.0;

// dc0: n0, n1 in rack 0, n2 in rack 1; dc1: n3, n4 (no racks).
sched::ClusterState TwoDatacenters() {
  sched::ClusterState s;
  s.AddNode("n0", 0, 0, 1, 1);
  s.AddNode("n1", 0, 0, 1, 1);
  s.AddNode("n2", 0, 1, 1, 1);
  s.AddNode("n3", 1, -1, 1, 1);
  s.AddNode("n4", 1, -1, 1, 1);
  return s;
}

TEST(LinkCosts, NothingMeasuredIsNoMatrix) {
  LinkCosts costs;
  sched::ClusterState s = TwoDatacenters();
  EXPECT_TRUE(costs.Build(s).empty());
  EXPECT_FALSE(costs.Report(3, {}));      // nothing new
  EXPECT_FALSE(costs.Report(3, {{0, -1}}));  // not a rate
  EXPECT_TRUE(costs.Build(s).empty());
}

TEST(LinkCosts, TheMatrixIsTheInverseMedianRateInSecondsPerMiB) {
  LinkCosts costs;
  sched::ClusterState s = TwoDatacenters();
  EXPECT_TRUE(costs.Report(3, {{0, 10 * kMiB}}));
  EXPECT_TRUE(costs.Report(4, {{0, 30 * kMiB}}));
  EXPECT_FALSE(costs.Report(4, {{0, 30 * kMiB}}));  // the same again: no rebuild needed
  EXPECT_DOUBLE_EQ(costs.Rate(s, 0, 1), 20 * kMiB);  // median of 10 and 30
  EXPECT_EQ(costs.Rate(s, 1, 0), 0);                 // nobody in dc0 read from dc1
  const auto m = costs.Build(s);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0][0], 0);
  EXPECT_DOUBLE_EQ(m[0][3], 0.05);  // dc0 → dc1: 1 / 20 MiB/s
  EXPECT_DOUBLE_EQ(m[2][4], 0.05);
  EXPECT_DOUBLE_EQ(m[3][0], 0.05);  // unmeasured: the mean of the measured
  // Inside a datacenter: hop counts / 4 × the cheapest measured pair.
  EXPECT_DOUBLE_EQ(m[0][1], 0.0125);  // same rack
  EXPECT_DOUBLE_EQ(m[0][2], 0.025);   // other rack
  EXPECT_DOUBLE_EQ(m[3][4], 0.025);   // no racks
  // A faster link measured from dc1 to dc0 changes its own pair.
  EXPECT_TRUE(costs.Report(0, {{1, 40 * kMiB}}));
  const auto m2 = costs.Build(s);
  EXPECT_DOUBLE_EQ(m2[3][0], 0.025);
  EXPECT_DOUBLE_EQ(m2[0][3], 0.05);
  EXPECT_DOUBLE_EQ(m2[0][1], 0.00625);
}

}  // namespace
}  // namespace mr::master
