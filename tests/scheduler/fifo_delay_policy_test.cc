// Tests for scheduler/fifo_delay_policy.h: strict FIFO job order, but a
// job waits up to D for a node-local map and 2D for any map (Matchmaking
// paper §II-B; baselines.md §3.3–3.4), one decision at a time with why.
#include "scheduler/fifo_delay_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::Launch;
using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

SchedulerParams D(int64_t delay_ms) { return {{"delay_ms", delay_ms}}; }

std::vector<Launch> At(TestHost& host, TimeMs now, NodeId node) {
  host.set_now(now);
  return host.Heartbeat(node);
}

TEST(FifoDelayPolicyTest, TheHeadJobTakesEveryLocalSlotFirst) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 2, 0);
  JobId j0 = host.AddJob(MakeJob(Blocks(3, {a}), 0));
  host.AddJob(MakeJob(Blocks(3, {a}), 0));
  // Strict FIFO among jobs with local work: j0 gets both slots, where the
  // fair policy would alternate j0 and j1.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j0, 0, a), Map(j0, 1, a)));
}

TEST(FifoDelayPolicyTest, PriorityThenSubmitTime) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 2, 0);
  JobId early = host.AddJob(MakeJob(Blocks(2, {a}), 0, /*priority=*/0, /*submit_ms=*/0));
  JobId high = host.AddJob(MakeJob(Blocks(1, {a}), 0, /*priority=*/1, /*submit_ms=*/50));
  // The higher priority goes first although submitted later; then FIFO.
  EXPECT_THAT(At(host, 100, a), ElementsAre(Map(high, 0, a), Map(early, 0, a)));
}

TEST(FifoDelayPolicyTest, TheHeadWaitsAndALaterJobsLocalMapRuns) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(1, 0, 0);
  host.AddJob(MakeJob(Blocks(2, {b}), 0));
  JobId j1 = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  // The head job has no block on a: it is skipped (W = 0 < D) and j1's
  // local map takes the slot. Plain FIFO would give a remote map of j0.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j1, 0, a)));
}

TEST(FifoDelayPolicyTest, PlainFifoWouldHaveGoneRemote) {
  TestHost host(MakePolicy("fifo"));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(1, 0, 0);
  JobId j0 = host.AddJob(MakeJob(Blocks(2, {b}), 0));
  host.AddJob(MakeJob(Blocks(2, {a}), 0));
  // The same cluster under fifo: the contrast the delay is for.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j0, 0, a)));
}

TEST(FifoDelayPolicyTest, DatacenterLocalAfterDAnyAfter2D) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(0, 0, 0), c = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{b}, {c}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());    // W = 0 < D: node-local only
  EXPECT_THAT(At(host, 999, a), IsEmpty());  // W = 999 < D
  // W = D: datacenter-local (b is in a's datacenter); W resets.
  EXPECT_THAT(At(host, 1000, a), ElementsAre(Map(j, 0, a)));
  host.FinishMap(j, 0);
  // The other block is in datacenter 1: at RACK it needs D more of skipping.
  EXPECT_THAT(At(host, 1500, a), IsEmpty());
  EXPECT_THAT(At(host, 2499, a), IsEmpty());
  EXPECT_THAT(At(host, 2500, a), ElementsAre(Map(j, 1, a)));
}

TEST(FifoDelayPolicyTest, FromNodeLevelAnyMapAfter2D) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 1, 0), c = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{c}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());
  EXPECT_THAT(At(host, 1000, a), IsEmpty());  // D: datacenter-local only, none here
  EXPECT_THAT(At(host, 1999, a), IsEmpty());
  EXPECT_THAT(At(host, 2000, a), ElementsAre(Map(j, 0, a)));  // 2D: any
}

TEST(FifoDelayPolicyTest, ZeroDelayNeverWaits) {
  TestHost host(MakePolicy("fifo-delay", D(0)));
  NodeId a = host.AddNode(0, 1, 0), c = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{c}}, 0));
  // W ≥ 0 always: D = 0 is FIFO without delay (but without FIFO's
  // one-remote-map rule).
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a)));
}

TEST(FifoDelayPolicyTest, WaitResetsOnANodeLocalLaunch) {
  TestHost host(MakePolicy("fifo-delay", D(1000)));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(0, 1, 0);
  JobId j = host.AddJob(MakeJob({{b}, {a}, {b}}, 0));
  auto& delay = static_cast<FifoDelayPolicy&>(host.policy()).delay();
  // b's heartbeat launches its local map at once; a has one too.
  EXPECT_THAT(At(host, 0, b), ElementsAre(Map(j, 0, b)));
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 1, a)));
  host.FinishMap(j, 1);
  // a has nothing local left; the job waits from 0 after its node-local
  // launch and is skipped until W reaches D.
  EXPECT_THAT(At(host, 600, a), IsEmpty());
  EXPECT_EQ(delay.waited(j), 0);
  EXPECT_THAT(At(host, 1599, a), IsEmpty());
  EXPECT_EQ(delay.waited(j), 999);
  EXPECT_THAT(At(host, 1600, a), ElementsAre(Map(j, 2, a)));
}

TEST(FifoDelayPolicyTest, DefaultDelayIsOneAndAHalfHeartbeats) {
  // The paper's default: 1.5 × heartbeat, 4.5 s with its 3 s heartbeat.
  auto policy = FifoDelayPolicy::Create(FifoDelayOptions{}, /*heartbeat_ms=*/3000);
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ((*policy)->delay().node_delay_ms(), 4500);
  EXPECT_EQ((*policy)->delay().rack_delay_ms(), 4500);
}

TEST(FifoDelayPolicyTest, OneTaskPerHeartbeatWithoutAssignMultiple) {
  TestHost host(MakePolicy("fifo-delay", {{"assign_multiple", false}}));
  NodeId a = host.AddNode(0, 3, 0);
  JobId j = host.AddJob(MakeJob(Blocks(3, {a}), 0));
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a)));
}

TEST(FifoDelayPolicyTest, BadParametersAreRejected) {
  auto bad = MakeScheduler("fifo-delay", {{"delay_ms", int64_t{-5}}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("delay_ms must be >= 0, or -1 for auto"));
}

}  // namespace
}  // namespace mr::sched
