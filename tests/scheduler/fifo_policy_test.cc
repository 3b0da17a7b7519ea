// Tests for scheduler/fifo_policy.h, one heartbeat decision at a time; each
// says why the policy must decide so (baselines.md §2).
#include "scheduler/fifo_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::Launch;
using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Launch> Only(const std::vector<Launch>& launches, bool maps) {
  std::vector<Launch> out;
  for (const Launch& l : launches) {
    if (l.is_map == maps) out.push_back(l);
  }
  return out;
}

// `count` maps whose block is on every node in `replicas`.
std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

TEST(FifoPolicyTest, HeadJobsRemoteMapBeforeALaterJobsLocalOne) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0), b = host.AddNode(1);
  JobId j0 = host.AddJob(MakeJob(Blocks(4, {b})));
  host.AddJob(MakeJob(Blocks(4, {a})));
  // Strict FIFO: the head job takes a's slot with a remote map, and that
  // remote map ends map assignment although job 1 has local work and a
  // second slot is free.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a)));
}

TEST(FifoPolicyTest, RestartsFromTheHeadAfterEachLocalMap) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, /*map_slots=*/4), b = host.AddNode(1, /*map_slots=*/0);
  JobId j0 = host.AddJob(MakeJob({{a}, {b}}));
  host.AddJob(MakeJob({{a}, {a}}));
  // After its local map the head job is asked again first, and its remote
  // map then ends the heartbeat: job 1's local maps wait.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j0, 1, a)));
}

TEST(FifoPolicyTest, LocalMapsThenAtMostOneRemoteMap) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, 4), b = host.AddNode(1, 4);
  std::vector<std::vector<NodeId>> blocks = {{a}, {a}};
  for (int i = 0; i < 6; ++i) blocks.push_back({b});
  JobId j = host.AddJob(MakeJob(blocks));
  // Two local maps, then one remote map, which ends map assignment: the
  // fourth slot stays free so a does not steal b's local work.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a), Map(j, 2, a)));
}

TEST(FifoPolicyTest, DatacenterLocalCountsAsLocalWithRacks) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, 3, 1, /*rack=*/0);
  NodeId b = host.AddNode(0, 0, 1, /*rack=*/1);
  NodeId c = host.AddNode(1, 0, 1, /*rack=*/2);
  JobId j = host.AddJob(MakeJob({{b}, {c}, {b}}));
  // Hadoop's "node or rack" call is node, rack and datacenter here, so both
  // datacenter-local maps come before the one remote map.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 2, a), Map(j, 1, a)));
}

TEST(FifoPolicyTest, AFailedMapComesFirstAndDoesNotEndTheHeartbeat) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, 3), b = host.AddNode(1, 1);
  JobId j = host.AddJob(MakeJob({{b}, {a}, {a}}));
  EXPECT_THAT(host.Heartbeat(b), ElementsAre(Map(j, 0, b)));
  host.FailMap(j, 0);
  // The substrate offers failed maps first even to the local call, so the
  // remote m0 is taken as "local" and a still fills its other slots.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a), Map(j, 2, a)));
}

TEST(FifoPolicyTest, LoadFactorSpreadsMapsWhenUnderLoaded) {
  TestHost host(MakePolicy("fifo"));
  std::vector<NodeId> n = host.AddNodes(0, 4, /*map_slots=*/4);
  JobId j = host.AddJob(MakeJob(Blocks(4, {n[0]})));
  // 4 maps for 16 slots: load 0.25, so each node takes ceil(0.25 × 4) = 1
  // although all four maps are local to n0.
  EXPECT_THAT(host.Heartbeat(n[0]), ElementsAre(Map(j, 0, n[0])));
  EXPECT_THAT(host.Heartbeat(n[0]), IsEmpty());  // its share is running
  EXPECT_THAT(host.Heartbeat(n[1]), ElementsAre(Map(j, 1, n[1])));
}

TEST(FifoPolicyTest, AtMostOneReduceAndNotBeforeSlowStart) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, /*map_slots=*/2, /*reduce_slots=*/3);
  JobId j = host.AddJob(MakeJob(Blocks(20, {a}), /*reduces=*/3));
  // Slow-start 0.05 of 20 maps: no reduce until one map has finished.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  host.FinishMap(j, 0);
  // Three free reduce slots, but one reduce per heartbeat.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 2, a), Reduce(j, 0, a)));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Reduce(j, 1, a)));
}

TEST(FifoPolicyTest, PriorityThenSubmitTimeThenJobId) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, 4);
  JobId j0 = host.AddJob(MakeJob({{a}}, 1, /*priority=*/0, /*submit_ms=*/100));
  JobId j1 = host.AddJob(MakeJob({{a}}, 1, /*priority=*/1, /*submit_ms=*/200));
  JobId j2 = host.AddJob(MakeJob({{a}}, 1, /*priority=*/0, /*submit_ms=*/50));
  JobId j3 = host.AddJob(MakeJob({{a}}, 1, /*priority=*/0, /*submit_ms=*/50));
  // Higher priority first; then earlier submission; then the lower job id.
  EXPECT_THAT(host.Heartbeat(a),
              ElementsAre(Map(j1, 0, a), Map(j2, 0, a), Map(j3, 0, a), Map(j0, 0, a)));
}

// Four nodes with two map slots; n0..n2 fill up, then n3 heartbeats with
// 6 of 8 slots busy. Returns n3's map launches.
std::vector<Launch> FourthNodeMaps(const SchedulerParams& params, int reduces) {
  TestHost host(MakePolicy("fifo", params));
  std::vector<NodeId> n = host.AddNodes(0, 4, 2, 1);
  host.AddJob(MakeJob(Blocks(400, n), reduces));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(host.Heartbeat(n[i]).size(), 2u);
  return Only(host.Heartbeat(n[3]), /*maps=*/true);
}

TEST(FifoPolicyTest, MapPaddingLeavesRoomBeyondTheHeadJob) {
  // padding = min(2, floor(400 × 0.01)) = 2 and 6 + 2 ≥ 8: after one local
  // map the node stops.
  EXPECT_EQ(FourthNodeMaps({}, /*reduces=*/1).size(), 1u);
  // Padding needs more than min_cluster_size_for_padding nodes.
  EXPECT_EQ(FourthNodeMaps({{"min_cluster_size_for_padding", int64_t{4}}}, 1).size(), 2u);
  EXPECT_EQ(FourthNodeMaps({{"capacity_pad", 0.0}}, 1).size(), 2u);
}

TEST(FifoPolicyTest, MapOnlyJobsNeverCountTowardMapPadding) {
  // Hadoop's quirk, reproduced: the padding walk skips jobs without
  // reduces, so the same cluster pads nothing for a map-only job.
  EXPECT_EQ(FourthNodeMaps({}, /*reduces=*/0).size(), 2u);
}

TEST(FifoPolicyTest, UnderReducePaddingOnlyTheHeadJobIsTried) {
  for (int64_t min_size : {3, 4}) {
    TestHost host(MakePolicy("fifo", {{"min_cluster_size_for_padding", min_size}}));
    std::vector<NodeId> n = host.AddNodes(0, 4, /*map_slots=*/2, /*reduce_slots=*/1);
    JobId small = host.AddJob(MakeJob({{n[0]}}, /*reduces=*/4));
    EXPECT_THAT(host.Heartbeat(n[0]), ElementsAre(Map(small, 0, n[0])));
    host.FinishMap(small, 0);  // past slow-start
    Job big = MakeJob(Blocks(200, n), /*reduces=*/100, /*priority=*/1);
    host.AddJob(big);  // the new head; no reduce may start before 10 maps finish
    for (int i = 1; i < 4; ++i) {
      EXPECT_THAT(Only(host.Heartbeat(n[i]), false), ElementsAre(Reduce(small, i - 1, n[i])));
    }
    // 3 reduces run in 4 slots, and padding = min(1, floor(100 × 0.01)) = 1:
    // the head job has no reduce to give, so n0 gets none (with padding on).
    std::vector<Launch> reduces = Only(host.Heartbeat(n[0]), false);
    if (min_size == 3) {
      EXPECT_THAT(reduces, IsEmpty());
    } else {
      EXPECT_THAT(reduces, ElementsAre(Reduce(small, 3, n[0])));
    }
  }
}

TEST(FifoPolicyTest, BadParametersAreRejected) {
  auto bad = MakeScheduler("fifo", {{"capacity_pad", 1.5}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_THAT(bad.status().message(), HasSubstr("capacity_pad must be in [0, 1], got 1.5"));
  auto negative = MakeScheduler("fifo", {{"min_cluster_size_for_padding", int64_t{-1}}}, {});
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("min_cluster_size_for_padding must be >= 0"));
  EXPECT_TRUE(FifoPolicy::Create(FifoOptions{}).ok());
}

// topology = "blind": Hadoop 0.20.2 as JoSS ran it (JoSS §1, §3), with no
// topology script, so every VPS is in /default-rack (baselines.md §1):
// obtainNewNodeOrRackLocalMapTask finds a node-local map, else the job's
// first map anywhere — no preference for the datacenter, and no map is
// off-switch, so none ends the heartbeat's map loop.
TEST(FifoPolicyTest, BlindTopologyTakesAnyMapAfterTheNodeAndNeverStopsOffSwitch) {
  for (const bool blind : {false, true}) {
    SCOPED_TRACE(blind ? "blind" : "rack-as-datacenter");
    TestHost host(blind ? MakePolicy("fifo", {{"topology", std::string("blind")}})
                        : MakePolicy("fifo"));
    NodeId a = host.AddNode(0, /*map_slots=*/3, /*reduce_slots=*/0);
    NodeId b = host.AddNode(0, 1, 0), c = host.AddNode(1, 1, 0), d = host.AddNode(1, 1, 0);
    // Six maps for six slots: map load 1, so a may take three.
    JobId j = host.AddJob(MakeJob({{c}, {b}, {d}, {c}, {d}, {c}}, /*reduces=*/0));
    if (blind) {
      EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a), Map(j, 2, a)));
    } else {
      // The datacenter-local map first; the off-datacenter one ends the loop.
      EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a), Map(j, 0, a)));
    }
  }
}

TEST(FifoPolicyTest, BlindTopologyStillPrefersTheNode) {
  TestHost host(MakePolicy("fifo", {{"topology", std::string("blind")}}));
  NodeId a = host.AddNode(0, /*map_slots=*/1, 0);
  NodeId c = host.AddNode(1, 1, 0);
  JobId j = host.AddJob(MakeJob({{c}, {a}}, 0));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
  auto bad = MakeScheduler("fifo", {{"topology", std::string("flat")}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("topology must be rack-as-datacenter or blind, got 'flat'"));
}

}  // namespace
}  // namespace mr::sched
