// Tests for scheduler/joss.h and scheduler/joss_policy.h (JoSS-T, JoSS-J),
// one decision at a time; each says why, citing the JoSS paper (§4).
#include "scheduler/joss_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

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

constexpr double kNoFp = std::numeric_limits<double>::quiet_NaN();

// A job with known filtering percentage `fp` (NaN: never run before).
Job FpJob(const std::vector<std::vector<NodeId>>& replicas, double fp, int reduces = 1) {
  Job job = MakeJob(replicas, reduces);
  job.known_fp = fp;
  return job;
}

const JossPolicy& Joss(TestHost& host) { return dynamic_cast<const JossPolicy&>(host.policy()); }

std::vector<int32_t> MapHomes(TestHost& host, JobId job) {
  std::vector<int32_t> homes;
  for (const MapTask& m : host.job(job).maps) {
    homes.push_back(Joss(host).queues().HomeOf(job, m.index, /*is_map=*/true));
  }
  return homes;
}

std::vector<int32_t> ReduceHomes(TestHost& host, JobId job) {
  std::vector<int32_t> homes;
  for (const ReduceTask& r : host.job(job).reduces) {
    homes.push_back(Joss(host).queues().HomeOf(job, r.index, /*is_map=*/false));
  }
  return homes;
}

// ---- Classification (§4.1) ----

TEST(JossClassifyTest, TdIsKOverKMinusOne) {
  EXPECT_DOUBLE_EQ(JossDerivedTd(2), 2.0);  // Eq. 8 with k = 2
  EXPECT_DOUBLE_EQ(JossDerivedTd(3), 1.5);
  // k = 1: Eq. 7 has no bound, so nothing is reduce-heavy.
  EXPECT_TRUE(std::isinf(JossDerivedTd(1)));
}

TEST(JossClassifyTest, PermuIsReduceHeavyAndWordCountMapHeavyWithTwoDatacenters) {
  ClusterState state;
  for (int dc : {0, 0, 1, 1}) state.AddNode("n", dc, -1, 1, 1);
  // Table 5: Permu's FP is 3 > td = 2 (Eq. 3), so it is RH; a one-map job
  // is small (1 ≤ N_avg_VPS = 2), so policy A.
  JossClassification permu = JossClassify(state, FpJob({{0}}, 3.0), -1);
  EXPECT_EQ(permu.td, 2.0);
  EXPECT_FALSE(permu.map_heavy);
  EXPECT_EQ(permu.cls, JossClass::kSmallReduceHeavy);
  // WordCount's FP 1.039 ≤ 2: MH, so policy B.
  JossClassification wc = JossClassify(state, FpJob({{0}}, 1.039), -1);
  EXPECT_TRUE(wc.map_heavy);
  EXPECT_EQ(wc.cls, JossClass::kSmallMapHeavy);
  // A td parameter overrides Eq. 8.
  EXPECT_EQ(JossClassify(state, FpJob({{0}}, 1.039), 1.0).cls, JossClass::kSmallReduceHeavy);
}

TEST(JossClassifyTest, OneDatacenterMakesEveryJobMapHeavy) {
  ClusterState state;
  state.AddNode("n", 0, -1, 1, 1);
  // td = k/(k−1) is unbounded for k = 1: even FP 100 is MH.
  EXPECT_TRUE(JossClassify(state, FpJob({{0}}, 100.0), -1).map_heavy);
}

TEST(JossClassifyTest, SmallIfMapsAtMostTheAverageVpsPerDatacenter) {
  ClusterState state;
  for (int dc : {0, 0, 0, 1, 1, 1, 1, 1}) state.AddNode("n", dc, -1, 1, 1);
  const auto maps = [](int m) { return std::vector<std::vector<NodeId>>(m, {0}); };
  // Eq. 4: N_avg_VPS = (3 + 5) / 2 = 4, so m = 4 is small and m = 5 large.
  EXPECT_EQ(JossAvgVpsPerDatacenter(state), 4.0);
  EXPECT_TRUE(JossClassify(state, FpJob(maps(4), 1.0), -1).small);
  EXPECT_EQ(JossClassify(state, FpJob(maps(5), 1.0), -1).cls, JossClass::kLarge);
  // N_VPS,c counts the VPSs a datacenter provides now: a lost one lowers it.
  state.SetLive(7, false);
  EXPECT_EQ(JossClassify(state, FpJob(maps(4), 1.0), -1).cls, JossClass::kLarge);
}

// ---- The task scheduler (Fig. 4) ----

TEST(JossPolicyTest, ANewJobGoesToMqFifoAndIsServedFirst) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(1, 1);
  JobId known = host.AddJob(FpJob({{a}}, 1.0));
  JobId fresh = host.AddJob(FpJob({{b}}, kNoFp));
  // Fig. 4 lines 4–6: unknown (code hash, input type) → MQ_FIFO, no datacenter.
  EXPECT_EQ(Joss(host).classification(fresh)->cls, JossClass::kNew);
  EXPECT_THAT(MapHomes(host, fresh), ElementsAre(-1));
  EXPECT_THAT(MapHomes(host, known), ElementsAre(0));
  // Fig. 5 lines 6–8: MQ_FIFO before cen_1's own queue, though the known
  // job's map is VPS-local to a and the new one is off-Cen.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(fresh, 0, a)));
}

TEST(JossPolicyTest, Fig3PolicyBSendsMapsWhereTheUniqueBlocksAre) {
  TestHost host(MakePolicy("joss-t"));
  // Three datacenters of six VPSs: N_avg_VPS = 6 (Eq. 4), so Y (six maps) is small.
  std::vector<NodeId> cen1 = host.AddNodes(0, 6), cen2 = host.AddNodes(1, 6),
                      cen3 = host.AddNodes(2, 6);
  // Fig. 3: six blocks, two replicas each, placed as §4.2's walk-through
  // pins them: cen_2 holds B1, B2, B3, B5 (the most); cen_1 holds B1, B3,
  // B4; cen_3 holds B4, B5, B6 (B6 on two of its VPSs).
  Job y = FpJob({{cen1[0], cen2[0]},
                 {cen2[1], cen2[2]},
                 {cen1[1], cen2[3]},
                 {cen1[2], cen3[0]},
                 {cen2[4], cen3[1]},
                 {cen3[2], cen3[3]}},
                1.0, /*reduces=*/3);  // FP 1 ≤ td = 1.5: map-heavy
  JobId j = host.AddJob(y);
  EXPECT_EQ(Joss(host).classification(j)->cls, JossClass::kSmallMapHeavy);
  // Four maps (B1, B2, B3, B5) to cen_2, then B4 and B6 to cen_3, whose two
  // left beat cen_1's one (Fig. 4 lines 17–30).
  EXPECT_THAT(MapHomes(host, j), ElementsAre(1, 1, 1, 2, 1, 2));
  // All reduces to cen_2, which holds the most unique blocks (lines 32–35).
  EXPECT_THAT(ReduceHomes(host, j), ElementsAre(1, 1, 1));
  // MQ_{2,0} in block order: a cen_2 VPS with two slots takes B1 and B2.
  EXPECT_THAT(host.Heartbeat(cen2[5]), ElementsAre(Map(j, 0, cen2[5]), Map(j, 1, cen2[5])));
  // Nothing was queued for cen_1: its VPSs stay idle (§4.2: tasks run only
  // in the datacenter they are scheduled to).
  EXPECT_THAT(host.Heartbeat(cen1[0]), IsEmpty());
}

TEST(JossPolicyTest, PolicyAPicksTheDatacenterWithFewestUnprocessedTasks) {
  TestHost host(MakePolicy("joss-t"));
  std::vector<NodeId> cen1 = host.AddNodes(0, 2), cen2 = host.AddNodes(1, 2);
  // An empty cluster: both have 0 unprocessed tasks; the lowest index wins.
  JobId first = host.AddJob(FpJob({{cen2[0]}}, 3.0));
  EXPECT_THAT(MapHomes(host, first), ElementsAre(0));
  // cen_1 now has 2 unprocessed tasks (first's map and reduce), cen_2 none,
  // so a Permu job (FP 3 > td = 2, small) goes whole to cen_2, although its
  // blocks are in cen_1 (lines 9–12: reduce-data locality over map locality).
  JobId permu = host.AddJob(FpJob({{cen1[0]}, {cen1[1]}}, 3.0, /*reduces=*/2));
  EXPECT_EQ(Joss(host).classification(permu)->cls, JossClass::kSmallReduceHeavy);
  EXPECT_THAT(MapHomes(host, permu), ElementsAre(1, 1));
  EXPECT_THAT(ReduceHomes(host, permu), ElementsAre(1, 1));
}

TEST(JossPolicyTest, UnprocessedCountsFollowTheStateWhenTheChangeLogHasMovedOn) {
  // The counts are kept from ClusterState's change log; when more has
  // changed than the log keeps, every job is recounted.
  for (int churn : {0, 200000}) {
    SCOPED_TRACE("churn " + std::to_string(churn));
    TestHost host(MakePolicy("joss-t"));
    NodeId a = host.AddNode(0, /*map_slots=*/3, /*reduce_slots=*/1);
    host.AddNodes(0, 2), host.AddNodes(1, 3);
    JobId first = host.AddJob(FpJob({{a}, {a}, {a}}, 3.0));  // policy A: 4 tasks to cen_1
    EXPECT_THAT(host.Heartbeat(a),
                ElementsAre(Map(first, 0, a), Map(first, 1, a), Map(first, 2, a)));
    JobId second = host.AddJob(FpJob({{a}, {a}}, 3.0));  // running tasks count: 3 tasks to cen_2
    EXPECT_THAT(MapHomes(host, second), ElementsAre(1, 1));
    for (int32_t i = 0; i < 3; ++i) host.FinishMap(first, i);
    for (int i = 0; i < churn; ++i) host.state().mutable_job(second).priority = 0;
    // cen_1 has one unprocessed task left (first's reduce), cen_2 three.
    EXPECT_THAT(MapHomes(host, host.AddJob(FpJob({{a}}, 3.0))), ElementsAre(0));
  }
}

TEST(JossPolicyTest, PolicyCGivesALargeJobItsOwnQueues) {
  TestHost host(MakePolicy("joss-t"));
  std::vector<NodeId> cen1 = host.AddNodes(0, 2), cen2 = host.AddNodes(1, 2);
  // Three maps > N_avg_VPS = 2: large (Eq. 4), so policy C.
  JobId large = host.AddJob(FpJob({{cen1[0]}, {cen2[0]}, {cen1[1]}}, 3.0));
  EXPECT_EQ(Joss(host).classification(large)->cls, JossClass::kLarge);
  // Like B: two maps to cen_1, one to cen_2, reduces to cen_1 — but in new
  // queues MQ_{1,1}, MQ_{2,1} and RQ_{1,1} (lines 24–26, 37–39).
  EXPECT_THAT(MapHomes(host, large), ElementsAre(0, 1, 0));
  EXPECT_THAT(ReduceHomes(host, large), ElementsAre(0));
  EXPECT_EQ(Joss(host).queues().map_queue_count(0), 2);
  EXPECT_EQ(Joss(host).queues().map_queue_count(1), 2);
  EXPECT_EQ(Joss(host).queues().reduce_queue_count(0), 2);
  EXPECT_EQ(Joss(host).queues().reduce_queue_count(1), 1);
}

// ---- The task assigners (Figs. 5, 6) ----

TEST(JossPolicyTest, TtaTakesQueueHeadsRoundRobin) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, /*map_slots=*/4);
  host.AddNode(0), host.AddNodes(1, 2);
  JobId small = host.AddJob(FpJob({{a}, {a}}, 1.0));       // MQ_{1,0}
  JobId large = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0));  // MQ_{1,1}
  // Fig. 5 lines 10–13: one head from MQ_{1,0}, one from MQ_{1,1}, and so
  // on, so the large job neither waits for nor starves the small one.
  EXPECT_THAT(host.Heartbeat(a),
              ElementsAre(Map(small, 0, a), Map(large, 0, a), Map(small, 1, a), Map(large, 1, a)));
}

TEST(JossPolicyTest, JtaPicksTheVpsLocalMapWhereTtaTakesTheHead) {
  for (const char* name : {"joss-t", "joss-j"}) {
    SCOPED_TRACE(name);
    TestHost host(MakePolicy(name));
    NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
    host.AddNodes(1, 2);
    JobId j = host.AddJob(FpJob({{b}, {a}, {b}}, 1.0));  // large: one queue in cen_1
    // Fig. 5 line 11 takes the first map (B1, Cen-local on a); Fig. 6 line
    // 11 uses Hadoop FIFO inside the queue and finds B2 on a itself.
    const int32_t want = std::string(name) == "joss-t" ? 0 : 1;
    EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, want, a)));
  }
}

TEST(JossPolicyTest, JtaPicksOnlyAmongTheHeadJobsMaps) {
  TestHost host(MakePolicy("joss-j"));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
  host.AddNode(0), host.AddNodes(1, 3);
  JobId first = host.AddJob(FpJob({{b}, {b}}, 1.0));  // both in MQ_{1,0}
  JobId second = host.AddJob(FpJob({{a}}, 1.0));
  (void)second;
  // Hadoop FIFO inside the queue: the head entry's job first, so a takes
  // first's Cen-local map, not second's VPS-local one.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(first, 0, a)));
}

TEST(JossPolicyTest, JtaTakesTheFirstLocalMapInQueueOrder) {
  TestHost host(MakePolicy("joss-j"));
  NodeId a = host.AddNode(0, /*map_slots=*/2), b = host.AddNode(0);
  host.AddNode(0), host.AddNodes(1, 3);
  JobId j = host.AddJob(FpJob({{a}, {a}, {b}}, 1.0));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  host.FailMap(j, 0);
  host.FailMap(j, 1);  // to the front, ahead of map 0
  // Both are on a: the first in the queue wins, not the lowest index.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a), Map(j, 0, a)));
}

TEST(JossPolicyTest, JtaPrefersTheRackToTheDatacenter) {
  TestHost host(MakePolicy("joss-j"));
  NodeId a = host.AddNode(0, 1, 1, /*rack=*/0), b = host.AddNode(0, 1, 1, /*rack=*/1);
  NodeId c = host.AddNode(0, 1, 1, /*rack=*/0);
  for (int i = 0; i < 3; ++i) host.AddNode(1, 1, 1, /*rack=*/2);
  JobId j = host.AddJob(FpJob({{b}, {c}}, 1.0));
  // Hadoop's order: node, rack, datacenter; B2 is in a's rack.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
}

TEST(JossPolicyTest, JtaSeesAReplicaAddedWhileTheMapWaits) {
  TestHost host(MakePolicy("joss-j"));
  NodeId a = host.AddNode(0, /*map_slots=*/1), b = host.AddNode(0);
  host.AddNode(0), host.AddNodes(1, 3);
  JobId j = host.AddJob(FpJob({{b}, {b}}, 1.0));
  // The master adds a re-replicated block's new home to the maps reading it.
  host.state().mutable_job(j).maps[1].replicas.push_back(a);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 1, a)));
}

TEST(JossPolicyTest, ReducesWaitForSlowStartInTheirDatacenter) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, /*map_slots=*/1, /*reduce_slots=*/1);
  NodeId c = host.AddNode(1, 1, 1);
  Job job = FpJob({{a}}, 1.0);
  job.slowstart = 1.0;
  JobId j = host.AddJob(job);
  // The reduce is not launchable before its map finishes (scheduler.h).
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  host.FinishMap(j, 0);
  // RQ_{1,0} holds it: cen_2's VPS does not take it (policy B, line 35)…
  EXPECT_THAT(host.Heartbeat(c), IsEmpty());
  // …cen_1's does (Fig. 5 lines 19–22).
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Reduce(j, 0, a)));
}

TEST(JossPolicyTest, AMapRedoneAfterANodeLossHoldsItsReducesBackAgain) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, 1, 1), a2 = host.AddNode(0, 1, 1);
  host.AddNode(1, 1, 1);
  Job job = FpJob({{a}}, 1.0);
  job.slowstart = 1.0;
  JobId j = host.AddJob(job);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  host.FinishMap(j, 0);  // past slow-start…
  host.LoseNode(a);      // …until the map's output is lost with a
  // The map runs again; the reduce must wait for it once more.
  EXPECT_THAT(host.Heartbeat(a2), ElementsAre(Map(j, 0, a2)));
}

TEST(JossPolicyTest, AKilledJobsQueuedTasksAreNotOffered) {
  TestHost host(MakePolicy("joss-j"));
  NodeId a = host.AddNode(0, 1, 1);
  host.AddNodes(0, 2), host.AddNodes(1, 3);
  Job job = FpJob({{a}, {a}}, 1.0);
  job.slowstart = 0;
  JobId killed = host.AddJob(job);
  JobId next = host.AddJob(job);
  // A host may finish a job with tasks outstanding (ClusterState::FinishJob).
  host.state().FinishJob(killed);
  host.policy().OnJobFinished(host.state(), killed, host.now());
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(next, 0, a), Reduce(next, 0, a)));
}

TEST(JossPolicyTest, IdleStealLetsAnIdleVpsServeOtherDatacenters) {
  TestHost host(MakePolicy("joss-t", {{"idle_steal", true}}));
  NodeId a = host.AddNode(0, 1), c = host.AddNode(1, 1);
  JobId j = host.AddJob(FpJob({{a}}, 1.0));
  // Not in the paper: with idle_steal cen_2's idle VPS takes cen_1's map.
  EXPECT_THAT(host.Heartbeat(c), ElementsAre(Map(j, 0, c)));
}

TEST(JossPolicyTest, QueuesOfADatacenterWithNoLiveVpsAreServedElsewhere) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, 1), c = host.AddNode(1, 1);
  JobId j = host.AddJob(FpJob({{a}}, 1.0));
  host.LoseNode(a);
  // cen_1 has no VPS left, so its queued map would never run otherwise.
  EXPECT_THAT(host.Heartbeat(c), ElementsAre(Map(j, 0, c)));
}

TEST(JossPolicyTest, AFailedTaskGoesBackToTheFrontOfItsQueue) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, /*map_slots=*/1);
  host.AddNodes(0, 3);
  JobId j = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
  host.FailMap(j, 0);
  // It runs next, ahead of B2 and B3, as Hadoop offers failed tasks first.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, 0, a)));
}

TEST(JossPolicyTest, TdParameterAndBadValues) {
  TestHost host(MakePolicy("joss-j", {{"td", 1.0}}));
  host.AddNodes(0, 2), host.AddNodes(1, 2);
  // td = 1 instead of Eq. 8's 2: WordCount's 1.039 becomes reduce-heavy.
  JobId wc = host.AddJob(FpJob({{0}}, 1.039));
  EXPECT_EQ(Joss(host).classification(wc)->cls, JossClass::kSmallReduceHeavy);
  EXPECT_EQ(Joss(host).classification(wc)->td, 1.0);
  EXPECT_EQ(Joss(host).classification(wc)->fp, 1.039);
  auto bad = MakeScheduler("joss-t", {{"td", std::numeric_limits<double>::infinity()}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("td must be a finite number"));
}

// ---- Details where the code follows Figs. 4–6 to the letter (issue 13 item 8) ----

// Fig. 5 line 1 sets I_map = 0 at each call of the assigner, so every
// heartbeat starts at MQ_{c,0}: with one map slot a VPS serves the small
// jobs' queue first whenever it has a task, and a large job's queue only
// when MQ_{c,0} is empty (line 11 on an empty queue: passed over).
TEST(JossPolicyTest, Fig5Line1StartsTheRoundRobinAtZeroAtEachCall) {
  TestHost host(MakePolicy("joss-t"));
  NodeId a = host.AddNode(0, /*map_slots=*/1);
  host.AddNode(0), host.AddNodes(1, 2);
  JobId small = host.AddJob(FpJob({{a}, {a}}, 1.0, /*reduces=*/0));       // MQ_{1,0}
  JobId large = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0, 0));  // MQ_{1,1}
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(small, 0, a)));
  host.FinishMap(small, 0);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(small, 1, a)));  // I_map = 0 again
  host.FinishMap(small, 1);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(large, 0, a)));  // MQ_{1,0} empty
}

// The index kept across heartbeats (the code before issue 13) survives as
// a named option, off by default.
TEST(JossPolicyTest, PersistentIndexOptionKeepsTheRoundRobinAcrossCalls) {
  TestHost host(MakePolicy("joss-t", {{"persistent_index", true}}));
  NodeId a = host.AddNode(0, /*map_slots=*/1);
  host.AddNode(0), host.AddNodes(1, 2);
  JobId small = host.AddJob(FpJob({{a}, {a}}, 1.0, /*reduces=*/0));
  JobId large = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0, 0));
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(small, 0, a)));
  host.FinishMap(small, 0);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(large, 0, a)));
}

// With the index kept across calls, dropping a finished large job's queue
// (ahead of the index) must not make the round robin skip a queue: the
// queue that was next is still next.
TEST(JossPolicyTest, DroppingAFinishedJobsQueueDoesNotShiftThePersistentIndex) {
  TestHost host(MakePolicy("joss-t", {{"persistent_index", true}}));
  NodeId a = host.AddNode(0, /*map_slots=*/1);
  host.AddNode(0), host.AddNodes(1, 2);
  JobId gone = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0, /*reduces=*/0));  // MQ_{1,1}: large
  JobId first = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0, 0));             // MQ_{1,2}
  JobId second = host.AddJob(FpJob({{a}, {a}, {a}}, 1.0, 0));            // MQ_{1,3}
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(gone, 0, a)));  // I_map 1 → 2
  host.FinishMap(gone, 0);
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(first, 0, a)));  // I_map 2 → 3
  host.FinishMap(first, 0);
  // `gone` is killed: its queue MQ_{1,1} goes, MQ_{1,3} becomes MQ_{1,2}.
  host.state().FinishJob(gone);
  host.policy().OnJobFinished(host.state(), gone, host.now());
  // `second`'s queue was next (I_map = 3) and still is.
  EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(second, 0, a)));
}

// §4.2 policy A: cen_w has "the least amount of unprocessed tasks". A task
// of MQ_FIFO running on a VPS of cen_c is unprocessed work of cen_c too.
TEST(JossPolicyTest, PolicyACountsMqFifoTasksRunningInADatacenter) {
  TestHost host(MakePolicy("joss-t"));
  std::vector<NodeId> cen1 = host.AddNodes(0, 2, /*map_slots=*/1), cen2 = host.AddNodes(1, 2, 1);
  JobId fresh = host.AddJob(FpJob({{cen1[0]}, {cen1[1]}}, kNoFp));  // MQ_FIFO
  EXPECT_THAT(host.Heartbeat(cen1[0]), ElementsAre(Map(fresh, 0, cen1[0])));
  EXPECT_THAT(host.Heartbeat(cen1[1]), ElementsAre(Map(fresh, 1, cen1[1])));
  // cen_1 runs two tasks, cen_2 none: the Permu job goes to cen_2.
  JobId permu = host.AddJob(FpJob({{cen2[0]}}, 3.0));
  EXPECT_THAT(MapHomes(host, permu), ElementsAre(1));
}

// Ties for cen_w (§4.2 is silent): the tied datacenter that follows the
// previous cen_w, cyclically, so an idle cluster does not send every
// reduce-heavy job to cen_1.
TEST(JossPolicyTest, PolicyATiesGoToTheNextDatacenterAfterThePreviousChoice) {
  TestHost host(MakePolicy("joss-t"));
  std::vector<NodeId> cen1 = host.AddNodes(0, 2, 1, 1), cen2 = host.AddNodes(1, 2, 1, 1);
  JobId first = host.AddJob(FpJob({{cen1[0]}}, 3.0, /*reduces=*/0));
  EXPECT_THAT(MapHomes(host, first), ElementsAre(0));  // all tied: the first, cen_1
  EXPECT_THAT(host.Heartbeat(cen1[0]), ElementsAre(Map(first, 0, cen1[0])));
  host.FinishMap(first, 0);  // done: both datacenters at 0 again
  JobId second = host.AddJob(FpJob({{cen1[0]}}, 3.0, 0));
  EXPECT_THAT(MapHomes(host, second), ElementsAre(1));
  JobId third = host.AddJob(FpJob({{cen1[0]}}, 3.0, 0));
  EXPECT_THAT(MapHomes(host, third), ElementsAre(0));  // cen_2 has second's map now
  (void)cen2;
}

// Known-FP jobs of every class, with failures and node losses, must all
// complete under both assigners (the conformance suite's random stream
// only has new jobs, which JoSS sends to MQ_FIFO).
TEST(JossPolicyTest, EveryClassCompletesUnderFailuresAndNodeLosses) {
  std::map<JossClass, int> classes;
  int losses = 0;
  for (const char* name : {"joss-t", "joss-j"}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      std::mt19937_64 rng(seed);
      auto uniform = [&](int lo, int hi) {
        return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
      };
      TestHost host(MakePolicy(name));
      std::vector<NodeId> nodes;
      for (int i = 0; i < 9; ++i)
        nodes.push_back(host.AddNode(i % 3, uniform(1, 2), uniform(1, 2)));
      const double fps[] = {kNoFp, 0.5, 3.0};
      for (int j = 0; j < 6; ++j) {
        std::vector<std::vector<NodeId>> blocks(static_cast<size_t>(uniform(1, 8)));
        for (auto& r : blocks) {
          if (uniform(0, 5) > 0) r = {nodes[static_cast<size_t>(uniform(0, 8))]};
        }
        Job job = FpJob(blocks, fps[uniform(0, 2)], uniform(0, 2));
        job.slowstart = uniform(0, 1);
        ++classes[Joss(host).classification(host.AddJob(job))->cls];
      }
      std::vector<NodeId> dead;
      for (int step = 0; step < 20000 && !host.state().active_jobs().empty(); ++step) {
        const bool chaos = step < 2000;
        if (!chaos && !dead.empty()) host.ReturnNode(dead.back()), dead.pop_back();
        const int r = uniform(0, 99);
        std::vector<test::Launch> running;
        for (JobId id : host.state().active_jobs()) {
          for (const MapTask& m : host.job(id).maps) {
            if (m.state == TaskState::kRunning) running.push_back(Map(id, m.index, m.node));
          }
          for (const ReduceTask& t : host.job(id).reduces) {
            if (t.state == TaskState::kRunning) running.push_back(Reduce(id, t.index, t.node));
          }
        }
        if (r < 50) {
          NodeId n = nodes[static_cast<size_t>(uniform(0, 8))];
          if (host.state().node(n).live) host.Heartbeat(n);
        } else if (!running.empty()) {
          const Launch l =
              running[static_cast<size_t>(uniform(0, static_cast<int>(running.size()) - 1))];
          if (chaos && r >= 90) {
            l.is_map ? host.FailMap(l.job, l.index) : host.FailReduce(l.job, l.index);
          } else if (chaos && r >= 88 && dead.size() < 5) {
            host.LoseNode(l.node), dead.push_back(l.node), ++losses;
          } else {
            l.is_map ? host.FinishMap(l.job, l.index) : host.FinishReduce(l.job, l.index);
          }
        }
        ASSERT_EQ(test::CheckConsistent(host.state()), "");
      }
      for (const Job& job : host.state().jobs()) EXPECT_TRUE(job.done) << "job " << job.id;
      EXPECT_EQ(host.violations(), 0);
    }
  }
  // The stream did reach every part of Fig. 4, and lost nodes.
  for (JossClass c : {JossClass::kNew, JossClass::kSmallReduceHeavy, JossClass::kSmallMapHeavy,
                      JossClass::kLarge}) {
    EXPECT_GT(classes[c], 0) << JossClassName(c);
  }
  EXPECT_GT(losses, 0);
}

}  // namespace
}  // namespace mr::sched
