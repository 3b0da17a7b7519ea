// Tests for scheduler/matchmaking_policy.h, one heartbeat decision at a
// time; each says why Matchmaking (paper 003, §III, Algs. 1-2) must decide
// so.
#include "scheduler/matchmaking_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// `count` maps whose block is on every node in `replicas`.
std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

int Marker(TestHost& host, NodeId node) {
  return static_cast<MatchmakingPolicy&>(host.policy()).marker(node);
}

TEST(MatchmakingPolicyTest, FirstMissGetsNothing) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  host.AddJob(MakeJob(Blocks(4, {b})));
  // Nothing is local to a: it is marked and waits one heartbeat so that b
  // gets its chance at its local maps first.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
  EXPECT_EQ(Marker(host, a), 0);
}

TEST(MatchmakingPolicyTest, SecondMissGetsExactlyOneNonLocalMap) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0, /*map_slots=*/4), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob(Blocks(8, {b})));
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());  // first miss
  // Second miss in a row: one non-local map, although 4 slots are free.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  // The marker stays 0: every further miss gets one more, not a pause.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
}

TEST(MatchmakingPolicyTest, LocalMapsComeFirstWhateverTheJobOrder) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  host.AddJob(MakeJob(Blocks(4, {b})));
  JobId later = host.AddJob(MakeJob(Blocks(4, {a})));
  // FIFO would give a the head job's remote map; Matchmaking relaxes the
  // order and fills both slots with the later job's local maps.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(later, 0, a), Map(later, 1, a)));
  EXPECT_EQ(Marker(host, a), 2);  // two local maps since the last miss
}

TEST(MatchmakingPolicyTest, AMissAfterLocalMapsEndsTheHeartbeat) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0, 3), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{b}, {a}, {b}, {b}}));
  // One local map, then a miss: the node is marked and its other two
  // slots stay free (a first miss gets no non-local map).
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
  EXPECT_EQ(Marker(host, a), 0);
  // Missing again next time: one non-local map.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(MatchmakingPolicyTest, MarkersAreClearedWhenAJobArrives) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob(Blocks(4, {b})));
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());  // marked
  host.AddJob(MakeJob(Blocks(4, {b})));
  // The new job might have held maps local to a, so a's miss counts as a
  // first miss again (Algorithm 2).
  EXPECT_EQ(Marker(host, a), MatchmakingPolicy::kNullMarker);
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));  // then the second miss
}

TEST(MatchmakingPolicyTest, TheNonLocalMapComesFromTheFirstJobNearestFirst) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0), c = host.AddNode(1);
  JobId head = host.AddJob(MakeJob({{c}, {b}}));
  host.AddJob(MakeJob({{b}}));
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
  // The head job gives it, and the substrate prefers a's datacenter (m1
  // on b) to the other one (m0 on c).
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(head, 1, a)));
}

TEST(MatchmakingPolicyTest, NoPendingMapIsNotAMiss) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  JobId j = host.AddJob(MakeJob({{b}}, /*reduces=*/0));
  EXPECT_THAT(host.Heartbeat(b), ElementsAre(Map(j, 0, b)));
  // Every map runs: a had nothing to match, so it is not marked.
  EXPECT_THAT(host.Heartbeat(a), IsEmpty());
  EXPECT_EQ(Marker(host, a), MatchmakingPolicy::kNullMarker);
}

TEST(MatchmakingPolicyTest, AtMostOneReducePerHeartbeat) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0, /*map_slots=*/2, /*reduce_slots=*/3);
  JobId j = host.AddJob(MakeJob(Blocks(20, {a}), /*reduces=*/3));
  // Slow-start 0.05 of 20 maps: no reduce until one map has finished.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  host.FinishMap(j, 0);
  // Three free reduce slots, but one reduce per heartbeat.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 2, a), Reduce(j, 0, a)));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Reduce(j, 1, a)));
}

// Newest job first: any JobOrder plugs in.
class NewestFirst : public JobOrder {
 public:
  const char* name() const override { return "newest-first"; }
  void Sort(const ClusterState&, bool, std::vector<JobId>* jobs) const override {
    std::sort(jobs->begin(), jobs->end(), [](JobId x, JobId y) { return x > y; });
  }
};

TEST(MatchmakingPolicyTest, TheJobOrderIsAComponent) {
  TestHost host(
      std::make_unique<MatchmakingPolicy>("lifo-matchmaking", std::make_unique<NewestFirst>()));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  host.AddJob(MakeJob({{a}, {b}}));
  JobId newer = host.AddJob(MakeJob({{a}, {b}}));
  EXPECT_STREQ(host.policy().name(), "lifo-matchmaking");
  // Both jobs have a map local to a: the order picks the newer one.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(newer, 0, a)));
}

TEST(MatchmakingPolicyTest, FifoOrderGivesTheHeadJobEveryLocalSlot) {
  TestHost host(MakePolicy("fifo-matchmaking"));
  NodeId a = host.AddNode(0);
  JobId j0 = host.AddJob(MakeJob(Blocks(4, {a})));
  host.AddJob(MakeJob(Blocks(4, {a})));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j0, 1, a)));
}

TEST(MatchmakingPolicyTest, FairOrderSharesLocalSlotsBetweenJobs) {
  TestHost host(MakePolicy("fair-matchmaking"));
  NodeId a = host.AddNode(0), b = host.AddNode(0);
  JobId j0 = host.AddJob(MakeJob(Blocks(4, {a})));
  JobId j1 = host.AddJob(MakeJob(Blocks(4, {a})));
  // The order is re-sorted after each launch: j1 (0 running) goes before
  // j0 (1 running) for the second slot.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j1, 0, a)));
  // The markers work as with FIFO: b finds nothing local, so it waits once.
  EXPECT_THAT(host.Heartbeat(b), IsEmpty());
  EXPECT_THAT(host.Heartbeat(b), ::testing::SizeIs(1));
}

}  // namespace
}  // namespace mr::sched
