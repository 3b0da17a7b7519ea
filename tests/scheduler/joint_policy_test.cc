// Tests for scheduler/joint_policy.h, one decision at a time; each says why
// the Joint Scheduler (Wang & Ying, Algorithm 1, §4) must decide so. Ticks
// come from TestHost::set_now, as a host calls OnTick.
#include "scheduler/joint_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <tuple>

#include "tests/scheduler/test_host.h"

namespace mr::sched {

void PrintTo(const JointPolicy::TaskRef& t, std::ostream* os) { *os << t.job << "/" << t.index; }
void PrintTo(const JointPolicy::Where& w, std::ostream* os) {
  *os << "queue " << static_cast<int>(w.queue) << " @" << w.id;
}

namespace {

using test::MakeJob;
using test::MakePolicy;
using test::Map;
using test::Reduce;
using test::TestHost;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Q = JointPolicy::Queue;
using Task = JointPolicy::TaskRef;
using Where = JointPolicy::Where;

JointPolicy& Joint(TestHost& host) { return dynamic_cast<JointPolicy&>(host.policy()); }

// One routing time slot.
void Tick(TestHost& host) { host.set_now(host.now() + host.policy().tick_ms()); }

std::vector<Task> In(TestHost& host, Q queue, int32_t id) {
  return Joint(host).Contents(queue, id);
}

int32_t Group(TestHost& host, NodeId n) { return JointPolicy::GroupOf(host.state().node(n)); }

// `count` maps whose block is on every node in `replicas`.
std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

// ---- Step 1: task assignment ----

TEST(JointPolicyTest, NewMapJoinsTheShortestQueueOfItsHolders) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  host.AddJob(MakeJob(Blocks(4, {a}), 0));  // |Q_{a,0}| = |Q_{a,1}| = 2
  host.AddJob(MakeJob({{b}}, 0));           // |Q_{b,0}| = 1
  JobId j = host.AddJob(MakeJob({{a, b}}, 0));
  // Q_L = {Q_{a,0}: 2, Q_{b,0}: 1, Q_{a,1}: 2, Q_{b,1}: 0}: the empty
  // outgoing queue wins, so b will send the block to a remote machine.
  EXPECT_EQ(Joint(host).Locate(j, 0), (Where{Q::kMachineOut, b}));
}

TEST(JointPolicyTest, TiesGoToAProcessingQueueThenTheLowestNode) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
  (void)a;
  JobId j = host.AddJob(MakeJob({{c, b}}, 0));
  // All four candidates are empty: local processing uses no network, and
  // the lower id breaks the remaining tie.
  EXPECT_EQ(Joint(host).Locate(j, 0), (Where{Q::kProcessing, b}));
}

TEST(JointPolicyTest, ProcessingQueueLengthIsWholeRoundsOfSlots) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/2), b = host.AddNode(0, 1);
  (void)b;
  JobId j = host.AddJob(MakeJob(Blocks(3, {a}), 0));
  // ⌊1/2⌋ = 0 ties the empty Q_{a,1}, so two maps fill a's two slots; the
  // third sees ⌊2/2⌋ = 1 and goes to the network.
  EXPECT_THAT(In(host, Q::kProcessing, a), ElementsAre(Task{j, 0}, Task{j, 1}));
  EXPECT_THAT(In(host, Q::kMachineOut, a), ElementsAre(Task{j, 2}));
}

TEST(JointPolicyTest, RunningMapsCountInTheProcessingQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  (void)b;
  JobId j0 = host.AddJob(MakeJob({{a}}, 0));
  ASSERT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a)));
  JobId j1 = host.AddJob(MakeJob({{a}}, 0));
  // The paper's Q_{m,0} holds the task in service (§4.2): a is busy, so
  // |Q_{a,0}| = 1 > |Q_{a,1}| = 0.
  EXPECT_EQ(Joint(host).Locate(j1, 0), (Where{Q::kMachineOut, a}));
}

TEST(JointPolicyTest, AMapWithNoLiveHolderJoinsTheShortestProcessingQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(1, 1);
  host.AddJob(MakeJob({{a}}, 0));  // |Q_{a,0}| = 1
  JobId j = host.AddJob(MakeJob({{}}, 0));
  // No replica to route from: every machine reads it remotely, so it waits
  // where the fewest rounds of work are queued.
  EXPECT_EQ(Joint(host).Locate(j, 0), (Where{Q::kProcessing, b}));
}

// ---- Step 2: routing ----

TEST(JointPolicyTest, RoutingForwardsToAStrictlyShorterQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));  // map 1 in Q_{a,1}
  Tick(host);
  // |Q_{b,2}| = 0 < |Q_{a,1}| = 1 (and a's own incoming queue is no
  // destination: Q_{a,1} holds blocks for *remote* machines).
  EXPECT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 1}));
  EXPECT_THAT(In(host, Q::kMachineOut, a), IsEmpty());
}

TEST(JointPolicyTest, RoutingBlocksWhenTheDestinationIsNotShorter) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  JobId busy = host.AddJob(MakeJob({{b}}, 0));
  ASSERT_THAT(host.Heartbeat(b), ElementsAre(Map(busy, 0, b)));  // |Q_{b,0}| = 1
  // Q_{a,1} = [1, 3]; after one tick (2 > 0) map 1 is in Q_{b,2}.
  JobId j = host.AddJob(MakeJob(Blocks(4, {a}), 0));
  Tick(host);
  ASSERT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 1}));
  Tick(host);
  // Q_{a,1} = 1 is not longer than Q_{b,2} = 1, nor Q_{b,2} than the busy
  // Q_{b,0} = 1: both are blocked (Alg. 1 "block the outgoing traffic").
  EXPECT_THAT(In(host, Q::kMachineOut, a), ElementsAre(Task{j, 3}));
  EXPECT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 1}));
  EXPECT_THAT(In(host, Q::kProcessing, b), IsEmpty());
  EXPECT_THAT(host.prefetches(), IsEmpty());
}

TEST(JointPolicyTest, AMachineQueueSendsAtMostB1TasksAllToTheShortest) {
  TestHost host(MakePolicy("joint", {{"b1", int64_t{2}}}));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob(Blocks(6, {a}), 0));  // Q_{a,1} = [1, 3, 5]
  Tick(host);
  // S_{m,1} = B1 = 2 chunks to the one shortest destination (b, lower id
  // than the equally empty c); the third waits for the next slot.
  EXPECT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 1}, Task{j, 3}));
  EXPECT_THAT(In(host, Q::kMachineIn, c), IsEmpty());
  EXPECT_THAT(In(host, Q::kMachineOut, a), ElementsAre(Task{j, 5}));
}

TEST(JointPolicyTest, ARackQueueSendsAtMostB2Tasks) {
  TestHost host(MakePolicy("joint", {{"b1", int64_t{5}}, {"b2", int64_t{2}}}));
  NodeId a = host.AddNode(0, 1, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/1);
  JobId j = host.AddJob(MakeJob(Blocks(8, {a}), 0));  // Q_{a,1} = [1, 3, 5, 7]
  Tick(host);  // a has no rack mate: all four go up to X_{0,1}
  ASSERT_THAT(In(host, Q::kGroupOut, Group(host, a)),
              ElementsAre(Task{j, 1}, Task{j, 3}, Task{j, 5}, Task{j, 7}));
  Tick(host);
  // S^X_{r,1} = B2 = 2 per slot through the cluster switch.
  EXPECT_THAT(In(host, Q::kGroupIn, Group(host, b)), ElementsAre(Task{j, 1}, Task{j, 3}));
  EXPECT_THAT(In(host, Q::kGroupOut, Group(host, a)), ElementsAre(Task{j, 5}, Task{j, 7}));
}

TEST(JointPolicyTest, ACrossRackMapTakesThePathOfSection3) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/1);
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  std::vector<Where> path;
  for (int slot = 0; slot < 4; ++slot) {
    Tick(host);
    path.push_back(Joint(host).Locate(j, 1));
  }
  // (Q_{a,1}, X_{r_a,1}, X_{r_b,2}, Q_{b,2}) then Q_{b,0}: one hop a slot.
  EXPECT_THAT(path,
              ElementsAre(Where{Q::kGroupOut, Group(host, a)}, Where{Q::kGroupIn, Group(host, b)},
                          Where{Q::kMachineIn, b}, Where{Q::kProcessing, b}));
}

// ---- Step 3: prefetch ----

TEST(JointPolicyTest, ARoutedMapIsPrefetchedAndRunsThere) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  // Map 1 (block 2) waits in Q_{a,1}; one tick takes it to Q_{b,2}, the
  // next into Q_{b,0}, and b lacks block 2, so a copies it there.
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  Tick(host);
  Tick(host);
  EXPECT_THAT(host.prefetches(), ElementsAre(std::make_tuple(uint64_t{2}, a, b)));
  // Data routed in advance: b runs the map as a local one.
  EXPECT_THAT(host.Heartbeat(b), ElementsAre(Map(j, 1, b)));
  EXPECT_EQ(host.state().LocalityOf(b, host.job(j).maps[1].replicas), Locality::kNode);
}

// ---- Step 4 and 5: the heartbeat ----

TEST(JointPolicyTest, AnIdleMachineWaitsForRoutedWork) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  host.AddJob(MakeJob(Blocks(2, {a}), 0));  // Q_{a,0} = [0], Q_{a,1} = [1]
  // §4.2: an idle machine's service goes unused; JS never hands it another
  // queue's task, routing will bring it one at the next slot.
  EXPECT_THAT(host.Heartbeat(b), IsEmpty());
}

TEST(JointPolicyTest, AMachineServesItsProcessingQueueHeadFirst) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/2), b = host.AddNode(0, 1);
  (void)b;
  JobId j0 = host.AddJob(MakeJob({{a}}, 0));
  JobId j1 = host.AddJob(MakeJob({{a}}, 0));
  // First come, first served within Q_{a,0}, up to the free slots.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Map(j1, 0, a)));
}

TEST(JointPolicyTest, OneReducePerHeartbeatFromTheFirstJobPastSlowStart) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/1, /*reduce_slots=*/3);
  Job waiting = MakeJob({{a}}, /*reduces=*/2);
  waiting.slowstart = 1.0;
  JobId j0 = host.AddJob(waiting);
  Job ready = MakeJob({{a}}, /*reduces=*/2);
  ready.slowstart = 0;
  JobId j1 = host.AddJob(ready);
  // The paper leaves reduces out; job 0 is before slow-start, so job 1's
  // first reduce, and only one although three slots are free.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j0, 0, a), Reduce(j1, 0, a)));
}

// ---- Events ----

TEST(JointPolicyTest, AFailedMapRejoinsTheShortestQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  (void)b;
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  ASSERT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  host.FailMap(j, 0);
  // Step 1 again: a is idle now, so its processing queue is the shortest.
  EXPECT_EQ(Joint(host).Locate(j, 0), (Where{Q::kProcessing, a}));
}

TEST(JointPolicyTest, ALostNodesQueuesAreRedistributed) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
  (void)c;
  // Q_{a,0} = [0], Q_{b,0} = [1], Q_{a,1} = [2].
  JobId j = host.AddJob(MakeJob(Blocks(3, {a, b}), 0));
  host.LoseNode(a);
  // a's maps rejoin by step 1 among the live holder b, in queue order:
  // map 0 finds |Q_{b,0}| = 1 > |Q_{b,1}| = 0, map 2 then ties at 1.
  EXPECT_THAT(In(host, Q::kProcessing, b), ElementsAre(Task{j, 1}, Task{j, 2}));
  EXPECT_THAT(In(host, Q::kMachineOut, b), ElementsAre(Task{j, 0}));
}

TEST(JointPolicyTest, AKilledJobLeavesEveryQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  (void)b;
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  host.state().FinishJob(j);
  host.policy().OnJobFinished(host.state(), j, host.now());
  // Stale tasks would lengthen a's queues and skew every later choice.
  EXPECT_THAT(In(host, Q::kProcessing, a), IsEmpty());
  EXPECT_THAT(In(host, Q::kMachineOut, a), IsEmpty());
}

// ---- Parameters ----

TEST(JointPolicyTest, TheTickDefaultsToTheHeartbeatInterval) {
  SchedulerEnv env;
  env.heartbeat_ms = 300;
  auto by_default = MakeScheduler("joint", {}, env);
  ASSERT_TRUE(by_default.ok());
  // §6 scales a slot to one block over a rack link: about a heartbeat.
  EXPECT_EQ((*by_default)->tick_ms(), 300);
  auto set = MakeScheduler("joint", {{"tick_ms", int64_t{50}}}, env);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ((*set)->tick_ms(), 50);
}

TEST(JointPolicyTest, BadParametersAreRejected) {
  auto b1 = MakeScheduler("joint", {{"b1", int64_t{0}}}, {});
  ASSERT_FALSE(b1.ok());
  EXPECT_TRUE(b1.status().IsInvalidArgument());
  EXPECT_THAT(b1.status().message(), HasSubstr("b1 must be >= 1, got 0"));
  auto b2 = MakeScheduler("joint", {{"b2", int64_t{-1}}}, {});
  ASSERT_FALSE(b2.ok());
  EXPECT_THAT(b2.status().message(), HasSubstr("b2 must be >= 1, got -1"));
  auto tick = MakeScheduler("joint", {{"tick_ms", int64_t{-5}}}, {});
  ASSERT_FALSE(tick.ok());
  EXPECT_THAT(tick.status().message(), HasSubstr("tick_ms must be >= 0, got -5"));
  EXPECT_TRUE(JointPolicy::Create(JointOptions{}, SchedulerEnv{}).ok());
}

}  // namespace
}  // namespace mr::sched
