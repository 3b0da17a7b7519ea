// Tests for scheduler/fair_policy.h (and the delay scheduling it runs,
// delay_scheduling.h), one heartbeat decision at a time; each says why the
// Fair Scheduler must decide so (baselines.md §3).
#include "scheduler/fair_policy.h"

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

// `count` maps whose block is on every node in `replicas`.
std::vector<std::vector<NodeId>> Blocks(int count, std::vector<NodeId> replicas) {
  return std::vector<std::vector<NodeId>>(static_cast<size_t>(count), replicas);
}

// Node delay 1 s, rack (= datacenter) delay 2 s, refresh every heartbeat.
SchedulerParams Delays(int64_t node_ms = 1000, int64_t rack_ms = 2000) {
  return {{"node_locality_delay_ms", node_ms},
          {"rack_locality_delay_ms", rack_ms},
          {"update_interval_ms", int64_t{0}}};
}

const LocalityDelay& Waits(TestHost& host) {
  return static_cast<FairPolicy&>(host.policy()).delay();
}

std::vector<Launch> At(TestHost& host, TimeMs now, NodeId node) {
  host.set_now(now);
  return host.Heartbeat(node);
}

TEST(FairPolicyTest, SkippedUntilTheNodeDelayThenDatacenterLocal) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 2, 0), b = host.AddNode(0, 0, 0);
  JobId j = host.AddJob(MakeJob({{b}, {b}}, /*reduces=*/0));
  // The block is on b, which has no slot: a is not node-local, so the job
  // is skipped while its wait is below the 1 s node delay.
  EXPECT_THAT(At(host, 0, a), IsEmpty());
  EXPECT_THAT(At(host, 999, a), IsEmpty());
  EXPECT_EQ(Waits(host).waited(j), 999);
  // At W = 1 s a datacenter-local map is allowed; it resets W to 0, and the
  // job stays at RACK, so its second map follows in the same heartbeat.
  EXPECT_THAT(At(host, 1000, a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  EXPECT_EQ(Waits(host).last_level(j), DelayLevel::kRack);
  EXPECT_EQ(Waits(host).waited(j), 0);
}

TEST(FairPolicyTest, AnyMapOnlyAfterNodePlusRackDelay) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 1, 0), c = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{c}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());
  // Past the node delay only datacenter-local maps are allowed, and the
  // block is in the other datacenter.
  EXPECT_THAT(At(host, 1000, a), IsEmpty());
  EXPECT_THAT(At(host, 2999, a), IsEmpty());
  // W = node + rack delay = 3 s: any map.
  EXPECT_THAT(At(host, 3000, a), ElementsAre(Map(j, 0, a)));
  EXPECT_EQ(Waits(host).last_level(j), DelayLevel::kAny);
}

TEST(FairPolicyTest, AfterARackLaunchTheRackDelayAloneLeadsToAny) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 2, 0), b = host.AddNode(0, 0, 0), c = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{b}, {c}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());
  EXPECT_THAT(At(host, 1000, a), ElementsAre(Map(j, 0, a)));  // RACK, W = 0
  // The launch reset W: the wait starts again at 2 s, not from 0.
  EXPECT_THAT(At(host, 2000, a), IsEmpty());
  EXPECT_THAT(At(host, 3999, a), IsEmpty());
  // At RACK, ANY needs only the rack delay (2 s of skipping).
  EXPECT_THAT(At(host, 4000, a), ElementsAre(Map(j, 1, a)));
}

TEST(FairPolicyTest, WaitAccruesOnlyWhileTheJobIsSkipped) {
  TestHost host(MakePolicy("fair", Delays(1000, 1000)));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(0, 0, 0);
  JobId j = host.AddJob(MakeJob({{b}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());  // asked and skipped
  // b has no map slot, so the job is not asked there: the 400 ms until b's
  // heartbeat count (the job was skipped at the previous heartbeat), but
  // the long gap until b's next heartbeat does not.
  EXPECT_THAT(At(host, 400, b), IsEmpty());
  EXPECT_THAT(At(host, 5000, b), IsEmpty());
  EXPECT_EQ(Waits(host).waited(j), 400);
  EXPECT_THAT(At(host, 5000, a), IsEmpty());                  // W = 400 < 1 s
  EXPECT_THAT(At(host, 5600, a), ElementsAre(Map(j, 0, a)));  // W = 1 s
}

TEST(FairPolicyTest, ANodeLocalLaunchResetsTheJobToNodeLevel) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 1, 0), b = host.AddNode(0, 0, 0), c = host.AddNode(0, 1, 0);
  JobId j = host.AddJob(MakeJob({{b}, {c}, {b}}, 0));
  EXPECT_THAT(At(host, 0, a), IsEmpty());
  EXPECT_THAT(At(host, 1000, a), ElementsAre(Map(j, 0, a)));  // RACK
  // At RACK, c searches its datacenter but finds its own block first: the
  // launch is node-local, so the job is back at NODE.
  EXPECT_THAT(At(host, 1100, c), ElementsAre(Map(j, 1, c)));
  EXPECT_EQ(Waits(host).last_level(j), DelayLevel::kNode);
  host.FinishMap(j, 0);
  // a is free again, but a datacenter-local map must now wait out the
  // node delay again.
  EXPECT_THAT(At(host, 1200, a), IsEmpty());
}

TEST(FairPolicyTest, LaterJobsLocalMapsRunWhileTheFirstWaits) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 2, 0), b = host.AddNode(1, 0, 0);
  JobId j0 = host.AddJob(MakeJob(Blocks(2, {b}), 0));
  JobId j1 = host.AddJob(MakeJob(Blocks(2, {a}), 0));
  // j0 sorts first each pass (fewer running, or the lower id) but has
  // nothing on a: it is skipped, and j1's local maps take both slots.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j1, 0, a), Map(j1, 1, a)));
  EXPECT_EQ(Waits(host).last_level(j0), DelayLevel::kNode);
}

TEST(FairPolicyTest, AJobWithMapsWithoutLocationIsNeverDelayed) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 2, 0), b = host.AddNode(1, 0, 0);
  JobId j = host.AddJob(MakeJob({{}, {b}}, 0));
  // Hadoop's nonLocalMaps rule: no locality to wait for, so ANY at once;
  // other datacenters come before no-location maps in the search.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 1, a), Map(j, 0, a)));
}

TEST(FairPolicyTest, AssignMultipleFillsTheFreeSlots) {
  for (bool multiple : {true, false}) {
    SchedulerParams params = Delays();
    params["assign_multiple"] = multiple;
    TestHost host(MakePolicy("fair", params));
    NodeId a = host.AddNode(0, 3, 1);
    JobId j = host.AddJob(MakeJob(Blocks(6, {a}), 1));
    // With assignmultiple a heartbeat fills every free map slot; without
    // it, one task per heartbeat in total (0.20's behaviour).
    if (multiple) {
      EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a), Map(j, 1, a), Map(j, 2, a)));
    } else {
      EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a)));
    }
  }
}

TEST(FairPolicyTest, PoolWeightsShareTheSlots) {
  TestHost host(MakePolicy("fair", {{"pools", std::string("a:2,b:1")}}));
  NodeId n = host.AddNode(0, 6, 0);
  Job ja = MakeJob(Blocks(10, {n}), 0), jb = MakeJob(Blocks(10, {n}), 0);
  ja.pool = "a";
  jb.pool = "b";
  JobId a = host.AddJob(ja), b = host.AddJob(jb);
  // Each pass goes to the lower running / weight (ties by pool name):
  // 0|0 → a, 0.5|0 → b, 0.5|1 → a, 1|1 → a, 1.5|1 → b, 1.5|2 → a: 4 to 2.
  EXPECT_THAT(At(host, 0, n), ElementsAre(Map(a, 0, n), Map(b, 0, n), Map(a, 1, n), Map(a, 2, n),
                                          Map(b, 1, n), Map(a, 3, n)));
}

TEST(FairPolicyTest, APoolBelowItsMinShareGoesFirst) {
  TestHost host(MakePolicy("fair", {{"pools", std::string("prod:1:2:0")}}));
  NodeId n = host.AddNode(0, 4, 0);
  Job adhoc = MakeJob(Blocks(10, {n}), 0), prod = MakeJob(Blocks(10, {n}), 0);
  adhoc.pool = "adhoc";
  prod.pool = "prod";
  JobId j0 = host.AddJob(adhoc), j1 = host.AddJob(prod);
  // prod is guaranteed 2 map slots: it is served until it runs 2, then
  // the pools compare running / weight (0 < 2: adhoc).
  EXPECT_THAT(At(host, 0, n),
              ElementsAre(Map(j1, 0, n), Map(j1, 1, n), Map(j0, 0, n), Map(j0, 1, n)));
}

TEST(FairPolicyTest, MapsAndReducesAlternateByTheNodesRunningCounts) {
  TestHost host(MakePolicy("fair", Delays()));
  NodeId a = host.AddNode(0, 2, 2);
  JobId j = host.AddJob(MakeJob(Blocks(20, {a}), 2));
  // Before slow-start (1 of 20 maps) there is no reduce demand.
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  host.FinishMap(j, 0);
  // a runs 1 map and 0 reduces: REDUCE; then 1 and 1: MAP; then the map
  // slots are full: REDUCE.
  EXPECT_THAT(At(host, 100, a), ElementsAre(Reduce(j, 0, a), Map(j, 2, a), Reduce(j, 1, a)));
}

TEST(FairPolicyTest, DemandIsRefreshedEveryUpdateInterval) {
  TestHost host(MakePolicy("fair", {{"update_interval_ms", int64_t{500}}}));
  NodeId a = host.AddNode(0, 2, 2);
  JobId j = host.AddJob(MakeJob(Blocks(20, {a}), 1));  // refreshed at arrival, t = 0
  EXPECT_THAT(At(host, 0, a), ElementsAre(Map(j, 0, a), Map(j, 1, a)));
  host.FinishMap(j, 0);
  // Slow-start has passed, but the reduce demand counted at t = 0 is 0
  // until the update thread runs again (500 ms later).
  EXPECT_THAT(At(host, 499, a), ElementsAre(Map(j, 2, a)));
  host.FinishMap(j, 1);
  EXPECT_THAT(At(host, 500, a), ElementsAre(Reduce(j, 0, a), Map(j, 3, a)));
}

TEST(FairPolicyTest, LoadCapSpreadsMapsWhenUnderLoaded) {
  TestHost host(MakePolicy("fair"));
  std::vector<NodeId> n = host.AddNodes(0, 4, /*map_slots=*/4);
  JobId j = host.AddJob(MakeJob(Blocks(4, {n[0]}), 0));
  // 4 runnable maps for 16 slots: CapBasedLoadManager lets each node run
  // ceil(4 × 0.25) = 1, although all four are local to n0.
  EXPECT_THAT(At(host, 0, n[0]), ElementsAre(Map(j, 0, n[0])));
}

TEST(FairPolicyTest, AutoDelayIsOneAndAHalfHeartbeatsCappedAt15s) {
  auto policy = FairPolicy::Create(FairOptions{}, /*heartbeat_ms=*/1000);
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ((*policy)->delay().node_delay_ms(), 1500);
  EXPECT_EQ((*policy)->delay().rack_delay_ms(), 1500);
  EXPECT_EQ((*FairPolicy::Create(FairOptions{}, 20000))->delay().node_delay_ms(), 15000);
  FairOptions set;
  set.node_locality_delay_ms = 0;  // users wanted "no node wait, only rack" (MAPREDUCE-1761)
  set.rack_locality_delay_ms = 700;
  auto explicit_delays = FairPolicy::Create(set, 1000);
  EXPECT_EQ((*explicit_delays)->delay().node_delay_ms(), 0);
  EXPECT_EQ((*explicit_delays)->delay().rack_delay_ms(), 700);
}

TEST(FairPolicyTest, BadParametersAreRejected) {
  auto delay = MakeScheduler("fair", {{"node_locality_delay_ms", int64_t{-2}}}, {});
  ASSERT_FALSE(delay.ok());
  EXPECT_THAT(delay.status().message(), HasSubstr("node_locality_delay_ms must be >= 0"));
  auto pools = MakeScheduler("fair", {{"pools", std::string("prod:0")}}, {});
  ASSERT_FALSE(pools.ok());
  EXPECT_THAT(pools.status().message(), HasSubstr("weight must be a number > 0"));
  auto interval = MakeScheduler("fair", {{"update_interval_ms", int64_t{-1}}}, {});
  ASSERT_FALSE(interval.ok());
  EXPECT_THAT(interval.status().message(), HasSubstr("update_interval_ms must be >= 0"));
}

// The Fair Scheduler of Hadoop 0.20.2, JoSS's baseline (baselines.md §3):
// no delay scheduling (both delays 0: every job may take any map at once),
// one task per heartbeat (assign_multiple = false), and with topology =
// "blind" no datacenter preference (every VPS in /default-rack): a
// node-local map, else the job's first map anywhere.
TEST(FairPolicyTest, Hadoop020SettingsTakeTheFirstMapAnywhereOnePerHeartbeat) {
  for (const bool blind : {false, true}) {
    SCOPED_TRACE(blind ? "blind" : "rack-as-datacenter");
    SchedulerParams params = {{"node_locality_delay_ms", int64_t{0}},
                                    {"rack_locality_delay_ms", int64_t{0}},
                                    {"assign_multiple", false}};
    if (blind) params["topology"] = std::string("blind");
    TestHost host(MakePolicy("fair", params));
    NodeId a = host.AddNode(0, /*map_slots=*/3, /*reduce_slots=*/0);
    NodeId b = host.AddNode(0, 3, 0), c = host.AddNode(1, 3, 0);
    JobId j = host.AddJob(MakeJob({{c}, {b}, {c}}, /*reduces=*/0));
    // Rack = datacenter (today's reading) takes b's map, in a's datacenter;
    // blind takes the first map, on c in the other datacenter.
    EXPECT_THAT(host.Heartbeat(a), ElementsAre(Map(j, blind ? 0 : 1, a)));
  }
}

}  // namespace
}  // namespace mr::sched
