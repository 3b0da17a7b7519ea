// Tests for scheduler/job_tasks.h: Hadoop's findNewMapTask order, the
// caps, lazy cleaning, failed-task handling and reduces — one decision at a
// time, driven straight through ClusterState (no policy).
#include "scheduler/job_tasks.h"

#include <gtest/gtest.h>

#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;

// Five nodes with racks: a and a2 share rack 0; b is rack 1 in the same
// datacenter; c and d are other datacenters.
class JobTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = s.AddNode("a", 0, 0, 8, 2);
    a2 = s.AddNode("a2", 0, 0, 8, 2);
    b = s.AddNode("b", 0, 1, 8, 2);
    c = s.AddNode("c", 1, 2, 8, 2);
    d = s.AddNode("d", 2, 3, 8, 2);
  }
  // Adds a job and indexes it, as a policy does in OnJobAdded.
  JobId Add(Job job) {
    JobId id = s.AddJob(std::move(job));
    index.AddJob(s, id);
    return id;
  }
  void Fail(JobId job, int32_t i, NodeId on) {
    s.LaunchMap(job, i, on);
    s.FailMap(job, i);
    index.TaskPendingAgain(s, job, i, /*is_map=*/true);
  }

  ClusterState s;
  JobTaskIndex index;
  NodeId a, a2, b, c, d;
};

TEST_F(JobTasksTest, HadoopOrderFailedNodeRackDatacenterOtherNoLocation) {
  //                   m0 other dc  m1 dc  m2 rack m3 node m4 none m5 other dc
  JobId j = Add(MakeJob({{c}, {b}, {a2}, {a}, {}, {d}}));
  Fail(j, 5, c);
  const std::vector<int32_t> want = {5, 3, 2, 1, 0, 4};
  for (int32_t expected : want) {
    int32_t got = index.ObtainMap(s, j, a);
    ASSERT_EQ(got, expected);
    s.LaunchMap(j, got, a);
  }
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);  // nothing pending
}

TEST_F(JobTasksTest, CapsStopAtTheirLevel) {
  JobId j = Add(MakeJob({{c}, {b}, {a2}, {a}}));
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kNode), 3);
  s.LaunchMap(j, 3, a);
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kNode), -1);  // node level exhausted: stop
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kRack), 2);
  s.LaunchMap(j, 2, a);
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kRack), -1);
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kDatacenter), 1);
  s.LaunchMap(j, 1, a);
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kDatacenter), -1);
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kOffDatacenter), 0);
}

TEST_F(JobTasksTest, NonLocalSkipsTheNodesOwnLevels) {
  JobId j = Add(MakeJob({{a}, {a2}, {b}, {d}, {}, {c}}));
  // Own node, rack and datacenter are skipped; the lowest index over the
  // other datacenters wins (m3 on d before m5 on c).
  EXPECT_EQ(index.ObtainNonLocalMap(s, j, a), 3);
  s.LaunchMap(j, 3, a);
  EXPECT_EQ(index.ObtainNonLocalMap(s, j, a), 5);
  s.LaunchMap(j, 5, a);
  EXPECT_EQ(index.ObtainNonLocalMap(s, j, a), 4);  // then no-location maps
  s.LaunchMap(j, 4, a);
  EXPECT_EQ(index.ObtainNonLocalMap(s, j, a), -1);  // local work is left for local nodes
}

TEST_F(JobTasksTest, WithoutRacksKRackIsNodeOnlyAndKDatacenterIsTheDatacenter) {
  ClusterState flat;
  NodeId x = flat.AddNode("x", 0, -1, 4, 1);
  NodeId y = flat.AddNode("y", 0, -1, 4, 1);
  JobId j = flat.AddJob(MakeJob({{y}}));
  JobTaskIndex idx;
  idx.AddJob(flat, j);
  EXPECT_EQ(idx.ObtainMap(flat, j, x, Locality::kRack), -1);  // no rack level exists
  EXPECT_EQ(idx.ObtainMap(flat, j, x, Locality::kDatacenter), 0);
}

TEST_F(JobTasksTest, LazyCleaningSkipsTasksTakenElsewhere) {
  JobId j = Add(MakeJob({{a, b}, {a}}));
  s.LaunchMap(j, 0, b);  // taken by another node: a must not be offered it
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kNode), 1);
  s.LaunchMap(j, 1, a);
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);
}

TEST_F(JobTasksTest, AFailedTaskComesBackFirstButNotWhereItFailed) {
  JobId j = Add(MakeJob({{a}, {a}, {b}}));
  Fail(j, 2, b);
  EXPECT_EQ(index.ObtainMap(s, j, a), 2);  // failed first, ignoring locality
  EXPECT_EQ(index.ObtainMap(s, j, b), 0);  // failed on b: b gets local-to-dc m0 instead
  EXPECT_EQ(index.ObtainMap(s, j, a, Locality::kNode), 2);  // even under a node cap
  EXPECT_EQ(index.ObtainNonLocalMap(s, j, a), 2);           // and under the non-local call
}

TEST_F(JobTasksTest, MostFailuresFirstThenLowestIndex) {
  JobId j = Add(MakeJob({{d}, {d}, {d}}));
  Fail(j, 0, c);
  Fail(j, 2, c);
  Fail(j, 2, b);
  Fail(j, 1, b);
  EXPECT_EQ(index.ObtainMap(s, j, a), 2);  // two failures
  s.LaunchMap(j, 2, a);
  EXPECT_EQ(index.ObtainMap(s, j, a), 0);  // one failure each: lowest index
}

// Nodes that can run it: live and not decommissioning. A decommissioning
// node is live but runs nothing; on the old count (live nodes) a reduce
// that failed on the one in-service worker, beside a draining one, was
// never offered again and its job never ended.
TEST_F(JobTasksTest, ATaskThatFailedOnEveryNodeThatCanRunItIsOfferedAgain) {
  JobId j = Add(MakeJob({{a}}));
  Fail(j, 0, a);
  Fail(j, 0, b);
  Fail(j, 0, c);
  Fail(j, 0, d);
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);  // failed on 4 of 5 live nodes, a among them
  EXPECT_EQ(index.ObtainMap(s, j, a2), 0);
  s.SetLive(a2, false);
  EXPECT_EQ(index.ObtainMap(s, j, a), 0);  // now it failed on as many nodes as are live
  s.SetLive(a2, true);
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);
  s.SetDraining(a2, true);
  EXPECT_EQ(index.ObtainMap(s, j, a), 0);  // a2 is live but decommissioning
}

TEST_F(JobTasksTest, RefreshFindsTasksPendingAgainAfterANodeLoss) {
  JobId j = Add(MakeJob({{a}, {a}}, /*reduces=*/1));
  s.LaunchMap(j, 0, a);
  s.LaunchMap(j, 1, a);
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);  // this search drops both from every list
  s.FinishMap(j, 0, 10);
  s.RedoMap(j, 0);                          // a's output was lost
  EXPECT_EQ(index.ObtainMap(s, j, a), -1);  // the index does not know yet
  index.Refresh(s);                         // what a policy does in OnNodeLost
  EXPECT_EQ(index.ObtainMap(s, j, a), 0);
}

// Refresh re-indexes only the maps its marks do not vouch for (issue 29):
// a map a launch took out of no list is still listed, but a node loss made
// it a failed map, which Refresh must still file as one; a map whose
// replicas grew is listed under its new node.
TEST_F(JobTasksTest, RefreshFilesAStillListedMapAsFailedAndAGrownMapUnderItsNewNode) {
  JobId j = Add(MakeJob({{a}, {a}, {c}}));
  s.LaunchMap(j, 1, a);                     // no search meets it while it runs
  s.FailMap(j, 1);                          // a is lost: pending again, failed on a
  index.Refresh(s);
  EXPECT_EQ(index.ObtainMap(s, j, b), 1);   // failed maps first, ignoring locality
  s.LaunchMap(j, 1, b);

  EXPECT_EQ(index.ObtainMap(s, j, d, Locality::kNode), -1);
  s.mutable_job(j).maps[2].replicas.push_back(d);  // a copy of m2's block landed on d
  index.Refresh(s);
  EXPECT_EQ(index.ObtainMap(s, j, d, Locality::kNode), 2);
}

TEST_F(JobTasksTest, ReducesWaitForSlowStartThenFailedFirstThenLowestIndex) {
  Job job = MakeJob({{a}, {a}}, /*reduces=*/3);
  job.slowstart = 1.0;
  JobId j = Add(job);
  EXPECT_EQ(index.ObtainReduce(s, j, a), -1);  // no map finished yet
  s.LaunchMap(j, 0, a);
  s.LaunchMap(j, 1, a);
  s.FinishMap(j, 0, 1);
  EXPECT_EQ(index.ObtainReduce(s, j, a), -1);  // slow-start 1.0 needs both
  s.FinishMap(j, 1, 1);
  EXPECT_EQ(index.ObtainReduce(s, j, a), 0);
  s.LaunchReduce(j, 2, b);
  s.FailReduce(j, 2);
  index.TaskPendingAgain(s, j, 2, /*is_map=*/false);
  EXPECT_EQ(index.ObtainReduce(s, j, a), 2);  // failed first
  EXPECT_EQ(index.ObtainReduce(s, j, b), 0);  // but not where it failed
}

// MayGiveReduce is false exactly when ObtainReduce has nothing, as of the
// last SyncReduceReady, whatever changed the jobs in between.
TEST_F(JobTasksTest, ReduceReadyMarksFollowTheStateThroughSync) {
  Job job = MakeJob({{a}, {a}}, /*reduces=*/1);
  job.slowstart = 0.5;  // one finished map
  JobId j = Add(job);
  JobId none = Add(MakeJob({{a}}, /*reduces=*/0));
  index.SyncReduceReady(s);
  EXPECT_FALSE(index.MayGiveReduce(j));  // before slow-start
  EXPECT_FALSE(index.MayGiveReduce(none));
  s.LaunchMap(j, 0, a);
  s.FinishMap(j, 0, 1);
  EXPECT_FALSE(index.MayGiveReduce(j));  // not synced yet
  index.SyncReduceReady(s);
  EXPECT_TRUE(index.MayGiveReduce(j));
  EXPECT_EQ(index.ObtainReduce(s, j, a), 0);
  s.LaunchReduce(j, 0, a);
  index.SyncReduceReady(s);
  EXPECT_FALSE(index.MayGiveReduce(j));  // its only reduce runs
  s.FailReduce(j, 0);
  index.TaskPendingAgain(s, j, 0, /*is_map=*/false);
  index.SyncReduceReady(s);
  EXPECT_TRUE(index.MayGiveReduce(j));  // pending again
  s.FinishJob(j);
  index.SyncReduceReady(s);
  EXPECT_FALSE(index.MayGiveReduce(j));
}

TEST_F(JobTasksTest, RemovedJobsAreForgotten) {
  JobId j = Add(MakeJob({{a}}));
  EXPECT_TRUE(index.Contains(j));
  index.RemoveJob(j);
  EXPECT_FALSE(index.Contains(j));
  index.RemoveJob(j);  // twice is fine
  EXPECT_DEATH(index.ObtainMap(s, j, a), "job 0 was never added");
}

}  // namespace
}  // namespace mr::sched
