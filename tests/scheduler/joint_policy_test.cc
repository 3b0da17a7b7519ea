// Tests for scheduler/joint_policy.h, one decision at a time; each says why
// the Joint Scheduler (Wang & Ying, Algorithm 1, §4) must decide so. Ticks
// come from TestHost::set_now, as a host calls OnTick.
#include "scheduler/joint_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <set>
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

TEST(JointPolicyTest, TiesGoToAProcessingQueue) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
  (void)a;
  JobId j = host.AddJob(MakeJob({{c, b}}, 0));
  // All four candidates are empty: local processing uses no network (which
  // of b and c is drawn: see AssignmentTiesAmongProcessingQueuesAreDrawnToo).
  const Where w = Joint(host).Locate(j, 0);
  EXPECT_EQ(w.queue, Q::kProcessing);
  EXPECT_TRUE(w.id == b || w.id == c) << w.id;
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
  // a stores the block but has no map slot, so its map waits in Q_{a,1}.
  NodeId a = host.AddNode(0, /*map_slots=*/0), b = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  Tick(host);
  // |Q_{b,2}| = 0 < |Q_{a,1}| = 1 (the empty group queue X ties and loses:
  // a machine in the rack first).
  EXPECT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 0}));
  EXPECT_THAT(In(host, Q::kMachineOut, a), IsEmpty());
}

TEST(JointPolicyTest, RoutingBlocksWhenTheDestinationIsNotShorter) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/0), b = host.AddNode(0, 1);
  JobId busy = host.AddJob(MakeJob({{b}}, 0));
  ASSERT_THAT(host.Heartbeat(b), ElementsAre(Map(busy, 0, b)));  // |Q_{b,0}| = 1
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));  // Q_{a,1} = [0, 1]
  const int32_t g = Group(host, a);
  // Slot 1: map 0 to Q_{b,2}. Slot 2: |X_{g,1}| = 0 < |Q_{b,2}| = 1, so
  // map 1 goes up. Slot 3: X_{g,1} sends it to X_{g,2} (its own group:
  // D(X_{r,1}) includes r, §4.1).
  for (int slot = 0; slot < 4; ++slot) Tick(host);
  // Slot 4: X_{g,2} = 1 is not longer than Q_{b,2} = 1, nor Q_{b,2} than
  // the busy Q_{b,0} = 1: both are blocked (Alg. 1 "block the outgoing
  // traffic").
  EXPECT_THAT(In(host, Q::kGroupIn, g), ElementsAre(Task{j, 1}));
  EXPECT_THAT(In(host, Q::kMachineIn, b), ElementsAre(Task{j, 0}));
  EXPECT_THAT(In(host, Q::kProcessing, b), IsEmpty());
}

TEST(JointPolicyTest, AMachineQueueSendsAtMostB1TasksAllToTheShortest) {
  TestHost host(MakePolicy("joint", {{"b1", int64_t{2}}}));
  NodeId a = host.AddNode(0, 0), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob(Blocks(3, {a}), 0));  // Q_{a,1} = [0, 1, 2]
  Tick(host);
  // S_{m,1} = B1 = 2 chunks, both to the one shortest destination (b or c,
  // tied, drawn); the third waits for the next slot.
  std::vector<Task> at_b = In(host, Q::kMachineIn, b), at_c = In(host, Q::kMachineIn, c);
  EXPECT_THAT(at_b.empty() ? at_c : at_b, ElementsAre(Task{j, 0}, Task{j, 1}));
  EXPECT_TRUE(at_b.empty() || at_c.empty());
  EXPECT_THAT(In(host, Q::kMachineOut, a), ElementsAre(Task{j, 2}));
}

TEST(JointPolicyTest, ARackQueueSendsAtMostB2Tasks) {
  TestHost host(MakePolicy("joint", {{"b1", int64_t{5}}, {"b2", int64_t{2}}}));
  NodeId a = host.AddNode(0, 0, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/1);
  JobId j = host.AddJob(MakeJob(Blocks(4, {a}), 0));  // Q_{a,1} = [0, 1, 2, 3]
  Tick(host);  // a's rack has no machine with a slot: all four go up to X_{0,1}
  ASSERT_THAT(In(host, Q::kGroupOut, Group(host, a)),
              ElementsAre(Task{j, 0}, Task{j, 1}, Task{j, 2}, Task{j, 3}));
  Tick(host);
  // S^X_{r,1} = B2 = 2 per slot through the cluster switch.
  EXPECT_THAT(In(host, Q::kGroupIn, Group(host, b)), ElementsAre(Task{j, 0}, Task{j, 1}));
  EXPECT_THAT(In(host, Q::kGroupOut, Group(host, a)), ElementsAre(Task{j, 2}, Task{j, 3}));
}

TEST(JointPolicyTest, ACrossRackMapTakesThePathOfSection3) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 0, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  std::vector<Where> path;
  for (int slot = 0; slot < 4; ++slot) {
    Tick(host);
    path.push_back(Joint(host).Locate(j, 0));
  }
  // (Q_{a,1}, X_{r_a,1}, X_{r_b,2}, Q_{b,2}) then Q_{b,0}: one hop a slot.
  EXPECT_THAT(path,
              ElementsAre(Where{Q::kGroupOut, Group(host, a)}, Where{Q::kGroupIn, Group(host, b)},
                          Where{Q::kMachineIn, b}, Where{Q::kProcessing, b}));
}

// ---- Step 3: prefetch ----

TEST(JointPolicyTest, ARoutedMapIsPrefetchedAndRunsThere) {
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 0), b = host.AddNode(0, 1);
  // Map 0 (block 1) waits in Q_{a,1}; one tick takes it to Q_{b,2}, and b
  // lacks block 1, so a copies it there; the next tick moves it to Q_{b,0}.
  JobId j = host.AddJob(MakeJob({{a}}, 0));
  Tick(host);
  Tick(host);
  EXPECT_THAT(host.prefetches(), ElementsAre(std::make_tuple(uint64_t{1}, a, b)));
  // Data routed in advance: b runs the map as a local one.
  EXPECT_THAT(host.Heartbeat(b), ElementsAre(Map(j, 0, b)));
  EXPECT_EQ(host.state().LocalityOf(b, host.job(j).maps[0].replicas), Locality::kNode);
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
  // Up to the free slots; equal running counts (HFS's key), so the
  // submit time, then the id: j0 first, and then j1 runs fewer.
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
  // One map in each of Q_{a,0}, Q_{b,0}, and one in Q_{a,1} or Q_{b,1}
  // (ties drawn).
  JobId j = host.AddJob(MakeJob(Blocks(3, {a, b}), 0));
  host.LoseNode(a);
  // a's maps rejoin by step 1 among the live holder b: whichever were
  // a's, b ends with two in Q_{b,0} and one in Q_{b,1} (JSQ, processing
  // first on a tie).
  std::vector<Task> all = In(host, Q::kProcessing, b), out = In(host, Q::kMachineOut, b);
  EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(out.size(), 1u);
  all.insert(all.end(), out.begin(), out.end());
  EXPECT_THAT(all, ::testing::UnorderedElementsAre(Task{j, 0}, Task{j, 1}, Task{j, 2}));
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

// ---- Issue 13: the paper's sets, ties, job order and one transfer ----

// Tasks that reach each machine incoming queue Q_{m,2} after one tick, when
// every machine of one group sends one task at once and every Q_{m,2} is
// empty: a tie among all of them.
std::vector<int> SpreadOfOneTick(uint64_t seed, int machines) {
  TestHost host(MakePolicy("joint", {}, seed));
  std::vector<NodeId> nodes = host.AddNodes(0, machines, /*map_slots=*/1);
  std::vector<std::vector<NodeId>> blocks;
  for (NodeId n : nodes) blocks.insert(blocks.end(), 2, {n});  // Q_{n,0} = 1, then Q_{n,1} = 1
  JobId j = host.AddJob(MakeJob(blocks, 0));
  Tick(host);
  std::vector<int> got(static_cast<size_t>(machines), 0);
  for (NodeId n : nodes) {
    for (Task t : In(host, Q::kMachineIn, n)) got[static_cast<size_t>(n)] += t.job == j ? 1 : 0;
  }
  return got;
}

TEST(JointPolicyTest, RoutingTiesAreDrawnFromTheSeededStreamNotTheLowestId) {
  // The paper is silent on ties (Alg. 1 "find the shortest queue"). With
  // the lowest id winning, all ten senders of a group picked the same
  // machine in a tick. Drawn uniformly among the tied queues, 20 seeds
  // × 10 tasks put about 20 tasks on each machine.
  std::vector<int> total(10, 0);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<int> one = SpreadOfOneTick(seed, 10);
    EXPECT_EQ(one, SpreadOfOneTick(seed, 10)) << "same seed, same choices";
    for (size_t i = 0; i < one.size(); ++i) total[i] += one[i];
  }
  for (size_t i = 0; i < total.size(); ++i) {
    EXPECT_GE(total[i], 5) << "machine " << i;
    EXPECT_LE(total[i], 45) << "machine " << i;
  }
  EXPECT_NE(SpreadOfOneTick(1, 10), SpreadOfOneTick(2, 10));
}

TEST(JointPolicyTest, AssignmentTiesAmongProcessingQueuesAreDrawnToo) {
  // Three empty holders: processing before outgoing (local work uses no
  // network), then any of the three, not always the lowest id.
  std::set<NodeId> chosen;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    TestHost host(MakePolicy("joint", {}, seed));
    NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1), c = host.AddNode(0, 1);
    JobId j = host.AddJob(MakeJob({{c, a, b}}, 0));
    const Where w = Joint(host).Locate(j, 0);
    ASSERT_EQ(w.queue, Q::kProcessing);
    chosen.insert(w.id);
  }
  EXPECT_EQ(chosen.size(), 3u);
}

TEST(JointPolicyTest, AMachineOutgoingQueueMaySendToItsOwnIncomingQueue) {
  // §4.1: D(Q_{m,1}) = {X_{r_m,1}} ∪ {Q_{m',2} | m' in M_{r_m}}, m included
  // (the toy example: D(Q_{1,1}) = {Q_{1,2}, Q_{2,2}, X_{1,1}}). A lone
  // machine a: map 0 ties into Q_{a,0}; map 1 finds |Q_{a,0}| = 1 >
  // |Q_{a,1}| = 0 (Q_{a,1} has a destination: Q_{a,2}).
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  EXPECT_EQ(Joint(host).Locate(j, 1), (Where{Q::kMachineOut, a}));
  Tick(host);
  // |Q_{a,1}| = 1 > |Q_{a,2}| = 0 (the group queue X ties and loses: stay
  // on the machine). a holds the block: nothing to copy.
  EXPECT_EQ(Joint(host).Locate(j, 1), (Where{Q::kMachineIn, a}));
  EXPECT_THAT(host.prefetches(), IsEmpty());
}

TEST(JointPolicyTest, ARackOutgoingQueueMaySendToItsOwnRack) {
  // §4.1: D(X_{r,1}) = {X_{r',2} | r' = 1..R}, r included. One rack: the
  // holder a has no map slot, b has one. Q_{a,1} = [0, 1, 2, 3].
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 0, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/0);
  JobId j = host.AddJob(MakeJob(Blocks(4, {a}), 0));
  Tick(host);  // |Q_{b,2}| = |X_{0,1}| = 0 < 4: the machine queue wins the tie
  ASSERT_EQ(Joint(host).Locate(j, 0), (Where{Q::kMachineIn, b}));
  std::vector<Where> path;
  for (int slot = 0; slot < 2; ++slot) {
    Tick(host);
    path.push_back(Joint(host).Locate(j, 1));
  }
  // Slot 2: |X_{0,1}| = 0 < |Q_{b,2}| = 1 < 3, so map 1 goes up; slot 3:
  // X_{0,1} sends it to X_{0,2}, its own rack's incoming queue.
  EXPECT_THAT(path, ElementsAre(Where{Q::kGroupOut, Group(host, a)}, Where{Q::kGroupIn, Group(host, a)}));
}

TEST(JointPolicyTest, AMachineServesJobsInTheFairSchedulersOrder) {
  // §6: "we let JS prioritize jobs in the same way as HFS". j0 runs a map
  // on b; Q_{a,0} = [j0/1, j1/0]. HFS orders by running / weight: j1 (0)
  // before j0 (1); after j1's launch both run 1 and the submit time puts
  // j0 next.
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/2), b = host.AddNode(0, 1);
  JobId j0 = host.AddJob(MakeJob({{b}, {a}}, 0));
  ASSERT_THAT(host.Heartbeat(b), ElementsAre(Map(j0, 0, b)));
  JobId j1 = host.AddJob(MakeJob({{a}}, 0));
  ASSERT_THAT(In(host, Q::kProcessing, a), ElementsAre(Task{j0, 1}, Task{j1, 0}));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j1, 0, a), Map(j0, 1, a)));
}

TEST(JointPolicyTest, ANetworkQueueSendsTheFairSchedulersFirstJobFirst) {
  // The same order decides which B1 chunks a queue sends. a holds every
  // block; b runs j0/0, so j0 runs 1 map and j1 none.
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, 1), b = host.AddNode(0, 1);
  JobId j0 = host.AddJob(MakeJob({{b}, {a}, {a}}, 0));  // Q_{a,0} = [1], Q_{a,1} = [2]
  JobId j1 = host.AddJob(MakeJob({{a}, {a}}, 0));       // Q_{a,0} = [j0/1, j1/0], Q_{a,1} + [j1/1]
  ASSERT_THAT(In(host, Q::kMachineOut, a), ElementsAre(Task{j0, 2}, Task{j1, 1}));
  ASSERT_THAT(host.Heartbeat(b), ElementsAre(Map(j0, 0, b)));
  Tick(host);
  // B1 = 1: j1's chunk leaves first although j0's came first.
  EXPECT_EQ(Joint(host).Locate(j1, 1).queue, Q::kMachineIn);
  EXPECT_EQ(Joint(host).Locate(j0, 2), (Where{Q::kMachineOut, a}));
}

TEST(JointPolicyTest, TheBlockIsCopiedOnceAlongsideItsLastHops) {
  // §3.2: the queues *are* the network; a chunk in Q_{m',2} is on its way
  // to m'. The copy starts when the target is known (the task enters
  // Q_{m',2}, whose only destination is Q_{m',0}), so it travels while the
  // task waits there instead of after it has arrived: one transfer.
  TestHost host(MakePolicy("joint"));
  NodeId a = host.AddNode(0, /*map_slots=*/0), b = host.AddNode(0, 1);
  JobId j = host.AddJob(MakeJob({{a}}, 0));  // Q_{a,1} = [0]: a has no slot
  Tick(host);
  ASSERT_EQ(Joint(host).Locate(j, 0), (Where{Q::kMachineIn, b}));
  EXPECT_THAT(host.prefetches(), ElementsAre(std::make_tuple(uint64_t{1}, a, b)));
  Tick(host);
  ASSERT_EQ(Joint(host).Locate(j, 0), (Where{Q::kProcessing, b}));
  EXPECT_EQ(host.prefetches().size(), 1u) << "not copied again on arrival";
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
