// Tests for dfs/placement.h: a conformance suite every policy must pass, then
// one group per policy for the placement it promises.
#include "dfs/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mr::dfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct DcSpec {
  std::string dc;
  int nodes;
  int racks = 0;  // 0: racks not configured; else node i is on rack "r<i % racks>"
};

// Nodes "<dc>-n00", "<dc>-n01", ... with unlimited space.
std::vector<PlacementNode> MakeNodes(const std::vector<DcSpec>& specs) {
  std::vector<PlacementNode> nodes;
  for (const DcSpec& spec : specs) {
    for (int i = 0; i < spec.nodes; ++i) {
      PlacementNode n;
      n.id = spec.dc + (i < 10 ? "-n0" : "-n") + std::to_string(i);
      n.datacenter = spec.dc;
      if (spec.racks > 0) n.rack = "r" + std::to_string(i % spec.racks);
      nodes.push_back(n);
    }
  }
  return nodes;
}

PlacementRequest Request(int replication, std::vector<std::string> exclude = {}) {
  PlacementRequest r;
  r.replication = replication;
  r.block_bytes = 1024;
  r.exclude = std::move(exclude);
  return r;
}

std::unique_ptr<PlacementPolicy> MustMake(const std::string& name, PlacementParams params = {}) {
  auto policy = MakePlacementPolicy(name, params);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::move(policy).value();
}

const PlacementNode& Find(const std::vector<PlacementNode>& nodes, const std::string& id) {
  return *std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.id == id; });
}

// ---- Conformance: every policy, many seeded draws. ----

class PlacementConformanceTest : public ::testing::TestWithParam<std::string> {};

// The core contract: distinct nodes, never excluded, never full, min(r, eligible) of them.
TEST_P(PlacementConformanceTest, DistinctEligibleNodesOverManyDraws) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(42);
  std::mt19937_64 scenario(7);  // drives the test's own choices, separate from the policy's
  for (int trial = 0; trial < 2000; ++trial) {
    auto nodes = MakeNodes({{"dc1", 4, 2}, {"dc2", 3}, {"dc3", 2}});
    std::set<std::string> ineligible;
    PlacementRequest req = Request(1 + static_cast<int>(scenario() % 5));
    for (auto& n : nodes) {
      switch (scenario() % 6) {
        case 0:
          req.exclude.push_back(n.id);
          ineligible.insert(n.id);
          break;
        case 1:
          n.free_bytes = 1023;
          ineligible.insert(n.id);
          break;
        case 2:
          n.free_bytes = 1024;  // exactly enough is enough
          break;
        default:
          break;
      }
    }
    if (scenario() % 2 == 0) req.writer = nodes[scenario() % nodes.size()].id;
    const size_t eligible = nodes.size() - ineligible.size();
    auto got = policy->Choose(req, nodes, rng);
    if (eligible == 0) {
      EXPECT_TRUE(got.status().IsUnavailable()) << got.status().ToString();
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->size(), std::min<size_t>(req.replication, eligible));
    EXPECT_EQ(std::set<std::string>(got->begin(), got->end()).size(), got->size()) << "duplicates";
    for (const auto& id : *got) EXPECT_EQ(ineligible.count(id), 0u) << id << " is ineligible";
  }
}

// Asking for 3 replicas on a 2-node cluster is not an error: you get both nodes.
TEST_P(PlacementConformanceTest, FewerEligibleThanReplicationReturnsWhatExists) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(1);
  auto nodes = MakeNodes({{"dc1", 2}, {"dc2", 1}});
  auto got = policy->Choose(Request(3, {"dc2-n00"}), nodes, rng);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> sorted = *got;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_THAT(sorted, ElementsAre("dc1-n00", "dc1-n01"));
}

// With nowhere to write the master must fail the put, and say so as Unavailable.
TEST_P(PlacementConformanceTest, ZeroEligibleIsUnavailable) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(1);
  auto nodes = MakeNodes({{"dc1", 2}});
  nodes[1].free_bytes = 0;
  auto got = policy->Choose(Request(2, {"dc1-n00"}), nodes, rng);
  EXPECT_TRUE(got.status().IsUnavailable());
  EXPECT_THAT(got.status().message(), HasSubstr("no eligible node"));
  EXPECT_TRUE(policy->Choose(Request(1), {}, rng).status().IsUnavailable());
}

// Replication 0 is a caller bug, not an empty placement.
TEST_P(PlacementConformanceTest, ReplicationBelowOneIsInvalid) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(1);
  EXPECT_TRUE(
      policy->Choose(Request(0), MakeNodes({{"dc1", 3}}), rng).status().IsInvalidArgument());
}

// A seeded master must place blocks reproducibly (placement.h).
TEST_P(PlacementConformanceTest, SameSeedSameSequence) {
  auto a = MustMake(GetParam());
  auto b = MustMake(GetParam());
  std::mt19937_64 rng_a(99), rng_b(99);
  auto nodes = MakeNodes({{"dc1", 5, 2}, {"dc2", 5, 2}});
  PlacementRequest req = Request(3);
  req.writer = "dc2-n03";
  for (int i = 0; i < 200; ++i) {
    auto x = a->Choose(req, nodes, rng_a);
    auto y = b->Choose(req, nodes, rng_b);
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(*x, *y) << "call " << i;
  }
}

// Ties break by id, so the order in which the master lists nodes cannot change a placement.
TEST_P(PlacementConformanceTest, InputOrderDoesNotMatter) {
  auto a = MustMake(GetParam());
  auto b = MustMake(GetParam());
  std::mt19937_64 rng_a(5), rng_b(5);
  auto nodes = MakeNodes({{"dc1", 5, 2}, {"dc2", 5, 2}});
  auto reversed = nodes;
  std::reverse(reversed.begin(), reversed.end());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(*a->Choose(Request(3), nodes, rng_a), *b->Choose(Request(3), reversed, rng_b));
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PlacementConformanceTest, ::testing::ValuesIn(PlacementPolicyNames()),
                         [](const auto& info) { return info.param; });

// ---- random ----

// Random placement is what creates Pandas' skewed node popularity; it must at least be uniform.
TEST(RandomPolicyTest, RoughlyUniform) {
  auto policy = MustMake("random");
  std::mt19937_64 rng(2024);
  auto nodes = MakeNodes({{"dc1", 5}, {"dc2", 5}});
  std::map<std::string, int> count;
  const int kDraws = 10000;
  for (int i = 0; i < kDraws; ++i) {
    auto got = policy->Choose(Request(3), nodes, rng);  // named: *temporary would dangle
    ASSERT_TRUE(got.ok());
    for (const auto& id : *got) ++count[id];
  }
  ASSERT_EQ(count.size(), nodes.size());
  const double expected = 3.0 * kDraws / nodes.size();
  double chi2 = 0;
  for (const auto& [id, c] : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 27.9) << "chi-square with 9 dof beyond p = 0.001";
}

// ---- hdfs ----

// The HDFS pipeline: local write, then off-site for safety, then beside replica 2 for cheap
// traffic.
TEST(HdfsPolicyTest, WriterThenOtherDatacenterThenBesideSecond) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(3);
  auto nodes = MakeNodes({{"dc1", 4}, {"dc2", 4}});
  for (int i = 0; i < 500; ++i) {
    PlacementRequest req = Request(3);
    req.writer = nodes[i % nodes.size()].id;
    auto got = policy->Choose(req, nodes, rng);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), 3u);
    EXPECT_EQ((*got)[0], *req.writer);
    EXPECT_NE(Find(nodes, (*got)[1]).datacenter, Find(nodes, (*got)[0]).datacenter);
    EXPECT_EQ(Find(nodes, (*got)[2]).datacenter, Find(nodes, (*got)[1]).datacenter);
  }
}

// A writer that cannot take the block (excluded after a pipeline failure) is skipped, not retried.
TEST(HdfsPolicyTest, IneligibleWriterIsSkipped) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(4);
  auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 3}});
  PlacementRequest req = Request(3, {"dc1-n00"});
  req.writer = "dc1-n00";
  for (int i = 0; i < 200; ++i) {
    auto got = policy->Choose(req, nodes, rng);
    ASSERT_TRUE(got.ok());
    EXPECT_NE((*got)[0], "dc1-n00");
    EXPECT_NE(Find(nodes, (*got)[1]).datacenter, Find(nodes, (*got)[0]).datacenter);
  }
}

// In one datacenter racks take over: replica 2 off the writer's rack, replica 3 on replica 2's.
TEST(HdfsPolicyTest, RacksInOneDatacenter) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(5);
  auto nodes = MakeNodes({{"dc1", 9, 3}});
  for (int i = 0; i < 500; ++i) {
    PlacementRequest req = Request(3);
    req.writer = nodes[i % nodes.size()].id;
    auto got = *policy->Choose(req, nodes, rng);
    EXPECT_EQ(got[0], *req.writer);
    EXPECT_NE(Find(nodes, got[1]).rack, Find(nodes, got[0]).rack);
    EXPECT_EQ(Find(nodes, got[2]).rack, Find(nodes, got[1]).rack);
  }
}

// When the other datacenter is full, replica 2 still gets written (fallback), just not off-site.
TEST(HdfsPolicyTest, FallsBackWhenNoRemoteDatacenterHasRoom) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(6);
  auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 2}});
  for (auto& n : nodes) {
    if (n.datacenter == "dc2") n.free_bytes = 0;
  }
  PlacementRequest req = Request(3);
  req.writer = "dc1-n01";
  auto got = policy->Choose(req, nodes, rng);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0], "dc1-n01");
}

// ---- spread ----

// Two replicas over two datacenters must survive the loss of either datacenter.
TEST(SpreadPolicyTest, ReplicationTwoCoversBothDatacenters) {
  auto policy = MustMake("spread");
  std::mt19937_64 rng(7);
  auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 3}});
  for (int i = 0; i < 500; ++i) {
    auto got = *policy->Choose(Request(2), nodes, rng);
    EXPECT_NE(Find(nodes, got[0]).datacenter, Find(nodes, got[1]).datacenter);
  }
}

// The rotating start keeps single-replica files from all landing in the first datacenter.
TEST(SpreadPolicyTest, FirstReplicaAlternatesDatacenters) {
  auto policy = MustMake("spread");
  std::mt19937_64 rng(8);
  auto nodes = MakeNodes({{"dc2", 3}, {"dc1", 3}});  // sorted by name, not input order
  for (int i = 0; i < 100; ++i) {
    auto got = *policy->Choose(Request(1), nodes, rng);
    EXPECT_EQ(Find(nodes, got[0]).datacenter, i % 2 == 0 ? "dc1" : "dc2") << "block " << i;
  }
}

// An exhausted datacenter is skipped, and the replicas still spread over the rest.
TEST(SpreadPolicyTest, SkipsDatacenterWithNoRoom) {
  auto policy = MustMake("spread");
  std::mt19937_64 rng(9);
  auto nodes = MakeNodes({{"dc1", 2}, {"dc2", 2}, {"dc3", 2}});
  for (int i = 0; i < 300; ++i) {
    auto got = *policy->Choose(Request(2, {"dc1-n00", "dc1-n01"}), nodes, rng);
    EXPECT_NE(Find(nodes, got[0]).datacenter, "dc1");
    EXPECT_NE(Find(nodes, got[0]).datacenter, Find(nodes, got[1]).datacenter);
  }
}

// ---- skewed ----

// The hot-spot generator must produce the skew it is configured for, on a fixed hot set.
TEST(SkewedPolicyTest, HotShareAndHotSet) {
  auto policy = MustMake("skewed", {.hot_node_fraction = 0.2, .hot_block_fraction = 0.8});
  std::mt19937_64 rng(10);
  auto nodes = MakeNodes({{"dc1", 10}, {"dc2", 10}});
  std::shuffle(nodes.begin(), nodes.end(), std::mt19937_64(11));  // hot set is by id, not order
  std::map<std::string, int> count;
  const int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) ++count[(*policy->Choose(Request(1), nodes, rng))[0]];
  // The 4 most-used nodes must be exactly the first 4 ids.
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [id, c] : count) by_count.push_back({c, id});
  std::sort(by_count.rbegin(), by_count.rend());
  std::set<std::string> top4;
  for (int i = 0; i < 4; ++i) top4.insert(by_count[i].second);
  EXPECT_EQ(top4, (std::set<std::string>{"dc1-n00", "dc1-n01", "dc1-n02", "dc1-n03"}));
  const int hot = count["dc1-n00"] + count["dc1-n01"] + count["dc1-n02"] + count["dc1-n03"];
  EXPECT_NEAR(static_cast<double>(hot) / kDraws, 0.8, 0.02);
}

// hot_block_fraction 1 means every replica goes hot until the hot set runs out, then cold.
TEST(SkewedPolicyTest, AllHotThenFallsBackToCold) {
  auto policy = MustMake("skewed", {.hot_node_fraction = 0.2, .hot_block_fraction = 1.0});
  std::mt19937_64 rng(12);
  auto nodes = MakeNodes({{"dc1", 10}});  // hot: n00, n01
  for (int i = 0; i < 100; ++i) {
    auto got = *policy->Choose(Request(3), nodes, rng);
    std::set<std::string> first_two(got.begin(), got.begin() + 2);
    EXPECT_EQ(first_two, (std::set<std::string>{"dc1-n00", "dc1-n01"}));
    EXPECT_GT(got[2], "dc1-n01");
  }
}

// ---- factory ----

// The cluster file is checked at start-up; a typo must name the valid choices.
TEST(MakePlacementPolicyTest, UnknownNameListsValidOnes) {
  auto got = MakePlacementPolicy("x", {});
  ASSERT_TRUE(got.status().IsInvalidArgument());
  EXPECT_EQ(got.status().message(),
            "unknown placement policy 'x' (valid: random, hdfs, spread, skewed)");
}

// Every listed name builds a policy that reports that name (mrctl and logs rely on it).
TEST(MakePlacementPolicyTest, NamesRoundTrip) {
  EXPECT_THAT(PlacementPolicyNames(), ElementsAre("random", "hdfs", "spread", "skewed"));
  for (const auto& name : PlacementPolicyNames()) EXPECT_EQ(MustMake(name)->name(), name);
}

// Fractions outside (0, 1] would make an empty hot set or a probability above one.
TEST(MakePlacementPolicyTest, RejectsBadFractions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {0.0, -0.1, 1.5, nan}) {
    auto a = MakePlacementPolicy("skewed", {.hot_node_fraction = bad, .hot_block_fraction = 0.8});
    ASSERT_TRUE(a.status().IsInvalidArgument()) << bad;
    EXPECT_THAT(a.status().message(), HasSubstr("hot_node_fraction must be in (0, 1]"));
    auto b = MakePlacementPolicy("skewed", {.hot_node_fraction = 0.2, .hot_block_fraction = bad});
    ASSERT_TRUE(b.status().IsInvalidArgument()) << bad;
    EXPECT_THAT(b.status().message(), HasSubstr("hot_block_fraction must be in (0, 1]"));
  }
  EXPECT_TRUE(
      MakePlacementPolicy("skewed", {.hot_node_fraction = 1, .hot_block_fraction = 1}).ok());
}

// ---- A pinned datacenter (`dfs put --datacenter`) and the writer's datacenter. ----

class PinnedDatacenterTest : public ::testing::TestWithParam<std::string> {};

// Every policy puts replica 1 in the pinned datacenter while it has an
// eligible node, and still returns min(r, eligible) distinct nodes.
TEST_P(PinnedDatacenterTest, FirstReplicaInThePinnedDatacenter) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(5);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 2}, {"dc3", 3}});
  for (int trial = 0; trial < 500; ++trial) {
    PlacementRequest req = Request(1 + trial % 3);
    req.datacenter = "dc2";
    auto chosen = policy->Choose(req, nodes, rng);
    ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
    ASSERT_EQ(chosen->size(), static_cast<size_t>(1 + trial % 3));
    EXPECT_EQ(Find(nodes, chosen->front()).datacenter, "dc2") << GetParam() << " trial " << trial;
    EXPECT_EQ(std::set<std::string>(chosen->begin(), chosen->end()).size(), chosen->size());
  }
}

// A pinned datacenter with nothing eligible (here: every node there is
// excluded) is ignored for that block rather than failing it.
TEST_P(PinnedDatacenterTest, NothingEligibleThereFallsBack) {
  auto policy = MustMake(GetParam());
  std::mt19937_64 rng(6);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 2}});
  PlacementRequest req = Request(2, {"dc2-n00", "dc2-n01"});
  req.datacenter = "dc2";
  auto chosen = policy->Choose(req, nodes, rng);
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_EQ(chosen->size(), 2u);
  for (const auto& id : *chosen) EXPECT_EQ(Find(nodes, id).datacenter, "dc1");
}

// Without a pin or a writer's datacenter nothing changes: the same seed
// draws the same pipelines as a request that never heard of them.
TEST_P(PinnedDatacenterTest, AnUnknownPinDrawsLikeNoPin) {
  auto a = MustMake(GetParam()), b = MustMake(GetParam());
  std::mt19937_64 ra(9), rb(9);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 2}});
  for (int trial = 0; trial < 100; ++trial) {
    PlacementRequest plain = Request(2);
    PlacementRequest pinned = Request(2);
    pinned.datacenter = "dc9";  // no such datacenter: nothing to pick there
    if (GetParam() != "hdfs") pinned.writer_datacenter = "dc2";  // only hdfs reads it
    EXPECT_EQ(*a->Choose(plain, nodes, ra), *b->Choose(pinned, nodes, rb)) << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PinnedDatacenterTest,
                         ::testing::ValuesIn(PlacementPolicyNames()),
                         [](const auto& info) { return info.param; });

// hdfs with a pin: replica 1 in the pinned datacenter, replica 2 outside it
// (HDFS's off-rack second replica), replica 3 beside 2.
TEST(HdfsPolicyTest, PinnedDatacenterThenOtherDatacenterThenBesideSecond) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(11);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 3}, {"dc3", 3}});
  for (int trial = 0; trial < 200; ++trial) {
    PlacementRequest req = Request(3);
    req.datacenter = "dc3";
    auto chosen = policy->Choose(req, nodes, rng);
    ASSERT_TRUE(chosen.ok());
    ASSERT_EQ(chosen->size(), 3u);
    EXPECT_EQ(Find(nodes, (*chosen)[0]).datacenter, "dc3");
    EXPECT_NE(Find(nodes, (*chosen)[1]).datacenter, "dc3");
    EXPECT_EQ(Find(nodes, (*chosen)[2]).datacenter, Find(nodes, (*chosen)[1]).datacenter);
  }
}

// The writer wins inside the pinned datacenter; a writer elsewhere does not
// pull replica 1 out of it.
TEST(HdfsPolicyTest, WriterInsideThePinWinsWriterOutsideDoesNot) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(12);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 3}});
  PlacementRequest inside = Request(2);
  inside.datacenter = "dc2";
  inside.writer = "dc2-n01";
  EXPECT_EQ(policy->Choose(inside, nodes, rng)->front(), "dc2-n01");
  PlacementRequest outside = Request(2);
  outside.datacenter = "dc2";
  outside.writer = "dc1-n01";
  for (int trial = 0; trial < 50; ++trial) {
    EXPECT_EQ(Find(nodes, policy->Choose(outside, nodes, rng)->front()).datacenter, "dc2");
  }
}

// A client that names only its datacenter writes like a worker there:
// replica 1 in that datacenter, replica 2 in another.
TEST(HdfsPolicyTest, WriterDatacenterTakesReplicaOne) {
  auto policy = MustMake("hdfs");
  std::mt19937_64 rng(13);
  const auto nodes = MakeNodes({{"dc1", 3}, {"dc2", 3}});
  for (int trial = 0; trial < 100; ++trial) {
    PlacementRequest req = Request(2);
    req.writer_datacenter = "dc1";
    auto chosen = policy->Choose(req, nodes, rng);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(Find(nodes, (*chosen)[0]).datacenter, "dc1");
    EXPECT_EQ(Find(nodes, (*chosen)[1]).datacenter, "dc2");
  }
}

}  // namespace
}  // namespace mr::dfs
