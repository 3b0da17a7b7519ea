// Tests for scheduler/demand_snapshot.h: a Refresh re-reads only the jobs
// the state logged as changed, so across random launches, finishes,
// failures, arrivals and completions — and a log that has dropped changes,
// and another state — every figure must equal a re-read of
// state.active_jobs() at the same moment (JobDemand per job, the sums).
#include "scheduler/demand_snapshot.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/job_order.h"
#include "tests/scheduler/test_host.h"

namespace mr::sched {
namespace {

using test::MakeJob;

// What the snapshot must hold: every active job's demand, by a plain loop.
void ExpectMatchesAReread(const DemandSnapshot& snap, const ClusterState& state,
                          const std::string& where) {
  int maps = 0, reduces = 0;
  for (JobId id : state.active_jobs()) {
    EXPECT_TRUE(snap.seen(id)) << where << ": job " << id;
    EXPECT_EQ(snap.demand(id, true), JobDemand(state.job(id), true)) << where << ": job " << id;
    EXPECT_EQ(snap.demand(id, false), JobDemand(state.job(id), false)) << where << ": job " << id;
    maps += JobDemand(state.job(id), true);
    reduces += JobDemand(state.job(id), false);
  }
  for (const Job& job : state.jobs()) {
    if (job.done) EXPECT_FALSE(snap.seen(job.id)) << where << ": finished job " << job.id;
  }
  EXPECT_EQ(snap.total(true), maps) << where;
  EXPECT_EQ(snap.total(false), reduces) << where;
  EXPECT_EQ(snap.active(), state.active_jobs()) << where;
}

class Churn {
 public:
  explicit Churn(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 6; ++i) state.AddNode("n" + std::to_string(i), 0, -1, 40, 20);
  }
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  void Arrive() {
    Job job = MakeJob(std::vector<std::vector<NodeId>>(static_cast<size_t>(1 + Pick(8)), {0}),
                      Pick(3));
    job.slowstart = Pick(2) == 0 ? 0.0 : 0.5;
    state.AddJob(std::move(job));
  }
  // One random mutation of a random active job (or an arrival).
  void Step() {
    const std::vector<JobId>& active = state.active_jobs();
    const int op = Pick(100);
    if (active.empty() || op < 4) return Arrive();
    const JobId id = active[static_cast<size_t>(Pick(static_cast<int>(active.size())))];
    const Job& job = state.job(id);
    if (op < 7) return state.FinishJob(id);
    for (const MapTask& m : job.maps) {
      if (op < 45 && m.state == TaskState::kPending) return state.LaunchMap(id, m.index, Free(true));
      if (op >= 45 && op < 70 && m.state == TaskState::kRunning) {
        return op < 66 ? state.FinishMap(id, m.index, 10) : state.FailMap(id, m.index);
      }
    }
    for (const ReduceTask& r : job.reduces) {
      if (op >= 70 && op < 85 && r.state == TaskState::kPending && job.reduces_may_start()) {
        return state.LaunchReduce(id, r.index, Free(false));
      }
      if (op >= 85 && r.state == TaskState::kRunning) return state.FinishReduce(id, r.index);
    }
  }
  NodeId Free(bool maps) const {
    for (const Node& n : state.nodes()) {
      if ((maps ? n.free_map_slots() : n.free_reduce_slots()) > 0) return n.id;
    }
    return 0;  // never reached here: 240 map and 120 reduce slots
  }

  ClusterState state;

 private:
  std::mt19937 rng_;
};

TEST(DemandSnapshotTest, EveryRefreshEqualsARereadOfTheActiveJobs) {
  Churn churn(11);
  DemandSnapshot snap;
  for (int i = 0; i < 30; ++i) churn.Arrive();
  snap.Refresh(churn.state);  // the first: reads every active job
  EXPECT_EQ(snap.reread().size(), churn.state.active_jobs().size());
  ExpectMatchesAReread(snap, churn.state, "first");
  for (int step = 0; step < 4000; ++step) {
    churn.Step();
    if (churn.Pick(10) == 0) {
      snap.Refresh(churn.state);
      ExpectMatchesAReread(snap, churn.state, "step " + std::to_string(step));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(DemandSnapshotTest, ARefreshRereadsOnlyTheChangedJobs) {
  Churn churn(3);
  for (int i = 0; i < 20; ++i) churn.Arrive();
  DemandSnapshot snap;
  snap.Refresh(churn.state);
  const JobId j = churn.state.active_jobs()[4];
  churn.state.LaunchMap(j, 0, 0);
  churn.state.FinishMap(j, 0, 10);  // logged twice, re-read once
  snap.Refresh(churn.state);
  EXPECT_EQ(snap.reread(), std::vector<JobId>{j});
  ExpectMatchesAReread(snap, churn.state, "one job changed");
  snap.Refresh(churn.state);
  EXPECT_TRUE(snap.reread().empty());
}

// Between two Refreshes more changes than the log keeps (64 Ki, at least):
// the snapshot cannot know which jobs changed and must re-read them all.
TEST(DemandSnapshotTest, ALogThatDroppedChangesMeansAFullReread) {
  Churn churn(5);
  for (int i = 0; i < 20; ++i) churn.Arrive();
  DemandSnapshot snap;
  snap.Refresh(churn.state);
  const uint64_t seen = churn.state.change_seq();
  const JobId j = churn.state.active_jobs()[0];
  for (int i = 0; i < 300000; ++i) {  // launch and fail the same map
    churn.state.LaunchMap(j, 0, 0);
    churn.state.FailMap(j, 0);
  }
  std::span<const JobId> ids;
  ASSERT_FALSE(churn.state.ChangedJobsSince(seen, &ids));
  churn.state.FinishJob(churn.state.active_jobs()[1]);
  snap.Refresh(churn.state);
  EXPECT_EQ(snap.reread().size(), churn.state.active_jobs().size());
  ExpectMatchesAReread(snap, churn.state, "after the log moved on");
}

TEST(DemandSnapshotTest, AnotherStateIsReadWhole) {
  Churn a(1), b(2);
  for (int i = 0; i < 10; ++i) a.Arrive();
  for (int i = 0; i < 25; ++i) b.Arrive();
  DemandSnapshot snap;
  snap.Refresh(a.state);
  for (int i = 0; i < 200; ++i) b.Step();
  snap.Refresh(b.state);
  ExpectMatchesAReread(snap, b.state, "b");
  EXPECT_FALSE(snap.seen(b.state.active_jobs().back() + 1));
  for (int i = 0; i < 200; ++i) a.Step();
  snap.Refresh(a.state);
  ExpectMatchesAReread(snap, a.state, "back to a");
}

}  // namespace
}  // namespace mr::sched
