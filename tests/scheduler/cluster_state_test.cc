// Tests for scheduler/cluster_state.h: the host's mutations keep every count
// consistent, topology answers (Distance, LocalityOf) with and without
// racks, and the map-time averages by locality.
#include "scheduler/cluster_state.h"

#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::CheckConsistent;
using test::MakeJob;

TEST(ClusterStateTest, TopologyWithoutRacks) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  NodeId b = s.AddNode("b", 0, -1, 2, 1);
  NodeId c = s.AddNode("c", 1, -1, 4, 0);
  EXPECT_EQ(s.datacenters(), 2);
  EXPECT_FALSE(s.has_racks());
  EXPECT_EQ(s.total_map_slots(), 8);
  EXPECT_EQ(s.total_reduce_slots(), 2);
  EXPECT_EQ(s.Distance(a, a), 0);
  EXPECT_EQ(s.Distance(a, b), 2);  // same datacenter, no racks: never 1
  EXPECT_EQ(s.Distance(a, c), 4);
  EXPECT_EQ(s.LocalityOf(a, {c, a}), Locality::kNode);  // any replica on the node wins
  EXPECT_EQ(s.LocalityOf(a, {c, b}), Locality::kDatacenter);
  EXPECT_EQ(s.LocalityOf(a, {c}), Locality::kOffDatacenter);
  EXPECT_EQ(s.LocalityOf(a, {}), Locality::kOffDatacenter);  // no location counts as remote
  s.SetLive(c, false);
  EXPECT_EQ(s.total_map_slots(), 4);  // totals count live nodes only
}

TEST(ClusterStateTest, TopologyWithRacks) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, 0, 2, 1);
  NodeId b = s.AddNode("b", 0, 0, 2, 1);
  NodeId c = s.AddNode("c", 0, 1, 2, 1);
  NodeId d = s.AddNode("d", 1, 2, 2, 1);
  EXPECT_TRUE(s.has_racks());
  EXPECT_EQ(s.Distance(a, b), 1);
  EXPECT_EQ(s.Distance(a, c), 2);
  EXPECT_EQ(s.Distance(a, d), 4);
  EXPECT_EQ(s.LocalityOf(a, {d, b}), Locality::kRack);
  EXPECT_EQ(s.LocalityOf(a, {c, d}), Locality::kDatacenter);
  EXPECT_EQ(s.LocalityOf(a, {c, b}), Locality::kRack);  // the best replica counts
  EXPECT_STREQ(LocalityName(Locality::kRack), "rack");
  EXPECT_STREQ(LocalityName(Locality::kOffDatacenter), "off-datacenter");
}

TEST(ClusterStateTest, MeasuredDistancesReplaceHops) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 1, 1);
  NodeId b = s.AddNode("b", 1, -1, 1, 1);
  s.SetDistances({{0, 7.5}, {7.5, 0}});
  EXPECT_EQ(s.Distance(a, b), 7.5);
  NodeId c = s.AddNode("c", 1, -1, 1, 1);
  EXPECT_EQ(s.Distance(a, c), 4);  // outside the matrix: hop counts
}

TEST(ClusterStateTest, MapLifecycleKeepsCounts) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  NodeId b = s.AddNode("b", 0, -1, 2, 1);
  JobId j = s.AddJob(MakeJob({{a}, {b}, {}}, /*reduces=*/1));
  EXPECT_EQ(s.job(j).maps[2].index, 2);  // indexes are assigned
  EXPECT_EQ(s.job(j).pending_maps(), 3);

  s.LaunchMap(j, 0, a);
  EXPECT_EQ(s.job(j).maps[0].state, TaskState::kRunning);
  EXPECT_EQ(s.job(j).maps[0].node, a);
  EXPECT_EQ(s.job(j).maps[0].attempts, 1);
  EXPECT_EQ(s.node(a).running_maps, 1);
  EXPECT_EQ(s.node(a).free_map_slots(), 1);
  EXPECT_EQ(s.job(j).pending_maps(), 2);
  EXPECT_EQ(CheckConsistent(s), "");

  s.FailMap(j, 0);  // pending again, remembered where it failed
  EXPECT_EQ(s.job(j).maps[0].state, TaskState::kPending);
  EXPECT_EQ(s.job(j).maps[0].node, kNoNode);
  EXPECT_EQ(s.job(j).maps[0].failed_on, std::vector<NodeId>{a});
  EXPECT_EQ(s.node(a).running_maps, 0);
  EXPECT_EQ(CheckConsistent(s), "");

  s.LaunchMap(j, 0, b);
  EXPECT_EQ(s.job(j).maps[0].attempts, 2);
  s.FinishMap(j, 0, 100);
  EXPECT_EQ(s.job(j).finished_maps, 1);
  EXPECT_EQ(s.job(j).maps[0].node, b);  // where its output lives
  EXPECT_EQ(s.node(b).running_maps, 0);
  EXPECT_EQ(CheckConsistent(s), "");

  s.RedoMap(j, 0);  // its output was lost: pending again, not a failure
  EXPECT_EQ(s.job(j).finished_maps, 0);
  EXPECT_EQ(s.job(j).maps[0].state, TaskState::kPending);
  EXPECT_EQ(s.job(j).maps[0].failed_on.size(), 1u);
  EXPECT_EQ(CheckConsistent(s), "");
}

// Hadoop's ClusterStatus figures, kept without a pass over the nodes: a
// lost node's attempts leave the live count at once, before the host
// fails them; a backup counts on its own node.
TEST(ClusterStateTest, LiveRunningAttemptsFollowLaunchesEndsAndNodeChanges) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  NodeId b = s.AddNode("b", 0, -1, 2, 1);
  JobId j = s.AddJob(MakeJob({{a}, {b}, {}}, /*reduces=*/0));
  EXPECT_EQ(s.live_nodes(), 2);
  s.LaunchMap(j, 0, a);
  s.LaunchMap(j, 1, a);
  s.LaunchBackup(j, true, 0, b, 0);
  EXPECT_EQ(s.live_running_attempts(true), 3);
  EXPECT_EQ(CheckConsistent(s), "");
  s.SetLive(a, false);
  EXPECT_EQ(s.live_nodes(), 1);
  EXPECT_EQ(s.live_running_attempts(true), 1) << "b's backup";
  s.DropAttempt(j, true, 0, a, /*failed=*/false);  // the backup on b runs on
  s.FailMap(j, 1);
  EXPECT_EQ(s.live_running_attempts(true), 1);
  EXPECT_EQ(CheckConsistent(s), "");
  s.SetLive(a, true);
  s.LaunchMap(j, 2, a);
  s.FinishMap(j, 0, 10);
  EXPECT_EQ(s.live_nodes(), 2);
  EXPECT_EQ(s.live_running_attempts(true), 1);
  EXPECT_EQ(CheckConsistent(s), "");
}

TEST(ClusterStateTest, ReduceLifecycleAndSlowStart) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 2);
  Job job = MakeJob({{a}, {a}, {a}}, /*reduces=*/2);
  job.slowstart = 0.5;
  JobId j = s.AddJob(job);
  EXPECT_FALSE(s.job(j).reduces_may_start());  // needs ceil(0.5 × 3) = 2 finished maps
  s.LaunchMap(j, 0, a);
  s.LaunchMap(j, 1, a);
  s.FinishMap(j, 0, 10);
  EXPECT_FALSE(s.job(j).reduces_may_start());
  s.FinishMap(j, 1, 10);
  EXPECT_TRUE(s.job(j).reduces_may_start());

  s.LaunchReduce(j, 1, a);
  EXPECT_EQ(s.node(a).running_reduces, 1);
  EXPECT_EQ(s.job(j).pending_reduces(), 1);
  s.FailReduce(j, 1);
  EXPECT_EQ(s.job(j).reduces[1].failed_on, std::vector<NodeId>{a});
  s.LaunchReduce(j, 1, a);
  s.FinishReduce(j, 1);
  EXPECT_EQ(s.job(j).finished_reduces, 1);
  EXPECT_EQ(s.node(a).running_reduces, 0);
  EXPECT_EQ(CheckConsistent(s), "");
}

TEST(ClusterStateTest, FinishJobLeavesTheActiveListAndFreesSlots) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  JobId j0 = s.AddJob(MakeJob({{a}}));
  JobId j1 = s.AddJob(MakeJob({{a}, {a}}));
  EXPECT_EQ(s.active_jobs(), (std::vector<JobId>{j0, j1}));
  s.LaunchMap(j1, 0, a);
  s.FinishJob(j1);  // killed with a map running
  EXPECT_TRUE(s.job(j1).done);
  EXPECT_EQ(s.active_jobs(), std::vector<JobId>{j0});
  EXPECT_EQ(s.node(a).running_maps, 0);
  EXPECT_EQ(CheckConsistent(s), "");
}

TEST(ClusterStateTest, ChangeLogNamesEveryMutatedJobInOrder) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  const uint64_t start = s.change_seq();
  JobId j0 = s.AddJob(MakeJob({{a}}));
  JobId j1 = s.AddJob(MakeJob({{a}, {a}}, /*reduces=*/1));
  s.LaunchMap(j1, 0, a);
  s.FinishMap(j1, 0, 10);
  s.LaunchMap(j0, 0, a);
  s.FailMap(j0, 0);
  s.mutable_job(j0).priority = 1;  // may change anything: logged
  s.RedoMap(j1, 0);
  s.FinishJob(j1);
  std::span<const JobId> ids;
  ASSERT_TRUE(s.ChangedJobsSince(start, &ids));
  EXPECT_EQ(std::vector<JobId>(ids.begin(), ids.end()),
            (std::vector<JobId>{j0, j1, j1, j1, j0, j0, j0, j1, j1}));
  ASSERT_TRUE(s.ChangedJobsSince(s.change_seq(), &ids));
  EXPECT_TRUE(ids.empty());
  EXPECT_FALSE(s.ChangedJobsSince(s.change_seq() + 1, &ids));  // from the future
  EXPECT_EQ(s.running_maps(), 0);
  EXPECT_EQ(CheckConsistent(s), "");
}

TEST(ClusterStateTest, ChangeLogForgetsTheDistantPastOnly) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 1, 1);
  JobId j = s.AddJob(MakeJob({{a}}));
  const uint64_t old = s.change_seq();
  for (int i = 0; i < 100000; ++i) {  // 200,000 changes
    s.LaunchMap(j, 0, a);
    s.FailMap(j, 0);
  }
  std::span<const JobId> ids;
  EXPECT_FALSE(s.ChangedJobsSince(old, &ids));  // too old: re-read everything
  const uint64_t recent = s.change_seq() - 1000;
  ASSERT_TRUE(s.ChangedJobsSince(recent, &ids));
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(s.running_maps(), 0);
}

TEST(ClusterStateTest, MeasurementsAverageByLocalityOfTheNodeItRanOn) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 4, 1);
  NodeId b = s.AddNode("b", 0, -1, 4, 1);
  NodeId c = s.AddNode("c", 1, -1, 4, 1);
  JobId j = s.AddJob(MakeJob({{a}, {a}, {a}, {a}}));
  s.LaunchMap(j, 0, a);
  s.LaunchMap(j, 1, a);
  s.LaunchMap(j, 2, b);
  s.LaunchMap(j, 3, c);
  s.FinishMap(j, 0, 100);
  s.FinishMap(j, 1, 300);
  s.FinishMap(j, 2, 500);
  s.FinishMap(j, 3, 900);
  const Measurements& m = s.measurements();
  EXPECT_DOUBLE_EQ(m.avg_map_ms[static_cast<int>(Locality::kNode)], 200);
  EXPECT_EQ(m.map_samples[static_cast<int>(Locality::kNode)], 2);
  EXPECT_DOUBLE_EQ(m.avg_map_ms[static_cast<int>(Locality::kDatacenter)], 500);
  EXPECT_DOUBLE_EQ(m.avg_map_ms[static_cast<int>(Locality::kOffDatacenter)], 900);
  EXPECT_EQ(m.map_samples[static_cast<int>(Locality::kRack)], 0);  // unmeasured stays 0
  EXPECT_EQ(m.avg_map_ms[static_cast<int>(Locality::kRack)], 0);
}

// Broken preconditions are host bugs: they abort with a message.
TEST(ClusterStateDeathTest, PreconditionsAbortWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 1, 1);
  JobId j = s.AddJob(MakeJob({{a}, {a}}));
  s.LaunchMap(j, 0, a);
  EXPECT_DEATH(s.LaunchMap(j, 0, a), "LaunchMap: job 0 task 0 is running, not pending");
  EXPECT_DEATH(s.LaunchMap(j, 1, a), "no free map slot");
  EXPECT_DEATH(s.FinishMap(j, 1, 1), "FinishMap: job 0 task 1 is pending, not running");
  EXPECT_DEATH(s.RedoMap(j, 0), "is running, not done");
  EXPECT_DEATH(s.LaunchReduce(j, 0, a), "before slow-start");
  s.AddNode("r", 0, 3, 1, 1);
  EXPECT_DEATH(s.AddNode("x", 1, 3, 1, 1), "rack 3 is already in datacenter 0");
  EXPECT_DEATH(s.AddJob(MakeJob({{7}})), "unknown replica node 7");
}

}  // namespace
}  // namespace mr::sched

namespace mr::sched {
namespace {

// A worker that registers again with other slots (issue 11).
TEST(ClusterStateTest, SetSlotsOnANodeThatIsDown) {
  ClusterState s;
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  s.SetLive(a, false);
  s.SetSlots(a, 4, 2);
  s.SetLive(a, true);
  EXPECT_EQ(s.node(a).free_map_slots(), 4);
  EXPECT_EQ(s.total_reduce_slots(), 2);
  EXPECT_DEATH(s.SetSlots(a, 1, 1), "is live");
}

// The live slot totals are kept, not summed per call: across nodes coming,
// going, going twice and changing slots while down they must equal a sum
// over the live nodes.
TEST(ClusterStateTest, LiveSlotTotalsFollowEveryNodeChange) {
  ClusterState s;
  auto check = [&] {
    int maps = 0, reduces = 0;
    for (const Node& n : s.nodes()) maps += n.live ? n.map_slots : 0;
    for (const Node& n : s.nodes()) reduces += n.live ? n.reduce_slots : 0;
    EXPECT_EQ(s.total_map_slots(), maps);
    EXPECT_EQ(s.total_reduce_slots(), reduces);
  };
  NodeId a = s.AddNode("a", 0, -1, 2, 1);
  NodeId b = s.AddNode("b", 1, -1, 3, 0);
  check();
  s.SetLive(a, false);
  check();
  s.SetLive(a, false);  // already down: no second subtraction
  EXPECT_EQ(s.total_map_slots(), 3);
  s.SetSlots(a, 5, 4);
  check();
  s.SetLive(a, true);
  s.SetLive(a, true);  // already up: no second addition
  EXPECT_EQ(s.total_map_slots(), 8);
  EXPECT_EQ(s.total_reduce_slots(), 4);
  s.SetLive(b, false);
  s.AddNode("c", 1, -1, 0, 7);
  check();
}

}  // namespace
}  // namespace mr::sched
